/**
 * `RedisQueue`: the webhook job queue (lib/webhooks/queue.ts's `JobQueue`) kept in Redis, so that several receivers
 * and workers — processes on one machine or on several — share it (`gantry hooks serve --queue`, `gantry hooks
 * worker`). The contract is MemoryQueue's: a job is keyed by its delivery's GUID; a GUID waiting, running or done is
 * not added again (a redelivery of a finished one is acknowledged), a failed one runs again when it is redelivered;
 * the last `remember` finished GUIDs are remembered.
 *
 * Built on node-redis (already a dependency, as lib/platform/redis-store.ts) with Lua scripts, not on BullMQ: each
 * state change is one script, so it happens whole or not at all, and no two workers both take a job.
 *
 * - Keys (`prefix`, default `gantry:webhooks:`): `job:<guid>` a hash (state, attempts, runs, owner, error, the job
 *   while it waits or runs), `ready` a sorted set of GUIDs by the time they may start, `active` the running ones by
 *   the time their lease runs out, `finished` the finished ones by when, for forgetting the oldest; the channel
 *   `events` says when a job was added (workers wake) and when one finished (waiters learn it).
 * - Leases: a worker that takes a job holds it for `leaseMs` and renews every third of it. A worker that stops —
 *   killed, crashed, cut off from Redis — stops renewing; the next worker that looks (an idle one, or a busy one at its
 *   renewal) puts the job back with a backoff (`retryDelayMs`, doubled each time, at most `maxRetryDelayMs`), and
 *   after `maxAttempts` starts it is failed instead (a delivery that kills every worker does not go round forever).
 *   A worker that finds its lease taken (it was cut off too long) aborts its handlers and records nothing.
 * - One clock: every time is Redis's (`TIME` inside the scripts), never a worker's.
 * - Waiting for a job (`waitFor`) from any process: a subscription to the events channel, and polling as a safety net
 *   (a message is lost while a subscriber reconnects).
 * - Fails closed: when Redis cannot be reached, `add` throws a `WebhookQueueError` (the receiver answers 503 and the
 *   platform can redeliver); the address is shown without its password.
 *
 * The `redis` package is imported only when a queue first talks to Redis.
 */
import { hostname } from 'node:os';
import { expectFunction, expectObject, expectString } from '../arguments.js';
import { GantryError, UsageError } from '../errors.js';
import { getLogger, type Logger } from '../log.js';
import { redisOutage, type RedisOutage } from '../redis-outage.js';
import { redactUrl } from '../redact.js';
import { checkRedisStoreOptions } from '../redis-address.js';
import { optionKeys } from '../settings.js';
import { openRedis, RedisStoreError, redisNow, redisScripts, runScript, type RedisConnection, type RedisScript as Script } from '../redis-connection.js';
import {
  MemoryQueue,
  type AddResult,
  type JobOutcome,
  type JobQueue,
  type JobRunner,
  type JobState,
  type MemoryQueueOptions,
  type WebhookJob,
} from './queue.js';

export interface RedisQueueOptions {
  /** redis://[user:password@]host[:port][/db] or rediss://… */
  url: string;
  /** Key prefix; default `gantry:webhooks:`. Queues with different prefixes share nothing. */
  prefix?: string;
  /** Jobs this process runs at once; default 4 (gates are heavy). */
  concurrency?: number;
  /** How many finished GUIDs are remembered for de-duplication; default 10,000 (the oldest forgotten first). */
  remember?: number;
  /** A job's handlers are aborted after this long; default 10 minutes. */
  jobTimeoutMs?: number;
  /** How long a worker holds a job without renewing; default 30 s (renewed every third of it). */
  leaseMs?: number;
  /** The wait before a job whose worker stopped runs again, doubled each time; default 1 s. */
  retryDelayMs?: number;
  /** The longest such wait; default 60 s. */
  maxRetryDelayMs?: number;
  /** Starts of one delivery (since it was last added) before a job whose workers keep stopping is failed; default 3. */
  maxAttempts?: number;
  /** How often idle workers and waiters look at Redis besides the events channel; default 1 s. */
  pollMs?: number;
  /** How long to wait for Redis before an operation fails; default 5 s. */
  connectTimeoutMs?: number;
  logger?: Logger;
}

