// RedisBudgetStore (lib/platform/redis-store.ts): the platform budgets shared through a real redis-server
// (test/peers/redis.ts — Debian's redis-server, installed by `npm run setup`; missing, these tests fail). First the
// store alone — atomic reservations from two connections, leases that expire when their holder dies, Redis's clock,
// failing closed — then worker processes, each with its own PlatformClient, against the embedded platform API with
// shortened windows: what the server counts (violations, requests in flight) proves they kept one budget together.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { createClient } from 'redis';
import { startPlatformServer, type PlatformServer, type PlatformStats, type ViolationReport } from '../../devserver/platform/index.js';
import { ExitCode } from '../../lib/errors.js';
import { silentLogger, type Logger } from '../../lib/log.js';
import {
  budgetStoreFor,
  defaultPlatformLimits,
  PlatformClient,
  PlatformLimitsStoreError,
  RedisBudgetStore,
  type Reservation,
} from '../../lib/platform/index.js';
import { startRedis, type RedisPeer } from '../peers/redis.js';

const WORKER = fileURLToPath(new URL('./helpers/redis-worker.ts', import.meta.url));

function reservation(overrides: Partial<Reservation> = {}, limits: Partial<typeof defaultPlatformLimits> = {}): Reservation {
  return {
    identity: 'id-1',
    endpoint: 'GET /repos/{}/{}',
    resource: 'core',
    points: 1,
    creation: false,
    countsPrimary: false,
    limits: { ...defaultPlatformLimits, ...limits },
    ...overrides,
  };
}

async function admin<T>(server: PlatformServer, path: string): Promise<T> {
  const response = await fetch(new URL(path, server.url));
  assert.equal(response.status, 200, path);
  return (await response.json()) as T;
}

interface Line {
  i?: number;
  at?: number;
  status?: number;
  done?: boolean;
  error?: string;
}

function startWorker(options: Record<string, unknown>): { child: ChildProcess; lines: Line[]; finished: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: Line[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line) as Line));
  const finished = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, finished };
}

