// How PlatformClient recovers from the rate-limit answers it could not foresee, against the embedded platform API
// (devserver/platform, an independent reading of the specification) on real sockets, in real time with shortened
// windows: every wait is measured on the server's side (test/platform/helpers/server-journal.ts — when each request
// arrived), as the platform would see it. Then two worker processes that find a real redis-server through
// GANTRY_PLATFORM_LIMITS_URL, as deployed workers do, keeping one budget between them (issue 12's test list).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { ExitCode } from '../../lib/errors.js';
import { silentLogger } from '../../lib/log.js';
import { MemoryBudgetStore, PlatformClient, PlatformRateLimitError, type PlatformClientOptions } from '../../lib/platform/index.js';
import { startRedis, type RedisPeer } from '../peers/redis.js';
import { serverJournal, until, type Arrival, type ServerJournal } from './helpers/server-journal.js';

const WORKER = fileURLToPath(new URL('./helpers/limits-url-worker.ts', import.meta.url));
const SECONDARY_MESSAGE = 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';

/** The gaps between consecutive arrivals, in ms. */
function gaps(arrivals: Arrival[]): number[] {
  return arrivals.slice(1).map((a, i) => a.at - arrivals[i]!.at);
}

describe('PlatformClient recovering from rate-limit answers of the embedded platform API', function () {
  this.timeout(30_000);
  let server: PlatformServer | undefined;
  let journal: ServerJournal;
  const clients: PlatformClient[] = [];
  const client = (options: PlatformClientOptions) => {
    const made = new PlatformClient({ baseUrl: server!.url, env: {}, store: new MemoryBudgetStore(), logger: silentLogger, proxy: {}, ...options });
    clients.push(made);
    return made;
  };
  beforeEach(() => {
    journal = serverJournal();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
    server = undefined;
  });

  it('RATE-ERR-SECONDARY-RETRY-AFTER, RATE-HDR-RETRY-AFTER, RATE-ERR-SECONDARY: 403 with retry-after: 3 waits ≥ 3 s — the server sees nothing on that endpoint (nor any creation) until then, neither what was queued behind it nor what came later, while another endpoint goes on', async () => {
    server = await startPlatformServer({ log: journal.log });
    const token = server.issueToken({ kind: 'personal', login: 'refused' });
    const platform = client({ token });
    // The platform's secondary refusal with retry-after: 3, once, on the issues endpoint.
    server.addFaults([{ kind: 'status', status: 403, retryAfter: 3, message: SECONDARY_MESSAGE, method: 'POST', path: '/repos/gantry/demo/issues', times: 1 }]);
    const issues = '/repos/gantry/demo/issues';
    const sha = 'c'.repeat(40);
    // The core budget is not known yet, so the first request goes alone and the others queue behind it: when it is
    // refused, the same endpoint and every creation must keep waiting; the read of another endpoint may go.
    const first = platform.request('POST', issues, { body: { title: 'refused first' } });
    const queued = platform.request('POST', issues, { body: { title: 'queued second' } });
    const status = platform.createCommitStatus({ repository: 'gantry/demo', sha, state: 'success', context: 'held' });
    const read = platform.request('GET', '/repos/gantry/demo');
    await until(() => journal.of('POST', issues).length === 1, 10_000, 'the refusal');
    const refusal = journal.of('POST', issues)[0]!;
    assert.equal(refusal.status, 403);
    assert.equal((await read).status, 200);
    // One more on the endpoint once the client holds it.
    await until(
      async () => Object.keys((await platform.budgets()).kept.holds).includes('endpoint:POST /repos/{}/{}/issues'),
      10_000,
      'the client to hold the endpoint',
    );
    const later = platform.request('POST', issues, { body: { title: 'later third' } });
    const answers = await Promise.all([first, queued, later]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [201, 201, 201],
    );
    assert.equal((await status).state, 'success');

    const posts = journal.of('POST', issues);
    assert.deepEqual(
      posts.map((p) => p.status),
      [403, 201, 201, 201],
      'the refused request sent once more, the two others once',
    );
    const waited = posts[1]!.at - refusal.at;
    assert.ok(waited >= 3_000, `the retry came ${waited} ms after the refusal (retry-after: 3)`);
    assert.ok(waited < 5_000, `and not much later: ${waited} ms`);
    const between = journal.entries.filter((e) => e.at > refusal.at && e.at < refusal.at + 3_000);
    assert.deepEqual(
      between.map((e) => `${e.method} ${e.path} ${e.status}`),
      ['GET /repos/gantry/demo 200'],
      'during the 3 s only the other endpoint was sent: the issues queue and every creation waited',
    );
    const [statusPost] = journal.of('POST', `/repos/gantry/demo/statuses/${sha}`);
    assert.ok(statusPost!.at >= refusal.at + 3_000, 'the commit status (a creation) waited for the hold too');
    // When the hold ended the refused request went first, ahead of the one queued behind it before the refusal.
    const listed = (await platform.request<Array<{ number: number; title: string }>>('GET', issues)).body;
    const numbers = ['refused first', 'queued second', 'later third'].map((title) => listed.find((i) => i.title === title)?.number);
    assert.deepEqual(numbers, [1, 2, 3], JSON.stringify(listed.map((i) => [i.number, i.title])));
    assert.equal(server.violations().total, 0, 'no limit of the server itself was broken');
  });

  it('RATE-ERR-SECONDARY-BACKOFF, RATE-SEC-CONCURRENCY: a secondary refusal without retry-after (concurrency) waits at least the scaled minute, then twice as long, and goes through once the platform is free', async () => {
    const scale = 0.02; // the minute is 1.2 s, for the server and for the client's first wait alike
    const minute = 60_000 * scale;
    server = await startPlatformServer({ windowScale: scale, limits: { concurrency: 1 }, log: journal.log });
    const token = server.issueToken({ kind: 'personal', login: 'backoff' });
    const platform = client({ token, limits: { secondaryWaitMs: minute } });
    await platform.request('GET', '/repos/gantry/demo'); // the core budget is known: no first request going alone
    // One slow request holds the server's single concurrency slot for 2.5 s: the retry after the first wait (1.2 s)
    // comes while it is still there, the one after the second (2.4 s more) once it is gone.
    server.addFaults([{ kind: 'latency', ms: 2_500, path: '/repos/gantry/site', times: 1 }]);
    const requestsBefore = server.stats().requests;
    const slow = platform.request('GET', '/repos/gantry/site');
    await until(() => server!.stats().requests > requestsBefore, 10_000, 'the slow request to arrive');
    const answer = await platform.request('GET', '/repos/gantry/demo/issues');
    assert.equal(answer.status, 200);
    await slow;

    const attempts = journal.of('GET', '/repos/gantry/demo/issues');
    assert.deepEqual(
      attempts.map((a) => a.status),
      [403, 403, 200],
      'refused twice (no retry-after, remaining above 0), then served',
    );
    const violations = server.violations();
    assert.deepEqual([violations.total, violations.byKind.concurrency], [2, 2]);
    assert.ok(
      violations.violations.every((v) => v.retryAfter === undefined),
      'the refusals carried no retry-after',
    );
    const [first, second] = gaps(attempts);
    assert.ok(first! >= minute, `the first wait is at least the (scaled) minute: ${first} ms ≥ ${minute} ms`);
    assert.ok(first! <= minute * 1.1 + 1_000, `and about it, not a real minute: ${first} ms`);
    assert.ok(second! >= 2 * minute && second! > first!, `the second is twice as long: ${second} ms ≥ ${2 * minute} ms`);
    assert.ok(second! <= 2 * minute * 1.1 + 1_000, `and about it: ${second} ms`);
  });

  it('RATE-ERR-SECONDARY-BACKOFF, RATE-SEC-MAY-CHANGE: refused without retry-after every time, it waits the scaled minute, 2× and 4× as long, then gives up after the 3 configured retries (exit 3) saying how long it waited', async () => {
    const scale = 0.01; // the minute is 0.6 s
    const minute = 60_000 * scale;
    // The platform changed its points budget to nothing, and says so without retry-after.
    server = await startPlatformServer({ windowScale: scale, limits: { pointsPerMinute: 0 }, retryAfter: { points: false }, log: journal.log });
    const token = server.issueToken({ kind: 'personal', login: 'giveup' });
    const platform = client({ token, limits: { secondaryWaitMs: minute } });
    const error = await platform.request('GET', '/repos/gantry/demo').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlatformRateLimitError, String(error));
    assert.equal(error.kind, 'secondary');
    assert.equal(error.exitCode, ExitCode.remote);
    assert.equal(error.attempts, 4);

    const attempts = journal.of('GET', '/repos/gantry/demo');
    assert.equal(attempts.length, 4, 'the first attempt and 3 retries, nothing more');
    assert.ok(attempts.every((a) => a.status === 403));
    assert.equal(server.violations().byKind.points, 4);
    const waits = gaps(attempts);
    waits.forEach((wait, i) => {
      const least = minute * 2 ** i;
      assert.ok(wait >= least, `wait ${i + 1}: ${wait} ms ≥ ${least} ms`);
      assert.ok(wait <= least * 1.1 + 1_000, `wait ${i + 1}: ${wait} ms is about ${least} ms`);
    });
    assert.ok(waits[1]! > waits[0]! && waits[2]! > waits[1]!, `each wait longer than the one before: ${waits.join(', ')} ms`);
    assert.ok(error.waitedMs >= 7 * minute, `waited ${error.waitedMs} ms in all`);
    const said = /gave up on the secondary rate limit after waiting (\d+) s over 4 attempts \(3 retries spent\)/.exec(error.message);
    assert.ok(said, error.message);
    assert.equal(Number(said[1]), Math.round(error.waitedMs / 1000), 'the message says how long it waited');
    assert.match(error.message, /You have exceeded a secondary rate limit/);
  });
});

