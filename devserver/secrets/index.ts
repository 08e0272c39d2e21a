export { startSecretsServer } from './server.js';
export type { SecretsServer, SecretsServerOptions, FaultRule, JsonLimits } from './server.js';
export { startDevSecrets, devSecretsPort, DEV_SECRETS_PORT } from './starter.js';
