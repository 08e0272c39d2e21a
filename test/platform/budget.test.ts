// The budgets and the queue in front of the platform, in process: MemoryBudgetStore's decisions (what is refused, for
// which scope, until when) and the Limiter's order, holds, timers and give-ups, on a clock the test moves.
import assert from 'node:assert/strict';
import {
  MemoryBudgetStore,
  defaultPlatformLimits,
  processBudgetStore,
  type BudgetStore,
  type PlatformLimits,
  type PrimaryObservation,
  type Reservation,
} from '../../lib/platform/index.js';
import { Limiter, limiterFor } from '../../lib/platform/limiter.js';
import { longWaitMs, onWait, type WaitNotice } from '../../lib/http/index.js';
import { silentLogger, type Logger } from '../../lib/log.js';
import { VirtualClock } from './helpers/virtual-clock.js';

const t0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const minute = 60_000;
const hour = 60 * minute;

function limits(overrides: Partial<PlatformLimits> = {}): PlatformLimits {
  return { ...defaultPlatformLimits, ...overrides };
}

function res(overrides: Partial<Reservation> = {}): Reservation {
  return {
    identity: 'id-a',
    endpoint: 'GET /repos/{}/{}/issues',
    resource: 'core',
    points: 1,
    creation: false,
    countsPrimary: true,
    limits: limits(),
    ...overrides,
  };
}

const answered = (now: number, durationMs = 0) => ({ now, durationMs, answered: true });

/** One request sent at `now` and answered at once with these rate-limit headers. */
async function answer(store: MemoryBudgetStore, now: number, observation: PrimaryObservation, over: Partial<Reservation> = {}): Promise<void> {
  const r = res(over);
  await store.reserve(r, now);
  await store.release(r, { ...answered(now), observation });
}

/** A store shared with other processes, as the limiter sees one: its decisions come later, or fail. */
function sharedStore(inner: BudgetStore, reserve: BudgetStore['reserve']): BudgetStore {
  return {
    reserve,
    release: (r, info) => inner.release(r, info),
    hold: (identity, scope, until) => inner.hold(identity, scope, until),
    snapshot: (identity, now) => inner.snapshot(identity, now),
    onRelease: (listener) => inner.onRelease(listener),
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 6; i++) await new Promise((resolve) => setImmediate(resolve));
}

function track(promise: Promise<void>): { state: 'waiting' | 'granted' | 'rejected'; error?: unknown } {
  const t: { state: 'waiting' | 'granted' | 'rejected'; error?: unknown } = { state: 'waiting' };
  promise.then(
    () => (t.state = 'granted'),
    (error: unknown) => {
      t.state = 'rejected';
      t.error = error;
    },
  );
  return t;
}

