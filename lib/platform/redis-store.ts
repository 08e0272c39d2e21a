/**
 * `RedisBudgetStore`: the budgets of lib/platform/budget.ts kept in Redis, so that every worker — on this machine or
 * another — that shares one token shares one budget (issue 12 item 7, docs/platform.md "Sharing budgets through
 * Redis"). Chosen by `new PlatformClient({ limits: 'redis://…' })`, `limitsUrl`, `GANTRY_PLATFORM_LIMITS_URL` or a
 * `store`.
 *
 * - Atomic: `reserve` is one Lua script (EVALSHA, loaded once, EVAL again after a NOSCRIPT) that checks every budget
 *   a request touches — in-flight slots, holds, the primary resource's remaining, points per endpoint per minute,
 *   creations per minute and per hour, the CPU estimate — and takes them all or none. Redis runs a script alone, so
 *   two workers never both take the last point.
 * - One clock: every window is measured on Redis's own clock (`TIME` inside the script), never on a worker's; the
 *   times a refusal names are turned back into this process's clock before the limiter sees them.
 * - No leaked slots: an in-flight slot is a lease (a sorted-set entry scored by its expiry). Its holder renews every
 *   lease a third of `leaseMs` apart; a worker that dies stops renewing and its slots expire within `leaseMs`.
 * - Waking: a release in this process wakes its own queue at once; releases in other processes are seen by polling —
 *   a refusal that only a release can lift (concurrency, the first answer about a resource) is tried again after
 *   `pollMs`.
 * - Fails closed: when Redis cannot be reached, `reserve` throws (the request is not sent), rather than letting every
 *   worker spend the whole shared budget alone.
 *
 * The `redis` package (node-redis) is imported only when such a store first talks to Redis.
 */
import { UsageError } from '../errors.js';
import { getLogger, type Logger } from '../log.js';
import { redisOutage, type RedisOutage } from '../redis-outage.js';
import { redactUrl } from '../redact.js';
import { checkRedisStoreOptions } from '../redis-address.js';
import { optionKeys } from '../settings.js';
import { openRedis, RedisStoreError, redisNow, redisScripts, runScript, type RedisConnection, type RedisScript as Script } from '../redis-connection.js';
import type { BudgetSnapshot, BudgetStore, Reservation, ReleaseInfo, ReserveResult, ResourceState, Scope } from './budget.js';
import { systemClock, type Clock } from './clock.js';

export interface RedisBudgetStoreOptions {
  /** redis://[user:password@]host[:port][/db] or rediss://… */
  url: string;
  /** Key prefix; default `gantry:platform:`. Stores with different prefixes share nothing. */
  prefix?: string;
  /** How long an in-flight slot lives without renewal; default 15 s (renewed every third of it). */
  leaseMs?: number;
  /** How soon a refusal that only a release (maybe in another process) lifts is tried again; default 25 ms. */
  pollMs?: number;
  /** How long to wait for Redis before a request fails; default 5 s. */
  connectTimeoutMs?: number;
  /** Multiplies the minute and the hour — only for tests against an embedded platform API with shortened windows. */
  windowScale?: number;
  clock?: Clock;
  logger?: Logger;
}

const budgetStoreOptionKeys = optionKeys<RedisBudgetStoreOptions>({
  url: true,
  prefix: true,
  leaseMs: true,
  pollMs: true,
  connectTimeoutMs: true,
  windowScale: true,
  clock: true,
  logger: true,
});

/** Redis could not be reached or answered an error: the request is not sent (the store fails closed). */
export class PlatformLimitsStoreError extends RedisStoreError {
  constructor(message: string, cause?: unknown) {
    super(message, {
      code: 'PLATFORM_LIMITS_STORE',
      hint: 'the shared rate-limit budgets live in Redis (GANTRY_PLATFORM_LIMITS_URL, or the client option limitsUrl); start it or fix the address, or unset it to keep the budgets in this process',
      cause,
    });
  }
}

