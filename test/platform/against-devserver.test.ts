// PlatformClient against the real embedded platform API (devserver/platform, an independent reading of the same
// specification), in this process on a real socket: what the server counts — requests in flight, violations — is the
// proof that the client kept every limit. The server's windows are shortened by `windowScale`; for the minute-long
// secondary windows the client gets a clock running 1/scale times faster, so one minute is the same length for both.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { startPlatformServer, type PlatformServer, type PlatformStats, type ViolationReport } from '../../devserver/platform/index.js';
import { ExitCode } from '../../lib/errors.js';
import { silentLogger } from '../../lib/log.js';
import { MemoryBudgetStore, PlatformClient, PlatformCredentialsError, type Clock, type PlatformClientOptions } from '../../lib/platform/index.js';

const sha = 'a'.repeat(40);

async function admin<T>(server: PlatformServer, path: string): Promise<T> {
  const response = await fetch(new URL(path, server.url));
  assert.equal(response.status, 200, path);
  return (await response.json()) as T;
}

/** A clock on which `1/scale` minutes pass for each real minute: the client's minute is the server's scaled one. */
function scaledClock(scale: number): Clock & { real(ms: number): number } {
  const origin = Date.now();
  return {
    now: () => origin + (Date.now() - origin) / scale,
    sleep: (ms, signal) => (ms <= 0 ? Promise.resolve() : delay(ms * scale, undefined, signal ? { signal } : undefined)),
    real: (ms) => ms * scale,
  };
}