describe('platform budgets (MemoryBudgetStore)', () => {
  it('MUTATION-PLATFORM: RATE-SEC-CONCURRENCY: exactly `concurrency` requests are in flight at once, across identities; a release frees one', async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ concurrency: 2 });
    const a = res({ limits: l, countsPrimary: false });
    const b = res({ limits: l, countsPrimary: false, identity: 'id-b' });
    assert.deepEqual(await store.reserve(a, t0), { granted: true });
    assert.deepEqual(await store.reserve(b, t0), { granted: true });
    const refused = await store.reserve(res({ limits: l, countsPrimary: false, identity: 'id-c' }), t0);
    assert.equal(refused.granted, false);
    assert.ok(!refused.granted && refused.scope === 'concurrency' && refused.retryAt === undefined);
    assert.match(refused.granted ? '' : refused.reason, /^2 requests in flight.*RATE-SEC-CONCURRENCY/);
    await store.release(a, answered(t0 + 10));
    assert.equal((await store.snapshot('id-a', t0 + 10)).inFlight, 1);
    assert.deepEqual(await store.reserve(res({ limits: l, countsPrimary: false, identity: 'id-c' }), t0 + 10), { granted: true });
  });

  it('MUTATION-PLATFORM: a release without a reservation never takes the in-flight count below zero', async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ concurrency: 1 });
    await store.release(res({ limits: l }), answered(t0));
    await store.release(res({ limits: l }), answered(t0));
    assert.equal((await store.snapshot('id-a', t0)).inFlight, 0);
    assert.equal((await store.snapshot('id-a', t0)).resources.core!.inFlight, 0);
    assert.deepEqual(await store.reserve(res({ limits: l, countsPrimary: false }), t0), { granted: true });
    assert.equal((await store.reserve(res({ limits: l, countsPrimary: false }), t0)).granted, false);
  });

  it('MUTATION-PLATFORM: a held resource, endpoint or content creation refuses until the hold ends, for its own scope only', async () => {
    const store = new MemoryBudgetStore();
    await store.hold('id-a', 'resource:search', t0 + 5000);
    await store.hold('id-a', 'endpoint:POST /x', t0 + 7000);
    await store.hold('id-a', 'creation', t0 + 9000);
    const search = await store.reserve(res({ resource: 'search', countsPrimary: false }), t0);
    assert.deepEqual(search, {
      granted: false,
      scope: 'resource',
      retryAt: t0 + 5000,
      reason: `resource:search is held until ${new Date(t0 + 5000).toISOString()}`,
    });
    const post = await store.reserve(res({ endpoint: 'POST /x', countsPrimary: false }), t0);
    assert.ok(!post.granted && post.scope === 'endpoint' && post.retryAt === t0 + 7000);
    const create = await store.reserve(res({ endpoint: 'POST /y', creation: true, countsPrimary: false }), t0);
    assert.ok(!create.granted && create.scope === 'creation' && create.retryAt === t0 + 9000);
    // Another identity, another endpoint, a request that creates nothing: not held.
    assert.deepEqual(await store.reserve(res({ identity: 'id-b', resource: 'search', countsPrimary: false }), t0), { granted: true });
    assert.deepEqual(await store.reserve(res({ endpoint: 'POST /y', countsPrimary: false }), t0), { granted: true });
    // At the hold's end it is over.
    assert.deepEqual(await store.reserve(res({ resource: 'search', countsPrimary: false }), t0 + 5000), { granted: true });
    assert.ok(!(await store.reserve(res({ endpoint: 'POST /x', countsPrimary: false }), t0 + 6999)).granted);
  });

  it('MUTATION-PLATFORM: a shorter hold never shortens a longer one', async () => {
    const store = new MemoryBudgetStore();
    await store.hold('id-a', 'endpoint:GET /a', t0 + 10_000);
    await store.hold('id-a', 'endpoint:GET /a', t0 + 2_000);
    const r = await store.reserve(res({ endpoint: 'GET /a' }), t0 + 3000);
    assert.ok(!r.granted && r.retryAt === t0 + 10_000);
    assert.deepEqual((await store.snapshot('id-a', t0 + 3000)).holds, { 'endpoint:GET /a': t0 + 10_000 });
  });

  it('MUTATION-PLATFORM: RATE-HDR-REMAINING: a spent resource refuses until its reset plus the skew, then the budget is unknown again', async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ resetSkewMs: 1000 });
    const reset = Math.floor(t0 / 1000) + 60;
    const first = res({ limits: l });
    assert.deepEqual(await store.reserve(first, t0), { granted: true });
    await store.release(first, { ...answered(t0 + 5), observation: { resource: 'core', limit: 5000, remaining: 0, used: 5000, reset } });
    const refused = await store.reserve(res({ limits: l }), t0 + 10);
    assert.deepEqual(refused, {
      granted: false,
      scope: 'resource',
      retryAt: reset * 1000 + 1000,
      reason: `the core budget is spent until ${new Date(reset * 1000).toISOString()} (RATE-HDR-REMAINING)`,
    });
    assert.equal((await store.reserve(res({ limits: l }), reset * 1000 + 999)).granted, false);
    // RATE-EP-STATUS: what does not count against the primary limit is not held by it.
    assert.deepEqual(await store.reserve(res({ limits: l, endpoint: 'GET /rate_limit', countsPrimary: false }), t0 + 10), { granted: true });
    // The new window: granted, and the budget is unknown (probed again by the one request in flight).
    const probe = res({ limits: l });
    assert.deepEqual(await store.reserve(probe, reset * 1000 + 1000), { granted: true });
    const snap = await store.snapshot('id-a', reset * 1000 + 1000);
    assert.deepEqual(
      {
        remaining: snap.resources.core!.remaining,
        used: snap.resources.core!.used,
        reset: snap.resources.core!.reset,
        inFlight: snap.resources.core!.inFlight,
      },
      { remaining: undefined, used: undefined, reset: undefined, inFlight: 1 },
    );
    const second = await store.reserve(res({ limits: l }), reset * 1000 + 1000);
    assert.ok(!second.granted && second.scope === 'resource' && second.retryAt === undefined);
    assert.match(second.granted ? '' : second.reason, /first answer about the core budget/);
  });

  it('MUTATION-PLATFORM: RATE-HDR-REMAINING: the requests in flight count against what remains', async () => {
    const store = new MemoryBudgetStore();
    const reset = Math.floor(t0 / 1000) + 600;
    await answer(store, t0, { resource: 'core', limit: 10, remaining: 2, used: 8, reset });
    assert.deepEqual(await store.reserve(res(), t0), { granted: true });
    assert.deepEqual(await store.reserve(res(), t0), { granted: true });
    const third = await store.reserve(res(), t0);
    assert.ok(!third.granted && third.scope === 'resource' && third.retryAt === reset * 1000 + defaultPlatformLimits.resetSkewMs);
  });

  it('MUTATION-PLATFORM: the first request to a resource goes alone until an answer, with or without headers, says the budget', async () => {
    const store = new MemoryBudgetStore();
    const first = res();
    assert.deepEqual(await store.reserve(first, t0), { granted: true });
    const waiting = await store.reserve(res(), t0);
    assert.ok(!waiting.granted && waiting.scope === 'resource' && waiting.retryAt === undefined);
    // Another resource is probed on its own.
    assert.deepEqual(await store.reserve(res({ resource: 'search' }), t0), { granted: true });
    // An answer that was not one (a network failure) does not end the probing.
    await store.release(first, { now: t0 + 1, durationMs: 0, answered: false });
    const again = res();
    assert.deepEqual(await store.reserve(again, t0 + 1), { granted: true });
    assert.equal((await store.reserve(res(), t0 + 1)).granted, false);
    await store.release(again, answered(t0 + 2));
    assert.deepEqual(await store.reserve(res(), t0 + 2), { granted: true });
    assert.deepEqual(await store.reserve(res(), t0 + 2), { granted: true });
  });

  it('MUTATION-PLATFORM: answers out of order: within one window the lowest remaining wins; a new reset replaces it', async () => {
    const store = new MemoryBudgetStore();
    const reset = Math.floor(t0 / 1000) + 600;
    await answer(store, t0, { resource: 'core', limit: 100, remaining: 5, used: 95, reset });
    await answer(store, t0, { resource: 'core', limit: 200, remaining: 7, used: 93, reset });
    let core = (await store.snapshot('id-a', t0)).resources.core!;
    assert.deepEqual([core.limit, core.remaining, core.used, core.reset], [200, 5, 95, reset]);
    await answer(store, t0, { resource: 'core', limit: 200, remaining: 3, used: 197, reset });
    core = (await store.snapshot('id-a', t0)).resources.core!;
    assert.deepEqual([core.remaining, core.used], [3, 197]);
    await answer(store, t0, { resource: 'core', limit: 200, remaining: 150, used: 50, reset: reset + 3600 });
    core = (await store.snapshot('id-a', t0)).resources.core!;
    assert.deepEqual([core.remaining, core.used, core.reset], [150, 50, reset + 3600]);
    // The headers name the resource the platform counted: that one is updated.
    await answer(store, t0, { resource: 'search', limit: 30, remaining: 29, used: 1, reset });
    assert.equal((await store.snapshot('id-a', t0)).resources.search!.remaining, 29);
    // A request that does not count against the primary limit leaves it alone (RATE-EP-STATUS).
    await answer(store, t0, { resource: 'graphql', limit: 5000, remaining: 1, used: 4999, reset }, { countsPrimary: false, resource: 'graphql' });
    assert.equal((await store.snapshot('id-a', t0)).resources.graphql!.remaining, undefined);
  });

  it('MUTATION-PLATFORM: RATE-SEC-POINTS-REST: an endpoint takes at most its points per minute, counted from each answer', async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ pointsPerMinute: 10 });
    const post = (over: Partial<Reservation> = {}) => res({ limits: l, endpoint: 'POST /x', points: 5, countsPrimary: false, ...over });
    const a = post();
    const b = post();
    assert.deepEqual(await store.reserve(a, t0), { granted: true });
    assert.deepEqual(await store.reserve(b, t0 + 100), { granted: true });
    const refused = await store.reserve(post(), t0 + 200);
    assert.deepEqual(refused, {
      granted: false,
      scope: 'endpoint',
      retryAt: t0 + minute,
      reason: 'POST /x used 10 of 10 points this minute (RATE-SEC-POINTS-REST)',
    });
    // Another endpoint has its own points; a cheaper request does not fit either.
    assert.deepEqual(await store.reserve(post({ endpoint: 'POST /z' }), t0 + 200), { granted: true });
    assert.equal((await store.reserve(post({ points: 1 }), t0 + 200)).granted, false);
    // Answered later, a request's points count from its answer.
    await store.release(a, answered(t0 + 1000));
    await store.release(b, answered(t0 + 2000));
    const later = await store.reserve(post(), t0 + minute);
    assert.ok(!later.granted && later.retryAt === t0 + 1000 + minute);
    // Needing all ten, it waits for both to leave the window.
    const big = await store.reserve(post({ points: 10 }), t0 + minute);
    assert.ok(!big.granted && big.retryAt === t0 + 2000 + minute);
    assert.equal((await store.reserve(post(), t0 + 999 + minute)).granted, false);
    assert.deepEqual(await store.reserve(post(), t0 + 1000 + minute), { granted: true });
    assert.deepEqual((await store.snapshot('id-a', t0 + 1000 + minute)).points, { 'POST /x': 10 });
    assert.deepEqual((await store.snapshot('id-a', t0 + 3 * minute)).points, {});
  });

  it('MUTATION-PLATFORM: RATE-SEC-POINTS-REST: a request costing more than the whole minute is refused, never granted', async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ pointsPerMinute: 4 });
    const r = await store.reserve(res({ limits: l, points: 5, countsPrimary: false }), t0);
    assert.ok(!r.granted && r.scope === 'endpoint' && r.retryAt === minute);
    await store.reserve(res({ limits: l, points: 4, countsPrimary: false }), t0);
    const after = await store.reserve(res({ limits: l, points: 5, countsPrimary: false }), t0 + 1);
    assert.ok(!after.granted && after.retryAt === t0 + minute);
  });

  it('MUTATION-PLATFORM: RATE-SEC-CONTENT-CREATION: creations per minute and per hour, each refused until the oldest leaves its window', async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ creationsPerMinute: 2, creationsPerHour: 3 });
    const create = (endpoint: string) => res({ limits: l, endpoint, creation: true, countsPrimary: false });
    assert.deepEqual(await store.reserve(create('POST /a'), t0), { granted: true });
    assert.deepEqual(await store.reserve(create('POST /b'), t0 + 10), { granted: true });
    const minuteFull = await store.reserve(create('POST /c'), t0 + 20);
    assert.deepEqual(minuteFull, {
      granted: false,
      scope: 'creation',
      retryAt: t0 + minute,
      reason: '2 content-creating requests this minute, the most allowed (RATE-SEC-CONTENT-CREATION)',
    });
    // What creates nothing is not counted.
    assert.deepEqual(await store.reserve(res({ limits: l, endpoint: 'POST /c', countsPrimary: false }), t0 + 20), { granted: true });
    assert.equal((await store.reserve(create('POST /c'), t0 + minute - 1)).granted, false);
    assert.deepEqual(await store.reserve(create('POST /c'), t0 + minute), { granted: true });
    let snap = await store.snapshot('id-a', t0 + minute);
    assert.deepEqual([snap.creationsLastMinute, snap.creationsLastHour], [2, 3]);
    const hourFull = await store.reserve(create('POST /d'), t0 + 3 * minute);
    assert.deepEqual(hourFull, {
      granted: false,
      scope: 'creation',
      retryAt: t0 + hour,
      reason: '3 content-creating requests this hour, the most allowed (RATE-SEC-CONTENT-CREATION)',
    });
    assert.equal((await store.reserve(create('POST /d'), t0 + hour - 1)).granted, false);
    assert.deepEqual(await store.reserve(create('POST /d'), t0 + hour), { granted: true });
    snap = await store.snapshot('id-a', t0 + hour);
    assert.deepEqual([snap.creationsLastMinute, snap.creationsLastHour], [1, 3]);
  });

  it('MUTATION-PLATFORM: RATE-SEC-CONTENT-CREATION: a creation counts from its answer, and once', async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ creationsPerMinute: 1 });
    const a = res({ limits: l, creation: true, countsPrimary: false });
    await store.reserve(a, t0);
    await store.release(a, answered(t0 + 5000));
    assert.equal((await store.snapshot('id-a', t0 + 5000)).creationsLastHour, 1);
    const r = await store.reserve(res({ limits: l, creation: true, countsPrimary: false }), t0 + minute);
    assert.ok(!r.granted && r.retryAt === t0 + 5000 + minute);
    assert.deepEqual(await store.reserve(res({ limits: l, creation: true, countsPrimary: false }), t0 + 5000 + minute), { granted: true });
  });

  it("MUTATION-PLATFORM: RATE-SEC-CPU-TIME: the answers' durations in the last minute cap what is sent", async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ cpuMsPerMinute: 3000 });
    const a = res({ limits: l, countsPrimary: false });
    await store.reserve(a, t0);
    await store.release(a, answered(t0 + 2999, 2999));
    assert.deepEqual(await store.reserve(res({ limits: l, countsPrimary: false, endpoint: 'GET /b' }), t0 + 3000), { granted: true });
    const b = res({ limits: l, countsPrimary: false, endpoint: 'GET /c' });
    await store.reserve(b, t0 + 3000);
    await store.release(b, answered(t0 + 4000, 1));
    const r = await store.reserve(res({ limits: l, countsPrimary: false, endpoint: 'GET /d' }), t0 + 4000);
    assert.deepEqual(r, {
      granted: false,
      scope: 'cpu',
      retryAt: t0 + 2999 + minute,
      reason: "an estimated 3 s of the platform's CPU time this minute (RATE-SEC-CPU-TIME)",
    });
    assert.equal((await store.snapshot('id-a', t0 + 4000)).cpuMsLastMinute, 3000);
    assert.deepEqual(await store.reserve(res({ limits: l, countsPrimary: false, endpoint: 'GET /d' }), t0 + 2999 + minute), { granted: true });
  });

  it('MUTATION-PLATFORM: the snapshot shows what is held, in flight and spent now, not what has ended', async () => {
    const store = new MemoryBudgetStore();
    const reset = Math.floor(t0 / 1000) + 60;
    await answer(store, t0, { resource: 'core', limit: 60, remaining: 59, used: 1, reset });
    await store.reserve(res(), t0);
    await store.hold('id-a', 'resource:core', t0 + 5000);
    let snap = await store.snapshot('id-a', t0 + 1);
    assert.deepEqual(snap.resources.core, { limit: 60, remaining: 59, used: 1, reset, inFlight: 1, heldUntil: t0 + 5000 });
    assert.deepEqual(snap.holds, { 'resource:core': t0 + 5000 });
    assert.equal(snap.inFlight, 1);
    snap = await store.snapshot('id-a', t0 + 5000);
    assert.equal(snap.resources.core!.heldUntil, undefined);
    assert.deepEqual(snap.holds, {});
    assert.deepEqual(snap.points, { [res().endpoint]: 2 });
    // Another identity sees none of it but the process's in-flight count.
    const other = await store.snapshot('id-b', t0 + 1);
    assert.deepEqual(
      { ...other, inFlight: 0 },
      { inFlight: 0, resources: {}, points: {}, creationsLastMinute: 0, creationsLastHour: 0, cpuMsLastMinute: 0, holds: {} },
    );
    assert.equal(other.inFlight, 1);
  });

  it("MUTATION-PLATFORM: a request answered after more than a minute in flight counts its points from the answer, and takes no one else's", async () => {
    const store = new MemoryBudgetStore();
    const l = limits({ pointsPerMinute: 10 });
    const slow = res({ limits: l, points: 5, countsPrimary: false });
    await store.reserve(slow, t0);
    const next = res({ limits: l, points: 5, countsPrimary: false });
    assert.deepEqual(await store.reserve(next, t0 + minute + 1), { granted: true });
    await store.release(slow, answered(t0 + minute + 2));
    assert.deepEqual((await store.snapshot('id-a', t0 + minute + 2)).points, { [slow.endpoint]: 10 });
    assert.equal((await store.reserve(res({ limits: l, points: 1, countsPrimary: false }), t0 + minute + 3)).granted, false);
  });

  it('MUTATION-PLATFORM: RATE-SEC-CONTENT-CREATION: a creation in flight for over an hour counts once, from its answer; what creates nothing never counts', async () => {
    const store = new MemoryBudgetStore();
    const slow = res({ creation: true, countsPrimary: false });
    await store.reserve(slow, t0);
    const next = res({ creation: true, countsPrimary: false, endpoint: 'POST /n' });
    assert.deepEqual(await store.reserve(next, t0 + hour + 1), { granted: true });
    await store.release(slow, answered(t0 + hour + 2));
    const read = res({ countsPrimary: false, endpoint: 'GET /r' });
    await store.reserve(read, t0 + hour + 3);
    await store.release(read, answered(t0 + hour + 3));
    let snap = await store.snapshot('id-a', t0 + hour + 3);
    assert.deepEqual([snap.creationsLastMinute, snap.creationsLastHour], [2, 2]);
    // An hour after each answer, that creation has left the hour.
    snap = await store.snapshot('id-a', t0 + 2 * hour + 1);
    assert.deepEqual([snap.creationsLastMinute, snap.creationsLastHour], [0, 1]);
    snap = await store.snapshot('id-a', t0 + 2 * hour + 2);
    assert.equal(snap.creationsLastHour, 0);
  });

  it('MUTATION-PLATFORM: RATE-EP-STATUS: an answer to a request that does not count against the primary limit does not end the probe of its resource', async () => {
    const store = new MemoryBudgetStore();
    const probe = res();
    await store.reserve(probe, t0);
    const status = res({ endpoint: 'GET /rate_limit', countsPrimary: false });
    assert.deepEqual(await store.reserve(status, t0), { granted: true });
    await store.release(status, answered(t0 + 1));
    assert.equal((await store.snapshot('id-a', t0 + 1)).resources.core!.inFlight, 1);
    assert.equal((await store.reserve(res(), t0 + 1)).granted, false);
  });

  it("MUTATION-PLATFORM: RATE-HDR-REMAINING: of two answers with the same remaining in one window, the later one's headers are kept", async () => {
    const store = new MemoryBudgetStore();
    const reset = Math.floor(t0 / 1000) + 600;
    for (const used of [95, 96]) await answer(store, t0, { resource: 'core', limit: 100, remaining: 5, used, reset });
    assert.equal((await store.snapshot('id-a', t0)).resources.core!.used, 96);
  });

  it('MUTATION-PLATFORM: a release tells every listener until it unsubscribes; one store serves the whole process', async () => {
    const store = new MemoryBudgetStore();
    let heard = 0;
    const stop = store.onRelease(() => (heard += 1));
    const a = res();
    await store.reserve(a, t0);
    await store.release(a, answered(t0));
    assert.equal(heard, 1);
    stop();
    await store.release(a, answered(t0));
    assert.equal(heard, 1);
    assert.ok(processBudgetStore instanceof MemoryBudgetStore);
  });
});

