export { startOAuthServer, type OAuthServer, type RequestLogEntry } from './server.js';
export {
  deviceScopes,
  resolveOptions,
  stableSub,
  DEFAULT_SCOPE_BASE,
  DEVICE_GRANT,
  REFRESH_GRANT,
  CODE_GRANT,
  CONTEXT_SCOPES,
  EVENT_ACCOUNT_DISABLED,
  EVENT_SESSIONS_REVOKED,
  EVENT_TOKEN_REVOKED,
  type ClientSpec,
  type ClientType,
  type TokenEndpointAuthMethod,
  type Dialect,
  type OAuthServerOptions,
  type UserCodeCase,
  type UserSpec,
} from './options.js';
export { type OAuthStats } from './context.js';
export { type SecurityEventDelivery } from './events.js';
export { ADMIN_ROUTES } from './admin.js';
export { POLL_GRACE_MS } from './token.js';
export { startDevOAuth, devOAuthInterval, DEV_OAUTH_PORT } from './starter.js';