describe('PlatformClient against the embedded platform API', function () {
  this.timeout(60_000);
  let server: PlatformServer | undefined;
  const clients: PlatformClient[] = [];
  const client = (options: PlatformClientOptions) => {
    const made = new PlatformClient({ baseUrl: server!.url, env: {}, store: new MemoryBudgetStore(), logger: silentLogger, proxy: {}, ...options });
    clients.push(made);
    return made;
  };
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
    server = undefined;
  });

  it('RATE-SEC-CONCURRENCY, RATE-SEC-POINTS-REST: 1,000 GETs with 150 requested in flight never have more than 100 in flight and get no secondary-limit answer', async () => {
    server = await startPlatformServer({ windowScale: 0.05, latencyMs: 200 });
    const token = server.issueToken({ kind: 'personal', login: 'burst' });
    // The CPU estimate (RATE-SEC-CPU-TIME, response times) is not enforced by the server and on a busy two-core test
    // machine it measures this process's own queueing: it is tested against the scripted platform (client.test.ts).
    const platform = client({ token, limits: { cpuMsPerMinute: 10_000_000 } });
    const paths = ['/repos/gantry/demo', '/repos/gantry/demo/issues', `/repos/gantry/demo/commits/${sha}/statuses`, `/repos/gantry/demo/commits/${sha}/status`];
    let next = 0;
    let inFlight = 0;
    let requestedAtOnce = 0;
    const statuses: number[] = [];
    const worker = async () => {
      while (next < 1000) {
        const path = paths[next % paths.length]!;
        next += 1;
        inFlight += 1;
        requestedAtOnce = Math.max(requestedAtOnce, inFlight);
        try {
          statuses.push((await platform.request('GET', path)).status);
        } finally {
          inFlight -= 1;
        }
      }
    };
    await Promise.all(Array.from({ length: 150 }, worker));
    assert.equal(requestedAtOnce, 150, 'the caller asked for 150 at once');
    assert.equal(statuses.length, 1000);
    assert.ok(
      statuses.every((s) => s === 200),
      'every request answered 200',
    );
    const stats = await admin<PlatformStats>(server, '/_gantry/stats');
    assert.equal(stats.requests, 1000, 'nothing refused and sent again');
    assert.ok(stats.maxInFlight['user:burst']! <= 100, `at most 100 in flight, saw ${stats.maxInFlight['user:burst']}`);
    assert.ok(stats.maxInFlight['user:burst']! >= 90, `the client used its concurrency (saw ${stats.maxInFlight['user:burst']})`);
    const violations = await admin<ViolationReport>(server, '/_gantry/violations');
    assert.deepEqual(violations.violations, []);
    assert.equal(violations.total, 0);
  });

  it('RATE-SEC-CONTENT-CREATION: 90 commit statuses in a row are paced — the 81st waits for the minute — with no violation', async function () {
    const scale = 0.05; // the minute is 3 s
    server = await startPlatformServer({ windowScale: scale });
    const token = server.issueToken({ kind: 'personal', login: 'creator' });
    const clock = scaledClock(scale);
    const platform = client({ token, clock });
    const answered: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 90; i += 1) {
      await platform.createCommitStatus({ repository: 'gantry/demo', sha, state: 'success', context: `ctx-${i}` });
      answered.push(Date.now() - started);
    }
    const minute = clock.real(60_000);
    assert.ok(answered[79]! < minute, `the first 80 go at once (the 80th after ${answered[79]} ms)`);
    assert.ok(answered[80]! >= minute * 0.95, `the 81st waits for the window (${answered[80]} ms, the minute is ${minute} ms)`);
    const violations = await admin<ViolationReport>(server, '/_gantry/violations');
    assert.deepEqual(violations.violations, []);
    const stats = await admin<PlatformStats>(server, '/_gantry/stats');
    assert.equal(stats.requests, 90, 'no creation refused and sent again');
    const read = await platform.listCommitStatuses({ repository: 'gantry/demo', ref: sha });
    assert.equal(read.length, 90);
  });

  it('RATE-HDR-REMAINING, RATE-ERR-PRIMARY, RATE-ERR-BAN: remaining 0 holds the queue until the reset; nothing is sent to be refused', async () => {
    const scale = 0.002; // the hour is 7.2 s
    server = await startPlatformServer({ windowScale: scale, limits: { user: 10 } });
    const token = server.issueToken({ kind: 'personal', login: 'holder' });
    const platform = client({ token, limits: { resetSkewMs: 200 } });
    const first = await platform.request('GET', '/repos/gantry/demo');
    const reset = Number(first.headers['x-ratelimit-reset']) * 1000;
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: 14 }, async () => {
        await platform.request('GET', '/repos/gantry/site');
        times.push(Date.now());
      }),
    );
    times.sort((a, b) => a - b);
    assert.ok(
      times.slice(0, 9).every((t) => t < reset),
      'the 9 left in the window go at once',
    );
    assert.ok(
      times.slice(9).every((t) => t >= reset),
      `the 5 beyond the budget wait for x-ratelimit-reset (${new Date(reset).toISOString()}), first at ${new Date(times[9]!).toISOString()}`,
    );
    const violations = await admin<ViolationReport>(server, '/_gantry/violations');
    assert.deepEqual(violations.violations, [], 'no primary refusal: the client did not send to collect a 403');
    assert.equal((await admin<PlatformStats>(server, '/_gantry/stats')).requests, 15);
  });

  it('RATE-REVOKED-TOKEN-401: a revoked token is a PlatformCredentialsError (exit 1) saying to renew it, sent once and not retried', async () => {
    server = await startPlatformServer();
    const token = server.issueToken({ kind: 'personal', login: 'revoked' });
    const platform = client({ env: { GANTRY_PLATFORM_TOKEN: token } });
    assert.equal((await platform.request('GET', '/repos/gantry/demo')).status, 200);
    assert.ok(server.revokeToken(token));
    const before = (await admin<PlatformStats>(server, '/_gantry/stats')).requests;
    await assert.rejects(platform.request('GET', '/repos/gantry/demo'), (error: unknown) => {
      assert.ok(error instanceof PlatformCredentialsError, String(error));
      assert.equal(error.exitCode, ExitCode.checkFailed);
      assert.match(`${error.message} ${error.hint ?? ''}`, /renew/i);
      assert.match(`${error.message} ${error.hint ?? ''}`, /GANTRY_PLATFORM_TOKEN/);
      assert.ok(!`${error.message} ${error.hint ?? ''}`.includes(token), 'the token is not in the message');
      return true;
    });
    assert.equal((await admin<PlatformStats>(server, '/_gantry/stats')).requests, before + 1, 'sent once');
  });
});