const RESERVE = `${redisNow}local inflight, pts, cre, cpu, res, rif, holds, seq, known = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local slot = ARGV[1]
local concurrency = tonumber(ARGV[2])
local points, ppm = tonumber(ARGV[3]), tonumber(ARGV[4])
local creation, cpm, cph = ARGV[5] == '1', tonumber(ARGV[6]), tonumber(ARGV[7])
local cpuCap = tonumber(ARGV[8])
local primary, skew = ARGV[9] == '1', tonumber(ARGV[10])
local lease, minute, hour = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local endpoint, resource = ARGV[14], ARGV[15]

redis.call('ZREMRANGEBYSCORE', inflight, '-inf', now)
local n = redis.call('ZCARD', inflight)
if n >= concurrency then
  return {0, 'concurrency', -1, n .. ' requests in flight across every worker, the most allowed (RATE-SEC-CONCURRENCY)', now}
end
local scopes = {{'resource', 'resource:' .. resource}, {'endpoint', 'endpoint:' .. endpoint}}
if creation then scopes[3] = {'creation', 'creation'} end
for _, s in ipairs(scopes) do
  local untilMs = tonumber(redis.call('HGET', holds, s[2]) or '0')
  if untilMs > now then return {0, s[1], untilMs, s[2] .. ' is held', now} end
end
redis.call('ZREMRANGEBYSCORE', rif, '-inf', now)
if primary then
  local r = redis.call('HMGET', res, 'remaining', 'reset', 'answered')
  local remaining, reset, answered = tonumber(r[1]), tonumber(r[2]), r[3] == '1'
  if reset and now >= reset * 1000 + skew then
    redis.call('HDEL', res, 'remaining', 'used', 'reset', 'answered')
    remaining, reset, answered = nil, nil, false
  end
  local rin = redis.call('ZCARD', rif)
  if remaining and reset and remaining - rin <= 0 then
    return {0, 'resource', reset * 1000 + skew, 'the ' .. resource .. ' budget is spent until its reset (RATE-HDR-REMAINING)', now}
  end
  if not answered and rin > 0 then
    return {0, 'resource', -1, 'waiting for the first answer about the ' .. resource .. ' budget', now}
  end
end
-- entries are "<seq>:<amount>" scored by their time; the sum over the window, and when 'need' more would fit
local function sumOf(entries)
  local sum = 0
  for i = 1, #entries, 2 do sum = sum + tonumber(string.match(entries[i], ':([%d%.]+)$')) end
  return sum
end
local function whenFits(entries, window, cap, need)
  local sum = sumOf(entries)
  for i = 1, #entries, 2 do
    sum = sum - tonumber(string.match(entries[i], ':([%d%.]+)$'))
    if sum + need <= cap then return tonumber(entries[i + 1]) + window end
  end
  return now + window
end
redis.call('ZREMRANGEBYSCORE', pts, '-inf', now - minute)
local pe = redis.call('ZRANGE', pts, 0, -1, 'WITHSCORES')
local used = sumOf(pe)
if used + points > ppm then
  return {0, 'endpoint', whenFits(pe, minute, ppm, points), endpoint .. ' used ' .. used .. ' of ' .. ppm .. ' points this minute (RATE-SEC-POINTS-REST)', now}
end
if creation then
  redis.call('ZREMRANGEBYSCORE', cre, '-inf', now - hour)
  local lastHour = redis.call('ZCARD', cre)
  local recent = redis.call('ZCOUNT', cre, '(' .. (now - minute), '+inf')
  if recent + 1 > cpm then
    local k = recent - cpm
    local e = redis.call('ZRANGEBYSCORE', cre, '(' .. (now - minute), '+inf', 'WITHSCORES', 'LIMIT', k, 1)
    return {0, 'creation', tonumber(e[2]) + minute, recent .. ' content-creating requests this minute, the most allowed (RATE-SEC-CONTENT-CREATION)', now}
  end
  if lastHour + 1 > cph then
    local k = lastHour - cph
    local e = redis.call('ZRANGE', cre, k, k, 'WITHSCORES')
    return {0, 'creation', tonumber(e[2]) + hour, lastHour .. ' content-creating requests this hour, the most allowed (RATE-SEC-CONTENT-CREATION)', now}
  end
end
redis.call('ZREMRANGEBYSCORE', cpu, '-inf', now - minute)
local ce = redis.call('ZRANGE', cpu, 0, -1, 'WITHSCORES')
local cpuUsed = sumOf(ce)
if cpuUsed >= cpuCap then
  return {0, 'cpu', whenFits(ce, minute, cpuCap, 1), 'an estimated ' .. math.floor(cpuUsed / 1000) .. ' s of the platform CPU time this minute (RATE-SEC-CPU-TIME)', now}
end
local id = redis.call('INCR', seq)
redis.call('ZADD', inflight, now + lease, slot)
redis.call('PEXPIRE', inflight, lease * 4)
redis.call('ZADD', pts, now, id .. ':' .. points)
redis.call('PEXPIRE', pts, minute * 2)
redis.call('SADD', known, 'endpoint:' .. endpoint, 'resource:' .. resource)
redis.call('PEXPIRE', known, hour * 2)
if creation then
  redis.call('ZADD', cre, now, id .. ':1')
  redis.call('PEXPIRE', cre, hour * 2)
end
if primary then
  redis.call('ZADD', rif, now + lease, slot)
  redis.call('PEXPIRE', rif, lease * 4)
end
return {1, 'granted', -1, '', now, id}
`;

