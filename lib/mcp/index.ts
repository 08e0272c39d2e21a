// The context protocol (MCP): Gantry's context server and its OAuth 2.1 pieces shared with the client.
export * from './server/index.js';
export { canonicalResourceUri, sameResource, protectedResourceMetadataUrl } from './resource-uri.js';
export { fetchAuthorizationServerMetadata, metadataUrls, checkSecureEndpoint, AuthorizationServerError, type AuthorizationServerMetadata } from './authorization-server.js';
