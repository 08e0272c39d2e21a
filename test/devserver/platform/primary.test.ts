// The embedded platform API's primary limits and headers (spec §D, §Limits, §Errors 1), over real sockets.
import assert from 'node:assert/strict';
import { startPlatformServer, type PlatformServer } from '../../../devserver/platform/index.js';
import { call, rate, RATE_HEADERS, sleep } from './helpers.js';

describe('devserver/platform: primary limits and rate-limit headers', function () {
  this.timeout(60_000);
  let server: PlatformServer;
  let token: string;

  beforeEach(async () => {
    server = await startPlatformServer({
      oauthApps: [{ clientId: 'Iv1.dev', clientSecret: 'client-secret' }],
      tokens: [
        { token: 'ghp_alice', kind: 'personal', login: 'alice' },
        { token: 'gho_alice', kind: 'oauth', login: 'alice' },
        { token: 'ghp_big', kind: 'personal', login: 'big', enterprise: true },
      ],
    });
    token = 'ghp_alice';
  });
  afterEach(() => server.stop());

  it('RATE-HDR-LIMIT RATE-HDR-REMAINING RATE-HDR-USED RATE-HDR-RESET RATE-HDR-RESOURCE: the five headers on every answer — 200, 201, 404, 405, 422, 401, search — and used counts up', async () => {
    const before = Math.floor(Date.now() / 1000);
    const answers = [
      await call(server.url, 'GET', '/repos/gantry/demo', { token }),
      await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'pending', context: 'gantry/gate' } }),
      await call(server.url, 'GET', '/repos/gantry/nope', { token }),
      await call(server.url, 'DELETE', '/repos/gantry/demo/statuses/main', { token }),
      await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'nope' } }),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 201, 404, 405, 422],
    );
    answers.forEach((answer, i) => {
      for (const name of RATE_HEADERS) assert.ok(answer.headers[name] !== undefined, `${name} on answer ${i}`);
      const r = rate(answer);
      assert.equal(r.limit, 5000);
      assert.equal(r.used, i + 1);
      assert.equal(r.remaining, 5000 - (i + 1));
      assert.equal(r.resource, 'core');
      assert.ok(r.reset >= before + 3599 && r.reset <= before + 3602, `reset ${r.reset} is an hour after the first request`);
    });
    assert.equal(rate(answers[4]!).reset, rate(answers[0]!).reset, 'one window: the reset does not move');
    const bad = await call(server.url, 'GET', '/repos/gantry/demo', { token: 'ghp_unknown' });
    assert.equal(bad.status, 401);
    assert.deepEqual(
      RATE_HEADERS.filter((name) => bad.headers[name] === undefined),
      [],
    );
    const search = await call(server.url, 'GET', '/search/repositories?q=demo', { token });
    assert.equal(search.status, 200);
    assert.equal(rate(search).resource, 'search');
    assert.equal(rate(search).limit, 30);
    assert.equal(search.body.total_count, 1);
  });

  it('RATE-EP-STATUS: GET /rate_limit reports core, search and graphql and is not counted against the primary limit', async () => {
    await call(server.url, 'GET', '/repos/gantry/demo', { token });
    for (let i = 0; i < 3; i++) {
      const status = await call(server.url, 'GET', '/rate_limit', { token });
      assert.equal(status.status, 200);
      assert.equal(rate(status).used, 1);
      assert.deepEqual(Object.keys(status.body.resources).sort(), ['core', 'graphql', 'search']);
      assert.equal(status.body.resources.core.used, 1);
      assert.equal(status.body.resources.core.remaining, 4999);
      assert.deepEqual(status.body.rate, status.body.resources.core);
    }
  });

  it("RATE-PRI-UNAUTHENTICATED RATE-ERR-PRIMARY: the 61st unauthenticated request of an address gets 403, remaining 0, the reset, GitHub's message, and is counted as a violation", async () => {
    for (let i = 0; i < 60; i++) assert.equal((await call(server.url, 'GET', '/repos/gantry/demo')).status, 200);
    const refused = await call(server.url, 'GET', '/repos/gantry/demo');
    assert.equal(refused.status, 403);
    const r = rate(refused);
    assert.equal(r.remaining, 0);
    assert.equal(r.limit, 60);
    assert.equal(r.used, 60);
    assert.ok(r.reset > Date.now() / 1000);
    assert.match(
      refused.body.message,
      /^API rate limit exceeded for 127\.0\.0\.1\. \(But here's the good news: Authenticated requests get a higher rate limit/,
    );
    assert.match(refused.body.documentation_url, /rate-limits-for-the-rest-api/);
    assert.equal(refused.headers['retry-after'], undefined);
    const report = server.violations();
    assert.equal(report.byKind.primary, 1);
    assert.equal(report.violations[0]!.identity, 'ip:127.0.0.1');
    // An authenticated identity has its own budget.
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo', { token })).status, 200);
  });

  it("RATE-PRI-USER RATE-PRI-USER-ENTERPRISE RATE-PRI-OAUTH-APP-CLIENT-CREDS RATE-PRI-WORKFLOW-TOKEN RATE-IDENTITY-KINDS: each identity gets its budget; a user's tokens share one", async () => {
    const workflow = server.issueToken({ kind: 'workflow', repository: 'gantry/demo' });
    const basic = `Basic ${Buffer.from('Iv1.dev:client-secret').toString('base64')}`;
    assert.equal(rate(await call(server.url, 'GET', '/repos/gantry/demo', { token: 'ghp_alice' })).limit, 5000);
    const oauth = rate(await call(server.url, 'GET', '/repos/gantry/demo', { token: 'gho_alice' }));
    assert.deepEqual([oauth.limit, oauth.used], [5000, 2], "alice's personal and OAuth tokens count against one budget");
    assert.equal(rate(await call(server.url, 'GET', '/repos/gantry/demo', { token: 'ghp_big' })).limit, 15000);
    assert.equal(rate(await call(server.url, 'GET', '/repos/gantry/demo', { token: workflow })).limit, 1000);
    assert.equal(rate(await call(server.url, 'GET', '/repos/gantry/demo', { authorization: basic })).limit, 5000);
    const wrongSecret = await call(server.url, 'GET', '/repos/gantry/demo', { authorization: `Basic ${Buffer.from('Iv1.dev:nope').toString('base64')}` });
    assert.equal(wrongSecret.status, 401);
    // The workflow token reaches its own repository only for writes.
    const elsewhere = await call(server.url, 'POST', '/repos/gantry/site/statuses/main', { token: workflow, body: { state: 'success' } });
    assert.equal(elsewhere.status, 403);
    assert.equal(elsewhere.body.message, 'Resource not accessible by integration');
  });

  it('RATE-PRI-STRICTER-ENDPOINTS: search has its own resource, 30 a minute, refused with remaining 0 while core is untouched', async () => {
    for (let i = 0; i < 30; i++) assert.equal((await call(server.url, 'GET', `/search/issues?q=x${i}`, { token })).status, 200);
    const refused = await call(server.url, 'GET', '/search/issues?q=again', { token });
    assert.equal(refused.status, 403);
    assert.deepEqual([rate(refused).resource, rate(refused).remaining, rate(refused).limit], ['search', 0, 30]);
    assert.ok(rate(refused).reset <= Math.ceil(Date.now() / 1000) + 60);
    const core = await call(server.url, 'GET', '/repos/gantry/demo', { token });
    assert.deepEqual([core.status, rate(core).used], [200, 1]);
    assert.equal(server.violations().violations[0]!.resource, 'search');
  });

  it('RATE-REVOKED-TOKEN-401: a revoked token gets 401 Bad credentials from then on (admin endpoint)', async () => {
    const fresh = server.issueToken({ kind: 'user-to-server', login: 'carol' });
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo', { token: fresh })).status, 200);
    const revoked = await call(server.url, 'POST', '/_gantry/tokens/revoke', { body: { token: fresh } });
    assert.equal(revoked.status, 200);
    assert.ok(!revoked.text.includes(fresh.slice(4)), 'the admin answer does not echo the token');
    const refused = await call(server.url, 'GET', '/repos/gantry/demo', { token: fresh });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.message, 'Bad credentials');
    assert.ok(refused.body.documentation_url);
  });
});

