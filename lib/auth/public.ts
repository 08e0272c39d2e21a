// The `auth` namespace of the public API (`import { auth } from 'gantry'`; docs/api.md lists it): device login, the
// tokens that refresh, where they are kept, and security events. lib/index.ts exports the main names flat as well.
export { deviceLogin, resolveScopes, DeviceLoginError, AuthSession } from './index.js';
export { openTokenStore, openProfileLogin, saveLogin, deleteLogin, listProfiles } from './index.js';
export { securityEventHandler, applySecurityEvent, verifySecurityEventToken, SecurityEventError } from './index.js';
export type { DeviceCode, DeviceLoginOptions, DeviceLoginResult, AuthSessionOptions, TokenSet, StoredLogin, TokenStore, ProfileLogin } from './index.js';
export type { OpenTokenStoreOptions, OpenedTokenStore, SecurityEvent, SecurityEventHandlerOptions } from './index.js';
