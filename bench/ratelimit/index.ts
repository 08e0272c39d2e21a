// bench/ratelimit: one mixed workload against the embedded platform API (devserver/platform, which enforces the
// specification's limits per identity and counts every violation), sent by Gantry's PlatformClient and by what a user
// would pick instead: Octokit (@octokit/core) with @octokit/plugin-throttling and @octokit/plugin-retry, configured as
// their READMEs show (onRateLimit / onSecondaryRateLimit return true to retry, here up to 3 times). Each side gets a
// fresh server process of its own, so budgets cannot mix. Prints ONE JSON object as its last stdout line (both sides'
// figures and their ratios); progress goes to stderr.
//
//   npm run bench -- ratelimit      (or: node --import tsx bench/ratelimit/index.ts)
//   BENCH_RATELIMIT_SCALE=0.25      a platform minute lasts 15 s (default 1: the specification's minute, ~4 min in all)
//   BENCH_RATELIMIT_LIMIT_STATUS=429   refusals as 429 instead of 403 (GitHub sends either for a secondary limit);
//                                   plugin-retry retries a 429 itself, on top of plugin-throttling
//   BENCH_RATELIMIT_CPU_ESTIMATE=on    Gantry keeps its CPU-time estimate too (see gantryLimits)
//
// Workload, submitted all at once and interleaved evenly (a pipeline that fires everything and lets the client pace):
//   - 2,000 GETs over 5 endpoints, skewed as a poller's are: 1,000 combined statuses of one commit, 400 status lists,
//     300 repositories, 200 issue lists, 100 organisation repository lists;
//   - 150 content creations: 100 commit statuses and 50 comments on one issue;
//   - 60 searches (/search/issues, /search/repositories: the search resource, 30 per minute).
//
// The minimum the limits allow, W being the platform's minute (the spec's limits, a personal token):
//   - creations, 80 per sliding minute: the 81st starts no earlier than W after the 1st, so ⌈150 / 80⌉ − 1 = 1 W;
//   - points, 900 per endpoint (method + route) per sliding minute, GET 1 and POST 5: ⌈points / 900⌉ − 1 for the
//     endpoint needing most: combined status 1,000 × 1 → 1 W (statuses 100 × 5 = 500, comments 250: 0);
//   - search, 30 per fixed minute opened by the first search: ⌈60 / 30⌉ − 1 = 1 W;
//   - primary core budget, 5,000 per hour: 2,150 requests fit, 0;
//   - concurrency (100 in flight) bounds nothing on loopback without added latency, and the CPU-time limit is not
//     enforced by the platform: neither is part of the minimum.
//   minimum = max of the above = 1 W. Each side's figure is its time to finish ÷ that minimum (Gantry's goal ≤ 1.10),
//   beside the violations the server counted, the requests it refused (403/429) and the requests that failed.
//   The minimum ignores the time the requests themselves take: `floor` is the same workload through Gantry against a
//   platform with every limit lifted, what this machine needs to send it. With a short W that is no longer small.
//
// Shortening the window: BENCH_RATELIMIT_SCALE makes the platform's clock run 1/scale times faster. Not the server's
// `windowScale` option: that shortens its windows but leaves `x-ratelimit-reset` and `retry-after` in wall-clock
// time, which a client whose minute is also shortened reads wrongly (Gantry would think the search window had reset
// long before it has, and collect 403s). So each server runs in a process whose Date.now runs fast — windows, reset
// epochs and retry-after all in platform time — and each client is given the same time in its own documented terms:
//   - Gantry: its `clock` option (the same fast clock; sleeps shortened by the scale);
//   - Octokit: plugin-throttling's Bottleneck groups with their own settings but every minTime × scale (a write 1 s
//     apart, a search 2 s, a notifying write 3 s), `retryAfterBaseValue` 1000 × scale in both plugins (retry-after and
//     the reset are in platform seconds), and a `request.fetch` that hands plugin-throttling an `x-ratelimit-reset`
//     whose distance from Date.now is the platform's distance to its reset (the plugin subtracts Date.now itself).
//   At scale 1 every one of these is the identity: both clients run exactly as configured above.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Octokit } from '@octokit/core';
import { retry } from '@octokit/plugin-retry';
import { throttling, type ThrottlingOptions } from '@octokit/plugin-throttling';
import type { PlatformStats, ViolationReport } from '../../devserver/platform/index.js';
import type { Logger } from '../../lib/log.js';
import { MemoryBudgetStore } from '../../lib/platform/budget.js';
import { PlatformClient } from '../../lib/platform/client.js';
import { PlatformRateLimitError } from '../../lib/platform/errors.js';
import type { Clock } from '../../lib/platform/clock.js';
import type { PlatformLimits } from '../../lib/platform/limits.js';