const RELEASE = `${redisNow}local inflight, rif, cpu, guessed, observed, seq, known, pts, cre = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local slot, duration, primary, answered = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4] == '1'
local minute, hour = tonumber(ARGV[5]), tonumber(ARGV[6])
local removed = redis.call('ZREM', inflight, slot)
redis.call('ZREM', rif, slot)
-- the platform counted the request when it arrived, somewhere between the reservation and the answer: its points
-- and its creation leave the window a minute after the answer, never before the platform's do
if ARGV[13] ~= '' then
  redis.call('ZADD', pts, 'XX', now, ARGV[13] .. ':' .. ARGV[14])
  if ARGV[15] == '1' then redis.call('ZADD', cre, 'XX', now, ARGV[13] .. ':1') end
end
if duration > 0 then
  redis.call('ZADD', cpu, now, redis.call('INCR', seq) .. ':' .. math.floor(duration))
  redis.call('PEXPIRE', cpu, minute * 2)
end
if primary and answered then
  redis.call('HSET', guessed, 'answered', '1')
  redis.call('PEXPIRE', guessed, hour * 2)
end
if primary and ARGV[7] == '1' then
  local limit, remaining, used, reset, name = tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10], tonumber(ARGV[11]), ARGV[12]
  local cur = redis.call('HMGET', observed, 'remaining', 'reset')
  redis.call('HSET', observed, 'answered', '1', 'limit', limit)
  -- answers arrive out of order: within one window the lowest remaining is the latest news
  if not (tonumber(cur[2]) == reset and cur[1] and tonumber(cur[1]) < remaining) then
    redis.call('HSET', observed, 'remaining', remaining, 'reset', reset)
    if used == '' then redis.call('HDEL', observed, 'used') else redis.call('HSET', observed, 'used', used) end
  end
  redis.call('PEXPIRE', observed, hour * 2)
  redis.call('SADD', known, 'resource:' .. name)
end
return removed
`;

const HOLD = `${redisNow}local untilMs = now + tonumber(ARGV[2])
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if untilMs > cur then redis.call('HSET', KEYS[1], ARGV[1], untilMs) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < tonumber(ARGV[2]) + 60000 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + 60000) end
return untilMs
`;

/** ARGV: lease, then slot and its resource's in-flight key (or '') pairs. */
const RENEW = `${redisNow}local lease = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[i])
  if ARGV[i + 1] ~= '' then redis.call('ZADD', ARGV[i + 1], 'XX', now + lease, ARGV[i]) end
end
return now
`;

