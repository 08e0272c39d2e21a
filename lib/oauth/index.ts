// The OAuth core: authorization-server discovery, the token, device, refresh, revocation and introspection requests,
// client authentication, PKCE and OAuth errors — under lib/auth (the device grant) and lib/mcp/client (code + PKCE).
export { OAuthError, errorOfAnswer, errorResponse, oauthErrorCodes, type ErrorResponse, type OAuthErrorCode, type OAuthErrorOptions } from './errors.js';
export {
  getJson,
  oauthHttpClient,
  optionalSeconds,
  optionalString,
  postForm,
  postJson,
  requiredString,
  type OAuthAnswer,
  type SendOptions,
} from './transport.js';
export { authMethodOf, clientAuthFor, clientAuthMethods, clientAuthentication, type ClientAuthMethod, type OAuthClient } from './client-auth.js';
export { createPkce, randomState, s256, type Pkce } from './pkce.js';
export {
  checkEndpoint,
  checkMetadata,
  discoverMetadata,
  endpointsAt,
  findMetadata,
  metadataUrls,
  optionalEndpoint,
  wellKnownUrl,
  type AuthorizationServerMetadata,
  type DiscoveredMetadata,
  type DiscoveryOptions,
  type MetadataChecks,
  type MetadataDocument,
  type MetadataFound,
} from './discovery.js';
export {
  authorizationCodeGrantRequest,
  deviceAuthorizationRequest,
  deviceCodeGrantRequest,
  grantTypes,
  introspectionRequest,
  processIntrospectionResponse,
  processRegistrationResponse,
  processTokenResponse,
  refreshTokenGrantRequest,
  registrationRequest,
  revocationRequest,
  send,
  type OAuthConfig,
  type OAuthEndpoints,
  type TokenResponse,
} from './requests.js';
