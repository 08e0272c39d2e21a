/**
 * What a transfer (a resumable upload, a resumed download) does after a failure: which failures are worth another
 * attempt, how long to wait, and the error it ends with when the attempts are spent. A transfer keeps its own loop,
 * not the transport's policy: after a break it asks the service what it has and goes on from there, rather than
 * sending the same bytes again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode, GantryError, UsageError } from '../../errors.js';
import { NetworkError } from '../../http/index.js';
import { rateLimitReasons, StorageError } from '../errors.js';

export interface TransferRetry {
  /** Failed attempts in a row (without progress) before giving up; default 8. */
  attempts?: number;
  /** The first wait, in ms (default 1 s); each failure in a row doubles it, up to `maxMs` (default 32 s), jittered. */
  initialMs?: number;
  maxMs?: number;
}

export interface ResolvedRetry {
  attempts: number;
  initialMs: number;
  maxMs: number;
}

export function resolveRetry(where: string, retry: TransferRetry | undefined): ResolvedRetry {
  const out = { attempts: retry?.attempts ?? 8, initialMs: retry?.initialMs ?? 1_000, maxMs: retry?.maxMs ?? 32_000 };
  for (const [name, value] of Object.entries(out)) {
    if (!Number.isSafeInteger(value) || value < (name === 'attempts' ? 1 : 0)) {
      throw new UsageError(`${where}: retry.${name} must be a whole number${name === 'attempts' ? ' of at least 1' : ' of ms'}, got ${String(value)}`);
    }
  }
  return out;
}

/** Truncated exponential backoff with jitter (the wait is uniform in [d/2, d]), as Drive's documentation asks. */
export function backoffMs(retry: ResolvedRetry, failures: number): number {
  const full = Math.min(retry.maxMs, retry.initialMs * 2 ** Math.max(0, failures - 1));
  return Math.round(full / 2 + (Math.random() * full) / 2);
}

/** Waits `ms`; an abort ends the wait with the signal's own reason, as it ends a request. */
export async function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return;
  try {
    await sleep(ms, undefined, signal ? { signal } : undefined);
  } catch (error) {
    signal?.throwIfAborted();
    throw error;
  }
}

/** A failure that another attempt may get past: a broken connection, a timeout, 5xx, 408, 429, a rate-limit 403. */
export function isTransient(error: unknown): boolean {
  if (error instanceof NetworkError) return true;
  if (error instanceof StorageError) {
    if (error.status >= 500 || error.status === 408 || error.status === 429) return true;
    return error.status === 403 && error.reason !== undefined && (rateLimitReasons as readonly string[]).includes(error.reason);
  }
  return false;
}

/** A few words on a failure for a log line (never the URL: it may be a session URI). */
export function describeFailure(error: unknown): string {
  if (error instanceof NetworkError) return `the connection failed (${error.errorCode})`;
  if (error instanceof StorageError) return `the service answered ${error.status}${error.reason ? ` ${error.reason}` : ''}`;
  return 'the transfer failed';
}

/** The error a transfer ends with once its attempts are spent: exit 3, the last failure as its cause. */
export function gaveUp(what: string, attempts: number, last: unknown, hint: string): GantryError {
  return new GantryError(`${what} gave up after ${attempts} failed attempts in a row: ${describeFailure(last)}`, {
    code: 'STORAGE_TRANSFER_GAVE_UP',
    exitCode: ExitCode.remote,
    hint,
    cause: last,
  });
}

/**
 * A transfer's failures in a row: they start over when the transfer gets further than it ever got, and the transfer
 * gives up (gaveUp) after `retry.attempts` of them.
 */
export class FailureStreak {
  failures = 0;
  #best: number;

  constructor(
    private readonly retry: ResolvedRetry,
    best = 0,
  ) {
    this.#best = best;
  }

  /** The transfer has reached `position`: further than ever, the failures start over. */
  reached(position: number): void {
    if (position <= this.#best) return;
    this.#best = position;
    this.failures = 0;
  }

  /** A new start from byte 0 (a new upload session). */
  restart(): void {
    this.#best = 0;
    this.failures = 0;
  }

  /** One more failure: how long to wait before the next attempt, or, when it was the last, `what` gave up (thrown). */
  next(what: string, failure: unknown, hint: string): number {
    this.failures += 1;
    if (this.failures >= this.retry.attempts) throw gaveUp(what, this.failures, failure, hint);
    return backoffMs(this.retry, this.failures);
  }

  /** `attempt 2 of 8`: the attempt that comes after the wait. */
  get nextAttempt(): string {
    return `attempt ${this.failures + 1} of ${this.retry.attempts}`;
  }
}
