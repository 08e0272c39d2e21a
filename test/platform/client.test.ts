// The platform client against a scripted stand-in for the platform (test/platform/helpers/mock-platform.ts), on real
// sockets, with a virtual clock for the waits of a minute and more. Each test names the RATE-* rules it holds.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { ExitCode, UsageError } from '../../lib/errors.js';
import {
  MemoryBudgetStore,
  PlatformApiError,
  PlatformClient,
  PlatformCredentialsError,
  PlatformRateLimitError,
  platformRetryPolicy,
  type PlatformClientOptions,
} from '../../lib/platform/index.js';
import type { Logger } from '../../lib/log.js';
import { NetworkError } from '../../lib/http/index.js';
import { bodies, startMockPlatform, type MockPlatform, type PlatformScript } from './helpers/mock-platform.js';
import { VirtualClock } from './helpers/virtual-clock.js';

const token = 'ghp_canaryCANARYcanary0123456789abcdefXYZ';

interface Setup {
  clock: VirtualClock;
  peer: MockPlatform;
  client: PlatformClient;
  lines: string[];
}

/** A raw logger (no redaction of its own): what the client writes is what is checked. */
function recordingLogger(lines: string[]): Logger {
  const push = (level: string) => (message: string) => {
    lines.push(`${level}: ${message}`);
  };
  return { debug: push('debug'), info: push('info'), warn: push('warn'), error: push('error') };
}

const open: Array<{ peer: MockPlatform; client: PlatformClient }> = [];

async function setup(script: PlatformScript, options: Partial<PlatformClientOptions> & { clock?: VirtualClock } = {}): Promise<Setup> {
  const clock = options.clock ?? new VirtualClock();
  const peer = await startMockPlatform(clock, script);
  const lines: string[] = [];
  const client = new PlatformClient({
    baseUrl: peer.url,
    token,
    env: {},
    clock,
    store: new MemoryBudgetStore(),
    logger: recordingLogger(lines),
    proxy: {},
    ...options,
  });
  open.push({ peer, client });
  return { clock, peer, client, lines };
}

afterEach(async () => {
  for (const { peer, client } of open.splice(0)) {
    client.close();
    await peer.close();
  }
});

/** The headers of a budget that has `remaining` left until `reset` (epoch s). */
function rate(limit: number, remaining: number, reset: number, resource = 'core'): Record<string, string> {
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-used': String(limit - remaining),
    'x-ratelimit-reset': String(reset),
    'x-ratelimit-resource': resource,
  };
}

