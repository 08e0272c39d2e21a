// Issue 29 item 4, the shared budget: 8 processes, each its own PlatformClient finding Redis only through
// GANTRY_PLATFORM_LIMITS_URL (helpers/limits-url-worker.ts, as a deployed worker does), spend one primary budget of the
// embedded platform API, which enforces its limits and counts every violation. Its hour is shortened by windowScale.
// Nothing may be refused, and the pair of windows must not take much longer than the limits allow: the second
// window's requests go as soon as the first window's advertised reset has passed (plus the client's 1 s skew).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { startRedis, type RedisPeer } from '../peers/redis.js';
import { until } from './helpers/server-journal.js';

const WORKER = fileURLToPath(new URL('./helpers/limits-url-worker.ts', import.meta.url));
const PROCESSES = 8;
const EACH = 12;
const BUDGET = 60;
/** The platform's hour as 54 s: the client's 1 s reset skew and the whole seconds of x-ratelimit-reset are then ~4 %. */
const WINDOW_SCALE = 0.015;
const WINDOW_MS = 3_600_000 * WINDOW_SCALE;

interface WorkerLine {
  ready?: boolean;
  done?: boolean;
  error?: string;
  i?: number;
  at?: number;
  status?: number;
  reset?: number;
}

describe('OPS-BUDGET: 8 processes share one rate-limit budget through Redis', function () {
  this.timeout(180_000);
  let redis: RedisPeer | undefined;
  let server: PlatformServer | undefined;
  const children: ChildProcess[] = [];

  after(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.stop();
    await redis?.stop();
  });

  it(`RATE-HDR-REMAINING, RATE-ERR-BAN, RATE-ERR-PRIMARY: ${PROCESSES} × ${EACH} requests against a primary budget of ${BUDGET} — no refusal by the platform, total time within 1.10× of what the limits allow`, async () => {
    redis = await startRedis({ password: 'fleet-budget-pass' });
    server = await startPlatformServer({ windowScale: WINDOW_SCALE, limits: { user: BUDGET }, latencyMs: 20 });
    const token = server.issueToken({ kind: 'personal', login: 'fleet' });
    const env: NodeJS.ProcessEnv = { ...process.env, GANTRY_PLATFORM_LIMITS_URL: `${redis.url}/0` };
    delete env.GANTRY_PLATFORM_TOKEN;
    delete env.PLATFORM_TOKEN;
    const options = { baseUrl: server.url, token, path: '/repos/gantry/site', count: EACH, parallel: 3 };
    const runs = Array.from({ length: PROCESSES }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(options)], { env, stdio: ['pipe', 'pipe', 'inherit'] });
      children.push(child);
      const lines: WorkerLine[] = [];
      createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line) as WorkerLine));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      return { child, lines, exited };
    });
    // All loaded and connected to Redis, then told to go together.
    await until(() => runs.every((r) => r.lines.some((l) => l.ready) || r.child.exitCode !== null), 120_000, 'every process to be ready');
    for (const { child } of runs) child.stdin!.end('go\n');
    const codes = await Promise.all(runs.map((r) => r.exited));
    assert.deepEqual(codes, Array<number>(PROCESSES).fill(0), JSON.stringify(runs.flatMap((r) => r.lines.filter((l) => l.error))));

    const answers = runs
      .flatMap((r) => r.lines)
      .filter((l) => l.at !== undefined)
      .sort((a, b) => a.at! - b.at!);
    const total = PROCESSES * EACH;
    assert.equal(answers.length, total);
    assert.ok(
      answers.every((l) => l.status === 200),
      'every request answered 200',
    );
    assert.deepEqual(server.violations().violations, [], 'no refusal by the platform: no process sent into the spent budget');
    assert.equal(server.stats().requests, total, 'nothing refused and sent again');

    // The windows as the platform answered them: each answer carries its window's reset.
    const resets = [...new Set(answers.map((l) => l.reset!))].sort((a, b) => a - b);
    const windows = Math.ceil(total / BUDGET);
    assert.equal(resets.length, windows, `the requests fell in ${resets.length} windows, the fewest the budget allows is ${windows}`);
    assert.equal(answers.filter((l) => l.reset === resets[0]).length, BUDGET, 'the first window held the one budget, no more');

    // What the limits allow: the last window opens no sooner than (windows − 1) windows after the first request.
    // From the first answer to the last: both carry the server's latency, so this is first arrival to last arrival.
    const first = answers[0]!.at!;
    const last = answers.at(-1)!.at!;
    const allowed = (windows - 1) * WINDOW_MS;
    const ratio = (last - first) / allowed;
    assert.ok(ratio <= 1.1, `within 1.10× of what the limits allow: ${last - first} ms for ${allowed} ms (${ratio.toFixed(3)}×)`);
    console.log(`      budget: ${total} requests by ${PROCESSES} processes in ${last - first} ms, the limits allow ${allowed} ms: ${ratio.toFixed(3)}×`);
  });
});