const SNAPSHOT = `${redisNow}local inflight, cre, cpu, holds, known = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local base = ARGV[1]
local minute, hour = tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {now = now, inFlight = redis.call('ZCOUNT', inflight, '(' .. now, '+inf'), resources = {}, points = {}, holds = {}}
out.creationsLastMinute = redis.call('ZCOUNT', cre, '(' .. (now - minute), '+inf')
out.creationsLastHour = redis.call('ZCOUNT', cre, '(' .. (now - hour), '+inf')
local cpuSum = 0
for _, e in ipairs(redis.call('ZRANGEBYSCORE', cpu, '(' .. (now - minute), '+inf')) do cpuSum = cpuSum + tonumber(string.match(e, ':([%d%.]+)$')) end
out.cpuMsLastMinute = cpuSum
local h = redis.call('HGETALL', holds)
for i = 1, #h, 2 do if tonumber(h[i + 1]) > now then out.holds[h[i]] = tonumber(h[i + 1]) end end
for _, k in ipairs(redis.call('SMEMBERS', known)) do
  local kind, name = string.match(k, '^(%a+):(.*)$')
  if kind == 'endpoint' then
    local sum = 0
    for _, e in ipairs(redis.call('ZRANGEBYSCORE', base .. 'pts:' .. name, '(' .. (now - minute), '+inf')) do sum = sum + tonumber(string.match(e, ':([%d%.]+)$')) end
    if sum > 0 then out.points[name] = sum end
  elseif kind == 'resource' then
    local r = redis.call('HMGET', base .. 'res:' .. name, 'limit', 'remaining', 'used', 'reset')
    out.resources[name] = {limit = r[1], remaining = r[2], used = r[3], reset = r[4], inFlight = redis.call('ZCOUNT', base .. 'rif:' .. name, '(' .. now, '+inf')}
  end
end
return cjson.encode(out)
`;

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
let slotCounter = 0;