const childFlag = 'GANTRY_BENCH_RATELIMIT_SERVER';
/** A minute of the platform lasts this many real minutes (BENCH_RATELIMIT_SCALE). */
const defaultScale = 1;

// ---- the workload -------------------------------------------------------------------------------------------------
interface Job {
  kind: 'get' | 'create' | 'search';
  /** Octokit's route form: `GET /repos/{owner}/{repo}`. */
  route: string;
  params: Record<string, string | number>;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}

const sha = 'b'.repeat(40);
const repo = { owner: 'gantry', repo: 'demo' };

function workload(): Job[] {
  const gets: Array<[number, Omit<Job, 'kind'>]> = [
    [1000, { route: 'GET /repos/{owner}/{repo}/commits/{ref}/status', params: { ...repo, ref: sha } }],
    [400, { route: 'GET /repos/{owner}/{repo}/commits/{ref}/statuses', params: { ...repo, ref: sha } }],
    [300, { route: 'GET /repos/{owner}/{repo}', params: repo }],
    [200, { route: 'GET /repos/{owner}/{repo}/issues', params: repo }],
    [100, { route: 'GET /orgs/{org}/repos', params: { org: 'gantry' } }],
  ];
  const groups: Job[][] = gets.map(([count, job]) => Array.from({ length: count }, () => ({ kind: 'get' as const, ...job })));
  groups.push(
    Array.from({ length: 100 }, (_, i) => ({
      kind: 'create' as const,
      route: 'POST /repos/{owner}/{repo}/statuses/{sha}',
      params: { ...repo, sha },
      body: { state: 'success', context: `bench/${i}`, description: `check ${i}` },
    })),
  );
  groups.push(
    Array.from({ length: 50 }, (_, i) => ({
      kind: 'create' as const,
      route: 'POST /repos/{owner}/{repo}/issues/{number}/comments',
      params: { ...repo, number: 1 },
      body: { body: `comment ${i}` },
    })),
  );
  groups.push(
    Array.from({ length: 60 }, (_, i) =>
      i % 2 === 0
        ? { kind: 'search' as const, route: 'GET /search/issues', params: {}, query: { q: `bench repo:gantry/demo` } }
        : { kind: 'search' as const, route: 'GET /search/repositories', params: {}, query: { q: 'gantry' } },
    ),
  );
  // Interleaved evenly: the i-th of n jobs of a group sits at (i + 0.5) / n of the run.
  return groups
    .flatMap((group) => group.map((job, i) => ({ job, at: (i + 0.5) / group.length })))
    .sort((a, b) => a.at - b.at)
    .map(({ job }) => job);
}

function minimumWindows(jobs: Job[]): { windows: number; parts: Record<string, number> } {
  const creations = jobs.filter((j) => j.kind === 'create').length;
  const searches = jobs.filter((j) => j.kind === 'search').length;
  const points = new Map<string, number>();
  for (const j of jobs) points.set(j.route, (points.get(j.route) ?? 0) + (j.route.startsWith('GET ') ? 1 : 5));
  const busiest = Math.max(...points.values());
  const primary = jobs.filter((j) => j.kind !== 'search').length;
  const parts = {
    creations: Math.ceil(creations / 80) - 1,
    points: Math.ceil(busiest / 900) - 1,
    search: Math.ceil(searches / 30) - 1,
    // In hours; 60 minutes each.
    primaryCore: (Math.ceil(primary / 5000) - 1) * 60,
  };
  return { windows: Math.max(...Object.values(parts)), parts };
}

