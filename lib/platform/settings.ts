/**
 * Where the platform clients read their settings besides the options (lib/settings.ts: options, then environment,
 * then Pulumi config, then the default).
 */
import type { SettingSpec } from '../settings.js';

export const platformSettings = {
  baseUrl: { env: 'PLATFORM_API_URL', pulumi: 'gantry:platformApiUrl' },
  limitsUrl: { env: 'GANTRY_PLATFORM_LIMITS_URL' },
  appId: { env: 'GANTRY_APP_ID' },
  privateKey: { env: 'GANTRY_APP_PRIVATE_KEY' },
  privateKeyFile: { env: 'GANTRY_APP_PRIVATE_KEY_FILE' },
} as const satisfies Record<string, SettingSpec>;

/** The option keys PlatformClient and PlatformApp both take. */
export const sharedPlatformOptionKeys = {
  baseUrl: true,
  limits: true,
  limitsUrl: true,
  store: true,
  clock: true,
  logger: true,
  env: true,
  timeouts: true,
  tls: true,
  proxy: true,
  headers: true,
  cache: true,
} as const;
