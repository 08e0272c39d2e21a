/**
 * Time as the limiter sees it. Injected, so that a test of a one-minute wait does not take a minute: every wait and
 * every window of lib/platform goes through `now()` and `sleep()`.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms` (at once for ms ≤ 0); rejects with the signal's reason when it is aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    ms <= 0 ? (signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve()) : delay(ms, undefined, signal ? { signal } : undefined),
};