// ---- the server process ---------------------------------------------------------------------------------------------
interface ServerProcess {
  url: string;
  token: string;
  setupToken: string;
  admin<T>(path: string): Promise<T>;
  stop(): Promise<void>;
}

interface ServerSettings {
  /** Real epoch ms at which the platform's clock and the real one agree. */
  origin: number;
  scale: number;
  limitStatus: 403 | 429;
  /** Every limit lifted: for the floor, what the same workload costs this machine when nothing has to wait. */
  unlimited: boolean;
}

async function startServer(settings: ServerSettings): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, [childFlag]: JSON.stringify(settings) },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the platform server process exited with ${code}`)));
  });
  const { url, token, setupToken } = JSON.parse(line) as { url: string; token: string; setupToken: string };
  return {
    url,
    token,
    setupToken,
    async admin<T>(path: string) {
      const response = await fetch(new URL(path, url));
      if (!response.ok) throw new Error(`${path}: ${response.status}`);
      return (await response.json()) as T;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Issue #1 of gantry/demo, for the comments, made with a token of its own (its creation is not the bench's). */
async function setUp(server: ServerProcess): Promise<void> {
  const response = await fetch(new URL('/repos/gantry/demo/issues', server.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${server.setupToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'bench' }),
  });
  if (response.status !== 201) throw new Error(`creating the issue: ${response.status}`);
}

// ---- one side -------------------------------------------------------------------------------------------------------
interface Outcome {
  ms: number;
  failed: Record<string, number>;
  /** Rate-limit answers (403/429) the client got: Octokit's counted in its fetch, Gantry's from its warnings and errors. */
  refused: number;
  extra?: Record<string, unknown>;
}

interface SideResult {
  ms: number;
  ratioToMinimum: number;
  violations: number;
  violationsByKind: ViolationReport['byKind'];
  /** Requests the platform received (every attempt), and those of them answered 403/429 for a limit. */
  sent: number;
  refused: number;
  /** Jobs that ended in an error, by error. */
  failed: Record<string, number>;
  [key: string]: unknown;
}

type Side = (server: ServerProcess, settings: ServerSettings, warmedUp: () => Promise<void>) => Promise<Outcome>;

async function runSide(name: string, jobs: Job[], minimumMs: number, base: Omit<ServerSettings, 'origin'>, run: Side): Promise<SideResult> {
  const settings: ServerSettings = { ...base, origin: Date.now() };
  const { scale } = settings;
  const server = await startServer(settings);
  try {
    await setUp(server);
    let before: PlatformStats | undefined;
    const outcome = await run(server, settings, async () => {
      before = await server.admin<PlatformStats>('/_gantry/stats');
      console.error(`ratelimit: ${name}: ${jobs.length} requests against ${server.url} (a minute is ${(60 * scale).toFixed(1)} s)`);
    });
    const violations = await server.admin<ViolationReport>('/_gantry/violations');
    const stats = await server.admin<PlatformStats>('/_gantry/stats');
    const result: SideResult = {
      ms: Math.round(outcome.ms),
      ratioToMinimum: Number((outcome.ms / minimumMs).toFixed(3)),
      violations: violations.total,
      violationsByKind: violations.byKind,
      sent: stats.requests - before!.requests,
      refused: outcome.refused,
      failed: outcome.failed,
      ...outcome.extra,
    };
    console.error(
      `ratelimit: ${name}: ${result.ms} ms (${result.ratioToMinimum} × the minimum), ${result.violations} violations, ${result.sent} sent, ${Object.values(result.failed).reduce((a, b) => a + b, 0)} failed`,
    );
    return result;
  } finally {
    await server.stop();
  }
}

interface Fired {
  ms: number;
  failed: Record<string, number>;
  /** When the jobs of each kind finished, and around each limit's edge (the n-th and (n+1)-th of a budget), in ms. */
  milestones: Record<string, Record<string, number>>;
  /** This process's CPU time (the client's, plus the bench's bookkeeping) per job, in µs. */
  clientCpuUsPerRequest: number;
}

/** Runs every job at once; counts failures by their kind instead of stopping at the first. */
async function fireAll(jobs: Job[], send: (job: Job) => Promise<unknown>, label: string): Promise<Fired> {
  const failed: Record<string, number> = {};
  const finished = new Map<string, number[]>();
  let done = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const progress = setInterval(
    () => console.error(`ratelimit: ${label}: ${done}/${jobs.length} done after ${((performance.now() - started) / 1000).toFixed(1)} s`),
    5_000,
  );
  try {
    await Promise.all(
      jobs.map(async (job) => {
        try {
          await send(job);
        } catch (error) {
          const status = (error as { status?: unknown }).status;
          const key = `${(error as Error).name ?? 'Error'}${typeof status === 'number' ? ` ${status}` : ''}`;
          failed[key] = (failed[key] ?? 0) + 1;
        } finally {
          done += 1;
          for (const key of [job.kind, job.route]) {
            if (!finished.has(key)) finished.set(key, []);
            finished.get(key)!.push(performance.now() - started);
          }
        }
      }),
    );
  } finally {
    clearInterval(progress);
  }
  const at = (key: string, nth: number) => Math.round(finished.get(key)?.[nth - 1] ?? Number.NaN);
  const busiest = [...finished.entries()].filter(([key]) => key.startsWith('GET /repos')).sort((a, b) => b[1].length - a[1].length)[0]![0];
  const milestones = {
    creations: { '80th': at('create', 80), '81st': at('create', 81), last: at('create', finished.get('create')!.length) },
    busiestEndpoint: { '900th': at(busiest, 900), '901st': at(busiest, 901), last: at(busiest, finished.get(busiest)!.length) },
    searches: { '30th': at('search', 30), '31st': at('search', 31), last: at('search', finished.get('search')!.length) },
    gets: { last: at('get', finished.get('get')!.length) },
  };
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, failed, milestones, clientCpuUsPerRequest: Math.round((used.user + used.system) / jobs.length) };
}

/** The platform's time, in this process: the same fast clock as the server's. */
function platformClock(origin: number, scale: number): Clock {
  return {
    now: () => origin + (Date.now() - origin) / scale,
    sleep: (ms, signal) =>
      ms <= 0 ? (signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve()) : delay(ms * scale, undefined, signal ? { signal } : undefined),
  };
}

async function runGantry(server: ServerProcess, settings: ServerSettings, warmedUp: () => Promise<void>, jobs: Job[]): Promise<Outcome> {
  let refused = 0;
  const logger: Logger = {
    debug(message) {
      if (process.env.BENCH_RATELIMIT_DEBUG) console.error(`gantry debug: ${message}`);
    },
    info(message) {
      if (process.env.BENCH_RATELIMIT_DEBUG) console.error(`gantry: ${message}`);
    },
    warn(message) {
      // One per rate-limit answer it waits after; the last, when it gives up, is a PlatformRateLimitError instead.
      if (/hit the (primary|secondary) rate limit/.test(message)) refused += 1;
      if (process.env.BENCH_RATELIMIT_DEBUG) console.error(`gantry: ${message}`);
    },
    error() {},
  };
  const client = new PlatformClient({
    baseUrl: server.url,
    token: server.token,
    env: {},
    proxy: {},
    store: new MemoryBudgetStore(),
    clock: platformClock(settings.origin, settings.scale),
    logger,
    limits: gantryLimits(settings.unlimited),
  });
  try {
    // Warm-up, untimed: the first request loads the HTTP core and opens a connection. GET /rate_limit counts against no
    // budget of the workload (not the primary one, RATE-EP-STATUS, and points on its own endpoint).
    await client.request('GET', '/rate_limit');
    await warmedUp();
    const { ms, failed, milestones, clientCpuUsPerRequest } = await fireAll(
      jobs,
      async (job) => {
        const [method, path] = job.route.split(' ') as [string, string];
        try {
          return await client.request(method, path, {
            params: job.params,
            ...(job.query ? { query: job.query } : {}),
            ...(job.body ? { body: job.body } : {}),
          });
        } catch (error) {
          if (error instanceof PlatformRateLimitError) refused += 1;
          throw error;
        }
      },
      'gantry',
    );
    return { ms, failed, refused, extra: { clientCpuUsPerRequest, milestones } };
  } finally {
    client.close();
  }
}

/**
 * The specification's limits, all of them kept — but for the CPU-time estimate (RATE-SEC-CPU-TIME, the sum of response
 * times per minute), raised out of the way as test/platform/against-devserver.test.ts does, unless
 * BENCH_RATELIMIT_CPU_ESTIMATE=on: the platform does not enforce it (so it is no part of the minimum), and over
 * loopback on a busy two-core machine a response time is mostly this machine's own queueing — with 100 requests in
 * flight every one of them counts the other 99 — so the estimate measures the bench, not the platform.
 */
function gantryLimits(unlimited: boolean): Partial<PlatformLimits> {
  if (unlimited) return { pointsPerMinute: 1e12, creationsPerMinute: 1e12, creationsPerHour: 1e12, cpuMsPerMinute: 1e12 };
  return process.env.BENCH_RATELIMIT_CPU_ESTIMATE === 'on' ? {} : { cpuMsPerMinute: 1e12 };
}

type Group = NonNullable<ThrottlingOptions['write']>;

async function runOctokit(server: ServerProcess, settings: ServerSettings, warmedUp: () => Promise<void>, jobs: Job[]): Promise<Outcome> {
  const { origin, scale } = settings;
  const clock = platformClock(origin, scale);
  const statuses: Record<number, number> = {};
  let retriesAsked = { primary: 0, secondary: 0 };
  // The Bottleneck plugin-throttling itself loads, for groups with its own settings and each minTime shortened.
  const Bottleneck = createRequire(import.meta.resolve('@octokit/plugin-throttling'))('bottleneck/light.js') as {
    Group: new (options: Record<string, unknown>) => Group;
  };
  const id = `bench-${origin}`;
  const group = (name: string, minTime: number) =>
    new Bottleneck.Group({ id: `octokit-${name}`, maxConcurrent: 1, minTime: minTime * scale, timeout: 120_000 });
  const MyOctokit = Octokit.plugin(retry, throttling);
  const octokit = new MyOctokit({
    auth: server.token,
    baseUrl: server.url,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    request: {
      // Counts what came back and tells plugin-throttling the reset as a distance from Date.now in platform seconds.
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        const response = await fetch(input, init);
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        const reset = response.headers.get('x-ratelimit-reset');
        if (reset === null || scale === 1) return response;
        const headers = new Headers(response.headers);
        headers.set('x-ratelimit-reset', String(Math.ceil(Date.now() / 1000 + (Number(reset) - clock.now() / 1000))));
        return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
      },
    },
    retry: { retryAfterBaseValue: 1000 * scale },
    throttle: {
      id,
      retryAfterBaseValue: 1000 * scale,
      write: group('write', 1000),
      search: group('search', 2000),
      notifications: group('notifications', 3000),
      // As the READMEs show: retry, here up to 3 times.
      onRateLimit: (_retryAfter, _options, _octokit, retryCount) => {
        retriesAsked.primary += 1;
        return retryCount < 3;
      },
      onSecondaryRateLimit: (_retryAfter, _options, _octokit, retryCount) => {
        retriesAsked.secondary += 1;
        return retryCount < 3;
      },
    } as ThrottlingOptions,
  });
  await octokit.request('GET /rate_limit'); // warm-up, untimed, as Gantry's
  for (const status of Object.keys(statuses)) delete statuses[Number(status)];
  await warmedUp();
  retriesAsked = { primary: 0, secondary: 0 };
  const { ms, failed, milestones, clientCpuUsPerRequest } = await fireAll(
    jobs,
    (job) => octokit.request(job.route, { ...job.params, ...job.query, ...job.body }),
    'octokit',
  );
  const refused = (statuses[403] ?? 0) + (statuses[429] ?? 0);
  return { ms, failed, refused, extra: { clientCpuUsPerRequest, milestones, statuses, rateLimitHandlerCalls: retriesAsked } };
}

async function main(): Promise<void> {
  const scale = Number(process.env.BENCH_RATELIMIT_SCALE ?? defaultScale);
  if (!(scale > 0 && scale <= 1)) throw new Error(`BENCH_RATELIMIT_SCALE must be in (0, 1], got ${process.env.BENCH_RATELIMIT_SCALE}`);
  const limitStatus = Number(process.env.BENCH_RATELIMIT_LIMIT_STATUS ?? 403);
  if (limitStatus !== 403 && limitStatus !== 429) throw new Error('BENCH_RATELIMIT_LIMIT_STATUS must be 403 or 429');
  const jobs = workload();
  const { windows, parts } = minimumWindows(jobs);
  const windowMs = 60_000 * scale;
  const minimumMs = windows * windowMs;
  const base = { scale, limitStatus, unlimited: false } as const;
  const floor = await runSide('gantry, every limit lifted', jobs, minimumMs, { ...base, unlimited: true }, (server, settings, warmedUp) =>
    runGantry(server, settings, warmedUp, jobs),
  );
  const gantry = await runSide('gantry', jobs, minimumMs, base, (server, settings, warmedUp) => runGantry(server, settings, warmedUp, jobs));
  const octokit = await runSide('octokit', jobs, minimumMs, base, (server, settings, warmedUp) => runOctokit(server, settings, warmedUp, jobs));
  console.log(
    JSON.stringify({
      name: 'ratelimit',
      workload: {
        gets: jobs.filter((j) => j.kind === 'get').length,
        creations: jobs.filter((j) => j.kind === 'create').length,
        searches: jobs.filter((j) => j.kind === 'search').length,
      },
      scale,
      windowMs,
      limitStatus,
      minimum: { ms: minimumMs, windows, windowsBy: parts },
      gantry: { ...gantry, cpuEstimate: process.env.BENCH_RATELIMIT_CPU_ESTIMATE === 'on' ? 'on' : 'off' },
      octokit,
      // The same workload through Gantry against a platform with every limit lifted: what this machine needs to send it.
      floor: { ms: floor.ms, clientCpuUsPerRequest: floor.clientCpuUsPerRequest },
      ratio: { gantry: gantry.ratioToMinimum, octokit: octokit.ratioToMinimum, octokitOverGantry: Number((octokit.ms / gantry.ms).toFixed(3)) },
      target: 'gantry <= 1.10 x minimum, 0 violations',
      loadAverage: Number(loadavg()[0]?.toFixed(1)),
    }),
  );
}

// ---- child mode: one platform server on a fast clock ----------------------------------------------------------
if (process.env[childFlag]) {
  const { origin, scale, limitStatus, unlimited } = JSON.parse(process.env[childFlag]) as ServerSettings;
  const realNow = Date.now.bind(Date);
  Date.now = () => origin + (realNow() - origin) / scale;
  const { startPlatformServer } = await import('../../devserver/platform/index.js');
  const lifted = 1_000_000_000;
  const server = await startPlatformServer({
    host: '127.0.0.1',
    limitStatus: { primary: limitStatus, secondary: limitStatus },
    ...(unlimited
      ? { limits: { user: lifted, searchAuthenticated: lifted, pointsPerMinute: lifted, creationPerMinute: lifted, creationPerHour: lifted } }
      : {}),
  });
  const token = server.issueToken({ kind: 'personal', login: 'bench' });
  const setupToken = server.issueToken({ kind: 'personal', login: 'setup' });
  process.stdout.write(`${JSON.stringify({ url: server.url, token, setupToken })}\n`);
  process.on('SIGTERM', () => {
    void server.stop().then(() => process.exit(0));
  });
} else {
  await main();
}
