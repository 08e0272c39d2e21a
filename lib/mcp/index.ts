// The context protocol (MCP): Gantry's context server, the client that signs in to protected context servers, and the
// OAuth 2.1 pieces both read.
export * from './server/index.js';
export { canonicalResourceUri, sameResource, protectedResourceMetadataUrl } from './resource-uri.js';
export { canonicalServerUri } from './client/index.js';
export {
  acceptElicitationDefaults,
  connectContextServer,
  ContextClientError,
  declineElicitation,
  type ConnectOptions,
  type CrossAppAccess,
  type ElicitationHandler,
  type ContextServerConnection,
  type CallOptions,
  type ContextClientErrorCode,
} from './client/index.js';