const redisQueueOptionKeys = optionKeys<RedisQueueOptions>({
  url: true,
  prefix: true,
  concurrency: true,
  remember: true,
  jobTimeoutMs: true,
  leaseMs: true,
  retryDelayMs: true,
  maxRetryDelayMs: true,
  maxAttempts: true,
  pollMs: true,
  connectTimeoutMs: true,
  logger: true,
});

/** Redis could not be reached or answered an error: the delivery was not queued (the queue fails closed). */
export class WebhookQueueError extends RedisStoreError {
  constructor(message: string, cause?: unknown) {
    super(message, {
      code: 'WEBHOOK_QUEUE',
      hint: 'the webhook queue lives in Redis (GANTRY_HOOKS_QUEUE_URL, --queue); start it or fix the address — the platform can redeliver what was refused',
      cause,
    });
  }
}

/** Forgets the oldest finished GUIDs beyond `remember` (needs prefix, finished, remember). */
const TRIM = `
local function trim()
  local excess = redis.call('ZCARD', finished) - remember
  if excess <= 0 then return end
  for _, old in ipairs(redis.call('ZRANGE', finished, 0, excess - 1)) do
    local s = redis.call('HGET', prefix .. 'job:' .. old, 'state')
    if s == 'done' or s == 'failed' then redis.call('DEL', prefix .. 'job:' .. old) end
  end
  redis.call('ZREMRANGEBYRANK', finished, 0, excess - 1)
end
`;

/** KEYS: job, ready, finished, channel. ARGV: id, job JSON. */
const ADD = `${redisNow}
local key, ready, finished, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, job = ARGV[1], ARGV[2]
local state = redis.call('HGET', key, 'state')
if state and state ~= 'failed' then return {0, state} end
redis.call('HSET', key, 'state', 'waiting', 'job', job, 'runs', 0, 'queuedAt', now)
redis.call('HDEL', key, 'error', 'owner', 'finishedAt')
if not state then redis.call('HSET', key, 'attempts', 0) end
redis.call('ZREM', finished, id)
redis.call('ZADD', ready, now, id)
redis.call('PUBLISH', channel, '{"type":"added"}')
return {1, 'waiting'}
`;

/**
 * Puts back (or fails) the jobs whose lease ran out, then takes the next ready job when asked.
 * KEYS: ready, active, finished, channel. ARGV: prefix, take (1/0), owner token, lease, maxAttempts, retryDelay,
 * maxRetryDelay, remember.
 * Returns {taken, id, job, attempts, ms until the next ready job (-1 none), ms until the next lease runs out (-1), notes}.
 */
const CLAIM = `${redisNow}
local ready, active, finished, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix, take, token = ARGV[1], ARGV[2] == '1', ARGV[3]
local lease, maxAttempts, retryDelay, maxRetryDelay, remember = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
${TRIM}
local notes = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', active, '-inf', now, 'LIMIT', 0, 20)) do
  redis.call('ZREM', active, id)
  local key = prefix .. 'job:' .. id
  local h = redis.call('HMGET', key, 'state', 'runs', 'attempts')
  if h[1] == 'running' then
    local runs = tonumber(h[2]) or 1
    if runs >= maxAttempts then
      local err = 'its worker stopped mid-job ' .. runs .. (runs == 1 and ' time' or ' times') .. ' (killed, crashed or cut off from Redis); it runs again when the delivery comes again'
      redis.call('HSET', key, 'state', 'failed', 'error', err, 'finishedAt', now)
      redis.call('HDEL', key, 'job', 'owner')
      redis.call('ZADD', finished, now, id)
      trim()
      redis.call('PUBLISH', channel, cjson.encode({type = 'finished', id = id, state = 'failed', attempts = tonumber(h[3]) or 0, error = err}))
      notes[#notes + 1] = {id, 'failed', runs}
    else
      local delay = math.floor(math.min(retryDelay * 2 ^ (runs - 1), maxRetryDelay))
      redis.call('HSET', key, 'state', 'waiting')
      redis.call('HDEL', key, 'owner')
      redis.call('ZADD', ready, now + delay, id)
      notes[#notes + 1] = {id, 'retry', delay}
    end
  end
end
local taken, takenId, takenJob, takenAttempts = 0, '', '', 0
if take then
  while true do
    local first = redis.call('ZRANGEBYSCORE', ready, '-inf', now, 'LIMIT', 0, 1)
    if #first == 0 then break end
    local id = first[1]
    redis.call('ZREM', ready, id)
    local key = prefix .. 'job:' .. id
    local h = redis.call('HMGET', key, 'state', 'job')
    if h[1] == 'waiting' and h[2] then
      takenAttempts = redis.call('HINCRBY', key, 'attempts', 1)
      redis.call('HINCRBY', key, 'runs', 1)
      redis.call('HSET', key, 'state', 'running', 'owner', token, 'startedAt', now)
      redis.call('ZADD', active, now + lease, id)
      taken, takenId, takenJob = 1, id, h[2]
      break
    end
  end
end
local nr = redis.call('ZRANGE', ready, 0, 0, 'WITHSCORES')
local na = redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')
local nextReady = -1
if nr[2] then nextReady = math.max(0, tonumber(nr[2]) - now) end
local nextLease = -1
if na[2] then nextLease = math.max(0, tonumber(na[2]) - now) end
return {taken, takenId, takenJob, takenAttempts, nextReady, nextLease, notes}
`;

