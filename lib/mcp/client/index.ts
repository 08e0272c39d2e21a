// The context-server (MCP) client: OAuth 2.1 authorization done by Gantry around the SDK's protocol client.
export { connectContextServer, type CallOptions, type ConnectOptions, type ContextServerConnection } from './connect.js';
export { acceptElicitationDefaults, declineElicitation, type ElicitationHandler, type ElicitationRequest } from './elicitation.js';
export { AuthSession, type AuthorizationOptions, type Authorizer, type CrossAppAccess } from './session.js';
export { authorizedFetch, contextServerRetry, type AuthorizedFetchOptions, type FetchLike } from './fetch.js';
export {
  authorizationServerMetadataUrls,
  discoverAuthorizationServer,
  discoverProtectedResource,
  protectedResourceMetadataUrls,
  requireS256,
  type AuthorizationServerMetadata,
  type DiscoveredAuthorizationServer,
  type DiscoveredResource,
  type ProtectedResourceMetadata,
} from './discovery.js';
export { canonicalServerUri, checkEndpoint, isLoopbackHost, resourceCovers, sameResource } from './canonical.js';
export { createPkce, randomState, s256, type Pkce } from '../../oauth/index.js';
export { startCallbackServer, type CallbackServer } from './loopback.js';
export { registerClient, registrationRequest, type RegisteredClientAnswer } from './registration.js';
export { ClientState, profileFor, type LoginEntry, type RegisteredClient } from './state.js';
export { bearerChallenge, parseWwwAuthenticate, type Challenge } from './www-authenticate.js';
export { ContextClientError, type ContextClientErrorCode } from './errors.js';
