/**
 * The queue in front of the platform. Every attempt of every request waits here for `BudgetStore.reserve` to grant
 * it, in order of arrival. A request refused for one scope blocks the requests behind it in the same scope (its
 * endpoint, its resource, content creation) but not the others, so a held endpoint holds its whole queue while the
 * rest goes on; a refusal for concurrency or CPU time stops everything. The queue is woken by a release (in this
 * process) or by a timer at the earliest time a refusal named.
 */
import type { BudgetStore, Reservation, Scope } from './budget.js';
import type { Clock } from './clock.js';
import type { Logger } from '../log.js';
import { announceWait, longWaitMs } from '../http/index.js';

interface Waiter {
  reservation: Reservation;
  scopes: string[];
  resolve(): void;
  reject(error: unknown): void;
  reason: string | undefined;
  since: number;
  /** The longest hold this request accepts; a reset further away rejects it with `tooLong`'s error. */
  maxWaitMs: number;
  tooLong: ((retryAt: number, reason: string) => Error) | undefined;
}

function scopesOf(r: Reservation): string[] {
  return [`${r.identity} endpoint:${r.endpoint}`, `${r.identity} resource:${r.resource}`, ...(r.creation ? [`${r.identity} creation`] : [])];
}

function blockedScope(r: Reservation, scope: Scope): string | undefined {
  if (scope === 'endpoint') return `${r.identity} endpoint:${r.endpoint}`;
  if (scope === 'resource') return `${r.identity} resource:${r.resource}`;
  if (scope === 'creation') return `${r.identity} creation`;
  return undefined;
}

export class Limiter {
  private readonly queue: Waiter[] = [];
  private pumping = false;
  private again = false;
  private wakeAt: number | undefined;
  private wakeTimer: AbortController | undefined;

  constructor(
    readonly store: BudgetStore,
    readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    // A release wakes the queue on the next turn of the event loop, not inside the release: the request that released
    // still has its answer to read, and a rate-limit answer must hold its endpoint (or resource) before a waiter takes
    // the budget it freed. Woken at once, a request queued behind a refused one (for the first answer about a
    // resource, or for a concurrency slot) was granted and sent into the endpoint the platform had just closed.
    store.onRelease(() => setImmediate(() => this.pump()));
  }

  /** Requests waiting for the budgets. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Resolves when the reservation is granted; `first` puts a retried request ahead of those that came after it. */
  acquire(
    reservation: Reservation,
    options: { first?: boolean; signal?: AbortSignal | undefined; maxWaitMs?: number; tooLong?: (retryAt: number, reason: string) => Error } = {},
  ): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        reservation,
        scopes: scopesOf(reservation),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject,
        reason: undefined,
        since: this.clock.now(),
        maxWaitMs: options.maxWaitMs ?? Number.POSITIVE_INFINITY,
        tooLong: options.tooLong,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (options.first) this.queue.unshift(waiter);
      else this.queue.push(waiter);
      this.pump();
    });
  }

  /** Tries the queue in order; runs one pass at a time, and another when woken during one. */
  pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.drain().finally(() => {
      this.pumping = false;
      // Woken after the last pass decided but before this ran (a timer, a release): that wake-up is not lost.
      if (this.again) this.pump();
    });
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      const blocked = new Set<string>();
      let earliest = Number.POSITIVE_INFINITY;
      for (const waiter of [...this.queue]) {
        if (waiter.scopes.some((s) => blocked.has(s))) continue;
        let result;
        try {
          result = await this.store.reserve(waiter.reservation, this.clock.now());
        } catch (error) {
          this.remove(waiter);
          waiter.reject(error);
          continue;
        }
        if (!this.queue.includes(waiter)) {
          // Aborted while the store decided: give a granted slot back rather than leak it.
          if (result.granted) await this.store.release(waiter.reservation, { now: this.clock.now(), durationMs: 0, answered: false });
          continue;
        }
        if (result.granted) {
          this.remove(waiter);
          waiter.resolve();
          continue;
        }
        const holdMs = result.retryAt !== undefined ? result.retryAt - this.clock.now() : 0;
        if (result.retryAt !== undefined && holdMs > waiter.maxWaitMs && waiter.tooLong) {
          this.remove(waiter);
          waiter.reject(waiter.tooLong(result.retryAt, result.reason));
          continue;
        }
        if (result.retryAt !== undefined) earliest = Math.min(earliest, result.retryAt);
        if (waiter.reason !== result.reason && result.retryAt !== undefined && holdMs >= longWaitMs) {
          this.logger.info(`platform: holding ${waiter.reservation.endpoint}: ${result.reason}`);
          const what =
            result.scope === 'resource'
              ? `the ${waiter.reservation.resource} resource`
              : result.scope === 'endpoint'
                ? waiter.reservation.endpoint
                : result.scope === 'creation'
                  ? 'content creation'
                  : `the platform's ${result.scope}`;
          announceWait({ kind: 'rate-limit', what, until: result.retryAt, limit: result.scope === 'resource' ? 'primary' : 'secondary' });
        }
        waiter.reason = result.reason;
        const scope = blockedScope(waiter.reservation, result.scope);
        if (scope === undefined) break; // concurrency or CPU time: nothing else may go either
        blocked.add(scope);
      }
      // A timer only while someone needs it: a stale one would keep the process alive for nothing.
      if (Number.isFinite(earliest)) this.scheduleWake(earliest);
      else this.cancelWake();
    } while (this.again);
  }

  private remove(waiter: Waiter): void {
    const index = this.queue.indexOf(waiter);
    if (index >= 0) this.queue.splice(index, 1);
  }

  private cancelWake(): void {
    this.wakeTimer?.abort();
    this.wakeTimer = undefined;
    this.wakeAt = undefined;
  }

  private scheduleWake(at: number): void {
    if (this.wakeAt !== undefined && this.wakeAt <= at && this.wakeTimer && !this.wakeTimer.signal.aborted) return;
    this.wakeTimer?.abort();
    const timer = new AbortController();
    this.wakeTimer = timer;
    this.wakeAt = at;
    this.clock.sleep(Math.max(0, at - this.clock.now()), timer.signal).then(
      () => {
        if (this.wakeTimer === timer) {
          this.wakeTimer = undefined;
          this.wakeAt = undefined;
        }
        this.pump();
      },
      () => undefined,
    );
  }
}

const limiters = new WeakMap<BudgetStore, Map<Clock, Limiter>>();

/** One queue per store and clock: clients of one process that share a store share its queue. */
export function limiterFor(store: BudgetStore, clock: Clock, logger: Logger): Limiter {
  let byClock = limiters.get(store);
  if (!byClock) {
    byClock = new Map();
    limiters.set(store, byClock);
  }
  let limiter = byClock.get(clock);
  if (!limiter) {
    limiter = new Limiter(store, clock, logger);
    byClock.set(clock, limiter);
  }
  return limiter;
}