/** KEYS: active. ARGV: prefix, lease, then id and owner token pairs. Returns the ids whose lease this worker lost. */
const RENEW = `${redisNow}
local active, prefix, lease = KEYS[1], ARGV[1], tonumber(ARGV[2])
local lost = {}
for i = 3, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  local h = redis.call('HMGET', prefix .. 'job:' .. id, 'state', 'owner')
  if h[1] == 'running' and h[2] == token then
    redis.call('ZADD', active, now + lease, id)
  else
    lost[#lost + 1] = id
  end
end
return lost
`;

/** KEYS: job, active, finished, channel. ARGV: prefix, id, token, state, error ('' none), remember. 1 recorded, 0 not the owner. */
const FINISH = `${redisNow}
local key, active, finished, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix, id, token, state, err, remember = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
${TRIM}
local h = redis.call('HMGET', key, 'state', 'owner', 'attempts')
if h[1] ~= 'running' or h[2] ~= token then return 0 end
redis.call('HSET', key, 'state', state, 'finishedAt', now)
if err ~= '' then redis.call('HSET', key, 'error', err) else redis.call('HDEL', key, 'error') end
redis.call('HDEL', key, 'job', 'owner')
redis.call('ZREM', active, id)
redis.call('ZADD', finished, now, id)
trim()
local event = {type = 'finished', id = id, state = state, attempts = tonumber(h[3]) or 0}
if err ~= '' then event.error = err end
redis.call('PUBLISH', channel, cjson.encode(event))
return 1
`;

/** A job cut off by this worker's shutdown goes back to the queue at once, its start not counted. KEYS: job, active, ready, channel. ARGV: id, token. */
const RELEASE = `${redisNow}
local key, active, ready, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, token = ARGV[1], ARGV[2]
local h = redis.call('HMGET', key, 'state', 'owner')
if h[1] ~= 'running' or h[2] ~= token then return 0 end
redis.call('HSET', key, 'state', 'waiting')
redis.call('HDEL', key, 'owner')
redis.call('HINCRBY', key, 'runs', -1)
redis.call('ZREM', active, id)
redis.call('ZADD', ready, now, id)
redis.call('PUBLISH', channel, '{"type":"added"}')
return 1
`;

interface Held {
  id: string;
  token: string;
  controller: AbortController;
  lastRenewed: number;
  /** Another worker has it now (or this one gave it back): its end is not recorded here. */
  lost: boolean;
  /** Its end is being recorded: a renewal that finds it no longer running is no loss. */
  finishing?: boolean;
}

interface Waiter {
  id: string;
  resolve: (outcome: JobOutcome) => void;
  last: JobOutcome;
}

const terminal = (state: JobState) => state === 'done' || state === 'failed';
let tokenCounter = 0;

