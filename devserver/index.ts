/**
 * The embedded dev servers that `gantry dev` starts and `gantry demo` runs against. Each area adds its starter here.
 * Dev servers share no code with the clients they serve: they are independent implementations of the specification.
 */
// Each server's code loads when it starts, so listing them (`gantry --help`) costs nothing: what the command needs
// before that — default ports, settings read from the environment — comes from the small starter modules, the rest
// through `devServerModules` and type-only exports.

import type { DevServerStarter } from './dev-server.js';
import * as oauth from './oauth/starter.js';
import * as pageanalysis from './pageanalysis/starter.js';
import * as platform from './platform/starter.js';
import * as registry from './registry/starter.js';
import * as secrets from './secrets/starter.js';
import * as storage from './storage/starter.js';

export type { DevContext, DevServer, DevServerStarter } from './dev-server.js';
export { devPort, startOnDevPort } from './port.js';
export { DEV_OAUTH_PORT, devOAuthDialect } from './oauth/starter.js';
export { DEV_PLATFORM_PORT } from './platform/starter.js';
export { DEV_REGISTRY_PORT, registryClientEnv } from './registry/starter.js';
export { DEV_SECRETS_PORT } from './secrets/starter.js';
export { DEV_STORAGE_PORT } from './storage/starter.js';
export type { OAuthServerOptions } from './oauth/index.js';
export type { PlatformServerOptions } from './platform/index.js';
export type { RegistryServerOptions } from './registry/index.js';
export type { JsonLimits, SecretsServerOptions } from './secrets/index.js';
export type { StorageFault, StorageServerOptions } from './storage/index.js';

/** Each server's module, loaded when `gantry dev <server>` starts it. */
export const devServerModules = {
  oauth: () => import('./oauth/index.js'),
  platform: () => import('./platform/index.js'),
  registry: () => import('./registry/index.js'),
  secrets: () => import('./secrets/index.js'),
  storage: () => import('./storage/index.js'),
};

/** In the order they start (storage asks the authorization server about tokens, so oauth comes first). */
export const devServers: DevServerStarter[] = [
  registry.devServer,
  secrets.devServer,
  pageanalysis.devServer,
  platform.devServer,
  oauth.devServer,
  storage.devServer,
];
