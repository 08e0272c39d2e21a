/** The core's retry loop: attempts under the retry policy until a final accepted answer, or a typed error. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.js';
import { redactUrl } from '../redact.js';
import { failedOnReused, type Answer, type Attempts } from './attempt.js';
import { isAccepted, isStreamed, parseErrorBody, readLimited, toSearchParams } from './bodies.js';
import { HttpError, NetworkError } from './errors.js';
import { idempotentMethods } from './keep-alive.js';
import { failure } from './failures.js';
import { decideRetry, definePolicy, errorReasons, type RetryPolicy } from './retry.js';
import type { HookContext, HttpHooks, RequestOptions, RetryNotice, Timeouts } from './types.js';
import { announceWait, type WaitLimits } from '../waits.js';

const errorBodyLimit = 64 * 1024;
/** A streamed request body is gone once sent: such a request gets no second attempt. */
const noRetries = definePolicy({ retries: 0 });
/** How a reused connection that the server ended before answering fails (Node says ECONNRESET for "socket hang up"). */
const endedConnectionCodes = new Set(['ECONNRESET', 'EPIPE']);
/** Resends hooks may ask for in one request (a renewed credential, a step-up) unless the policy says, so that none can loop. */
const defaultHookResends = 3;

export interface SendSettings {
  attempts: Attempts;
  logger: Logger;
  /** The client's hooks (its `onRetry` among the `beforeRetry` ones). */
  hooks: HttpHooks;
  baseRetry: RetryPolicy;
  limits: WaitLimits;
  baseTimeouts: Timeouts;
  baseMaxRedirects: number;
  resolveUrl(url: string | URL): URL;
  /** The client's wait before a retry (`HttpClientOptions.sleep`); a timer when absent. */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
}

/** The client's hooks, then the request's; or two plugins' hooks, the first's first (a throttle, then bearer auth). */
export function joinHooks(client: HttpHooks, request: HttpHooks | undefined): HttpHooks {
  if (!request) return client;
  return {
    beforeRequest: [...(client.beforeRequest ?? []), ...(request.beforeRequest ?? [])],
    afterResponse: [...(client.afterResponse ?? []), ...(request.afterResponse ?? [])],
    beforeRetry: [...(client.beforeRetry ?? []), ...(request.beforeRetry ?? [])],
  };
}

export interface Sent {
  answer: Answer;
  attempts: number;
  url: URL;
}

/**
 * Runs attempts under the retry policy until a final accepted response, or throws a typed error.
 *
 * The loop is ours, not got's `retry`, because got's cannot express the policies: it retries a status only with
 * `throwHttpErrors`, by got's fixed idea of success (2xx, 304) rather than the caller's `accept` (204, 404, a 302
 * handed back, any status); it reads the whole error body into memory first (we keep 64 KiB); and in stream mode,
 * which every call here uses so that body limits hold while the body streams in, got does not resend by itself but
 * hands a new stream to a `retry` listener — a loop on the caller's side anyway. The decision is `decideRetry` on
 * the policy (data), with Retry-After, per-status schedules and the budget.
 */