export class RedisQueue implements JobQueue {
  readonly url: string;
  private readonly prefix: string;
  private readonly concurrency: number;
  private readonly remember: number;
  private readonly jobTimeoutMs: number;
  private readonly leaseMs: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly maxAttempts: number;
  private readonly pollMs: number;
  private readonly connectTimeoutMs: number;
  private readonly logger: Logger;
  private readonly worker = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  private readonly scripts = redisScripts({ add: ADD, claim: CLAIM, renew: RENEW, finish: FINISH, release: RELEASE });
  private connection: Promise<RedisConnection> | undefined;
  private subscription: Promise<RedisConnection> | undefined;
  private readonly held = new Map<string, Held>();
  private readonly running = new Set<Promise<void>>();
  private readonly waiters = new Set<Waiter>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private runner: JobRunner | undefined;
  private wake: (() => void) | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private loopDone: Promise<void> | undefined;
  private closed = false;
  /** The connections are being closed: nothing talks to Redis any more. */
  private ended = false;
  private readonly warned = new Set<string>();
  private readonly outage: RedisOutage;

  constructor(options: RedisQueueOptions) {
    const where = 'RedisQueue';
    checkRedisStoreOptions(
      where,
      options,
      redisQueueOptionKeys,
      'the queue',
      'redis://127.0.0.1:6379/0',
      'without one the jobs stay in this process (MemoryQueue)',
    );
    const whole = (name: string, value: number | undefined, fallback: number, min = 1) => {
      if (value === undefined) return fallback;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
        throw new UsageError(`${where}: ${name} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`, { code: 'INVALID_ARGUMENT' });
      return value;
    };
    this.url = options.url;
    this.prefix = options.prefix ?? 'gantry:webhooks:';
    expectString(where, 'prefix', this.prefix, 'a key prefix such as "gantry:webhooks:"');
    this.concurrency = whole('concurrency', options.concurrency, 4);
    this.remember = whole('remember', options.remember, 10_000);
    this.jobTimeoutMs = whole('jobTimeoutMs', options.jobTimeoutMs, 10 * 60_000);
    this.leaseMs = whole('leaseMs', options.leaseMs, 30_000, 30);
    this.retryDelayMs = whole('retryDelayMs', options.retryDelayMs, 1_000, 0);
    this.maxRetryDelayMs = whole('maxRetryDelayMs', options.maxRetryDelayMs, 60_000, 0);
    this.maxAttempts = whole('maxAttempts', options.maxAttempts, 3);
    this.pollMs = whole('pollMs', options.pollMs, 1_000, 10);
    this.connectTimeoutMs = whole('connectTimeoutMs', options.connectTimeoutMs, 5_000);
    this.logger = options.logger ?? getLogger();
    this.outage = redisOutage(this.logger, `the webhook queue ${this.shownUrl}`);
  }

  /** The address with its password masked, for messages. */
  get shownUrl(): string {
    return redactUrl(this.url);
  }

  /** Connects (if not yet), subscribes to the events channel and checks that Redis answers; throws `WebhookQueueError` when it does not. */
  async ready(): Promise<void> {
    await this.call(async (client) => {
      await client.hmGet(`${this.prefix}job:`, ['state']);
      await this.subscribe();
    });
  }

  async add(job: WebhookJob): Promise<AddResult> {
    if (this.closed) throw new UsageError('the webhook queue is closed', { code: 'WEBHOOK_QUEUE_CLOSED' });
    expectObject('RedisQueue.add', 'job', job, 'a WebhookJob');
    expectString('RedisQueue.add', 'job.id', job.id, 'the delivery GUID');
    if (job.id.length > 200)
      throw new UsageError(`RedisQueue.add: job.id must be at most 200 characters (a delivery GUID), got ${job.id.length}`, { code: 'INVALID_ARGUMENT' });
    const reply = await this.script(
      this.scripts.add,
      [this.key(job.id), `${this.prefix}ready`, `${this.prefix}finished`, `${this.prefix}events`],
      [job.id, JSON.stringify(job)],
      'the delivery was not queued',
    );
    const [added, state] = reply as [number, JobState];
    return Number(added) === 1 ? { added: true } : { added: false, state };
  }

