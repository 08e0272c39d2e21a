/**
 * The whole device login: discover the endpoints, ask for the codes, let the caller show them, poll until the person
 * decides (DEV-FLOW-*). Storing the tokens is the caller's (session.ts, the command).
 */
import { expectArray, expectFunction, expectObject, expectString } from '../arguments.js';
import type { HttpClient } from '../http/index.js';
import { discoverEndpoints, type AuthEndpoints } from './discovery.js';
import { requestDeviceCode, type DeviceCode, type QuotaBackoff } from './device.js';
import { pollForTokens, type PollEvent } from './poll.js';
import type { TokenSet } from './store/types.js';
import { idTokenClaims, type ClientCredentials } from './tokens.js';
import { authHttpClient } from './transport.js';

export interface DeviceLoginOptions extends ClientCredentials {
  authUrl: string;
  /** Already checked against the allow-list (scopes.ts `resolveScopes`). */
  scopes: readonly string[];
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
  endpoints: AuthEndpoints;
  tokens: TokenSet;
  /** Who approved, from the ID token when `openid` was asked for. */
  account: { issuer?: string; sub?: string; email?: string } | undefined;
}

export async function deviceLogin(options: DeviceLoginOptions): Promise<DeviceLoginResult> {
  expectObject('deviceLogin', 'options', options);
  expectString('deviceLogin', 'options.authUrl', options.authUrl, 'the authorization server\'s address');
  expectString('deviceLogin', 'options.clientId', options.clientId);
  expectArray('deviceLogin', 'options.scopes', options.scopes, 'the scopes, as resolveScopes returns them');
  expectFunction('deviceLogin', 'options.onCode', options.onCode, 'a function that shows the code and the address');
  const http = options.http ?? authHttpClient();
  try {
    const endpoints = options.endpoints ?? await discoverEndpoints(http, options.authUrl, options.signal);
    const device = await requestDeviceCode(http, endpoints, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      scopes: options.scopes,
      ...(options.quotaBackoff ? { quotaBackoff: options.quotaBackoff } : {}),
      ...(options.onQuotaWait ? { onQuotaWait: options.onQuotaWait } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    options.onCode(device, endpoints);
    const tokens = await pollForTokens(http, endpoints, device, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.onPoll ? { onPoll: options.onPoll } : {}),
    });
    return { endpoints, tokens, account: idTokenClaims(tokens.idToken) };
  } finally {
    if (!options.http) http.close();
  }
}