export function createSender(settings: SendSettings): (request: RequestOptions, defaultTotal: number | undefined) => Promise<Sent> {
  const {
    attempts: { open, agents },
    logger,
    baseRetry,
    limits,
    baseTimeouts,
    baseMaxRedirects,
    resolveUrl,
  } = settings;

  async function retrying(
    context: HookContext,
    hooks: HttpHooks,
    decision: { reason: string; delayMs: number },
    attempt: number,
    policy: RetryPolicy,
  ): Promise<void> {
    const { method, url } = context;
    logger.debug(`${method} ${redactUrl(url)}: ${decision.reason}; retrying in ${decision.delayMs} ms`);
    const notice: RetryNotice = { method, url: redactUrl(url), reason: decision.reason, delayMs: decision.delayMs, attempt };
    for (const hook of hooks.beforeRetry ?? []) await hook(notice, context);
    if (!policy.quiet)
      announceWait({
        kind: 'retry',
        host: url.host,
        reason: decision.reason,
        at: Date.now() + decision.delayMs,
        delayMs: decision.delayMs,
        attempt: attempt + 1,
        attempts: policy.retries + 1,
      });
  }

  return async function send(request: RequestOptions, defaultTotal: number | undefined): Promise<Sent> {
    const url = resolveUrl(request.url);
    const params = toSearchParams(request.searchParams);
    if (params) for (const [name, value] of params) url.searchParams.append(name, value);
    const method = (request.method ?? 'GET').toUpperCase();
    const chosen = isStreamed(request.body) ? noRetries : (request.retry ?? baseRetry);
    // A Retry-After longer than the longest wait allowed is not waited for (the error says what the server asked).
    const policy =
      limits.maxWaitMs !== undefined && chosen.retryAfterMaxMs > limits.maxWaitMs ? { ...chosen, retryAfterMaxMs: Math.max(1, limits.maxWaitMs) } : chosen;
    const timeouts: Timeouts = { ...baseTimeouts, total: defaultTotal, ...request.timeouts };
    const maxRedirects = request.maxRedirects ?? baseMaxRedirects;
    const wait = async (delayMs: number) =>
      settings.sleep ? settings.sleep(delayMs, request.signal) : sleep(delayMs, undefined, request.signal ? { signal: request.signal } : undefined);
    // A reused connection the server ended before any answer is the pool's race (its idle timeout, a close it did not
    // announce), not the service failing: the request goes once more, at once and outside the policy's count — as Go's
    // net/http decides (shouldRetryRequest): whatever its method when the write itself failed (EPIPE: nothing reached
    // the server), else only when it may be repeated (an idempotent method, an Idempotency-Key, or a request its caller
    // marks `repeatable`, such as a token revocation), since a server may have acted on a POST before it dropped the
    // connection — a second authorization-code exchange revokes the first one's tokens (RFC 6749 §4.1.2). keep-alive.ts keeps a pooled connection whose close has arrived from being written
    // to, so what remains here is the narrow race. Never a streamed body: it is gone once read.
    const resendable = !isStreamed(request.body);
    const replayable =
      request.repeatable === true ||
      idempotentMethods.has(method) ||
      Object.keys(request.headers ?? {}).some((name) => name.toLowerCase() === 'idempotency-key');
    let resent = false;
    let hookResends = 0;
    let waitedMs = 0;
    const hooks = joinHooks(settings.hooks, request.hooks);
    const context: HookContext = { method, url: new URL(url), request, headers: {}, searchParams: {}, attempt: 1, state: new Map() };
    for (let attempt = 1; ; attempt += 1) {
      context.attempt = attempt;
      for (const hook of hooks.beforeRequest ?? []) await hook(context);
      const sent = Object.keys(context.headers).length === 0 ? request : { ...request, headers: { ...request.headers, ...context.headers } };
      let target = url;
      if (Object.keys(context.searchParams).length > 0) {
        target = new URL(url);
        for (const [name, value] of Object.entries(context.searchParams)) target.searchParams.set(name, value);
      }
      let answer: Answer;
      try {
        answer = await open(sent, target, timeouts, { attempt, attempts: policy.retries + 1 });
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        const typed = failure(agents, error, method, url, attempt, maxRedirects);
        if (!(typed instanceof NetworkError)) throw typed;
        if (resendable && !resent && failedOnReused(error) && (typed.errorCode === 'EPIPE' || (replayable && endedConnectionCodes.has(typed.errorCode)))) {
          resent = true;
          logger.debug(`${method} ${redactUrl(url)}: the reused connection ended before an answer (${typed.errorCode}); sending again on a new one`);
          attempt -= 1;
          continue;
        }
        const decision = decideRetry({ policy, retryIndex: attempt - 1, method, errorCode: typed.errorCode, waitedMs });
        if (!decision.retry) throw typed;
        await retrying(context, hooks, decision, attempt, policy);
        waitedMs += decision.delayMs;
        await wait(decision.delayMs);
        continue;
      }
      // An answer the request does not accept has its error body read first (the core's error holds it either way), so
      // that a hook can decide on what the service said; an accepted answer's body stays the caller's.
      const accepted = isAccepted(request.accept, answer.status);
      let errorBody: { body?: unknown; rawBody?: string } | undefined;
      if (!accepted) {
        let raw: Buffer;
        try {
          raw = await readLimited(answer.body, errorBodyLimit, () => 'the error body');
        } catch {
          raw = Buffer.alloc(0);
        } finally {
          answer.finish();
        }
        errorBody = parseErrorBody(raw);
      }
      let resend: 'resend' | void = undefined;
      try {
        for (const hook of hooks.afterResponse ?? []) {
          const head = { status: answer.status, headers: answer.headers, url: answer.url, ...(errorBody ? { errorBody } : {}) };
          if ((await hook(head, context)) === 'resend') resend = 'resend';
        }
      } catch (error) {
        answer.finish();
        throw error;
      }
      if (resend && resendable && hookResends < (policy.hookResends ?? defaultHookResends)) {
        hookResends += 1;
        // Read to its end (within the error body's limit) so the connection can serve the resend.
        if (accepted)
          await readLimited(answer.body, errorBodyLimit, () => 'the body')
            .catch(() => undefined)
            .finally(answer.finish);
        logger.debug(`${method} ${redactUrl(url)}: answered ${answer.status}; a hook sends it once more`);
        attempt -= 1;
        continue;
      }
      if (accepted) return { answer, attempts: attempt, url };

      const reasons = policy.reasons?.[answer.status] ? errorReasons(errorBody?.body) : undefined;
      const decision = decideRetry({
        policy,
        retryIndex: attempt - 1,
        method,
        status: answer.status,
        retryAfter: answer.headers['retry-after'],
        reasons,
        waitedMs,
      });
      if (decision.retry) {
        await retrying(context, hooks, decision, attempt, policy);
        waitedMs += decision.delayMs;
        await wait(decision.delayMs);
        continue;
      }
      throw new HttpError({
        status: answer.status,
        method,
        url: answer.url || url.toString(),
        headers: answer.headers,
        attempts: attempt,
        ...errorBody,
      });
    }
  };
}
