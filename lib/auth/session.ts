/**
 * A stored login in use: `getAccessToken()` hands out the access token, refreshing it a minute before it expires and
 * storing the new one (DEV-TL-REFRESH, DEV-AUTH-REFRESH-REUSE); concurrent callers share one refresh. `logout()`
 * revokes, then deletes — a revoke the server refuses keeps the tokens, so nothing still valid is forgotten.
 */
import { expectObject } from '../arguments.js';
import type { HttpClient } from '../http/index.js';
import { registerSecret } from '../redact.js';
import { DeviceLoginError } from './errors.js';
import { discoverEndpoints, type AuthEndpoints } from './discovery.js';
import type { ProfileKey, StoredLogin, TokenSet, TokenStore } from './store/types.js';
import { refreshTokens, revokeToken, type ClientCredentials } from './tokens.js';
import { oauthHttpClient as authHttpClient } from '../oauth/index.js';

/** Refresh this long before the access token expires, so a token handed out still works for the call it is for. */
export const refreshMarginMs = 60_000;

export interface AuthSessionOptions {
  store: TokenStore;
  key: ProfileKey;
  /** The client secret, when the client has one; the id comes from `key`. */
  clientSecret?: string | undefined;
  http?: HttpClient;
  endpoints?: AuthEndpoints;
  now?: () => number;
}

export class AuthSession {
  readonly #options: AuthSessionOptions;
  readonly #http: HttpClient;
  readonly #ownHttp: boolean;
  readonly #now: () => number;
  #endpoints: AuthEndpoints | undefined;
  #refreshing: Promise<StoredLogin> | undefined;

  constructor(options: AuthSessionOptions) {
    expectObject('AuthSession', 'options', options);
    expectObject('AuthSession', 'options.store', options.store, 'a TokenStore (openTokenStore)');
    expectObject('AuthSession', 'options.key', options.key, '{ authUrl, clientId, profile }');
    this.#options = options;
    this.#http = options.http ?? authHttpClient();
    this.#ownHttp = !options.http;
    this.#now = options.now ?? Date.now;
    this.#endpoints = options.endpoints;
    if (options.clientSecret) registerSecret(options.clientSecret);
  }

  get #client(): ClientCredentials {
    return { clientId: this.#options.key.clientId, clientSecret: this.#options.clientSecret };
  }

  async endpoints(): Promise<AuthEndpoints> {
    this.#endpoints ??= await discoverEndpoints(this.#http, this.#options.key.authUrl);
    return this.#endpoints;
  }

  /** The stored login, or an error saying to log in. */
  async current(): Promise<StoredLogin> {
    const login = await this.#options.store.read(this.#options.key);
    if (!login) {
      throw new DeviceLoginError(
        `not logged in to ${this.#options.key.authUrl} as client ${this.#options.key.clientId} (profile ${this.#options.key.profile})`,
        { code: 'AUTH_NOT_LOGGED_IN', hint: 'run `gantry auth login`' },
      );
    }
    for (const value of [login.tokens.accessToken, login.tokens.refreshToken, login.tokens.idToken]) registerSecret(value);
    return login;
  }

  /** A valid access token, refreshed first when it has less than a minute left. */
  async getAccessToken(): Promise<string> {
    const login = await this.current();
    if (login.tokens.expiresAt - this.#now() > refreshMarginMs) return login.tokens.accessToken;
    return (await this.refresh()).tokens.accessToken;
  }

  /**
   * A new access token now, stored before it is returned. A refresh token the server refuses ends the login: its
   * access token is stored as expired, so that no later `getAccessToken()` (`gantry auth token`) hands out a token of
   * a grant the server has ended — it asks the server again, and says so.
   */
  async refresh(): Promise<StoredLogin> {
    this.#refreshing ??= (async () => {
      try {
        const login = await this.current();
        let tokens: TokenSet;
        try {
          tokens = await refreshTokens(this.#http, await this.endpoints(), this.#client, login.tokens, { now: this.#now });
        } catch (error) {
          if (error instanceof DeviceLoginError && error.code === 'AUTH_REFRESH_REVOKED' && login.tokens.expiresAt > this.#now()) {
            await this.#options.store.write({ ...login, tokens: { ...login.tokens, expiresAt: this.#now() } }).catch(() => undefined);
          }
          throw error;
        }
        const updated: StoredLogin = { ...login, tokens };
        await this.#options.store.write(updated);
        return updated;
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /**
   * Revokes the login at the server, then deletes it from the store. The refresh token first: on Google's server that
   * ends the whole grant, and RFC 7009 §2.1 asks other servers to end the grant's access tokens with it; then the
   * access token, for servers that do not (already invalid counts as done). Revoking an access token alone would
   * also end its refresh token on Google's (DEV-TL-REVOKE), but an expired access token can no longer be revoked.
   */
  async logout(): Promise<{ revoked: 'revoked' | 'already-invalid'; deleted: boolean }> {
    const login = await this.current();
    const endpoints = await this.endpoints();
    let revoked: 'revoked' | 'already-invalid' = 'already-invalid';
    for (const token of [login.tokens.refreshToken, login.tokens.accessToken]) {
      if (!token) continue;
      if ((await revokeToken(this.#http, endpoints, token, this.#client)) === 'revoked') revoked = 'revoked';
    }
    const deleted = await this.#options.store.delete(this.#options.key);
    return { revoked, deleted };
  }

  close(): void {
    if (this.#ownHttp) this.#http.close();
  }
}
