/**
 * Where deliveries wait to be handled. The receiver adds a job per delivery, keyed by its GUID, and waits a few
 * seconds for it; workers run the handlers. The queue is also the record of what was done: a GUID that finished is
 * not run again (a redelivery is acknowledged), one that failed runs again when it is redelivered.
 *
 * `MemoryQueue` is the default: this process, at most `concurrency` jobs at once. A Redis queue (several receivers
 * and workers on several machines) implements the same interface.
 */
import { expectOptions } from '../arguments.js';
import { UsageError } from '../errors.js';
import type { WebhookErrorCode } from './errors.js';

export interface WebhookJob {
  /** The delivery's GUID (X-Platform-Delivery): the job's key. */
  id: string;
  event: string;
  action: string | undefined;
  hookId: string;
  /** The platform's installation of the app that the delivery is for, when the payload names one. */
  installationId: number | undefined;
  payload: Record<string, unknown>;
  receivedAt: string;
}

export type JobState = 'waiting' | 'running' | 'done' | 'failed';

export interface JobOutcome {
  state: JobState;
  /** The handler's error message when it failed. */
  error?: string;
  attempts: number;
}

export type AddResult = { added: true } | { added: false; state: JobState };

export type JobRunner = (job: WebhookJob, context: { attempt: number; signal: AbortSignal }) => Promise<void>;

export interface JobQueue {
  /** Adds the job unless its GUID is waiting, running or done; a failed one is run again. */
  add(job: WebhookJob): Promise<AddResult>;
  /** The job's state once it is done or failed, or its state when `timeoutMs` has passed. */
  waitFor(id: string, timeoutMs: number): Promise<JobOutcome>;
  /** Runs the jobs with `runner` (a receiver's handlers, or a worker's). */
  process(runner: JobRunner): void;
  /** Stops taking jobs and waits for the running ones (at most `timeoutMs`). */
  close(timeoutMs?: number): Promise<void>;
  /** Jobs waiting and running now (the metrics' queue gauge). */
  counts?(): Promise<{ waiting: number; running: number }>;
}

export interface MemoryQueueOptions {
  /** Jobs run at once; default 4 (gates are heavy). */
  concurrency?: number;
  /** How many finished GUIDs are remembered for de-duplication, at least; default 10,000 (the oldest forgotten first, a generation at a time). */
  remember?: number;
  /** A job's handlers are aborted after this long; default 10 minutes. */
  jobTimeoutMs?: number;
}

interface Entry {
  /** Dropped once the job has finished: de-duplication needs only the outcome, and payloads can be 25 MB each. */
  job: WebhookJob | undefined;
  outcome: JobOutcome;
  waiters: Array<(outcome: JobOutcome) => void>;
}

/**
 * The entry of every delivery recorded as done on its first arrival (`record`: no job, no waiters): one shared
 * object, never changed, instead of three per delivery kept for the thousands remembered.
 */
const recordedOnce: Entry = Object.freeze({
  job: undefined,
  outcome: Object.freeze({ state: 'done', attempts: 1 }),
  waiters: Object.freeze([]) as unknown as Entry['waiters'],
});

const added: AddResult = Object.freeze({ added: true });

