/**
 * The whole device login: discover the endpoints, ask for the codes, let the caller show them, poll until the person
 * decides (DEV-FLOW-*), with the settings the command reads when the caller gives none. Storing the tokens is the
 * caller's (`saveLogin`, the command).
 */
import { expectArray, expectFunction, expectObject, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import type { HttpClient } from '../http/index.js';
import { discoverEndpoints, type AuthEndpoints } from './discovery.js';
import { requestDeviceCode, type DeviceCode, type QuotaBackoff } from './device.js';
import { pollForTokens, type PollEvent } from './poll.js';
import { loginSettings } from './profile-login.js';
import { defaultScopeNames, resolveScopes } from './scopes.js';
import type { ProfileKey, TokenSet } from './store/types.js';
import { idTokenClaims } from './tokens.js';
import { oauthHttpClient as authHttpClient } from '../oauth/index.js';

export interface DeviceLoginOptions {
  /** The authorization server; default GANTRY_AUTH_URL (else a Pulumi program's gantry:authUrl), as the command reads it. */
  authUrl?: string | undefined;
  /** The OAuth client; default GANTRY_OAUTH_CLIENT_ID (else gantry:oauthClientId). */
  clientId?: string | undefined;
  /** Its secret, when it has one; default GANTRY_OAUTH_CLIENT_SECRET (else gantry:oauthClientSecret) for that client. */
  clientSecret?: string | undefined;
  /** Already checked against the allow-list (scopes.ts `resolveScopes`); default the command's: openid email storage.file video.readonly. */
  scopes?: readonly string[];
  /** Where the GANTRY_* variables are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  http?: HttpClient;
  /** Endpoints found earlier; discovered from `authUrl` when absent. */
  endpoints?: AuthEndpoints;
  signal?: AbortSignal;
  now?: () => number;
  quotaBackoff?: Partial<QuotaBackoff>;
  onQuotaWait?: (waitMs: number, attempt: number) => void;
  /** Show the code and the address: called once, before the first poll. */
  onCode: (device: DeviceCode, endpoints: AuthEndpoints) => void;
  onPoll?: (event: PollEvent) => void;
}

export interface DeviceLoginResult {
  /** Which login this is (server, client, profile — GANTRY_AUTH_PROFILE, else `default`): the key to save it under. */
  key: ProfileKey;
  endpoints: AuthEndpoints;
  tokens: TokenSet;
  /** Who approved, from the ID token when `openid` was asked for. */
  account: { issuer?: string; sub?: string; email?: string } | undefined;
}

/**
 * The whole device login. Open the token store first (`openTokenStore`): it fails before anyone is asked to approve
 * when the tokens would have nowhere to go.
 */
export async function deviceLogin(options: DeviceLoginOptions): Promise<DeviceLoginResult> {
  expectObject('deviceLogin', 'options', options);
  if (options.authUrl !== undefined) expectString('deviceLogin', 'options.authUrl', options.authUrl, "the authorization server's address");
  if (options.clientId !== undefined) expectString('deviceLogin', 'options.clientId', options.clientId);
  if (options.scopes !== undefined) expectArray('deviceLogin', 'options.scopes', options.scopes, 'the scopes, as resolveScopes returns them');
  expectFunction('deviceLogin', 'options.onCode', options.onCode, 'a function that shows the code and the address');
  const settings = loginSettings({
    authUrl: options.authUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    ...(options.env ? { env: options.env } : {}),
  });
  if (!settings.authUrl)
    throw new UsageError('deviceLogin: no authorization server', {
      hint: 'give the authUrl option or set GANTRY_AUTH_URL (`gantry dev` serves one locally and prints it)',
      code: 'AUTH_URL',
    });
  if (!settings.clientId)
    throw new UsageError('deviceLogin: no client id', {
      hint: 'give the clientId option or set GANTRY_OAUTH_CLIENT_ID: a "TVs and Limited Input devices" client (`gantry dev` prints one)',
      code: 'AUTH_CLIENT_ID',
    });
  const { authUrl, clientId, clientSecret } = settings;
  const scopes = options.scopes ?? resolveScopes(defaultScopeNames, settings.scopeBase);
  const http = options.http ?? authHttpClient();
  try {
    const endpoints = options.endpoints ?? (await discoverEndpoints(http, authUrl, options.signal));
    const device = await requestDeviceCode(http, endpoints, {
      clientId,
      clientSecret,
      scopes,
      ...(options.quotaBackoff ? { quotaBackoff: options.quotaBackoff } : {}),
      ...(options.onQuotaWait ? { onQuotaWait: options.onQuotaWait } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    options.onCode(device, endpoints);
    const tokens = await pollForTokens(http, endpoints, device, {
      clientId,
      clientSecret,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.onPoll ? { onPoll: options.onPoll } : {}),
    });
    return { key: { authUrl, clientId, profile: settings.profile }, endpoints, tokens, account: idTokenClaims(tokens.idToken) };
  } finally {
    if (!options.http) http.close();
  }
}
