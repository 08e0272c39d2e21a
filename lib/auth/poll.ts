/**
 * Polling the token endpoint until the person decides (DEV-EP-POLL-TOKEN, DEV-ST-*). The `error` field decides, not the
 * status: Google answers `authorization_pending` with 428 and `slow_down` with 403, RFC 8628 servers both with 400.
 * The first poll waits one interval; `slow_down` adds 5 s to every later poll (or takes the server's larger `interval`)
 * and is never a reason to give up; Retry-After stretches one wait; the code's `expires_in` ends the polling, and
 * whatever the server says after it, the code has expired (AMB-17). A transient failure (a 5xx, a dropped connection)
 * is polled through until the deadline. The abort signal stops it at once, and a stop is a cancellation even when
 * the code has expired meanwhile. An `expired_token` the server sends is read from the one table of poll errors.
 */
import { terminalText } from '../terminal-text.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode } from '../errors.js';
import { NetworkError, ProtocolError, parseRetryAfter, type HttpClient } from '../http/index.js';
import { deviceCodeGrantRequest, errorResponse, grantTypes } from '../oauth/index.js';
import { DeviceLoginError, checkAuthServer, expiredError, oauthError } from './errors.js';
import type { AuthEndpoints } from './discovery.js';
import type { DeviceCode } from './device.js';
import type { TokenSet } from './store/types.js';
import { oauthConfig, readTokens, type ClientCredentials } from './tokens.js';

export const deviceGrantType = grantTypes.deviceCode;
/** RFC 8628 §3.5: what each slow_down adds to the interval. */
export const slowDownStepMs = 5_000;
/** Failures in a row (5xx, connection errors) after which polling gives up before the deadline. */
const maxTransientFailures = 5;

export interface PollEvent {
  kind: 'pending' | 'slow_down' | 'retry';
  /** The wait before the next poll, ms. */
  nextInMs: number;
  /** What the server or the network said, for a retry. */
  detail?: string;
}

export interface PollOptions extends ClientCredentials {
  signal?: AbortSignal;
  now?: () => number;
  onPoll?: (event: PollEvent) => void;
}

function cancelled(): DeviceLoginError {
  return new DeviceLoginError('login cancelled while waiting for approval', {
    code: 'AUTH_CANCELLED',
    exitCode: ExitCode.checkFailed,
    hint: 'run `gantry auth login` again when ready',
  });
}

async function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, signal ? { signal } : undefined);
  } catch (error) {
    if ((error as { name?: string }).name === 'AbortError') throw cancelled();
    throw error;
  }
}

export async function pollForTokens(http: HttpClient, endpoints: AuthEndpoints, device: DeviceCode, options: PollOptions): Promise<TokenSet> {
  const now = options.now ?? Date.now;
  let intervalMs = device.interval * 1000;
  let nextWait = intervalMs;
  let failures = 0;
  const config = oauthConfig(http, endpoints, options);
  for (;;) {
    if (options.signal?.aborted) throw cancelled();
    const remaining = device.expiresAt - now();
    if (remaining <= 0) throw expiredError();
    // The last wait stops at the deadline: a poll then would ask about a code that no longer exists.
    if (nextWait >= remaining) {
      await wait(remaining, options.signal);
      throw expiredError();
    }
    await wait(nextWait, options.signal);
    let answer;
    try {
      answer = await deviceCodeGrantRequest(config, device.deviceCode, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw cancelled();
      if (!(error instanceof NetworkError) || ++failures >= maxTransientFailures) throw error;
      nextWait = intervalMs;
      options.onPoll?.({ kind: 'retry', nextInMs: nextWait, detail: error.message });
      continue;
    }
    if (now() >= device.expiresAt) throw expiredError();
    if (answer.status === 200 && answer.json?.access_token !== undefined) return readTokens(answer, now());
    const refused = errorResponse(answer);
    const error = refused?.error;
    const retryAfter = parseRetryAfter(answer.headers['retry-after'], now());
    if (error === 'authorization_pending') {
      failures = 0;
      nextWait = Math.max(intervalMs, retryAfter ?? 0);
      options.onPoll?.({ kind: 'pending', nextInMs: nextWait });
      continue;
    }
    if (error === 'slow_down') {
      failures = 0;
      const serverInterval = typeof answer.json?.interval === 'number' ? answer.json.interval * 1000 : 0;
      intervalMs = Math.max(intervalMs + slowDownStepMs, serverInterval);
      nextWait = Math.max(intervalMs, retryAfter ?? 0);
      options.onPoll?.({ kind: 'slow_down', nextInMs: nextWait });
      continue;
    }
    if (error) throw oauthError(error, refused?.description, answer.status);
    if (answer.status >= 500 || answer.status === 429) {
      if (++failures >= maxTransientFailures)
        throw new ProtocolError(
          `POST ${endpoints.token} answered ${answer.status} ${failures} times in a row while polling`,
          'the authorization server is failing; run `gantry auth login` again later',
        );
      nextWait = Math.max(intervalMs, retryAfter ?? 0);
      options.onPoll?.({ kind: 'retry', nextInMs: nextWait, detail: `${answer.status}` });
      continue;
    }
    throw new ProtocolError(
      `POST ${endpoints.token} answered ${answer.status} without an OAuth error${answer.text ? `: ${terminalText(answer.text)}` : ''}`,
      checkAuthServer('is it an authorization server with the device grant?'),
    );
  }
}
