/**
 * A clock for tests of long waits: `sleep` does not wait in real time. Whenever someone sleeps, the earliest sleeper
 * is woken a few real milliseconds later and the clock jumps to its time, so a one-minute hold takes milliseconds
 * while everything measured on the clock (`now()`) sees the minute. Real I/O goes on in real time meanwhile.
 * With `{ auto: false }` time moves only when the test calls `advance(ms)`.
 */
import type { Clock } from '../../../lib/platform/index.js';

interface Sleeper {
  at: number;
  resolve(): void;
}

export class VirtualClock implements Clock {
  private time: number;
  private readonly sleepers: Sleeper[] = [];
  private scheduled = false;
  /** Every sleep asked for, in ms: what the client waited. */
  readonly slept: number[] = [];

  private readonly auto: boolean;

  constructor(start = Date.now(), options: { auto?: boolean } = {}) {
    this.time = start;
    this.auto = options.auto ?? true;
  }

  /** Moves the clock on and wakes every sleeper due by then. */
  advance(ms: number): void {
    this.time += ms;
    this.sleepers.sort((a, b) => a.at - b.at);
    while (this.sleepers.length > 0 && this.sleepers[0]!.at <= this.time) this.sleepers.shift()!.resolve();
  }

  now(): number {
    return this.time;
  }

  /** Sleeps neither woken nor aborted yet: timers a real clock would still keep the process alive for. */
  get pending(): number {
    return this.sleepers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    this.slept.push(ms);
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = { at: this.time + ms, resolve };
      this.sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          const index = this.sleepers.indexOf(sleeper);
          if (index >= 0) this.sleepers.splice(index, 1);
          reject(signal.reason);
        },
        { once: true },
      );
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || !this.auto) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      this.sleepers.sort((a, b) => a.at - b.at);
      const next = this.sleepers.shift();
      if (next) {
        this.time = Math.max(this.time, next.at);
        next.resolve();
      }
      if (this.sleepers.length > 0) this.schedule();
    }, 3);
  }
}