interface WorkerLine {
  i?: number;
  at?: number;
  status?: number;
  reset?: number;
  ready?: boolean;
  done?: boolean;
  error?: string;
}

describe('PlatformClient: a budget shared through GANTRY_PLATFORM_LIMITS_URL by two processes', function () {
  this.timeout(120_000);
  let redis: RedisPeer;
  let server: PlatformServer | undefined;
  const children: ChildProcess[] = [];

  before(async () => {
    redis = await startRedis({ password: 'limits-url-pass' });
  });
  after(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.stop();
    server = undefined;
  });

  /** A fresh Redis database for one test. */
  async function database(n: number): Promise<string> {
    const url = `${redis.url}/${n}`;
    const connection = createClient({ url });
    await connection.connect();
    await connection.flushDb();
    await connection.close();
    return url;
  }

  async function keysIn(url: string): Promise<string[]> {
    const connection = createClient({ url });
    await connection.connect();
    try {
      return await connection.keys('gantry:platform:*');
    } finally {
      await connection.close();
    }
  }

  /** Two worker processes at once, each its own PlatformClient, both given only GANTRY_PLATFORM_LIMITS_URL. */
  async function twoWorkers(limitsUrl: string, options: Record<string, unknown>): Promise<WorkerLine[][]> {
    const env: NodeJS.ProcessEnv = { ...process.env, GANTRY_PLATFORM_LIMITS_URL: limitsUrl };
    delete env.GANTRY_PLATFORM_TOKEN;
    delete env.PLATFORM_TOKEN;
    const runs = [0, 1].map(() => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(options)], { env, stdio: ['pipe', 'pipe', 'inherit'] });
      children.push(child);
      const lines: WorkerLine[] = [];
      createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line) as WorkerLine));
      const exited = new Promise<{ code: number | null; lines: WorkerLine[] }>((resolve) => child.once('exit', (code) => resolve({ code, lines })));
      return { child, lines, exited };
    });
    // Both loaded and connected to Redis, then told to go together: they send at once.
    await until(() => runs.every((r) => r.lines.some((l) => l.ready) || r.child.exitCode !== null), 60_000, 'both workers to be ready');
    for (const { child } of runs) child.stdin!.end('go\n');
    const done = await Promise.all(runs.map((r) => r.exited));
    assert.deepEqual(
      done.map((d) => d.code),
      [0, 0],
      JSON.stringify(done.map((d) => d.lines.filter((l) => l.error))),
    );
    return done.map((d) => d.lines);
  }

  it('RATE-SEC-CONCURRENCY: two processes with 20 requested at once each keep the one cap of 6 in flight between them — no violation', async () => {
    server = await startPlatformServer({ limits: { concurrency: 6 }, latencyMs: 100 });
    const token = server.issueToken({ kind: 'personal', login: 'pair' });
    const url = await database(6);
    const lines = await twoWorkers(url, { baseUrl: server.url, token, path: '/repos/gantry/demo', count: 30, parallel: 20, limits: { concurrency: 6 } });
    const answers = lines.flat().filter((l) => l.status !== undefined);
    assert.equal(answers.length, 60);
    assert.ok(answers.every((l) => l.status === 200));
    const stats = server.stats();
    assert.equal(stats.requests, 60, 'nothing refused and sent again');
    assert.ok(stats.maxInFlight['user:pair']! <= 6, `at most 6 in flight across both processes, saw ${stats.maxInFlight['user:pair']}`);
    assert.ok(stats.maxInFlight['user:pair']! >= 4, `the pair used the cap (saw ${stats.maxInFlight['user:pair']})`);
    assert.deepEqual(server.violations().violations, []);
    const keys = await keysIn(url);
    assert.ok(
      keys.some((key) => key.endsWith(':pts:GET /repos/{}/{}')),
      `the budgets were kept in the Redis of GANTRY_PLATFORM_LIMITS_URL: ${keys.join(', ')}`,
    );
  });

  it('RATE-HDR-REMAINING, RATE-ERR-BAN: two processes sending 24 requests together against a primary budget of 15 spend it once — 15 in the window, the rest after its reset, no refusal', async () => {
    server = await startPlatformServer({ windowScale: 0.001, limits: { user: 15 }, latencyMs: 50 }); // the hour is 3.6 s
    const token = server.issueToken({ kind: 'personal', login: 'primary-pair' });
    const url = await database(7);
    const lines = await twoWorkers(url, { baseUrl: server.url, token, path: '/repos/gantry/site', count: 12, parallel: 4, limits: { resetSkewMs: 200 } });
    const answers = lines
      .flat()
      .filter((l) => l.at !== undefined)
      .sort((a, b) => a.at! - b.at!);
    assert.equal(answers.length, 24);
    assert.ok(
      answers.every((l) => l.status === 200),
      'every request answered 200',
    );
    assert.deepEqual(server.violations().violations, [], 'no primary refusal: neither process sent into the spent budget');
    assert.equal(server.stats().requests, 24, 'nothing refused and sent again');
    // The server opened the window with the pair's first request; each answer carries its window's reset. Whichever
    // process sent them, the first window's 15 were all the pair sent in it; the other 9 waited for its end.
    const firstReset = Math.min(...answers.map((l) => l.reset!));
    const inFirst = answers.filter((l) => l.reset === firstReset);
    assert.equal(inFirst.length, 15, 'the first window held the one budget of 15, no more');
    assert.ok(
      answers.filter((l) => l.reset !== firstReset).every((l) => l.at! >= firstReset * 1000),
      'the other 9 came after its reset',
    );
  });
});