describe('devserver/platform: window scaling', function () {
  this.timeout(30_000);

  it('RATE-ERR-PRIMARY RATE-HDR-RESET: with windowScale 0.001 the hour is 3.6 s; a spent budget is refused until x-ratelimit-reset, then opens a new window; 429 when asked', async () => {
    const server = await startPlatformServer({ windowScale: 0.001, limitStatus: { primary: 429 } });
    try {
      for (let i = 0; i < 60; i++) await call(server.url, 'GET', '/repos/gantry/demo');
      const refused = await call(server.url, 'GET', '/repos/gantry/demo');
      assert.equal(refused.status, 429);
      assert.equal(rate(refused).remaining, 0);
      const reset = rate(refused).reset;
      assert.ok(reset * 1000 - Date.now() <= 5000, 'the reset is within the scaled hour');
      await sleep(Math.max(0, reset * 1000 - Date.now()) + 100);
      const again = await call(server.url, 'GET', '/repos/gantry/demo');
      assert.equal(again.status, 200);
      assert.equal(rate(again).used, 1);
    } finally {
      await server.stop();
    }
  });

  it("the defaults are the spec's: no scaling, an hour, and a bad scale is refused", async () => {
    const { devWindowScale } = await import('../../../devserver/platform/index.js');
    assert.equal(devWindowScale({}), 1);
    assert.equal(devWindowScale({ GANTRY_DEV_PLATFORM_WINDOW_SCALE: '0.01' }), 0.01);
    assert.throws(() => devWindowScale({ GANTRY_DEV_PLATFORM_WINDOW_SCALE: '0' }), /above 0/);
    assert.throws(() => devWindowScale({ GANTRY_DEV_PLATFORM_WINDOW_SCALE: 'fast' }), /above 0/);
    await assert.rejects(startPlatformServer({ windowScale: -1 }), /windowScale/);
  });
});
