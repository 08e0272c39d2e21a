/**
 * The embedded dev servers that `gantry dev` starts and `gantry demo` runs against. Each area adds its starter here.
 * Dev servers share no code with the clients they serve: they are independent implementations of the specification.
 */
// Each server's code loads when it starts, so listing them (`gantry --help`) costs nothing: what the command needs
// before that — default ports, settings read from the environment — comes from the small starter modules, the rest
// through `devServerModules` and type-only exports.

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

export interface DevServer {
  name: string;
  url: string;
  /** What a client needs to talk to it (tokens, users), printed by `gantry dev`. */
  credentials: Record<string, string>;
  /** Environment a client of it reads (`SECRETS_ADDR`, …), printed by `gantry dev` as `export` lines to paste. */
  env?: Record<string, string>;
  stop(): Promise<void>;
}

export interface DevContext {
  host: string;
  /** The package's examples/ folder (example modules, demo site). */
  examplesDir: string;
  /** A scratch folder this run may write to; removed when the run ends unless kept. */
  stateDir: string;
  /** The servers of this run started so far, in the order of `devServers` (the storage API asks the authorization server about tokens). */
  started?: readonly DevServer[];
  /** The authorization server's dialect (`gantry dev --oauth-dialect`), checked already; else GANTRY_DEV_OAUTH_DIALECT, else google. */
  oauthDialect?: 'google' | 'rfc8628';
}

export interface DevServerStarter {
  name: string;
  description: string;
  start(context: DevContext): Promise<DevServer>;
}

export const devServers: DevServerStarter[] = [
  {
    name: 'registry',
    description: 'module registry serving examples/modules (modules.v1) on 127.0.0.1:5758',
    start: async (context) => (await import('./registry/starter.js')).startExampleRegistry(context),
  },
  {
    name: 'secrets',
    description: 'kv secrets server (secret/ kv v2, kv/ kv v1) on 127.0.0.1:8200, random root token',
    start: async (context) => (await import('./secrets/starter.js')).startDevSecrets(context),
  },
  {
    name: 'pageanalysis',
    description: 'page analysis API v5 (runPageanalysis, Lighthouse in Chromium behind it) on 127.0.0.1:5760, random API key',
    start: async (context) => (await import('./pageanalysis/starter.js')).startDevPageanalysis(context),
  },
  {
    name: 'platform',
    description: 'platform REST API (rate limits enforced per identity, commit statuses, deployments, app tokens) on 127.0.0.1:5761, random tokens',
    start: async (context) => (await import('./platform/starter.js')).startDevPlatform(context),
  },
  {
    name: 'oauth',
    description:
      "authorization server (Google's device flow: discovery, device codes, approval page, tokens, revoke, the video API's channels) on 127.0.0.1:5762, one random client",
    start: async (context) => (await import('./oauth/starter.js')).startDevOAuth(context),
  },
  {
    name: 'storage',
    description:
      "storage API v2 (all 70 methods, resumable uploads, persisted in the run's scratch folder) on 127.0.0.1:5763, a random token or a device login's with a storage scope",
    start: async (context) => (await import('./storage/starter.js')).startDevStorage(context),
  },
];
