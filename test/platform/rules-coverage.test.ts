// The RATE-* rules of ../shared/spec/rules.md that no other test named: each exercised where it can be honestly —
// against the embedded platform API (devserver/platform) on real sockets, measured on the server's side
// (helpers/server-journal.ts), or, for GraphQL, which the embedded API does not serve, against the scripted platform.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { silentLogger } from '../../lib/log.js';
import { MemoryBudgetStore, PlatformClient, type Clock, type PlatformClientOptions } from '../../lib/platform/index.js';
import { startMockPlatform, type MockPlatform } from './helpers/mock-platform.js';
import { serverJournal, until, type ServerJournal } from './helpers/server-journal.js';
import { VirtualClock } from './helpers/virtual-clock.js';

interface RateLimitBody {
  resources: Record<string, { limit: number; used: number; remaining: number; reset: number }>;
  rate: unknown;
}

/** A clock on which `1/scale` minutes pass for each real minute: the client's minute is the server's scaled one. */
function scaledClock(scale: number): Clock {
  const origin = Date.now();
  return {
    now: () => origin + (Date.now() - origin) / scale,
    sleep: (ms, signal) => (ms <= 0 ? Promise.resolve() : delay(ms * scale, undefined, signal ? { signal } : undefined)),
  };
}

describe('RATE-* rules no other test names, against the embedded platform API', function () {
  this.timeout(30_000);
  let server: PlatformServer | undefined;
  let journal: ServerJournal;
  const clients: PlatformClient[] = [];
  const client = (options: PlatformClientOptions) => {
    const made = new PlatformClient({ baseUrl: server!.url, env: {}, store: new MemoryBudgetStore(), logger: silentLogger, proxy: {}, ...options });
    clients.push(made);
    return made;
  };
  /** GET /rate_limit as the platform answers it, sent by the test (not the client). */
  const platformStatus = async (token: string): Promise<RateLimitBody> => {
    const response = await fetch(new URL('/rate_limit', server!.url), { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    return (await response.json()) as RateLimitBody;
  };
  beforeEach(() => {
    journal = serverJournal();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
    server = undefined;
  });

  it('RATE-EP-PREFER-HEADERS: the client keeps the primary budgets from the headers alone — it never asks GET /rate_limit on its own, yet knows what the endpoint would say', async () => {
    server = await startPlatformServer({ limits: { user: 40 }, log: journal.log });
    const token = server.issueToken({ kind: 'personal', login: 'headers' });
    const platform = client({ token, cache: false }); // every GET counted (a repeated one would be a 304: etags.test.ts)
    for (let i = 0; i < 5; i += 1) await platform.request('GET', '/repos/gantry/demo');
    await Promise.all([
      platform.request('GET', '/repos/gantry/demo/issues'),
      platform.request('GET', '/repos/gantry/site'),
      platform.createCommitStatus({ repository: 'gantry/demo', sha: 'd'.repeat(40), state: 'pending', context: 'headers' }),
    ]);
    await platform.request('GET', '/search/issues', { query: { q: 'repo:gantry/demo' } });
    assert.equal(journal.entries.length, 9);
    assert.deepEqual(
      journal.entries.filter((e) => e.path === '/rate_limit'),
      [],
      'no GET /rate_limit was sent',
    );
    const { kept } = await platform.budgets();
    const status = await platformStatus(token);
    for (const resource of ['core', 'search']) {
      const said = status.resources[resource]!;
      assert.deepEqual(
        {
          limit: kept.resources[resource]?.limit,
          remaining: kept.resources[resource]?.remaining,
          used: kept.resources[resource]?.used,
          reset: kept.resources[resource]?.reset,
        },
        { limit: said.limit, remaining: said.remaining, used: said.used, reset: said.reset },
        `${resource}: what the headers told the client is what /rate_limit says`,
      );
    }
    assert.equal(kept.resources.core!.remaining, 32, '8 of the 40 spent');
    // Asked for, it is sent once (besides the test's own) — and it spends no primary budget (RATE-EP-STATUS).
    await platform.rateLimit();
    assert.equal(journal.entries.filter((e) => e.path === '/rate_limit').length, 2);
    assert.equal((await platformStatus(token)).resources.core!.remaining, 32);
  });

  it('RATE-SEC-NOT-QUERYABLE: the platform reports no secondary budget, so the client counts its own — points per endpoint, creations, requests in flight — and reading them sends nothing', async () => {
    server = await startPlatformServer({ log: journal.log });
    const token = server.issueToken({ kind: 'personal', login: 'counter' });
    const platform = client({ token });
    // What the platform offers: the primary resources only.
    const status = await platformStatus(token);
    assert.deepEqual(Object.keys(status.resources).sort(), ['core', 'graphql', 'search']);
    const sent = journal.entries.length;

    for (let i = 0; i < 4; i += 1) await platform.request('GET', '/repos/gantry/demo');
    for (let i = 0; i < 3; i += 1) await platform.createCommitStatus({ repository: 'gantry/demo', sha: 'e'.repeat(40), state: 'success', context: `n${i}` });
    server.addFaults([{ kind: 'latency', ms: 1_500, path: '/repos/gantry/demo/issues', times: 2 }]);
    const slow = Promise.all([platform.request('GET', '/repos/gantry/demo/issues'), platform.request('GET', '/repos/gantry/demo/issues')]);
    await until(() => server!.stats().requests >= sent + 4 + 3 + 2, 10_000, 'the two slow requests to arrive');
    const during = await platform.budgets();
    assert.equal(during.kept.inFlight, 2, 'two requests in flight, counted by the client');
    await slow;
    const after = await platform.budgets();
    assert.deepEqual(
      after.kept.points,
      { 'GET /repos/{}/{}': 4, 'POST /repos/{}/{}/statuses/{}': 15, 'GET /repos/{}/{}/issues': 2 },
      'points per endpoint, reads 1 and writes 5',
    );
    assert.equal(after.kept.creationsLastMinute, 3);
    assert.equal(after.kept.creationsLastHour, 3);
    assert.equal(after.kept.inFlight, 0);
    assert.ok(after.kept.cpuMsLastMinute >= 3_000, `the slow answers' time is in the CPU estimate (${after.kept.cpuMsLastMinute} ms)`);
    assert.equal(journal.entries.length, sent + 4 + 3 + 2, 'budgets() asked the platform nothing');
    assert.ok(!journal.entries.slice(sent).some((e) => e.path === '/rate_limit'));
  });

  it('RATE-COST-UNPUBLISHED: an endpoint that costs more than its published point (the platform allows 10 a minute where the client expects 900) is learned from one refusal — the client waits its retry-after, holding that endpoint alone, and sends nothing more to be refused', async () => {
    const scale = 0.05; // the minute is 3 s
    server = await startPlatformServer({ windowScale: scale, limits: { pointsPerMinute: 10 }, log: journal.log });
    const token = server.issueToken({ kind: 'personal', login: 'costly' });
    const platform = client({ token, cache: false }); // every GET counted (a repeated one would be a 304: etags.test.ts)
    const path = '/repos/gantry/demo';
    const run = (async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 13; i += 1) statuses.push((await platform.request('GET', path)).status);
      return statuses;
    })();
    await until(
      async () => Object.keys((await platform.budgets()).kept.holds).includes('endpoint:GET /repos/{}/{}'),
      10_000,
      'the client to hold the endpoint',
    );
    const other = await platform.request('GET', '/repos/gantry/demo/issues');
    assert.equal(other.status, 200, 'another endpoint goes during the hold');
    assert.deepEqual(await run, Array(13).fill(200), 'every request answered 200 in the end');

    const violations = server.violations();
    assert.equal(violations.total, 1, `one refusal, no more: ${JSON.stringify(violations.byKind)}`);
    assert.equal(violations.byKind.points, 1);
    const retryAfter = violations.violations[0]!.retryAfter!;
    assert.ok(retryAfter >= 1 && retryAfter <= 3, `retry-after ${retryAfter} within the 3 s minute`);
    const attempts = journal.of('GET', path);
    assert.deepEqual(
      attempts.map((a) => a.status),
      [...Array(10).fill(200), 403, 200, 200, 200],
    );
    const refusal = attempts[10]!;
    assert.ok(attempts[11]!.at - refusal.at >= retryAfter * 1000, `the retry waited retry-after: ${retryAfter} (${attempts[11]!.at - refusal.at} ms)`);
    const [otherArrival] = journal.of('GET', '/repos/gantry/demo/issues');
    assert.ok(otherArrival!.at < attempts[11]!.at, 'the other endpoint went while this one was held');
  });

  it("RATE-SEC-EXCESSIVE-COMPUTE, RATE-SEC-CPU-TIME: slow answers count as the platform's compute — once the (scaled) minute holds the cap's worth, nothing is sent until the window frees it", async () => {
    const scale = 0.02; // the minute is 1.2 s, on the server and on the client's clock
    const minuteReal = 60_000 * scale;
    const capReal = 600; // the client's cap, 30 s of compute a minute, in real ms at this scale
    server = await startPlatformServer({ windowScale: scale, log: journal.log, faults: [{ kind: 'latency', ms: 200, path: '/repos/gantry/demo/issues' }] });
    const token = server.issueToken({ kind: 'personal', login: 'compute' });
    const platform = client({ token, clock: scaledClock(scale), limits: { cpuMsPerMinute: capReal / scale } });
    for (let i = 0; i < 6; i += 1) assert.equal((await platform.request('GET', '/repos/gantry/demo/issues')).status, 200);

    const answers = journal.of('GET', '/repos/gantry/demo/issues');
    assert.equal(answers.length, 6);
    // On the server's side: when each request arrived, the time the server spent on the answers that ended in the
    // minute before stayed under the cap. Six answers of 200 ms back to back would have reached it after three.
    answers.forEach((arrival, i) => {
      const spent = answers
        .slice(0, i)
        .filter((a) => a.end > arrival.at - minuteReal)
        .reduce((sum, a) => sum + (a.end - a.at), 0);
      assert.ok(spent < capReal, `request ${i + 1} was sent with ${spent} ms of compute in the last minute (cap ${capReal} ms)`);
    });
    const pauses = answers.slice(1).map((a, i) => a.at - answers[i]!.end);
    assert.ok(
      pauses.some((p) => p >= 300),
      `the client paused for the compute budget: gaps ${pauses.join(', ')} ms`,
    );
    assert.equal(server.violations().total, 0);
  });
});

