// Waits a person would otherwise sit through in silence — an answer that does not come, a retry's backoff, a hold
// until a rate limit resets — told as they begin, once, for every client: the HTTP core and the areas that wait on
// their own (the platform's budgets) announce them here, and whoever listens (the command prints them on stderr)
// hears them all. And the two bounds a person sets for every group: the longest wait for an answer (GANTRY_TIMEOUT,
// `--timeout`) and the longest wait for a rate limit (GANTRY_MAX_WAIT, `--max-wait`).
import { UsageError } from './errors.js';
import { expectFunction, expectObject, expectOptions, parseDuration } from './arguments.js';

export type WaitNotice =
  /** An attempt has had no answer for `afterMs`; it gives up at `givesUpAt` (epoch ms). */
  | { kind: 'answer'; host: string; afterMs: number; givesUpAt: number; attempt?: number; attempts?: number }
  /** An attempt failed; the next one goes at `at` (epoch ms). */
  | { kind: 'retry'; host: string; reason: string; at: number; delayMs: number; attempt: number; attempts: number }
  /**
   * A rate limit is spent: nothing for `what` is sent until `until` (epoch ms); `limit` which one, `refused` when the
   * platform refused a request (403/429) rather than the client holding back.
   */
  | { kind: 'rate-limit'; what: string; until: number; limit?: 'primary' | 'secondary'; refused?: boolean };

/** An attempt without an answer for this long is told. */
export const answerNoticeMs = 10_000;
/** A retry's wait this long or longer is told (a shorter one only the first time: see the command's listener). */
export const longWaitMs = 5_000;

const listeners = new Set<(notice: WaitNotice) => void>();

/** `listener` hears every wait announced from now on; returns what stops it. */
export function onWait(listener: (notice: WaitNotice) => void): () => void {
  expectFunction('onWait', 'listener', listener);
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Tells every listener; false when nobody listens (a library caller then says it in its own log). */
export function announceWait(notice: WaitNotice): boolean {
  expectObject('announceWait', 'notice', notice, 'a wait notice: { kind, … }');
  for (const listener of [...listeners]) {
    try {
      listener(notice);
    } catch {
      // a listener's failure is not the request's
    }
  }
  return listeners.size > 0;
}

/** `HH:MM:SS`, local time: when a wait ends, as a person reads a clock. */
export function clockTime(epochMs: number): string {
  if (typeof epochMs !== 'number' || !Number.isFinite(epochMs))
    throw new UsageError(`clockTime: epochMs must be a number of milliseconds, got ${typeof epochMs}`, { code: 'INVALID_ARGUMENT' });
  return new Date(epochMs).toTimeString().slice(0, 8);
}

/** One line for a notice; `maxWaitFlag` names how to stop a rate-limit wait sooner (`--max-wait` in the command). */
export function describeWait(notice: WaitNotice, maxWaitFlag = 'GANTRY_MAX_WAIT'): string {
  expectObject('describeWait', 'notice', notice, 'a wait notice: { kind, … }');
  switch (notice.kind) {
    case 'answer':
      return `waiting for ${notice.host}: no answer yet after ${Math.round(notice.afterMs / 1000)} s (${notice.attempts && notice.attempts > 1 ? `attempt ${notice.attempt ?? 1} of ${notice.attempts}, ` : ''}gives up at ${clockTime(notice.givesUpAt)})`;
    case 'retry':
      return `${notice.host}: ${notice.reason}; trying again at ${clockTime(notice.at)} (attempt ${notice.attempt} of ${notice.attempts})`;
    case 'rate-limit':
      return `rate limit for ${notice.what} exhausted: waiting until ${clockTime(notice.until)} (${maxWaitFlag} 60s to stop sooner)`;
  }
}

export interface WaitLimits {
  /** The longest wait for an answer, per attempt (until the headers, and any pause inside a body), in ms. */
  timeoutMs?: number;
  /** The longest wait for a rate limit to reset (or a Retry-After), in ms; longer is an error at once. */
  maxWaitMs?: number;
}

let given: WaitLimits = {};

/** The command's flags (`--timeout`, `--max-wait`): above the environment for every client made from now on. */
export function setWaitLimits(limits: WaitLimits): void {
  expectObject('setWaitLimits', 'limits', limits, 'an object: { timeoutMs?, maxWaitMs? }');
  given = { ...limits };
}

/**
 * The limits in force: the command's flags, else GANTRY_TIMEOUT and GANTRY_MAX_WAIT (`30`, `30s`, `1m30s`; GANTRY_MAX_WAIT
 * may be 0: never wait), else none — each client's own default then. A bad value is a UsageError before anything is sent.
 */
export function waitLimits(env: NodeJS.ProcessEnv = process.env): WaitLimits {
  expectOptions('waitLimits', env, 'env');
  const timeout = given.timeoutMs ?? (env.GANTRY_TIMEOUT ? parseDuration(env.GANTRY_TIMEOUT, 'GANTRY_TIMEOUT') : undefined);
  const maxWait = given.maxWaitMs ?? (env.GANTRY_MAX_WAIT ? parseDuration(env.GANTRY_MAX_WAIT, 'GANTRY_MAX_WAIT', { allowZero: true }) : undefined);
  return { ...(timeout !== undefined ? { timeoutMs: timeout } : {}), ...(maxWait !== undefined ? { maxWaitMs: maxWait } : {}) };
}