async function runAll<T>(count: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next;
        next += 1;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

describe('platform client: secondary limits kept before sending (RATE-SEC-*)', function () {
  this.timeout(60_000);

  it('RATE-SEC-CONCURRENCY, RATE-SEC-POINTS-REST, RATE-COST-REST-READ: 1,000 GETs at 150 requested in flight never have more than 100 in flight, and one endpoint gets 900 points a minute, the rest after the window', async () => {
    const { peer, client } = await setup(() => ({ status: 200, body: [], delayMs: 150 }));
    await runAll(1000, 150, (i) => client.request('GET', `/repos/octo-org/site/issues/${i + 1}`));
    assert.equal(peer.seen.length, 1000);
    assert.ok(peer.maxInFlight <= 100, `at most 100 in flight, saw ${peer.maxInFlight}`);
    assert.ok(peer.maxInFlight >= 50, `the client does use its concurrency (saw ${peer.maxInFlight})`);
    const times = peer.seen.map((s) => s.at).sort((a, b) => a - b);
    let most = 0;
    for (let i = 0, j = 0; i < times.length; i += 1) {
      while (times[j]! <= times[i]! - 60_000) j += 1;
      most = Math.max(most, i - j + 1);
    }
    assert.ok(most <= 900, `GET /repos/{}/{}/issues/{} is one endpoint: at most 900 points in any minute, saw ${most}`);
    const first = times[0]!;
    assert.ok(
      times.slice(900).every((t) => t >= first + 60_000),
      'the 901st and later wait for the window',
    );
  });

  it('RATE-SEC-CONTENT-CREATION, RATE-COST-REST-WRITE: 90 creations in a row are paced — the 81st waits for the minute', async () => {
    const { peer, client } = await setup(() => ({ status: 201, body: { number: 1 } }));
    for (let i = 0; i < 90; i += 1) await client.request('POST', '/repos/octo-org/site/issues', { body: { title: `t${i}` } });
    const first = peer.seen[0]!.at;
    assert.ok(
      peer.seen.slice(0, 80).every((s) => s.at < first + 60_000),
      'the first 80 go at once',
    );
    assert.ok(peer.seen[80]!.at >= first + 60_000, `the 81st waits a minute (sent ${(peer.seen[80]!.at - first) / 1000} s after the first)`);
    const budgets = await client.budgets();
    assert.equal(budgets.kept.creationsLastHour, 90);
  });

  it('RATE-SEC-CONTENT-CREATION, RATE-SEC-MAY-CHANGE: the hourly creation cap and every limit are configurable', async () => {
    const { peer, client } = await setup(() => ({ status: 201, body: {} }), { limits: { creationsPerMinute: 5, creationsPerHour: 8 } });
    await runAll(10, 10, () => client.request('POST', '/repos/octo-org/site/issues/1/comments', { body: { body: 'x' } }));
    const first = peer.seen[0]!.at;
    assert.ok(peer.seen[5]!.at >= first + 60_000, 'the 6th waits a minute');
    assert.ok(peer.seen[8]!.at >= first + 3_600_000, 'the 9th waits for the hour');
    assert.throws(() => new PlatformClient({ baseUrl: peer.url, env: {}, limits: { concurrency: 0 } }), UsageError);
    assert.throws(() => new PlatformClient({ baseUrl: peer.url, env: {}, limits: { pointsPerMinit: 5 } as never }), /not a limit/);
  });

  it("RATE-SEC-CPU-TIME: the estimate of the platform's CPU time (response time) stays under its cap per minute", async () => {
    const clock = new VirtualClock();
    // Each answer "takes" 30 s on the virtual clock: the script moves the clock as the platform's work would.
    const peer = await startMockPlatform(clock, () => ({ status: 200, body: {} }));
    const client = new PlatformClient({ baseUrl: peer.url, token, env: {}, clock, store: new MemoryBudgetStore(), proxy: {}, logger: recordingLogger([]) });
    open.push({ peer, client });
    const slow: PlatformScript = () => {
      (clock as unknown as { time: number }).time += 30_000;
      return { status: 200, body: {} };
    };
    peer.setScript(slow);
    for (let i = 0; i < 4; i += 1) await client.request('GET', `/repos/octo-org/r${i}`);
    // Three answers of 30 s reach 90 s within a minute: the fourth waits until the first leaves the window.
    const gaps = peer.seen.map((s) => s.at);
    assert.ok(gaps[3]! - gaps[0]! >= 60_000, 'the fourth request waited for CPU budget');
  });

  it('RATE-EP-STATUS: GET /rate_limit goes while the core budget is spent (it does not count against the primary limit)', async () => {
    const { clock, peer, client } = await setup((s) =>
      s.path === '/rate_limit'
        ? { status: 200, body: { resources: { core: { limit: 5000, remaining: 0 } } } }
        : { status: 200, body: {}, headers: rate(5000, 0, Math.ceil(clock.now() / 1000) + 600) },
    );
    await client.request('GET', '/user');
    const before = clock.now();
    const status = await client.rateLimit();
    assert.deepEqual((status as { resources: { core: { remaining: number } } }).resources.core.remaining, 0);
    assert.equal(peer.seen.length, 2);
    assert.ok(peer.seen[1]!.at - before < 1000, 'not held');
  });
});

describe('platform client: the primary budget from the headers (RATE-HDR-*, RATE-ERR-PRIMARY)', function () {
  this.timeout(30_000);

  it('RATE-HDR-REMAINING, RATE-HDR-RESET, RATE-HDR-RESOURCE, RATE-ERR-BAN: when remaining reaches 0 the whole queue of the resource is held until reset, and nothing is sent to be refused', async () => {
    let reset = 0;
    let used = 0;
    const refused: number[] = [];
    const limit = 10;
    const { clock, peer, client } = await setup((s) => {
      const now = clock.now();
      if (reset === 0 || now >= reset * 1000) {
        reset = Math.ceil(now / 1000) + 30;
        used = 0;
      }
      if (used >= limit) {
        refused.push(s.at);
        return { status: 403, body: bodies.primary, headers: rate(limit, 0, reset) };
      }
      used += 1;
      return { status: 200, body: {}, headers: rate(limit, limit - used, reset), delayMs: 5 };
    });
    await runAll(15, 15, (i) => client.request('GET', `/repos/octo-org/site/pulls/${i}`));
    assert.deepEqual(refused, [], 'no request was sent into a spent budget');
    const firstReset = peer.seen[0]!.at;
    const held = peer.seen.slice(10);
    assert.equal(held.length, 5);
    assert.ok(
      held.every((s) => s.at >= firstReset + 29_000),
      'the 11th to 15th waited for x-ratelimit-reset',
    );
    const budgets = await client.budgets();
    assert.equal(budgets.kept.resources.core?.limit, 10);
  });

  it('RATE-ERR-PRIMARY: a 403 with x-ratelimit-remaining 0 (the budget spent elsewhere) is retried no sooner than x-ratelimit-reset, and other requests to the resource wait too', async () => {
    let reset = 0;
    const { clock, peer, client } = await setup((_s, i) => {
      if (i === 0) {
        reset = Math.ceil(clock.now() / 1000) + 120;
        return { status: 403, body: bodies.primary, headers: rate(5000, 0, reset) };
      }
      return { status: 200, body: { ok: true }, headers: rate(5000, 4999, reset + 3600) };
    });
    const one = client.request('GET', '/repos/octo-org/site');
    await new Promise((r) => setTimeout(r, 1));
    const other = client.request('GET', '/orgs/octo-org');
    await Promise.all([one, other]);
    assert.equal(peer.seen.length, 3);
    assert.ok(
      peer.seen.slice(1).every((s) => s.at >= reset * 1000),
      'nothing to core before the reset',
    );
  });

  it('RATE-ERR-PRIMARY: a reset further away than limits.maxWaitMs is an error at once (exit 3) that says when the budget comes back', async () => {
    const { clock, peer, client } = await setup(() => ({ status: 429, body: bodies.primary, headers: rate(60, 0, Math.ceil(clock.now() / 1000) + 1800) }), {
      limits: { maxWaitMs: 60_000 },
    });
    const error = await client.request('GET', '/repos/octo-org/site').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlatformRateLimitError, String(error));
    assert.equal(error.exitCode, ExitCode.remote);
    assert.equal(error.kind, 'primary');
    assert.match(error.message, /more than the 60 s allowed/);
    assert.match(error.message, /allows it again at \d{4}-/);
    assert.equal(peer.seen.length, 1);
  });
});