  waitFor(id: string, timeoutMs: number): Promise<JobOutcome> {
    return new Promise((resolve) => {
      const waiter: Waiter = { id, last: { state: 'waiting', attempts: 0 }, resolve: () => {} };
      const handles: { timer?: NodeJS.Timeout; poll?: NodeJS.Timeout } = {};
      const settle = (outcome: JobOutcome) => {
        if (!this.waiters.delete(waiter)) return;
        this.clear(handles.timer);
        this.clear(handles.poll);
        resolve({ ...outcome });
      };
      waiter.resolve = settle;
      this.waiters.add(waiter);
      if (this.closed) {
        settle(waiter.last);
        return;
      }
      handles.timer = this.timer(() => settle(waiter.last), Math.max(0, timeoutMs));
      // Subscribed before the first look, so a job that finishes in between is not missed.
      let every = this.pollMs;
      const look = async () => {
        try {
          await this.subscribe();
        } catch {
          // polling alone, until the subscription can be made
        }
        try {
          const outcome = await this.outcome(id);
          if (outcome === undefined) {
            settle({ state: 'failed', error: 'no such job', attempts: 0 });
            return;
          }
          waiter.last = outcome;
          if (terminal(outcome.state)) {
            settle(outcome);
            return;
          }
        } catch (error) {
          this.warnOnce(`the webhook queue ${this.shownUrl}: ${(error as Error).message}`);
        }
        if (!this.waiters.has(waiter)) return;
        handles.poll = this.timer(() => void look(), every);
        every = Math.min(every * 2, 5_000);
      };
      void look();
    });
  }

  process(runner: JobRunner): void {
    expectFunction('RedisQueue.process', 'runner', runner, 'a function (job, { attempt, signal }) => Promise<void>');
    if (this.runner) throw new UsageError('RedisQueue: process() was already called: one runner per queue', { code: 'INVALID_ARGUMENT' });
    if (this.closed) throw new UsageError('the webhook queue is closed', { code: 'WEBHOOK_QUEUE_CLOSED' });
    this.runner = runner;
    this.loopDone = this.loop(runner);
  }

