// The stack configuration the storage resources (and the gate's report publishing) read, apart from the code that
// uses it (./storage-shared.ts), so that a program declaring those resources loads none of lib/storage or lib/auth.
// The login keys are lib/auth's `loginConfigKeys`, written out (test/providers/storage-login.test.ts keeps them equal).
import type { SettingsOf } from './serialized.js';

/**
 * The stack configuration keys of the storage resources: the service root, and the device login's server, client and
 * client secret (`pulumi config set --secret gantry:oauthClientSecret …`), read when STORAGE_TOKEN is not set.
 */
export const storageConfig = {
  storageBaseUrl: 'gantry:storageBaseUrl',
  authUrl: 'gantry:authUrl',
  oauthClientId: 'gantry:oauthClientId',
  oauthClientSecret: 'gantry:oauthClientSecret',
} as const;

/**
 * What Configure keeps of `storageConfig` — or more: a provider whose settings hold these keys among others (the
 * gate's) hands its settings over as they are.
 */
export type StorageSettings = SettingsOf<typeof storageConfig> & Readonly<Record<string, string | undefined>>;