describe('platform client: secondary limit answers (RATE-ERR-SECONDARY-*)', function () {
  this.timeout(30_000);

  it("RATE-ERR-SECONDARY, RATE-ERR-SECONDARY-RETRY-AFTER, RATE-HDR-RETRY-AFTER: 403 with retry-after: 3 waits at least 3 s, and the endpoint's queue waits with it while other endpoints go", async () => {
    const clock = new VirtualClock(Date.now(), { auto: false });
    const { peer, client } = await setup(
      (s, i) => (i === 0 ? { status: 403, body: bodies.secondary, headers: { 'retry-after': '3' } } : { status: 200, body: { path: s.path } }),
      { clock },
    );
    const refused = client.request('POST', '/repos/octo-org/site/issues', { body: { title: 'a' } });
    while (peer.seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    const sameEndpoint = client.request('POST', '/repos/octo-org/site/issues', { body: { title: 'b' } });
    const otherEndpoint = await client.request('GET', '/repos/octo-org/site/releases');
    assert.equal(otherEndpoint.status, 200, 'another endpoint is not held');
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      peer.seen.map((s) => s.method),
      ['POST', 'GET'],
      "the endpoint's queue waits: neither POST is sent during the 3 s",
    );
    clock.advance(2_900);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(peer.seen.length, 2, 'not before 3 s');
    clock.advance(100);
    await Promise.all([refused, sameEndpoint]);
    const t0 = peer.seen[0]!.at;
    const posts = peer.seen.slice(2);
    assert.ok(posts.every((s) => s.method === 'POST' && s.at - t0 >= 3000));
    assert.equal(JSON.parse(posts[0]!.body).title, 'a', 'the refused request goes first when the hold ends');
  });

  it('RATE-ERR-SECONDARY-BACKOFF: without retry-after or remaining 0 it waits at least a minute, then exponentially longer, and gives up after 3 retries saying how long it waited (exit 3)', async () => {
    const { peer, client, lines } = await setup(() => ({
      status: 403,
      body: bodies.secondary,
      headers: rate(5000, 4000, Math.ceil(Date.now() / 1000) + 3600),
    }));
    const error = await client.request('GET', '/search/issues', { query: { q: 'is:open' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlatformRateLimitError, String(error));
    assert.equal(error.kind, 'secondary');
    assert.equal(error.exitCode, ExitCode.remote);
    assert.equal(peer.seen.length, 4, 'the first attempt and 3 retries');
    const gaps = peer.seen.slice(1).map((s, i) => s.at - peer.seen[i]!.at);
    assert.ok(gaps[0]! >= 60_000, `first wait ${gaps[0]} ms`);
    assert.ok(gaps[1]! >= 2 * 60_000 && gaps[1]! > gaps[0]!, `second wait ${gaps[1]} ms`);
    assert.ok(gaps[2]! >= 4 * 60_000 && gaps[2]! > gaps[1]!, `third wait ${gaps[2]} ms`);
    assert.ok(error.waitedMs >= 7 * 60_000);
    assert.match(error.message, /gave up on the secondary rate limit after waiting \d+ min over 4 attempts/);
    assert.match(error.message, /You have exceeded a secondary rate limit/);
    assert.equal(error.documentationUrl, bodies.secondary.documentation_url);
    assert.ok(
      lines.some((l) => l.startsWith('warn:') && /secondary rate limit/.test(l)),
      'each wait is said',
    );
  });

  it('RATE-ERR-SECONDARY-RESET: a secondary answer without retry-after but with remaining 0 waits until x-ratelimit-reset', async () => {
    let reset = 0;
    const { clock, peer, client } = await setup(
      (_s, i) => {
        if (i === 0) {
          reset = Math.ceil(clock.now() / 1000) + 300;
          return { status: 429, body: bodies.secondary, headers: rate(5000, 0, reset) };
        }
        return { status: 200, body: {} };
      },
      { limits: { rateLimitRetries: 1 } },
    );
    await client.request('GET', '/repos/octo-org/site/commits');
    assert.ok(peer.seen[1]!.at >= reset * 1000);
  });

  it('RATE-KINDS: a 403 that names no limit is the platform\'s "no" (exit 1), not retried, with its message and documentation URL', async () => {
    const { peer, client } = await setup(() => ({
      status: 403,
      body: { message: 'Resource not accessible by integration', documentation_url: 'https://docs.platform.example/rest/commits/statuses' },
      headers: rate(5000, 4990, Math.ceil(Date.now() / 1000) + 3600),
    }));
    const error = await client.request('POST', '/repos/octo-org/site/statuses/abc', { body: { state: 'success' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlatformApiError);
    assert.equal(error.exitCode, ExitCode.checkFailed);
    assert.equal(error.platformMessage, 'Resource not accessible by integration');
    assert.equal(error.documentationUrl, 'https://docs.platform.example/rest/commits/statuses');
    assert.match(error.hint ?? '', /docs\.platform\.example/);
    assert.equal(peer.seen.length, 1);
  });
});

describe('platform client: credentials (RATE-REVOKED-TOKEN-401, RATE-IDENTITY-KINDS)', function () {
  this.timeout(30_000);

  it('RATE-REVOKED-TOKEN-401: a 401 bad credentials is never retried, and says to renew the token', async () => {
    const { peer, client } = await setup(() => ({ status: 401, body: bodies.badCredentials }));
    const error = await client.request('GET', '/user').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlatformCredentialsError, String(error));
    assert.equal(error.exitCode, ExitCode.checkFailed);
    assert.match(error.message, /401: Bad credentials/);
    assert.match(error.hint ?? '', /renew the token/);
    assert.equal(peer.seen.length, 1);
  });

  it('the token goes to the platform as a bearer token and never into an error, its hint, its JSON or a log line', async () => {
    const { peer, lines } = await setup(
      (s) => {
        if (s.path === '/user') return { status: 401, body: bodies.badCredentials };
        if (s.path.startsWith('/search')) return { status: 403, body: bodies.secondary, headers: { 'retry-after': '1' } };
        if (s.path === '/echo')
          return { status: 422, body: { message: `Validation failed for ${token}`, errors: [{ resource: 'Issue', field: 'title', code: 'missing_field' }] } };
        return { status: 404, body: bodies.notFound };
      },
      { logger: undefined },
    );
    const raw: string[] = [];
    const logged = new PlatformClient({
      baseUrl: peer.url,
      token,
      env: {},
      store: new MemoryBudgetStore(),
      proxy: {},
      clock: new VirtualClock(),
      logger: recordingLogger(raw),
    });
    open.push({ peer, client: logged });
    const errors: unknown[] = [];
    for (const [method, path] of [
      ['GET', '/user'],
      ['GET', '/repos/o/r'],
      ['GET', '/search/code'],
      ['POST', '/echo'],
    ] as const) {
      errors.push(
        await logged.request(method, path, { query: { q: 'x' } }).then(
          () => undefined,
          (e: unknown) => e,
        ),
      );
    }
    assert.equal(peer.seen[0]!.headers.authorization, `Bearer ${token}`);
    for (const error of errors) {
      assert.ok(error instanceof Error);
      const text = [error.message, (error as { hint?: string }).hint, JSON.stringify(error), inspect(error, { depth: 5 })].join('\n');
      assert.ok(!text.includes(token), `the token leaked into ${error.constructor.name}: ${text.slice(0, 300)}`);
    }
    assert.ok(raw.length > 0 && !raw.join('\n').includes(token), 'no log line holds the token');
    assert.ok(!lines.join('\n').includes(token));
  });

  it("the headers option goes with every request (the platform's media type, an API version), a request's headers win, and credentials are refused there (exit 2)", async () => {
    const { peer, client } = await setup(() => ({ status: 200, body: {} }), {
      headers: { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28' },
    });
    await client.request('GET', '/repos/o/r');
    await client.request('GET', '/repos/o/r/readme', { headers: { accept: 'application/vnd.github.raw+json' } });
    assert.equal(peer.seen[0]!.headers.accept, 'application/vnd.github+json');
    assert.equal(peer.seen[0]!.headers['x-github-api-version'], '2022-11-28');
    assert.equal(peer.seen[0]!.headers.authorization, `Bearer ${token}`);
    assert.equal(peer.seen[1]!.headers.accept, 'application/vnd.github.raw+json');
    assert.equal(peer.seen[1]!.headers['x-github-api-version'], '2022-11-28');
    for (const headers of [{ Authorization: `token ${token}` }, { cookie: 'a=b' }, { accept: 1 }, 'accept: x'])
      assert.throws(
        () => new PlatformClient({ baseUrl: peer.url, token, env: {}, headers: headers as never }),
        (e: unknown) => e instanceof UsageError && e.exitCode === ExitCode.usage && !e.message.includes(token),
      );
  });

  it('the token comes from the option, GANTRY_PLATFORM_TOKEN, then PLATFORM_TOKEN (the workflow token); the address from PLATFORM_API_URL', async () => {
    const { peer } = await setup(() => ({ status: 200, body: {} }));
    const fromEnv = new PlatformClient({
      env: {
        PLATFORM_API_URL: peer.url,
        PLATFORM_TOKEN: 'ghs_workflowtoken0000000000000000000000',
        GANTRY_PLATFORM_TOKEN: 'ghp_gantry000000000000000000000000000000',
      },
      store: new MemoryBudgetStore(),
      proxy: {},
    });
    open.push({ peer, client: fromEnv });
    assert.equal(fromEnv.tokenSource, 'GANTRY_PLATFORM_TOKEN');
    assert.equal(fromEnv.identity.kind, 'personal');
    await fromEnv.request('GET', '/user');
    assert.equal(peer.seen.at(-1)!.headers.authorization, 'Bearer ghp_gantry000000000000000000000000000000');
    const workflow = new PlatformClient({ env: { PLATFORM_API_URL: peer.url, PLATFORM_TOKEN: 'ghs_workflowtoken0000000000000000000000' }, proxy: {} });
    open.push({ peer, client: workflow });
    assert.equal(workflow.identity.kind, 'workflow');
    assert.equal(workflow.identity.expectedPerHour, 1_000);
    assert.throws(
      () => new PlatformClient({ env: {} }),
      (e: unknown) => e instanceof UsageError && /PLATFORM_API_URL/.test(e.message),
    );
  });
});

describe('platform client: what is retried (one retry layer)', function () {
  this.timeout(30_000);

  it("one retry loop, the core's: the platform policy retries 5xx for idempotent methods and never 403 or 429", async () => {
    assert.ok(!platformRetryPolicy.statuses.includes(403) && !platformRetryPolicy.statuses.includes(429));
    assert.ok(!platformRetryPolicy.methods?.includes('POST') && !platformRetryPolicy.methods?.includes('PATCH'));
    const { peer, client } = await setup((_s, i) => (i === 0 ? { status: 502, body: { message: 'Server Error' } } : { status: 200, body: { ok: 1 } }));
    const response = await client.request('GET', '/repos/octo-org/site');
    assert.equal(response.status, 200);
    assert.equal(peer.seen.length, 2);
    peer.setScript(() => ({ status: 502, body: { message: 'Server Error' } }));
    const error = await client.request('POST', '/repos/octo-org/site/issues', { body: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlatformApiError);
    assert.equal(error.exitCode, ExitCode.remote);
    assert.equal(peer.seen.length, 3, 'a POST that may have been applied is not sent again');
  });

  it("LAYER-HOOKS: the limiter is hooks on the core's one retry loop — a 5xx retry waits on the client's clock and in the queue again; a network failure gives its slot back", async () => {
    const { peer, client, clock } = await setup((_s, i) => (i === 0 ? { status: 503, body: { message: 'Unavailable' } } : { status: 200, body: { ok: 1 } }));
    const response = await client.request<{ ok: number }>('GET', '/repos/octo-org/site');
    assert.deepEqual(response.body, { ok: 1 });
    assert.equal(peer.seen.length, 2);
    assert.equal(clock.slept.length, 1, 'the one retry waited on the virtual clock');
    assert.ok(clock.slept[0]! >= 500 && clock.slept[0]! <= 1_000, `platformRetryPolicy's first backoff (${clock.slept[0]} ms)`);
    assert.equal((await client.budgets()).kept.inFlight, 0);

    const closed = await startMockPlatform(clock);
    await closed.close();
    const store = new MemoryBudgetStore();
    const unreachable = new PlatformClient({
      baseUrl: closed.url,
      token,
      env: {},
      clock,
      store,
      proxy: {},
      logger: recordingLogger([]),
      limits: { serverErrorRetries: 1 },
    });
    open.push({ peer, client: unreachable });
    const error = await unreachable.request('GET', '/repos/octo-org/site').catch((e: unknown) => e);
    assert.ok(error instanceof NetworkError && error.errorCode === 'ECONNREFUSED', String(error));
    assert.equal(clock.slept.length, 2, 'one retry of the refused connection');
    assert.equal((await store.snapshot(unreachable.identity.key, clock.now())).inFlight, 0, 'no slot kept by a failed attempt');
  });
});
