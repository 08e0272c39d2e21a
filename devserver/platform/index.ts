export {
  startPlatformServer,
  DEFAULT_REPOSITORIES,
  type PlatformServer,
  type PlatformServerOptions,
  type Violation,
  type ViolationKind,
  type ViolationReport,
  type PlatformStats,
} from './server.js';
export { SPEC_LIMITS, type PlatformLimits, type Resource } from './limits.js';
export { type TokenSpec, type TokenKind, type AppSpec, type AppWebhookSpec, type InstallationSpec, type OAuthAppSpec } from './identity.js';
export { DELIVERY_TIMEOUT_MS, MAX_PAYLOAD_BYTES, type RepositoryHookSpec, type DeliveryReport, type DroppedDelivery } from './webhooks.js';
export { MAX_STATUS_REPORTS, MAX_COMMENT_CHARACTERS, type EnvironmentSpec, type ProtectedDeploymentReport } from './protection.js';
export { type RepositorySpec, combinedState } from './api.js';
export { type Fault, checkFault } from '../kit/faults.js';
export {
  startDevPlatform,
  devWindowScale,
  devAppWebhook,
  parseWindowScale,
  DEV_PLATFORM_PORT,
  DEV_APP_ID,
  DEV_INSTALLATION_ID,
  DEV_PROTECTED_ENVIRONMENT,
} from './starter.js';