describe('RATE-* rules on GraphQL, against the scripted platform (the embedded API serves no GraphQL)', function () {
  this.timeout(30_000);
  let peer: MockPlatform | undefined;
  let platform: PlatformClient | undefined;
  afterEach(async () => {
    platform?.close();
    await peer?.close();
    platform = undefined;
    peer = undefined;
  });

  it("RATE-SEC-POINTS-GRAPHQL, RATE-COST-GRAPHQL-MUTATION, RATE-COST-GRAPHQL-QUERY: GraphQL requests never overrun the endpoint's 2,000 points a minute at the spec's costs (mutation 5, query 1), count against the graphql resource and create no content — the client charges each as a REST write (5 of 900 points), more careful than the spec", async () => {
    const clock = new VirtualClock();
    const reset = Math.ceil(clock.now() / 1000) + 3_600;
    peer = await startMockPlatform(clock, () => ({
      status: 200,
      body: { data: {} },
      headers: {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4000',
        'x-ratelimit-used': '1000',
        'x-ratelimit-reset': String(reset),
        'x-ratelimit-resource': 'graphql',
      },
    }));
    platform = new PlatformClient({
      baseUrl: peer.url,
      token: 'ghp_graphqlGRAPHQLgraphql0123456789abcdef',
      env: {},
      clock,
      store: new MemoryBudgetStore(),
      logger: silentLogger,
      proxy: {},
    });
    const mutation = 'mutation { addComment(input: { subjectId: "1", body: "x" }) { clientMutationId } }';
    const query = 'query { viewer { login } }';
    // 450 mutations (2,250 points at the spec's cost) and 50 queries, 100 at a time: more than one minute's 2,000.
    let next = 0;
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        while (next < 500) {
          const i = next;
          next += 1;
          await platform!.request('POST', '/graphql', { body: { query: i % 10 === 9 ? query : mutation } });
        }
      }),
    );
    assert.equal(peer.seen.length, 500);
    const sent = peer.seen
      .map((s) => ({ at: s.at, points: (JSON.parse(s.body) as { query: string }).query.startsWith('mutation') ? 5 : 1 }))
      .sort((a, b) => a.at - b.at);
    let most = 0;
    for (let i = 0, j = 0, sum = 0; i < sent.length; i += 1) {
      sum += sent[i]!.points;
      while (sent[j]!.at <= sent[i]!.at - 60_000) sum -= sent[j++]!.points;
      most = Math.max(most, sum);
    }
    assert.ok(most <= 2_000, `at most 2,000 GraphQL points in any minute, saw ${most}`);
    assert.ok(sent.at(-1)!.at - sent[0]!.at >= 60_000, "the requests beyond a minute's budget waited for the window");
    const { kept } = await platform.budgets();
    assert.equal(kept.resources.graphql?.limit, 5000, 'the graphql resource, as the headers said (RATE-PRI-GRAPHQL-SEPARATE)');
    assert.equal(kept.resources.core, undefined, 'nothing counted against core');
    assert.equal(kept.creationsLastHour, 0, 'GraphQL is not counted as REST content creation');
  });
});