function numberOrUndefined(value: unknown): number | undefined {
  if (value === null || value === undefined || value === false || value === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

export class RedisBudgetStore implements BudgetStore {
  readonly url: string;
  private readonly prefix: string;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly connectTimeoutMs: number;
  private readonly minute: number;
  private readonly hour: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly listeners = new Set<() => void>();
  private readonly scripts = redisScripts({ reserve: RESERVE, release: RELEASE, hold: HOLD, renew: RENEW, snapshot: SNAPSHOT });
  /** The slot each granted reservation holds, and the resource in-flight key it is also counted in ('' for none). */
  private readonly slots = new Map<Reservation, { slot: string; rif: string; id: string }>();
  private connection: Promise<RedisConnection> | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private pending = 0;
  private lastError: string | undefined;
  private readonly outage: RedisOutage;
  private closed = false;

  constructor(options: RedisBudgetStoreOptions) {
    const where = 'RedisBudgetStore';
    checkRedisStoreOptions(
      where,
      options,
      budgetStoreOptionKeys,
      'the limits store',
      'redis://127.0.0.1:6379',
      'the budgets stay in this process when none is given',
    );
    const positive = (name: string, value: number | undefined, fallback: number) => {
      if (value === undefined) return fallback;
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
        throw new UsageError(`${where}: ${name} must be a number above 0, got ${JSON.stringify(value)}`, { code: 'INVALID_ARGUMENT' });
      return value;
    };
    this.url = options.url;
    this.prefix = options.prefix ?? 'gantry:platform:';
    this.leaseMs = Math.round(positive('leaseMs', options.leaseMs, 15_000));
    this.pollMs = positive('pollMs', options.pollMs, 25);
    this.connectTimeoutMs = positive('connectTimeoutMs', options.connectTimeoutMs, 5_000);
    const scale = positive('windowScale', options.windowScale, 1);
    this.minute = Math.max(1, Math.round(minuteMs * scale));
    this.hour = Math.max(1, Math.round(hourMs * scale));
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? getLogger();
    this.outage = redisOutage(this.logger, `platform: the limits store ${this.shownUrl}`);
  }

  /** The address with its password masked, for messages. */
  get shownUrl(): string {
    return redactUrl(this.url);
  }

  private key(identity: string, part: string): string {
    return `${this.prefix}id:${identity}:${part}`;
  }

  private connect(): Promise<RedisConnection> {
    if (this.closed) return Promise.reject(new PlatformLimitsStoreError(`the limits store ${this.shownUrl} is closed`));
    this.connection ??= (async () => {
      const client = await openRedis({
        url: this.url,
        connectTimeoutMs: this.connectTimeoutMs,
        reconnectBeforeReady: true,
        onError: (error) => {
          const message = error.message || String(error);
          this.outage.down();
          if (message !== this.lastError) this.logger.warn(`platform: the limits store ${this.shownUrl}: ${message}`);
          this.lastError = message;
        },
        onReady: () => this.answered(),
      });
      client.unref();
      return client;
    })().catch((error: unknown) => {
      this.connection = undefined; // the next request tries again
      throw error;
    });
    return this.connection;
  }

  /** Redis answered: once after an outage, say so; its next error is then said again. */
  private answered(): void {
    if (this.outage.up()) this.lastError = undefined;
  }

  /** Runs a script by its SHA (loading it on first use and after a NOSCRIPT); errors become PlatformLimitsStoreError. */
  private async run(script: Script, keys: string[], args: Array<string | number>): Promise<unknown> {
    this.pending += 1;
    let client: RedisConnection | undefined;
    try {
      client = await this.connect();
      // The socket keeps the process alive only while a command is waiting for its answer.
      client.ref();
      const reply = await runScript(client, script, keys, args);
      this.answered();
      return reply;
    } catch (error) {
      if (error instanceof PlatformLimitsStoreError) throw error;
      this.outage.down();
      throw new PlatformLimitsStoreError(
        RedisStoreError.unavailable(`the limits store ${this.shownUrl}`, error, 'the request was not sent (the shared budgets fail closed)'),
        error,
      );
    } finally {
      this.pending -= 1;
      if (this.pending === 0) client?.unref();
    }
  }

  async reserve(r: Reservation, now: number): Promise<ReserveResult> {
    const slot = `${process.pid}:${Date.now().toString(36)}:${(slotCounter += 1).toString(36)}:${Math.random().toString(36).slice(2, 8)}`;
    const rif = r.countsPrimary ? this.key(r.identity, `rif:${r.resource}`) : '';
    const { limits } = r;
    const reply = (await this.run(
      this.scripts.reserve,
      [
        `${this.prefix}inflight`,
        this.key(r.identity, `pts:${r.endpoint}`),
        this.key(r.identity, 'cre'),
        this.key(r.identity, 'cpu'),
        this.key(r.identity, `res:${r.resource}`),
        this.key(r.identity, `rif:${r.resource}`),
        this.key(r.identity, 'holds'),
        `${this.prefix}seq`,
        this.key(r.identity, 'known'),
      ],
      [
        slot,
        limits.concurrency,
        r.points,
        limits.pointsPerMinute,
        r.creation ? 1 : 0,
        limits.creationsPerMinute,
        limits.creationsPerHour,
        limits.cpuMsPerMinute,
        r.countsPrimary ? 1 : 0,
        limits.resetSkewMs,
        this.leaseMs,
        this.minute,
        this.hour,
        r.endpoint,
        r.resource,
      ],
    )) as [number, string, number, string, number, number?];
    const [granted, scope, retryAtRedis, reason, redisNow, id] = reply;
    if (Number(granted) === 1) {
      this.slots.set(r, { slot, rif, id: String(id) });
      this.scheduleRenewal();
      return { granted: true };
    }
    // Redis's time back into this process's clock; a refusal only a release lifts is polled for (other processes).
    const retryAt = Number(retryAtRedis) >= 0 ? now + (Number(retryAtRedis) - Number(redisNow)) : now + this.pollMs;
    return { granted: false, scope: scope as Scope, retryAt, reason };
  }

  async release(r: Reservation, info: ReleaseInfo): Promise<void> {
    const held = this.slots.get(r);
    this.slots.delete(r);
    if (this.slots.size === 0) this.stopRenewal();
    const o = info.observation;
    try {
      await this.run(
        this.scripts.release,
        [
          `${this.prefix}inflight`,
          held?.rif || this.key(r.identity, `rif:${r.resource}`),
          this.key(r.identity, 'cpu'),
          this.key(r.identity, `res:${r.resource}`),
          this.key(r.identity, `res:${o?.resource ?? r.resource}`),
          `${this.prefix}seq`,
          this.key(r.identity, 'known'),
          this.key(r.identity, `pts:${r.endpoint}`),
          this.key(r.identity, 'cre'),
        ],
        [
          held?.slot ?? '',
          Math.max(0, Math.round(info.durationMs)),
          r.countsPrimary ? 1 : 0,
          info.answered ? 1 : 0,
          this.minute,
          this.hour,
          o ? 1 : 0,
          o?.limit ?? 0,
          o?.remaining ?? 0,
          o?.used ?? '',
          o?.reset ?? 0,
          o?.resource ?? '',
          held?.id ?? '',
          r.points,
          r.creation ? 1 : 0,
        ],
      );
    } catch (error) {
      // The slot is a lease: unreleased, it expires on its own within leaseMs. Nothing to undo here.
      this.logger.warn(`platform: could not release a slot in ${this.shownUrl} (it expires within ${this.leaseMs} ms): ${(error as Error).message}`);
    } finally {
      for (const listener of this.listeners) listener();
    }
  }

  async hold(identity: string, scope: string, until: number): Promise<void> {
    await this.run(this.scripts.hold, [this.key(identity, 'holds')], [scope, Math.max(0, Math.round(until - this.clock.now()))]);
  }

  async snapshot(identity: string, now: number): Promise<BudgetSnapshot> {
    const base = this.key(identity, '');
    const text = await this.run(
      this.scripts.snapshot,
      [`${this.prefix}inflight`, this.key(identity, 'cre'), this.key(identity, 'cpu'), this.key(identity, 'holds'), this.key(identity, 'known')],
      [base, this.minute, this.hour],
    );
    const raw = JSON.parse(String(text)) as {
      now: number;
      inFlight: number;
      resources: Record<string, Record<string, unknown>> | unknown[];
      points: Record<string, number> | unknown[];
      holds: Record<string, number> | unknown[];
      creationsLastMinute: number;
      creationsLastHour: number;
      cpuMsLastMinute: number;
    };
    // cjson encodes an empty table as {} — or [] — so both are read as empty.
    const object = <T>(value: Record<string, T> | unknown[]): Record<string, T> => (Array.isArray(value) ? {} : value);
    const toLocal = (at: number) => now + (at - raw.now);
    const holds: Record<string, number> = {};
    for (const [scope, until] of Object.entries(object(raw.holds))) holds[scope] = toLocal(until);
    const resources: Record<string, ResourceState> = {};
    for (const [name, r] of Object.entries(object(raw.resources))) {
      const heldUntil = holds[`resource:${name}`];
      resources[name] = {
        limit: numberOrUndefined(r.limit),
        remaining: numberOrUndefined(r.remaining),
        used: numberOrUndefined(r.used),
        reset: numberOrUndefined(r.reset),
        inFlight: Number(r.inFlight) || 0,
        heldUntil,
      };
    }
    return {
      inFlight: raw.inFlight,
      resources,
      points: object(raw.points),
      creationsLastMinute: raw.creationsLastMinute,
      creationsLastHour: raw.creationsLastHour,
      cpuMsLastMinute: raw.cpuMsLastMinute,
      holds,
    };
  }

  onRelease(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private scheduleRenewal(): void {
    if (this.renewTimer) return;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(10, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref();
  }

  private stopRenewal(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
  }

  /** Renews the lease of every slot this process holds. */
  private async renew(): Promise<void> {
    if (this.slots.size === 0) return this.stopRenewal();
    const args: Array<string | number> = [this.leaseMs];
    for (const { slot, rif } of this.slots.values()) args.push(slot, rif);
    try {
      await this.run(this.scripts.renew, [`${this.prefix}inflight`], args);
    } catch (error) {
      this.logger.warn(`platform: could not renew in-flight slots in ${this.shownUrl}: ${(error as Error).message}`);
    }
  }

  /** Closes the connection (in-flight slots this process still holds expire within leaseMs). */
  async close(): Promise<void> {
    this.closed = true;
    // The next client given this address gets a new store rather than this closed one.
    if (shared.get(this.url) === this) shared.delete(this.url);
    this.stopRenewal();
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    try {
      const client = await connection;
      if (client.close) await client.close();
      else client.destroy();
    } catch {
      // never connected
    }
  }
}

const shared = new Map<string, RedisBudgetStore>();

/**
 * The store of a `redis://` address, one per address in this process, so every client given the same address shares
 * one connection and one queue.
 */
export function budgetStoreFor(url: string, options: Omit<RedisBudgetStoreOptions, 'url'> = {}): RedisBudgetStore {
  let store = shared.get(url);
  if (!store) {
    store = new RedisBudgetStore({ ...options, url });
    shared.set(url, store);
  }
  return store;
}