describe('RedisBudgetStore: platform budgets shared through Redis', function () {
  this.timeout(60_000);
  let redis: RedisPeer;
  const stores: RedisBudgetStore[] = [];
  const store = (options: Partial<ConstructorParameters<typeof RedisBudgetStore>[0]> = {}) => {
    const made = new RedisBudgetStore({ url: redis.url, logger: silentLogger, prefix: `t${stores.length}-${Date.now()}:`, ...options });
    stores.push(made);
    return made;
  };

  before(async () => {
    redis = await startRedis({ password: 's3cret-redis-pass' });
  });
  after(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('RATE-SEC-CONCURRENCY: two stores (two connections) reserving 40 at once against a cap of 7 get exactly 7 slots; releasing one frees one', async () => {
    const prefix = `conc-${Date.now()}:`;
    const a = store({ prefix });
    const b = store({ prefix });
    const asks = Array.from({ length: 40 }, (_, i) => reservation({ endpoint: `GET /e${i}` }, { concurrency: 7 }));
    const results = await Promise.all(asks.map((r, i) => (i % 2 === 0 ? a : b).reserve(r, Date.now())));
    const granted = results.map((r, i) => (r.granted ? i : -1)).filter((i) => i >= 0);
    assert.equal(granted.length, 7);
    const refused = results.find((r) => !r.granted);
    assert.ok(refused && !refused.granted && refused.scope === 'concurrency', 'refused for concurrency');
    assert.ok(refused.retryAt !== undefined && refused.retryAt - Date.now() < 1_000, 'a refusal only a release lifts is polled for soon');
    assert.equal((await a.snapshot('id-1', Date.now())).inFlight, 7);
    const first = granted[0]!;
    await (first % 2 === 0 ? a : b).release(asks[first]!, { now: Date.now(), durationMs: 5, answered: true });
    assert.equal((await b.reserve(reservation({ endpoint: 'GET /late' }, { concurrency: 7 }), Date.now())).granted, true);
    assert.equal((await b.reserve(reservation({ endpoint: 'GET /later' }, { concurrency: 7 }), Date.now())).granted, false);
  });

  it('RATE-SEC-POINTS-REST, RATE-SEC-CONTENT-CREATION: points and creations are taken all or none, and the refusal names when the window frees them (Redis time, in this clock)', async () => {
    const prefix = `pts-${Date.now()}:`;
    const a = store({ prefix, windowScale: 0.01 }); // the minute is 600 ms
    const b = store({ prefix, windowScale: 0.01 });
    const limits = { pointsPerMinute: 20, creationsPerMinute: 3 };
    const write = () => reservation({ endpoint: 'POST /repos/{}/{}/issues', points: 5, creation: true }, limits);
    const results = [];
    for (let i = 0; i < 4; i += 1) results.push(await (i % 2 ? a : b).reserve(write(), Date.now()));
    assert.deepEqual(
      results.map((r) => r.granted),
      [true, true, true, false],
    );
    const refused = results[3]!;
    assert.ok(!refused.granted && refused.scope === 'creation', `refused for creation: ${JSON.stringify(refused)}`);
    assert.match(refused.reason, /3 content-creating requests this minute, the most allowed \(RATE-SEC-CONTENT-CREATION\)/);
    const wait = refused.retryAt! - Date.now();
    assert.ok(wait > 300 && wait <= 650, `the first creation leaves the 600 ms window (${wait} ms)`);
    // A refused reservation took nothing: another endpoint's read still has its points, and the creations count 3.
    const snapshot = await a.snapshot('id-1', Date.now());
    assert.equal(snapshot.creationsLastMinute, 3);
    assert.equal(snapshot.points['POST /repos/{}/{}/issues'], 15);
    await delay(wait + 20);
    assert.equal((await a.reserve(write(), Date.now())).granted, true, 'granted once the window moved on');
  });

  it('RATE-SEC-CONCURRENCY: a slot whose holder dies expires with its lease; a live holder renews it past the lease', async () => {
    const prefix = `lease-${Date.now()}:`;
    const dying = store({ prefix, leaseMs: 400 });
    const living = store({ prefix, leaseMs: 400 });
    const limits = { concurrency: 2 };
    const kept = reservation({ endpoint: 'GET /kept' }, limits);
    assert.equal((await dying.reserve(reservation({ endpoint: 'GET /lost' }, limits), Date.now())).granted, true);
    assert.equal((await living.reserve(kept, Date.now())).granted, true);
    await dying.close(); // dies without releasing
    const other = store({ prefix, leaseMs: 400 });
    assert.equal((await other.reserve(reservation({ endpoint: 'GET /x' }, limits), Date.now())).granted, false, 'both slots still held');
    await delay(700);
    const snapshot = await other.snapshot('id-1', Date.now());
    assert.equal(snapshot.inFlight, 1, "the dead holder's slot expired; the renewed one is still held");
    assert.equal((await other.reserve(reservation({ endpoint: 'GET /x' }, limits), Date.now())).granted, true);
  });

  it('RATE-HDR-REMAINING, RATE-ERR-PRIMARY: remaining and holds seen by one worker hold the others; the first request of a resource goes alone', async () => {
    const prefix = `pri-${Date.now()}:`;
    const a = store({ prefix });
    const b = store({ prefix });
    const probe = reservation({ countsPrimary: true });
    assert.equal((await a.reserve(probe, Date.now())).granted, true);
    const second = await b.reserve(reservation({ countsPrimary: true, endpoint: 'GET /other' }), Date.now());
    assert.ok(!second.granted && second.scope === 'resource' && /first answer/.test(second.reason));
    const reset = Math.floor(Date.now() / 1000) + 30;
    await a.release(probe, { now: Date.now(), durationMs: 3, answered: true, observation: { resource: 'core', limit: 5000, remaining: 0, used: 5000, reset } });
    const spent = await b.reserve(reservation({ countsPrimary: true, endpoint: 'GET /other' }), Date.now());
    assert.ok(!spent.granted && spent.scope === 'resource', JSON.stringify(spent));
    assert.ok(Math.abs(spent.retryAt! - (reset * 1000 + 1000)) < 1_000, 'held until the reset (+ skew)');
    const snapshot = await b.snapshot('id-1', Date.now());
    assert.deepEqual({ ...snapshot.resources.core, heldUntil: undefined }, { limit: 5000, remaining: 0, used: 5000, reset, inFlight: 0, heldUntil: undefined });
    await b.hold('id-1', 'endpoint:GET /held', Date.now() + 5_000);
    const held = await a.reserve(reservation({ endpoint: 'GET /held' }), Date.now());
    assert.ok(!held.granted && held.scope === 'endpoint' && held.retryAt! > Date.now() + 4_000, JSON.stringify(held));
  });

  it('fails closed: Redis down means the request is not sent — exit 3, the address shown without its password', async () => {
    const logged: string[] = [];
    const logger = { ...silentLogger, warn: (line: string) => logged.push(line) } as Logger;
    const down = new RedisBudgetStore({ url: 'redis://:hunter2-down-pass@127.0.0.1:1', logger, connectTimeoutMs: 1_000 });
    stores.push(down);
    await assert.rejects(down.reserve(reservation(), Date.now()), (error: unknown) => {
      assert.ok(error instanceof PlatformLimitsStoreError);
      assert.equal(error.exitCode, ExitCode.remote);
      assert.match(error.message, /not sent/);
      assert.doesNotMatch(`${error.message} ${error.hint}`, /hunter2/);
      return true;
    });
    assert.ok(
      logged.every((line) => !line.includes('hunter2')),
      logged.join('\n'),
    );
    assert.throws(
      () => new RedisBudgetStore({ url: 'http://:hunter2-x@host/' }),
      (error: Error) => /redis:\/\//.test(error.message) && !error.message.includes('hunter2-x'),
    );
  });

  it('DOCS-AGREE-SERVERS: after Redis was down, one warning says the limits store answers again', async () => {
    const logged: string[] = [];
    const logger = { ...silentLogger, warn: (line: string) => logged.push(line) } as Logger;
    let own = await startRedis({ password: 'store-outage-pass' });
    const port = own.port;
    try {
      const store = new RedisBudgetStore({ url: `${own.url}/0`, logger, connectTimeoutMs: 1_000 });
      stores.push(store);
      assert.equal((await store.reserve(reservation({ endpoint: 'GET /before' }), Date.now())).granted, true);
      await own.stop();
      await assert.rejects(store.reserve(reservation({ endpoint: 'GET /down' }), Date.now()), PlatformLimitsStoreError);
      own = await startRedis({ password: 'store-outage-pass', port });
      for (let waited = 0; !logged.some((line) => line.endsWith('answers again')) && waited < 10_000; waited += 100) await delay(100);
      for (let index = 0; index < 3; index += 1)
        assert.equal((await store.reserve(reservation({ endpoint: `GET /after/${index}` }), Date.now())).granted, true);
      const again = logged.filter((line) => line.endsWith('answers again'));
      assert.deepEqual(again, [`platform: the limits store redis://[REDACTED]@127.0.0.1:${port}/0 answers again`], logged.join('\n'));
      assert.ok(logged.indexOf(again[0]!) > logged.findIndex((line) => line.startsWith('platform: the limits store')), 'after the outage was said');
      assert.ok(logged.every((line) => !line.includes('store-outage-pass')));
    } finally {
      await own.stop();
    }
  });

  describe('worker processes against the embedded platform API', function () {
    let server: PlatformServer | undefined;
    const children: ChildProcess[] = [];
    afterEach(async () => {
      for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
      await server?.stop();
      server = undefined;
    });

    it('RATE-SEC-CONTENT-CREATION: two processes creating 120 statuses together stay within one budget — no violation, the 81st overall waits for the window', async function () {
      const scale = 0.05; // the minute is 3 s
      server = await startPlatformServer({ windowScale: scale });
      const token = server.issueToken({ kind: 'personal', login: 'shared' });
      const base = {
        baseUrl: server.url,
        token,
        redisUrl: redis.url.replace(/\/?$/, '/3'),
        windowScale: scale,
        leaseMs: 5_000,
        kind: 'create',
        count: 60,
        parallel: 4,
        concurrency: 100,
      };
      const flush = createClient({ url: base.redisUrl });
      await flush.connect();
      await flush.flushDb();
      await flush.close();
      const started = Date.now();
      const workers = [startWorker({ ...base, name: 'a' }), startWorker({ ...base, name: 'b' })];
      children.push(...workers.map((w) => w.child));
      const codes = await Promise.all(workers.map((w) => w.finished));
      assert.deepEqual(codes, [0, 0], JSON.stringify(workers.map((w) => w.lines.filter((l) => l.error))));
      const answers = workers.flatMap((w) => w.lines.filter((l) => l.at !== undefined)).sort((x, y) => x.at! - y.at!);
      assert.equal(answers.length, 120);
      assert.ok(
        answers.every((l) => l.status === 201),
        'every creation answered 201',
      );
      assert.ok(workers.every((w) => w.lines.filter((l) => l.at !== undefined).length === 60));
      const minute = 60_000 * scale;
      assert.ok(answers[80]!.at! - started >= minute * 0.95, `the 81st waits for the window (${answers[80]!.at! - started} ms, the minute is ${minute} ms)`);
      const violations = await admin<ViolationReport>(server, '/_gantry/violations');
      assert.deepEqual(violations.violations, []);
      const stats = await admin<PlatformStats>(server, '/_gantry/stats');
      assert.equal(stats.requests, 120, 'nothing refused and sent again');
    });

    it("RATE-SEC-CONCURRENCY: two processes with 30 requested at once each keep at most the cap of 8 in flight together; a killed process's slots come back within the lease", async function () {
      this.timeout(180_000);
      server = await startPlatformServer({ windowScale: 0.05, latencyMs: 150 });
      const token = server.issueToken({ kind: 'personal', login: 'inflight' });
      const base = {
        baseUrl: server.url,
        token,
        redisUrl: redis.url.replace(/\/?$/, '/4'),
        windowScale: 0.05,
        leaseMs: 1_000,
        kind: 'get',
        count: 80,
        parallel: 30,
        concurrency: 8,
      };
      const workers = [startWorker({ ...base, name: 'a' }), startWorker({ ...base, name: 'b' })];
      children.push(...workers.map((w) => w.child));
      assert.deepEqual(await Promise.all(workers.map((w) => w.finished)), [0, 0]);
      let stats = await admin<PlatformStats>(server, '/_gantry/stats');
      assert.equal(stats.requests, 160);
      assert.ok(stats.maxInFlight['user:inflight']! <= 8, `at most 8 in flight across both, saw ${stats.maxInFlight['user:inflight']}`);
      assert.ok(stats.maxInFlight['user:inflight']! >= 6, `the workers used the cap (saw ${stats.maxInFlight['user:inflight']})`);
      assert.deepEqual((await admin<ViolationReport>(server, '/_gantry/violations')).violations, []);

      // A worker killed with its 8 slots taken: they come back when their leases run out, and another worker goes on.
      await server.stop();
      server = await startPlatformServer({ windowScale: 0.05, latencyMs: 10_000 });
      const token2 = server.issueToken({ kind: 'personal', login: 'killed' });
      // GET /rate_limit: no primary budget, so no first request going alone before the others.
      const victim = startWorker({ ...base, baseUrl: server.url, token: token2, kind: 'ratelimit', count: 8, parallel: 8 });
      children.push(victim.child);
      const watcher = store({ prefix: 'gantry:platform:', url: base.redisUrl, leaseMs: 1_000 });
      const until = Date.now() + 60_000; // a worker process starts slowly on a loaded machine
      while ((await watcher.snapshot('x', Date.now())).inFlight < 8 && Date.now() < until) await delay(50);
      assert.equal((await watcher.snapshot('x', Date.now())).inFlight, 8, 'the victim holds 8 slots');
      await delay(1_500);
      assert.equal((await watcher.snapshot('x', Date.now())).inFlight, 8, 'a live holder renews its leases past leaseMs');
      victim.child.kill('SIGKILL');
      const killedAt = Date.now();
      await victim.finished;
      while ((await watcher.snapshot('x', Date.now())).inFlight > 0 && Date.now() < killedAt + 5_000) await delay(50);
      const back = Date.now() - killedAt;
      assert.equal((await watcher.snapshot('x', Date.now())).inFlight, 0, "the killed worker's slots expired");
      assert.ok(back <= 1_500, `within the 1 s lease (${back} ms)`);
      await server.stop();
      server = await startPlatformServer({ windowScale: 0.05 });
      const token3 = server.issueToken({ kind: 'personal', login: 'after' });
      const after = startWorker({ ...base, baseUrl: server.url, token: token3, count: 16, parallel: 8 });
      children.push(after.child);
      assert.equal(await after.finished, 0);
      stats = await admin<PlatformStats>(server, '/_gantry/stats');
      assert.equal(stats.requests, 16);
    });

    it("PlatformClient chooses the Redis store from limits: 'redis://…' and from GANTRY_PLATFORM_LIMITS_URL; the password is registered with the redactor", async () => {
      server = await startPlatformServer({});
      const token = server.issueToken({ kind: 'personal', login: 'chooser' });
      const url = redis.url.replace(/\/?$/, '/5');
      const viaOption = new PlatformClient({ baseUrl: server.url, token, env: {}, logger: silentLogger, proxy: {}, limits: url });
      const viaEnv = new PlatformClient({ baseUrl: server.url, token, env: { GANTRY_PLATFORM_LIMITS_URL: url }, logger: silentLogger, proxy: {} });
      try {
        await viaOption.request('GET', '/repos/gantry/demo');
        await viaEnv.request('GET', '/repos/gantry/demo');
        const budgets = await viaEnv.budgets();
        assert.equal(budgets.kept.points['GET /repos/{}/{}'], 2, 'both clients counted in one Redis budget');
        const keys = createClient({ url });
        await keys.connect();
        const found = await keys.keys('gantry:platform:*');
        await keys.close();
        assert.ok(
          found.some((key) => key.includes('pts:GET /repos/{}/{}')),
          found.join(', '),
        );
        const { redact } = await import('../../lib/redact.js');
        assert.doesNotMatch(redact(`connecting to ${url}`), /s3cret-redis-pass/);
        // Closing the address's store gives the next client a new one, not a closed one.
        const first = budgetStoreFor(url);
        await first.close();
        const again = new PlatformClient({ baseUrl: server.url, token, env: {}, logger: silentLogger, proxy: {}, limitsUrl: url });
        try {
          await again.request('GET', '/repos/gantry/demo');
          assert.notEqual(budgetStoreFor(url), first);
          assert.equal((await again.budgets()).kept.points['GET /repos/{}/{}'], 3);
        } finally {
          again.close();
          await budgetStoreFor(url).close();
        }
      } finally {
        viaOption.close();
        viaEnv.close();
      }
    });
  });
});

describe('LAYER-REDIS: the stores kept in Redis share one connector, clock and failure (lib/redis-connection.ts)', () => {
  it('LAYER-REDIS: each store error is a RedisStoreError with its own name, code and hint, exit 3, its message redacted the one way', async () => {
    const { RedisStoreError } = await import('../../lib/redis-connection.js');
    const { WebhookQueueError } = await import('../../lib/webhooks/redis-queue.js');
    const { registerSecret } = await import('../../lib/redact.js');
    registerSecret('hunter2-layer-pass');
    const cause = new Error('WRONGPASS hunter2-layer-pass is not it');
    const platform = new PlatformLimitsStoreError(
      RedisStoreError.unavailable('the limits store redis://127.0.0.1:1', cause, 'the request was not sent'),
      cause,
    );
    const queue = new WebhookQueueError(RedisStoreError.unavailable('the webhook queue redis://127.0.0.1:1', new Error('')), cause);
    for (const [error, name, code] of [
      [platform, 'PlatformLimitsStoreError', 'PLATFORM_LIMITS_STORE'],
      [queue, 'WebhookQueueError', 'WEBHOOK_QUEUE'],
    ] as const) {
      assert.ok(error instanceof RedisStoreError);
      assert.equal(error.name, name);
      assert.equal(error.code, code);
      assert.equal(error.exitCode, ExitCode.remote);
      assert.equal(error.cause, cause);
      assert.match(error.hint ?? '', /Redis/);
    }
    assert.equal(platform.message.includes('hunter2-layer-pass'), false);
    assert.match(platform.message, /^the limits store redis:\/\/127\.0\.0\.1:1 is unavailable: WRONGPASS .* is not it; the request was not sent$/);
    assert.equal(queue.message, 'the webhook queue redis://127.0.0.1:1 is unavailable: Error');
  });
});
