/** Where device-login tokens live: the OS keyring, Gantry's kv engine, or (only when asked) a private file. */
export type {
  AccountInfo,
  AccountRef,
  KvEngineLike,
  KvLike,
  OpenTokenStoreOptions,
  OpenedTokenStore,
  ProfileIndexEntry,
  ProfileKey,
  StoreKind,
  StoredLogin,
  TokenSet,
  TokenStore,
} from './types.js';
export { openTokenStore, parseStoreSpec } from './open.js';
export type { StoreSpec } from './open.js';
export { storeFlagNames, storeOptionNames, type StoreNames } from './wording.js';
export {
  authDir,
  checkProfileName,
  defaultKvPath,
  defaultProfile,
  keyLabel,
  keyringAccount,
  keyringService,
  loginFileName,
  normaliseAuthUrl,
  profileKey,
  resolveConfigDir,
  sameKey,
} from './key.js';
export { loginForDisplay, sealLogin } from './login.js';
export { KeyringTokenStore, keyringBackend, probeKeyring } from './keyring-store.js';
export type { KeyringProbe } from './keyring-store.js';
export { KvTokenStore, checkKvPath } from './kv-store.js';
export { FileTokenStore } from './file-store.js';
export { findProfile, forgetProfile, listProfiles, profileIndexPath, recordProfile } from './profiles.js';
export type { ProfileIndexOptions } from './profiles.js';
export { belongsTo, deleteLogin, dropAccountLogins, openStoreFor, saveLogin } from './logins.js';
export type { DroppedLogins } from './logins.js';