export class MemoryQueue implements JobQueue {
  /**
   * The GUIDs known, in two generations: new ones go into `recent`; when it holds `remember` more, it becomes
   * `older` (the previous `older` is dropped, but for its jobs still waiting or running, which move on) and a new
   * `recent` starts. So at least the last `remember` GUIDs and at most twice as many are known, a lookup is two Map
   * reads, and forgetting costs nothing per delivery (no deletion, no order kept: a Map deleted from its front is
   * walked over its holes).
   */
  private recent = new Map<string, Entry>();
  private older = new Map<string, Entry>();
  private carried = 0;
  private readonly waiting: string[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly controllers = new Set<AbortController>();
  private runner: JobRunner | undefined;
  private closed = false;
  private readonly concurrency: number;
  private readonly remember: number;
  private readonly jobTimeoutMs: number;

  constructor(options: MemoryQueueOptions = {}) {
    expectOptions('MemoryQueue', options);
    const whole = (name: string, value: number | undefined, fallback: number) => {
      if (value === undefined) return fallback;
      if (!Number.isInteger(value) || value < 1)
        throw new UsageError(`MemoryQueue: ${name} must be a whole number ≥ 1, got ${JSON.stringify(value)}`, { code: 'INVALID_ARGUMENT' });
      return value;
    };
    this.concurrency = whole('concurrency', options.concurrency, 4);
    this.remember = whole('remember', options.remember, 10_000);
    this.jobTimeoutMs = whole('jobTimeoutMs', options.jobTimeoutMs, 10 * 60_000);
  }

  async add(job: WebhookJob): Promise<AddResult> {
    if (this.closed) throw new UsageError('the webhook queue is closed', { code: 'WEBHOOK_QUEUE_CLOSED' satisfies WebhookErrorCode });
    const existing = this.entry(job.id);
    if (existing && existing.outcome.state !== 'failed') return { added: false, state: existing.outcome.state };
    const attempts = existing?.outcome.attempts ?? 0;
    const entry: Entry = { job, outcome: { state: 'waiting', attempts }, waiters: existing?.waiters ?? [] };
    this.keep(job.id, entry, existing);
    this.waiting.push(job.id);
    this.pump();
    return added;
  }

  /**
   * Records a delivery that has nothing to run as done, as `add` and running no handlers would: unless its GUID is
   * waiting, running or done (then `added: false` with that state, as `add` answers); a failed one is done now.
   */
  record(id: string): AddResult {
    if (this.closed) throw new UsageError('the webhook queue is closed', { code: 'WEBHOOK_QUEUE_CLOSED' satisfies WebhookErrorCode });
    const existing = this.entry(id);
    if (existing && existing.outcome.state !== 'failed') return { added: false, state: existing.outcome.state };
    if (existing === undefined) {
      this.keep(id, recordedOnce, undefined);
      return added;
    }
    const outcome: JobOutcome = { state: 'done', attempts: existing.outcome.attempts + 1 };
    this.keep(id, { job: undefined, outcome, waiters: [] }, existing);
    for (const waiter of existing.waiters.splice(0)) waiter({ ...outcome });
    return added;
  }

  waitFor(id: string, timeoutMs: number): Promise<JobOutcome> {
    const entry = this.entry(id);
    if (!entry) return Promise.resolve({ state: 'failed', error: 'no such job', attempts: 0 });
    if (entry.outcome.state === 'done' || entry.outcome.state === 'failed') return Promise.resolve({ ...entry.outcome });
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          entry.waiters.splice(entry.waiters.indexOf(done), 1);
          resolve({ ...entry.outcome });
        },
        Math.max(0, timeoutMs),
      );
      const done = (outcome: JobOutcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
      entry.waiters.push(done);
    });
  }

  process(runner: JobRunner): void {
    if (this.runner) throw new UsageError('MemoryQueue: process() was already called: one runner per queue', { code: 'INVALID_ARGUMENT' });
    this.runner = runner;
    this.pump();
  }

  async close(timeoutMs = 30_000): Promise<void> {
    this.closed = true;
    const all = Promise.allSettled([...this.running]);
    const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    await Promise.race([all, timer]);
    for (const controller of this.controllers) controller.abort(new Error('the webhook queue closed'));
  }

  /** Jobs waiting or running, for status lines and tests. */
  get pending(): number {
    return this.waiting.length + this.running.size;
  }

  counts(): Promise<{ waiting: number; running: number }> {
    return Promise.resolve({ waiting: this.waiting.length, running: this.running.size });
  }

  private entry(id: string): Entry | undefined {
    return this.recent.get(id) ?? this.older.get(id);
  }

  /** A GUID's entry, new or replacing the one it had (`replacing`); a full `recent` generation becomes `older`. */
  private keep(id: string, entry: Entry, replacing: Entry | undefined): void {
    if (replacing !== undefined) this.older.delete(id);
    this.recent.set(id, entry);
    // `carried`: the jobs moved on from the generation before, which do not count towards this one's `remember`.
    if (this.recent.size - this.carried < this.remember) return;
    const next = new Map<string, Entry>();
    for (const [key, kept] of this.older) if (kept.outcome.state === 'waiting' || kept.outcome.state === 'running') next.set(key, kept);
    this.older = this.recent;
    this.recent = next;
    this.carried = next.size;
  }

  private pump(): void {
    const runner = this.runner;
    if (!runner) return;
    while (this.running.size < this.concurrency && this.waiting.length > 0) {
      const id = this.waiting.shift()!;
      const entry = this.entry(id);
      if (!entry || entry.outcome.state !== 'waiting' || !entry.job) continue;
      const job = entry.job;
      entry.outcome = { state: 'running', attempts: entry.outcome.attempts + 1 };
      const controller = new AbortController();
      this.controllers.add(controller);
      const timer = setTimeout(() => controller.abort(new Error(`the handlers ran longer than ${Math.round(this.jobTimeoutMs / 1000)} s`)), this.jobTimeoutMs);
      timer.unref();
      const work = (async () => {
        try {
          await runner(job, { attempt: entry.outcome.attempts, signal: controller.signal });
          entry.outcome = { state: 'done', attempts: entry.outcome.attempts };
        } catch (error) {
          entry.outcome = { state: 'failed', attempts: entry.outcome.attempts, error: error instanceof Error ? error.message : String(error) };
        } finally {
          clearTimeout(timer);
          this.controllers.delete(controller);
          entry.job = undefined;
        }
        for (const waiter of entry.waiters.splice(0)) waiter({ ...entry.outcome });
      })();
      this.running.add(work);
      void work.finally(() => {
        this.running.delete(work);
        this.pump();
      });
    }
  }
}
