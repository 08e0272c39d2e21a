// Device-grant login (`gantry auth`): discovery, codes, polling, tokens, refresh, revoke, and where tokens live.
export { DeviceLoginError, type DeviceLoginErrorCode } from './errors.js';
export { discoverEndpoints, checkAuthUrl, type AuthEndpoints } from './discovery.js';
export { allowedScopes, resolveScopes, checkScopeBase, defaultScopeBase, defaultScopeNames, deviceApiScopes } from './scopes.js';
export { requestDeviceCode, readDeviceCode, defaultQuotaBackoff, type DeviceCode, type DeviceCodeRequest, type QuotaBackoff } from './device.js';
export { pollForTokens, deviceGrantType, slowDownStepMs, type PollEvent, type PollOptions } from './poll.js';
export { readTokens, refreshTokens, revokeToken, idTokenClaims, type ClientCredentials } from './tokens.js';
export { deviceLogin, type DeviceLoginOptions, type DeviceLoginResult } from './login.js';
export { AuthSession, refreshMarginMs, type AuthSessionOptions } from './session.js';
export {
  openProfileLogin,
  selectLogin,
  selectedProfile,
  loginSettings,
  readClientSecretFile,
  loginConfigKeys,
  type LoginSelection,
  type LoginSettings,
  type ProfileLogin,
} from './profile-login.js';
export { renderPrompt, displayUrl, formatSeconds, type PromptOptions } from './display.js';
export { listMyChannels, type Channel } from './video.js';
export { oauthHttpClient as authHttpClient, getJson } from '../oauth/index.js';
export type { TokenSet, ProfileKey, StoredLogin, StoreKind, TokenStore } from './store/types.js';
export {
  verifySecurityEventToken,
  securityEventHandler,
  applySecurityEvent,
  jwksKeys,
  tokenIdentifier,
  droppingEvents,
  SecurityEventError,
  type SecurityEvent,
  type SecurityEventKeys,
  type SecurityEventHandlerOptions,
} from './security-events.js';
export { storeFlagNames, type StoreNames } from './store/index.js';
export {
  openTokenStore,
  saveLogin,
  openStoreFor,
  deleteLogin,
  dropAccountLogins,
  listProfiles,
  findProfile,
  recordProfile,
  forgetProfile,
} from './store/index.js';
export type { OpenTokenStoreOptions, OpenedTokenStore, ProfileIndexEntry, KvLike, AccountInfo, AccountRef } from './store/index.js';