describe('platform limiter (the queue in front of the budgets)', () => {
  let clock: VirtualClock;
  let store: MemoryBudgetStore;
  let limiter: Limiter;
  let logged: string[];
  const logger: Logger = { ...silentLogger, info: (message: string) => void logged.push(message) };

  beforeEach(() => {
    clock = new VirtualClock(t0, { auto: false });
    store = new MemoryBudgetStore();
    logged = [];
    limiter = new Limiter(store, clock, logger);
  });

  /** Moves the clock on and lets the queue act on it. */
  async function passTime(ms: number): Promise<void> {
    clock.advance(ms);
    await settle();
  }

  /** Asks a shared store that decides about `r` only when let go, aborts the request meanwhile, then lets it decide. */
  async function abortWhileDeciding(r: Reservation): Promise<Limiter> {
    let gate: (() => void) | undefined;
    const slow = sharedStore(store, async (asked, now) => {
      if (asked === r) await new Promise<void>((resolve) => (gate = resolve));
      return store.reserve(asked, now);
    });
    const slowLimiter = new Limiter(slow, clock, logger);
    const controller = new AbortController();
    const t = track(slowLimiter.acquire(r, { signal: controller.signal }));
    await settle();
    controller.abort(new Error('cancelled'));
    gate!();
    await settle();
    assert.equal(t.state, 'rejected');
    return slowLimiter;
  }

  it('MUTATION-PLATFORM: RATE-SEC-CONCURRENCY: requests are granted in order of arrival as slots free; a retried one goes first', async () => {
    const l = limits({ concurrency: 1 });
    const a = res({ limits: l, countsPrimary: false });
    const b = res({ limits: l, countsPrimary: false, endpoint: 'GET /b' });
    const c = res({ limits: l, countsPrimary: false, endpoint: 'GET /c' });
    const d = res({ limits: l, countsPrimary: false, endpoint: 'GET /d' });
    const ta = track(limiter.acquire(a));
    const tb = track(limiter.acquire(b));
    const tc = track(limiter.acquire(c));
    await settle();
    assert.deepEqual([ta.state, tb.state, tc.state], ['granted', 'waiting', 'waiting']);
    assert.equal(limiter.waiting, 2);
    const td = track(limiter.acquire(d, { first: true }));
    await store.release(a, answered(clock.now()));
    await settle();
    assert.deepEqual([tb.state, tc.state, td.state], ['waiting', 'waiting', 'granted']);
    await store.release(d, answered(clock.now()));
    await settle();
    assert.deepEqual([tb.state, tc.state], ['granted', 'waiting']);
    assert.equal(limiter.waiting, 1);
  });

  it('MUTATION-PLATFORM: a request refused for its endpoint holds the ones behind it on that endpoint, not the others', async () => {
    const l = limits({ pointsPerMinute: 10 });
    const post = (points: number, endpoint = 'POST /x') => res({ limits: l, endpoint, points, countsPrimary: false });
    await limiter.acquire(post(6));
    const big = track(limiter.acquire(post(5)));
    const small = track(limiter.acquire(post(4)));
    const elsewhere = track(limiter.acquire(post(5, 'POST /y')));
    await settle();
    // The small one would fit, but it came after the big one: the big one is not starved.
    assert.deepEqual([big.state, small.state, elsewhere.state], ['waiting', 'waiting', 'granted']);
    await passTime(minute - 1);
    assert.deepEqual([big.state, small.state], ['waiting', 'waiting']);
    await passTime(1);
    assert.deepEqual([big.state, small.state], ['granted', 'granted']);
  });

  it("MUTATION-PLATFORM: a held resource holds its queue while another resource and another identity go on; the timer wakes it at the hold's end", async () => {
    await store.hold('id-a', 'resource:core', t0 + 3000);
    const held = track(limiter.acquire(res()));
    const heldToo = track(limiter.acquire(res({ endpoint: 'GET /other' })));
    const search = track(limiter.acquire(res({ resource: 'search' })));
    const otherIdentity = track(limiter.acquire(res({ identity: 'id-b' })));
    await settle();
    assert.deepEqual([held.state, heldToo.state, search.state, otherIdentity.state], ['waiting', 'waiting', 'granted', 'granted']);
    await passTime(2999);
    assert.equal(held.state, 'waiting');
    await passTime(1);
    assert.equal(held.state, 'granted');
  });

  it('MUTATION-PLATFORM: an earlier hold found later moves the wake-up earlier', async () => {
    await store.hold('id-a', 'endpoint:GET /late', t0 + 9000);
    const late = track(limiter.acquire(res({ endpoint: 'GET /late', countsPrimary: false })));
    await settle();
    await store.hold('id-a', 'endpoint:GET /soon', t0 + 2000);
    const soon = track(limiter.acquire(res({ endpoint: 'GET /soon', countsPrimary: false })));
    await settle();
    await passTime(2000);
    assert.deepEqual([soon.state, late.state], ['granted', 'waiting']);
    await passTime(7000);
    assert.equal(late.state, 'granted');
  });

  it('MUTATION-PLATFORM: a hold longer than the request accepts rejects it with its own error; one as long is waited out', async () => {
    await store.hold('id-a', 'endpoint:GET /a', t0 + 5000);
    const seen: Array<[number, string]> = [];
    const tooLong = (retryAt: number, reason: string) => {
      seen.push([retryAt, reason]);
      return new Error('too long');
    };
    const rejected = track(limiter.acquire(res({ endpoint: 'GET /a', countsPrimary: false }), { maxWaitMs: 4999, tooLong }));
    const waits = track(limiter.acquire(res({ endpoint: 'GET /a', countsPrimary: false }), { maxWaitMs: 5000, tooLong }));
    await settle();
    assert.equal(rejected.state, 'rejected');
    assert.equal((rejected.error as Error).message, 'too long');
    assert.deepEqual(seen, [[t0 + 5000, `endpoint:GET /a is held until ${new Date(t0 + 5000).toISOString()}`]]);
    assert.equal(waits.state, 'waiting');
    assert.equal(limiter.waiting, 1);
    await passTime(5000);
    assert.equal(waits.state, 'granted');
  });

  it('MUTATION-PLATFORM: an abort before or while waiting rejects with its reason and leaves the queue; the rest goes on', async () => {
    const l = limits({ concurrency: 1 });
    const before = new AbortController();
    before.abort(new Error('gone'));
    await assert.rejects(limiter.acquire(res({ limits: l }), { signal: before.signal }), /gone/);
    const first = res({ limits: l, countsPrimary: false });
    await limiter.acquire(first);
    const controller = new AbortController();
    const aborted = track(limiter.acquire(res({ limits: l, countsPrimary: false }), { signal: controller.signal }));
    const next = track(limiter.acquire(res({ limits: l, countsPrimary: false, endpoint: 'GET /n' })));
    await settle();
    controller.abort(new Error('cancelled'));
    await settle();
    assert.equal(aborted.state, 'rejected');
    assert.match(String(aborted.error), /cancelled/);
    assert.equal(limiter.waiting, 1);
    await store.release(first, answered(clock.now()));
    await settle();
    assert.equal(next.state, 'granted');
    assert.equal((await store.snapshot('id-a', clock.now())).inFlight, 1);
  });

  it('MUTATION-PLATFORM: a request aborted while a shared store decides gives a granted slot back', async () => {
    await abortWhileDeciding(res({ countsPrimary: false }));
    assert.equal((await store.snapshot('id-a', clock.now())).inFlight, 0);
  });

  it('MUTATION-PLATFORM: a store that fails rejects the request with its error, and the queue goes on', async () => {
    let fail = true;
    const flaky = sharedStore(store, (r, now) => (fail ? Promise.reject(new Error('store down')) : store.reserve(r, now)));
    const flakyLimiter = new Limiter(flaky, clock, logger);
    const failed = track(flakyLimiter.acquire(res()));
    await settle();
    assert.equal(failed.state, 'rejected');
    assert.match(String(failed.error), /store down/);
    assert.equal(flakyLimiter.waiting, 0);
    fail = false;
    await flakyLimiter.acquire(res());
  });

  it('MUTATION-PLATFORM: a long hold is announced once, naming what and which limit; a short one is not', async () => {
    const notices: WaitNotice[] = [];
    const stop = onWait((n) => notices.push(n));
    try {
      await store.hold('id-a', 'resource:core', t0 + 10_000);
      await store.hold('id-a', 'endpoint:POST /e', t0 + 20_000);
      await store.hold('id-a', 'creation', t0 + 30_000);
      await store.hold('id-a', 'endpoint:GET /short', t0 + 4999);
      const waiting = [
        track(limiter.acquire(res())),
        track(limiter.acquire(res({ endpoint: 'POST /e', resource: 'r2', countsPrimary: false }))),
        track(limiter.acquire(res({ endpoint: 'POST /f', resource: 'r3', creation: true, countsPrimary: false }))),
        track(limiter.acquire(res({ endpoint: 'GET /short', resource: 'r4', countsPrimary: false }))),
      ];
      await settle();
      limiter.pump();
      await settle();
      assert.deepEqual(notices, [
        { kind: 'rate-limit', what: 'the core resource', until: t0 + 10_000, limit: 'primary' },
        { kind: 'rate-limit', what: 'POST /e', until: t0 + 20_000, limit: 'secondary' },
        { kind: 'rate-limit', what: 'content creation', until: t0 + 30_000, limit: 'secondary' },
      ]);
      assert.equal(logged.length, 3);
      assert.match(logged[0]!, /^platform: holding GET \/repos\/\{\}\/\{\}\/issues: resource:core is held until/);
      await passTime(30_000);
      assert.deepEqual(
        waiting.map((w) => w.state),
        ['granted', 'granted', 'granted', 'granted'],
      );
    } finally {
      stop();
    }
  });

  it("MUTATION-PLATFORM: a long CPU-time wait is announced as the platform's cpu, and stops every request behind it", async () => {
    const notices: WaitNotice[] = [];
    const stop = onWait((n) => notices.push(n));
    try {
      const l = limits({ cpuMsPerMinute: 1000 });
      const a = res({ limits: l, countsPrimary: false });
      await limiter.acquire(a);
      await store.release(a, answered(clock.now(), 1000));
      const blocked = track(limiter.acquire(res({ limits: l, countsPrimary: false, endpoint: 'GET /b' })));
      const other = track(limiter.acquire(res({ limits: limits(), identity: 'id-b', countsPrimary: false })));
      await settle();
      assert.deepEqual([blocked.state, other.state], ['waiting', 'waiting']);
      assert.deepEqual(notices, [{ kind: 'rate-limit', what: "the platform's cpu", until: t0 + minute, limit: 'secondary' }]);
      await passTime(minute);
      assert.deepEqual([blocked.state, other.state], ['granted', 'granted']);
    } finally {
      stop();
    }
  });

  it('MUTATION-PLATFORM: RATE-SEC-CONTENT-CREATION: a creation held back holds only content creation; a request that creates nothing goes on', async () => {
    await store.hold('id-a', 'creation', t0 + 3000);
    const creating = track(limiter.acquire(res({ endpoint: 'POST /issues', creation: true, countsPrimary: false })));
    const reading = track(limiter.acquire(res({ endpoint: 'GET /issues', countsPrimary: false })));
    await settle();
    assert.deepEqual([creating.state, reading.state], ['waiting', 'granted']);
    await passTime(3000);
    assert.equal(creating.state, 'granted');
  });

  it('MUTATION-PLATFORM: a shared store that refuses one request for its resource or for creation: the ones behind it in that scope wait their turn, even when the store would grant them', async () => {
    // A store shared with other processes decides each request at its own moment: budget another process freed
    // between two decisions must not let a later request overtake the one refused first.
    const until = t0 + 2000;
    const first = res({ endpoint: 'GET /first', countsPrimary: false });
    const firstCreation = res({ identity: 'id-c', endpoint: 'POST /first', resource: 'r1', creation: true, countsPrimary: false });
    const refusing = sharedStore(store, async (r, now) => {
      if (now < until && r === first) return { granted: false, scope: 'resource', retryAt: until, reason: 'core spent elsewhere' };
      if (now < until && r === firstCreation) return { granted: false, scope: 'creation', retryAt: until, reason: 'creations spent elsewhere' };
      return store.reserve(r, now);
    });
    const shared = new Limiter(refusing, clock, logger);
    const a = track(shared.acquire(first));
    const sameResource = track(shared.acquire(res({ endpoint: 'GET /second', countsPrimary: false })));
    const otherResource = track(shared.acquire(res({ endpoint: 'GET /third', resource: 'search', countsPrimary: false })));
    const c = track(shared.acquire(firstCreation));
    const secondCreation = track(shared.acquire(res({ identity: 'id-c', endpoint: 'POST /second', resource: 'r2', creation: true, countsPrimary: false })));
    const noCreation = track(shared.acquire(res({ identity: 'id-c', endpoint: 'GET /r1', resource: 'r1', countsPrimary: false })));
    await settle();
    assert.deepEqual(
      [a.state, sameResource.state, otherResource.state, c.state, secondCreation.state, noCreation.state],
      ['waiting', 'waiting', 'granted', 'waiting', 'waiting', 'granted'],
    );
    await passTime(2000);
    assert.deepEqual([a.state, sameResource.state, c.state, secondCreation.state], ['granted', 'granted', 'granted', 'granted']);
  });

  it('MUTATION-PLATFORM: a request given up (too long a hold) and aborted afterwards takes no other request out of the queue', async () => {
    await store.hold('id-a', 'endpoint:GET /a', t0 + 5000);
    const controller = new AbortController();
    const gaveUp = track(
      limiter.acquire(res({ endpoint: 'GET /a', countsPrimary: false }), { signal: controller.signal, maxWaitMs: 1000, tooLong: () => new Error('too long') }),
    );
    await store.hold('id-a', 'endpoint:GET /b', t0 + 2000);
    const waits = track(limiter.acquire(res({ endpoint: 'GET /b', countsPrimary: false })));
    await settle();
    assert.deepEqual([gaveUp.state, waits.state], ['rejected', 'waiting']);
    controller.abort(new Error('cancelled late'));
    await settle();
    assert.equal(limiter.waiting, 1);
    await passTime(2000);
    assert.equal(waits.state, 'granted');
  });

  it('MUTATION-PLATFORM: a request aborted while a failing store decides takes no other request out of the queue', async () => {
    let gate: ((error: Error) => void) | undefined;
    const aborted = res({ endpoint: 'GET /aborted', countsPrimary: false });
    const failing = sharedStore(store, (r, now) => (r === aborted ? new Promise((_resolve, reject) => (gate = reject)) : store.reserve(r, now)));
    const failingLimiter = new Limiter(failing, clock, logger);
    const controller = new AbortController();
    const t = track(failingLimiter.acquire(aborted, { signal: controller.signal }));
    await settle();
    controller.abort(new Error('cancelled'));
    const next = track(failingLimiter.acquire(res({ endpoint: 'GET /next', countsPrimary: false })));
    gate!(new Error('store down'));
    await settle();
    assert.equal(t.state, 'rejected');
    assert.match(String(t.error), /cancelled/);
    assert.equal(next.state, 'granted');
    assert.equal(failingLimiter.waiting, 0);
  });

  it('MUTATION-PLATFORM: RATE-SEC-CONCURRENCY: a request aborted while a shared store refuses it gives back nothing it was not given', async () => {
    const l = limits({ concurrency: 1 });
    const inFlight = res({ limits: l, countsPrimary: false });
    await limiter.acquire(inFlight);
    await abortWhileDeciding(res({ limits: l, countsPrimary: false, endpoint: 'GET /b' }));
    assert.equal((await store.snapshot('id-a', clock.now())).inFlight, 1, 'the request in flight still holds the one slot');
    const behind = track(limiter.acquire(res({ limits: l, countsPrimary: false, endpoint: 'GET /c' })));
    await settle();
    assert.equal(behind.state, 'waiting');
  });

  it('MUTATION-PLATFORM: the first request to a resource, aborted while a shared store grants it, is no answer: the next one still goes alone', async () => {
    const slowLimiter = await abortWhileDeciding(res({ resource: 'search', endpoint: 'GET /search/a' }));
    const second = track(slowLimiter.acquire(res({ resource: 'search', endpoint: 'GET /search/b' })));
    const third = track(slowLimiter.acquire(res({ resource: 'search', endpoint: 'GET /search/c' })));
    await settle();
    assert.deepEqual([second.state, third.state], ['granted', 'waiting']);
  });

  it('MUTATION-PLATFORM: a hold of exactly the long-wait bound is announced', async () => {
    const notices: WaitNotice[] = [];
    const stop = onWait((n) => notices.push(n));
    try {
      await store.hold('id-a', 'endpoint:GET /five', t0 + longWaitMs);
      track(limiter.acquire(res({ endpoint: 'GET /five', countsPrimary: false })));
      await settle();
      assert.deepEqual(notices, [{ kind: 'rate-limit', what: 'GET /five', until: t0 + longWaitMs, limit: 'secondary' }]);
    } finally {
      stop();
    }
  });

  it('MUTATION-PLATFORM: a longest wait without its own error waits the hold out', async () => {
    await store.hold('id-a', 'endpoint:GET /a', t0 + 5000);
    const waits = track(limiter.acquire(res({ endpoint: 'GET /a', countsPrimary: false }), { maxWaitMs: 1000 }));
    await settle();
    assert.equal(waits.state, 'waiting');
    await passTime(5000);
    assert.equal(waits.state, 'granted');
  });

  it('MUTATION-PLATFORM: a request waiting for the first answer about its resource does not cancel the wake-up of a held one', async () => {
    await limiter.acquire(res({ resource: 'search', endpoint: 'GET /search/a' }));
    await store.hold('id-a', 'endpoint:GET /held', t0 + 2000);
    const held = track(limiter.acquire(res({ endpoint: 'GET /held', countsPrimary: false })));
    const second = track(limiter.acquire(res({ resource: 'search', endpoint: 'GET /search/b' })));
    await settle();
    assert.deepEqual([held.state, second.state], ['waiting', 'waiting']);
    await passTime(2000);
    assert.deepEqual([held.state, second.state], ['granted', 'waiting']);
  });

  it('MUTATION-PLATFORM: RATE-SEC-POINTS-REST: requests asked for in one tick that fit the minute together are all granted, each counted once', async () => {
    const l = limits({ pointsPerMinute: 10 });
    const both = [
      track(limiter.acquire(res({ limits: l, points: 5, countsPrimary: false }))),
      track(limiter.acquire(res({ limits: l, points: 5, countsPrimary: false }))),
    ];
    await settle();
    assert.deepEqual(
      both.map((t) => t.state),
      ['granted', 'granted'],
    );
    assert.deepEqual((await store.snapshot('id-a', clock.now())).points, { 'GET /repos/{}/{}/issues': 10 });
  });

  it('MUTATION-PLATFORM: once nobody waits, no wake-up timer is left to keep the process alive until a hold ends', async () => {
    await store.hold('id-a', 'endpoint:GET /held', t0 + hour);
    const controller = new AbortController();
    const held = track(limiter.acquire(res({ endpoint: 'GET /held', countsPrimary: false }), { signal: controller.signal }));
    await settle();
    assert.equal(clock.pending, 1, 'the queue sleeps until the hold ends');
    controller.abort(new Error('cancelled'));
    await limiter.acquire(res({ endpoint: 'GET /free', countsPrimary: false }));
    await settle();
    assert.equal(held.state, 'rejected');
    assert.equal(clock.pending, 0);
  });

  it('MUTATION-PLATFORM: one queue per store and clock', () => {
    const a = limiterFor(store, clock, silentLogger);
    assert.equal(limiterFor(store, clock, silentLogger), a);
    assert.notEqual(limiterFor(store, new VirtualClock(t0), silentLogger), a);
    assert.notEqual(limiterFor(new MemoryBudgetStore(), clock, silentLogger), a);
  });
});
