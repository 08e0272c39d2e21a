/**
 * Asking for the device and user codes (DEV-EP-DEVICE-CODE), with the spec's quota error backed off and retried
 * (DEV-ERR-CODE-QUOTA), and the answer checked before anything of it reaches a terminal.
 */
import { terminalText } from '../terminal-text.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode } from '../errors.js';
import { ProtocolError, parseRetryAfter, type HttpClient } from '../http/index.js';
import { deviceAuthorizationRequest, errorResponse, optionalSeconds, requiredString, type OAuthAnswer } from '../oauth/index.js';
import { DeviceLoginError, checkAuthServer, fromOAuth, oauthError } from './errors.js';
import type { AuthEndpoints } from './discovery.js';
import { oauthConfig } from './tokens.js';

export interface DeviceCode {
  deviceCode: string;
  /** Exactly as the server sent it: case-sensitive, never altered (DEV-LIM-USER-CODE-UNALTERED). */
  userCode: string;
  /** `verification_url` (Google) or `verification_uri` (RFC 8628), unaltered. */
  verificationUrl: string;
  /** RFC 8628's URL with the code in it, when the server gives one. */
  verificationUrlComplete: string | undefined;
  expiresIn: number;
  /** Seconds between polls (5 when the server gives none, as RFC 8628 §3.2 says). */
  interval: number;
  /** When the codes stop being valid, ms since the epoch. */
  expiresAt: number;
}

export interface QuotaBackoff {
  /** Retries after the first quota refusal (default 3). */
  retries: number;
  /** First wait, doubled each time (default 5 s), unless the server says Retry-After. */
  initialMs: number;
  /** Longest single wait (default 60 s). */
  maxMs: number;
}

export const defaultQuotaBackoff: QuotaBackoff = { retries: 3, initialMs: 5_000, maxMs: 60_000 };

export interface DeviceCodeRequest {
  clientId: string;
  /**
   * Sent with the code request when the client has one: RFC 8628 §3.1 asks a confidential client to authenticate there
   * (oidc-provider refuses it otherwise); Google's endpoint takes it alongside client_id.
   */
  clientSecret?: string | undefined;
  scopes: readonly string[];
  quotaBackoff?: Partial<QuotaBackoff>;
  signal?: AbortSignal;
  now?: () => number;
  /** Told before each wait after a quota refusal. */
  onQuotaWait?: (waitMs: number, attempt: number) => void;
}

/** Printable US-ASCII only (DEV-LIM-DISPLAY-ASCII): anything else could drive the terminal it is printed on. */
const printableAscii = /^[\x20-\x7e]+$/;

function checkDisplayable(value: string, field: string, url: string): string {
  if (!printableAscii.test(value))
    throw new ProtocolError(
      `the device code answer from ${url} has a ${field} with characters outside printable US-ASCII`,
      'refused rather than printed: it could drive the terminal',
    );
  return value;
}

function checkUrl(value: string, field: string, url: string): string {
  checkDisplayable(value, field, url);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ProtocolError(`the device code answer from ${url} has a ${field} that is not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new ProtocolError(`the device code answer from ${url} has a ${field} that is not http(s)`);
  return value;
}

export function readDeviceCode(answer: OAuthAnswer, now: number): DeviceCode {
  try {
    return deviceCodeOf(answer, now);
  } catch (error) {
    throw fromOAuth(error);
  }
}

function deviceCodeOf(answer: OAuthAnswer, now: number): DeviceCode {
  const what = 'the device code answer';
  const deviceCode = requiredString(answer, 'device_code', what);
  const userCode = checkDisplayable(requiredString(answer, 'user_code', what), 'user_code', answer.url);
  const rawUrl = typeof answer.json?.verification_url === 'string' ? answer.json.verification_url : answer.json?.verification_uri;
  if (typeof rawUrl !== 'string' || rawUrl === '') throw new ProtocolError(`${what} from ${answer.url} has neither verification_url nor verification_uri`);
  const complete = answer.json?.verification_uri_complete ?? answer.json?.verification_url_complete;
  const expiresIn = optionalSeconds(answer, 'expires_in', what);
  if (expiresIn === undefined || expiresIn <= 0) throw new ProtocolError(`${what} from ${answer.url} has no positive expires_in`);
  const interval = optionalSeconds(answer, 'interval', what) ?? 5;
  return {
    deviceCode,
    userCode,
    verificationUrl: checkUrl(rawUrl, 'verification_url', answer.url),
    verificationUrlComplete: typeof complete === 'string' && complete !== '' ? checkUrl(complete, 'verification_uri_complete', answer.url) : undefined,
    expiresIn,
    interval: Math.max(interval, 1),
    expiresAt: now + expiresIn * 1000,
  };
}

function isQuotaRefusal(answer: OAuthAnswer): boolean {
  return answer.json?.error_code === 'rate_limit_exceeded' || answer.json?.error === 'rate_limit_exceeded' || answer.status === 429;
}

export async function requestDeviceCode(http: HttpClient, endpoints: AuthEndpoints, request: DeviceCodeRequest): Promise<DeviceCode> {
  const now = request.now ?? Date.now;
  const backoff = { ...defaultQuotaBackoff, ...request.quotaBackoff };
  const config = oauthConfig(http, endpoints, request);
  for (let attempt = 0; ; attempt++) {
    const answer = await deviceAuthorizationRequest(config, { scope: request.scopes.join(' ') }, request.signal);
    if (answer.status === 200) return readDeviceCode(answer, now());
    if (isQuotaRefusal(answer)) {
      if (attempt >= backoff.retries) {
        throw new DeviceLoginError(
          `the authorization server refused the code request ${attempt + 1} times: the quota for this client id is used up (rate_limit_exceeded)`,
          {
            code: 'AUTH_QUOTA',
            exitCode: ExitCode.remote,
            oauthError: 'rate_limit_exceeded',
            status: answer.status,
            hint: 'wait a few minutes and run `gantry auth login` again; many logins at once with one client id share its quota',
          },
        );
      }
      const wait = Math.min(parseRetryAfter(answer.headers['retry-after'], now()) ?? backoff.initialMs * 2 ** attempt, backoff.maxMs);
      request.onQuotaWait?.(wait, attempt + 1);
      await sleep(wait, undefined, request.signal ? { signal: request.signal } : undefined);
      continue;
    }
    const refused = errorResponse(answer);
    if (refused) throw oauthError(refused.error, refused.description, answer.status);
    throw new ProtocolError(
      `POST ${endpoints.deviceAuthorization} answered ${answer.status}${answer.text ? `: ${terminalText(answer.text)}` : ''}`,
      answer.status >= 500 ? 'the authorization server failed; try again later' : checkAuthServer('is it an authorization server with the device grant?'),
    );
  }
}