  /**
   * Stops taking jobs and waits for the running ones (at most `timeoutMs`); a job still running then is aborted and
   * goes back to the queue at once for another worker. Waiters get the state last seen.
   */
  async close(timeoutMs = 30_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const started = Date.now();
    this.wake?.();
    // The worker loop stops first (a claim under way ends, and gives back what it took), then the running jobs.
    await this.loopDone?.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running]),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, timeoutMs - (Date.now() - started)));
      }),
    ]);
    clearTimeout(timer);
    await Promise.allSettled([...this.held.values()].map((held) => this.giveBack(held)));
    this.stopRenewal();
    for (const waiter of [...this.waiters]) waiter.resolve(waiter.last);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.ended = true;
    const connections = [this.connection, this.subscription];
    this.connection = undefined;
    this.subscription = undefined;
    await Promise.allSettled(
      connections.map(async (connection) => {
        if (!connection) return;
        const client = await connection;
        try {
          await client.close();
        } catch {
          client.destroy();
        }
      }),
    );
  }

  /** Jobs this process is running, for status lines and tests. */
  get pending(): number {
    return this.running.size;
  }

  /** Jobs whose worker died mid-job, found by this process: put back to run again (`retried`) or failed. */
  readonly reclaimed = { retried: 0, failed: 0 };

  /** Jobs waiting and running in the whole queue (every receiver's and worker's). */
  async counts(): Promise<{ waiting: number; running: number }> {
    const [waiting, running] = await this.call((client) => Promise.all([client.zCard(`${this.prefix}ready`), client.zCard(`${this.prefix}active`)]));
    return { waiting: Number(waiting), running: Number(running) };
  }

  /** A job this worker holds goes back to the queue at once (aborted here), its start not counted. */
  private async giveBack(held: Held): Promise<void> {
    held.lost = true;
    held.controller.abort(new Error('the webhook queue closed'));
    try {
      await this.script(
        this.scripts.release,
        [this.key(held.id), `${this.prefix}active`, `${this.prefix}ready`, `${this.prefix}events`],
        [held.id, held.token],
        'the job was not given back',
      );
      this.logger.warn(`webhook ${held.id}: still running when the queue closed; given back to the queue for another worker`, { delivery: held.id });
    } catch (error) {
      this.logger.warn(
        `webhook ${held.id}: still running when the queue closed; its lease runs out within ${this.leaseMs} ms and another worker takes it (${(error as Error).message})`,
      );
    }
  }

  private key(id: string): string {
    return `${this.prefix}job:${id}`;
  }

  /** A timer that close() clears; it keeps the process alive while it waits, as a pending operation should. */
  private timer(fn: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private clear(timer: NodeJS.Timeout | undefined): void {
    if (!timer) return;
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  /** Redis answered: once after an outage, say so (the outage's warnings may then be said again next time). */
  private answered(): void {
    if (this.outage.up()) this.warned.clear();
  }

  /** A Redis failure, said once per outage and message. */
  private warnOnce(message: string): void {
    this.outage.down();
    if (this.warned.has(message)) return;
    if (this.warned.size > 100) this.warned.clear();
    this.warned.add(message);
    this.logger.warn(message);
  }

  /**
   * A new connection: commands fail at once while it is down (no offline queue); reconnects once it has been up. The
   * commands' connection (`commands`) is the one whose return ends an outage; the subscription's may come back first.
   */
  private open(commands: boolean): Promise<RedisConnection> {
    // The first connection fails at once (refused, wrong password) rather than retrying while a delivery waits.
    return openRedis({
      url: this.url,
      connectTimeoutMs: this.connectTimeoutMs,
      onError: (error) => this.warnOnce(`the webhook queue ${this.shownUrl}: ${error.message || String(error)}`),
      onReady: () => {
        if (commands) this.answered();
      },
    });
  }

  private connect(): Promise<RedisConnection> {
    if (this.ended) return Promise.reject(new UsageError('the webhook queue is closed', { code: 'WEBHOOK_QUEUE_CLOSED' }));
    this.connection ??= this.open(true).catch((error: unknown) => {
      this.connection = undefined; // the next operation tries again
      throw error;
    });
    return this.connection;
  }

  private subscribe(): Promise<RedisConnection> {
    if (this.ended) return Promise.reject(new UsageError('the webhook queue is closed', { code: 'WEBHOOK_QUEUE_CLOSED' }));
    this.subscription ??= (async () => {
      const client = await this.open(false);
      try {
        await client.subscribe(`${this.prefix}events`, (message) => this.onEvent(message));
      } catch (error) {
        client.destroy();
        throw error;
      }
      return client;
    })().catch((error: unknown) => {
      this.subscription = undefined;
      throw error;
    });
    return this.subscription;
  }

  private onEvent(message: string): void {
    let event: { type?: string; id?: string; state?: JobState; attempts?: number; error?: string };
    try {
      event = JSON.parse(message) as typeof event;
    } catch {
      return;
    }
    if (event.type === 'added') this.wake?.();
    if (event.type === 'finished' && typeof event.id === 'string' && event.state && terminal(event.state)) {
      const outcome: JobOutcome = { state: event.state, attempts: Number(event.attempts) || 0, ...(event.error ? { error: event.error } : {}) };
      for (const waiter of [...this.waiters]) if (waiter.id === event.id) waiter.resolve(outcome);
    }
  }

  /** Runs `fn` with the connection; any failure becomes a WebhookQueueError naming the address without its password. */
  private async call<T>(fn: (client: RedisConnection) => Promise<T>, consequence = ''): Promise<T> {
    try {
      const result = await fn(await this.connect());
      this.answered();
      return result;
    } catch (error) {
      if (error instanceof GantryError) throw error;
      this.outage.down();
      throw new WebhookQueueError(RedisStoreError.unavailable(`the webhook queue ${this.shownUrl}`, error, consequence), error);
    }
  }

  /** Runs a script by its SHA (loading it on first use and after a NOSCRIPT). */
  private script(script: Script, keys: string[], args: Array<string | number>, consequence?: string): Promise<unknown> {
    return this.call((client) => runScript(client, script, keys, args), consequence);
  }

  /** The job's outcome as Redis has it, or undefined when there is no such job (never added, or forgotten). */
  private async outcome(id: string): Promise<JobOutcome | undefined> {
    const [state, attempts, error] = await this.call((client) => client.hmGet(this.key(id), ['state', 'attempts', 'error']));
    if (!state) return undefined;
    return { state: state as JobState, attempts: Number(attempts) || 0, ...(error ? { error } : {}) };
  }

  /** The worker: takes jobs while it has room, sleeps until an added job, a freed slot, a due retry or the poll. */
  private async loop(runner: JobRunner): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      let sleepMs = this.pollMs;
      if (this.held.size < this.concurrency) {
        try {
          await this.subscribe().catch(() => {}); // wakes on added jobs; polling covers a missing subscription
          const claimed = await this.claim(true);
          failures = 0;
          if (claimed.job) {
            this.start(runner, claimed.job, claimed.attempt, claimed.token);
            if (this.closed) break;
            continue;
          }
          for (const next of [claimed.nextReadyMs, claimed.nextLeaseMs]) if (next >= 0) sleepMs = Math.min(sleepMs, next + 5);
        } catch (error) {
          failures += 1;
          this.warnOnce(`webhook worker: ${(error as Error).message}`);
          sleepMs = Math.min(this.pollMs * 2 ** Math.min(failures, 5), 10_000);
        }
      }
      if (this.closed) break;
      await new Promise<void>((resolve) => {
        const timer = this.timer(() => {
          this.wake = undefined;
          resolve();
        }, sleepMs);
        this.wake = () => {
          this.wake = undefined;
          this.clear(timer);
          resolve();
        };
      });
    }
  }

  /** Puts back jobs whose lease ran out and, with `take`, takes the next ready one. */
  private async claim(take: boolean): Promise<{ job?: WebhookJob; attempt: number; token: string; nextReadyMs: number; nextLeaseMs: number }> {
    const token = `${this.worker}:${(tokenCounter += 1).toString(36)}`;
    const reply = (await this.script(
      this.scripts.claim,
      [`${this.prefix}ready`, `${this.prefix}active`, `${this.prefix}finished`, `${this.prefix}events`],
      [this.prefix, take ? 1 : 0, token, this.leaseMs, this.maxAttempts, this.retryDelayMs, this.maxRetryDelayMs, this.remember],
    )) as [number, string, string, number, number, number, Array<[string, string, number]>];
    const [taken, id, text, attempts, nextReady, nextLease, notes] = reply;
    for (const [guid, what, n] of notes ?? []) {
      this.reclaimed[what === 'retry' ? 'retried' : 'failed'] += 1;
      if (what === 'retry')
        this.logger.warn(`webhook ${guid}: the worker running it stopped (its lease ran out); it runs again in ${Math.round(Number(n) / 100) / 10} s`, {
          delivery: guid,
        });
      else this.logger.error(`webhook ${guid}: its worker stopped mid-job ${n} times; failed (a redelivery runs it again)`, { delivery: guid });
    }
    let job: WebhookJob | undefined;
    if (Number(taken) === 1) {
      try {
        job = JSON.parse(text) as WebhookJob;
      } catch (error) {
        // Not ours to run; recorded as failed so it is not taken again and again.
        await this.finish(
          { id, token, controller: new AbortController(), lastRenewed: Date.now(), lost: false },
          'failed',
          `the queued job is not JSON: ${(error as Error).message}`,
        );
      }
    }
    return { ...(job ? { job } : {}), attempt: Number(attempts), token, nextReadyMs: Number(nextReady), nextLeaseMs: Number(nextLease) };
  }

  private start(runner: JobRunner, job: WebhookJob, attempt: number, token: string): void {
    const held: Held = { id: job.id, token, controller: new AbortController(), lastRenewed: Date.now(), lost: false };
    this.held.set(token, held);
    this.scheduleRenewal();
    const timeout = setTimeout(
      () => held.controller.abort(new Error(`the handlers ran longer than ${Math.round(this.jobTimeoutMs / 1000)} s`)),
      this.jobTimeoutMs,
    );
    const work = (async () => {
      let state: 'done' | 'failed' = 'done';
      let error = '';
      try {
        await runner(job, { attempt, signal: held.controller.signal });
      } catch (failure) {
        state = 'failed';
        error = (failure instanceof Error ? failure.message : String(failure)) || 'the handler failed';
      } finally {
        clearTimeout(timeout);
      }
      if (held.lost) return;
      held.finishing = true;
      await this.finish(held, state, error.slice(0, 2_000));
    })();
    this.running.add(work);
    void work.finally(() => {
      this.running.delete(work);
      this.held.delete(token);
      if (this.held.size === 0) this.stopRenewal();
      this.wake?.();
    });
  }

  /** Records the end of a job this worker holds, trying again while its lease lasts. */
  private async finish(held: Held, state: 'done' | 'failed', error: string): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const recorded = await this.script(
          this.scripts.finish,
          [this.key(held.id), `${this.prefix}active`, `${this.prefix}finished`, `${this.prefix}events`],
          [this.prefix, held.id, held.token, state, error, this.remember],
        );
        if (Number(recorded) !== 1) {
          this.logger.warn(`webhook ${held.id}: finished here (${state}) after another worker had taken it over (this worker's lease ran out); not recorded`, {
            delivery: held.id,
          });
        } else if ([...this.waiters].some((waiter) => waiter.id === held.id)) {
          // Waiters in this process learn it now, whether or not the channel's message comes.
          const full = await this.outcome(held.id).catch(() => undefined);
          for (const waiter of [...this.waiters]) if (waiter.id === held.id) waiter.resolve(full ?? { state, attempts: 0, ...(error ? { error } : {}) });
        }
        return;
      } catch (failure) {
        if (Date.now() - held.lastRenewed > this.leaseMs || this.closed) {
          this.logger.error(
            `webhook ${held.id}: finished here (${state}) but Redis could not be told (${(failure as Error).message}); its lease runs out and another worker runs it again`,
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 2_000)));
      }
    }
  }

  private scheduleRenewal(): void {
    if (this.renewTimer) return;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(10, Math.floor(this.leaseMs / 3)));
  }

  private stopRenewal(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
  }

  /** Renews this worker's leases; a lease found taken aborts its handlers. Also puts back jobs of stopped workers. */
  private async renew(): Promise<void> {
    const mine = [...this.held.values()].filter((h) => !h.lost);
    if (mine.length === 0) return;
    const args: Array<string | number> = [this.prefix, this.leaseMs];
    for (const h of mine) args.push(h.id, h.token);
    const asked = Date.now();
    try {
      const lost = new Set((await this.script(this.scripts.renew, [`${this.prefix}active`], args)) as string[]);
      for (const h of mine) {
        if (lost.has(h.id) && !h.finishing) this.lose(h, "another worker took it over after this one's lease ran out");
        else h.lastRenewed = asked;
      }
      // A busy worker also looks for jobs whose workers stopped, so they are not left until a worker is idle.
      if (this.held.size >= this.concurrency) await this.claim(false);
    } catch (error) {
      this.warnOnce(`webhook worker: could not renew its leases: ${(error as Error).message}`);
      for (const h of mine)
        if (Date.now() - h.lastRenewed > this.leaseMs) this.lose(h, `its lease ran out while Redis could not be reached (${this.leaseMs} ms)`);
    }
  }

  private lose(held: Held, why: string): void {
    if (held.lost) return;
    held.lost = true;
    this.logger.error(`webhook ${held.id}: ${why}; its handlers are aborted here`, { delivery: held.id });
    held.controller.abort(new Error(`the job's lease was lost: ${why}`));
  }
}

/**
 * The queue for an address: a `RedisQueue` for redis:// and rediss://, a `MemoryQueue` (this process) when there is
 * none. Anything else is a UsageError.
 */
export function webhookQueueFor(url: string | undefined, options: Omit<RedisQueueOptions, 'url'> & MemoryQueueOptions = {}): JobQueue {
  if (url === undefined || url === '') {
    const memory: MemoryQueueOptions = {};
    if (options.concurrency !== undefined) memory.concurrency = options.concurrency;
    if (options.remember !== undefined) memory.remember = options.remember;
    if (options.jobTimeoutMs !== undefined) memory.jobTimeoutMs = options.jobTimeoutMs;
    return new MemoryQueue(memory);
  }
  return new RedisQueue({ ...options, url });
}
