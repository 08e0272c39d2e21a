/**
 * The platform's limiter as hooks on the HTTP core's one retry loop (lib/http/send.ts), as Octokit's throttling
 * plugin wraps its request core. Per request: `beforeRequest` waits in the limiter's queue for the budgets (every
 * attempt, first, retried or resent); `afterResponse` reads the rate-limit headers, and on a rate-limit answer
 * (403/429) holds the endpoint (secondary) or resource (primary) before giving the budget back, then resends — the
 * next `beforeRequest` waits out the hold; `beforeRetry` gives back a slot a failed attempt still held. The core
 * retries 5xx and network failures under `platformRetryPolicy`, waiting on the client's clock.
 */
import { announceWait, parseRetryAfter, redactUrl, type AnswerHead, type HttpHooks } from '../http/index.js';
import type { Logger } from '../log.js';
import type { PrimaryObservation, Reservation } from './budget.js';
import type { Clock } from './clock.js';
import { PlatformRateLimitError, readErrorBody } from './errors.js';
import type { PlatformLimits } from './limits.js';
import type { Limiter } from './limiter.js';

const secondaryMessage = /secondary rate limit|abuse detection/i;

type Headers = Record<string, string | string[] | undefined>;

export function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function numberHeader(headers: Headers, name: string): number | undefined {
  const value = header(headers, name);
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** RATE-HDR-LIMIT, -REMAINING, -USED, -RESET, -RESOURCE. */
export function readRateLimitHeaders(headers: Headers, fallbackResource = 'core'): PrimaryObservation | undefined {
  const limit = numberHeader(headers, 'x-ratelimit-limit');
  const remaining = numberHeader(headers, 'x-ratelimit-remaining');
  const reset = numberHeader(headers, 'x-ratelimit-reset');
  if (remaining === undefined || reset === undefined) return undefined;
  return {
    resource: header(headers, 'x-ratelimit-resource') ?? fallbackResource,
    limit: limit ?? remaining,
    remaining,
    used: numberHeader(headers, 'x-ratelimit-used'),
    reset,
  };
}

function duration(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.max(0, Math.round(ms / 1000))} s`;
}

export interface ThrottleSettings {
  limiter: Limiter;
  clock: Clock;
  logger: Logger;
  limits: PlatformLimits;
  /** Where the longest wait came from, as an error names it. */
  maxWaitFrom: string;
  method: string;
  url: URL;
  reservation: Reservation;
  signal: AbortSignal | undefined;
}

/** One request's throttle: its hooks, and what the client needs of it once the core is done. */
export interface Throttle {
  hooks: HttpHooks;
  /** Attempts sent so far, every one counted (a rate limit's resend, a renewal's). */
  readonly attempts: number;
  /** The last refused answer's body, as the platform's errors read it. */
  readonly errorBody: { body?: unknown; rawBody?: string } | undefined;
  /** The request is over: gives back a budget slot still held (the answer's, with its headers, when `answered`). */
  done(answered: boolean): Promise<void>;
}

export function throttle(settings: ThrottleSettings): Throttle {
  const { limiter, clock, logger, limits, maxWaitFrom, method, url, reservation, signal } = settings;
  const shown = `${method} ${redactUrl(url)}`;
  const store = limiter.store;
  let attempts = 0;
  let limitRetries = 0;
  let backoffs = 0;
  /** Time spent waiting in the queue by attempts after the first, in ms: what a rate-limit error says it waited. */
  let waitedMs = 0;
  let held = false;
  let started = 0;
  let observation: PrimaryObservation | undefined;
  let errorBody: { body?: unknown; rawBody?: string } | undefined;

  async function release(answered: boolean): Promise<void> {
    if (!held) return;
    held = false;
    const now = clock.now();
    await store.release(reservation, answered ? { now, durationMs: now - started, observation, answered } : { now, durationMs: now - started, answered });
  }

  async function beforeRequest(): Promise<void> {
    await release(false); // a resend the core decided alone (a reused connection that ended) gives its slot back first
    attempts += 1;
    const attempt = attempts;
    const queued = clock.now();
    await limiter.acquire(reservation, {
      first: attempt > 1,
      signal,
      maxWaitMs: limits.maxWaitMs,
      tooLong: (retryAt, reason) =>
        new PlatformRateLimitError({
          kind: reason.includes('resource:') || reason.includes('budget') ? 'primary' : 'secondary',
          method,
          url: url.toString(),
          status: 0,
          waitedMs,
          attempts: attempt - 1,
          reason: `${reason}: a wait of ${duration(retryAt - clock.now())}, more than the ${duration(limits.maxWaitMs)} allowed (${maxWaitFrom})`,
          resumeAt: retryAt,
        }),
    });
    held = true;
    started = clock.now();
    observation = undefined;
    if (attempt > 1) waitedMs += started - queued;
  }

  async function afterResponse(answer: AnswerHead): Promise<'resend' | void> {
    const now = clock.now();
    const headers = answer.headers as Headers;
    const { status } = answer;
    observation = readRateLimitHeaders(headers, reservation.resource);
    logger.debug(`platform: ${shown} → ${status}${observation ? ` (${observation.resource} ${observation.remaining}/${observation.limit} left)` : ''}`);
    // An accepted answer keeps its slot until its body is read (`done`); a refused one gives it back here — only after
    // a rate-limit answer has put its hold in place, so nothing queued behind it is sent into an endpoint just closed.
    if (!answer.errorBody) return undefined;
    errorBody = answer.errorBody;
    try {
      if (status !== 403 && status !== 429) return undefined;
      const jsonBody = errorBody.body;
      const message = readErrorBody(jsonBody).message ?? '';
      const retryAfter = header(headers, 'retry-after');
      const remainingZero = numberHeader(headers, 'x-ratelimit-remaining') === 0;
      const reset = numberHeader(headers, 'x-ratelimit-reset');
      const secondary = secondaryMessage.test(message) || (retryAfter !== undefined && !remainingZero) || (status === 429 && !remainingZero);
      if (!secondary && !remainingZero) return undefined;
      const kind = secondary ? 'secondary' : 'primary';
      let waitMs: number;
      let why: string;
      const resumeAt = reset !== undefined ? reset * 1000 + limits.resetSkewMs : undefined;
      const asked = parseRetryAfter(retryAfter, now);
      if (kind === 'secondary' && asked !== undefined) {
        waitMs = asked; // RATE-ERR-SECONDARY-RETRY-AFTER
        why = `retry-after: ${retryAfter}`;
      } else if (remainingZero && resumeAt !== undefined) {
        waitMs = Math.max(0, resumeAt - now); // RATE-ERR-PRIMARY, RATE-ERR-SECONDARY-RESET
        why = `until x-ratelimit-reset ${new Date(reset! * 1000).toISOString()}`;
      } else {
        // RATE-ERR-SECONDARY-BACKOFF: a minute at least, then exponentially longer (with up to 10 % more, so that
        // workers refused together do not come back together).
        waitMs = Math.round(limits.secondaryWaitMs * limits.backoffFactor ** backoffs * (1 + 0.1 * Math.random()));
        backoffs += 1;
        why = `backing off ${duration(waitMs)}`;
      }
      const give = (reason: string) =>
        new PlatformRateLimitError({
          kind,
          method,
          url: url.toString(),
          status,
          waitedMs,
          attempts,
          body: jsonBody,
          reason,
          resumeAt: remainingZero ? resumeAt : now + waitMs,
        });
      if (limitRetries >= limits.rateLimitRetries) throw give(`${limits.rateLimitRetries} retries spent`);
      if (waitMs > limits.maxWaitMs)
        throw give(`the platform asks to wait ${duration(waitMs)}, more than the ${duration(limits.maxWaitMs)} allowed (${maxWaitFrom})`);
      limitRetries += 1;
      const until = now + waitMs;
      // While this request waits (in its next beforeRequest), the whole queue of its endpoint (secondary) or resource
      // (primary) waits with it.
      if (kind === 'secondary') {
        await store.hold(reservation.identity, `endpoint:${reservation.endpoint}`, until);
        if (reservation.creation) await store.hold(reservation.identity, 'creation', until);
      } else {
        await store.hold(reservation.identity, `resource:${reservation.resource}`, until);
        if (observation && observation.resource !== reservation.resource) await store.hold(reservation.identity, `resource:${observation.resource}`, until);
      }
      const what = kind === 'secondary' ? reservation.endpoint : `the ${reservation.resource} resource`;
      const said = announceWait({ kind: 'rate-limit', what, until, limit: kind, refused: true });
      // Said once: to whoever listens to the waits (the command), else in the log.
      const line = `platform: ${shown} hit the ${kind} rate limit (${status}); holding ${what} for ${duration(waitMs)} (${why}), retry ${limitRetries} of ${limits.rateLimitRetries}`;
      if (said) logger.info(line);
      else logger.warn(line);
      return 'resend';
    } finally {
      await release(true);
    }
  }

  return {
    hooks: {
      beforeRequest: [beforeRequest],
      afterResponse: [afterResponse],
      // The slot is not kept through the wait before a retry (a network failure's; a 5xx gave its own back).
      beforeRetry: [() => release(false)],
    },
    get attempts() {
      return attempts;
    },
    get errorBody() {
      return errorBody;
    },
    done: release,
  };
}
