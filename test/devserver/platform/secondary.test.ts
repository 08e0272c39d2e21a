// The embedded platform API's secondary limits (spec §Limits "Secondary limits", §Errors 2): concurrency, points per
// endpoint per minute, content creation per minute and per hour — each refusal GitHub's, each one counted.
import assert from 'node:assert/strict';
import { startPlatformServer, type PlatformServer } from '../../../devserver/platform/index.js';
import { call, rate, RATE_HEADERS, sleep } from './helpers.js';

const SECONDARY =
  /^You have exceeded a secondary rate limit\. Please wait a few minutes before you try again\. If you reach out to Platform Support for help, please include the request ID [0-9A-F]+\.$/;
const token = 'ghp_secondary';

describe('devserver/platform: secondary limits', function () {
  this.timeout(60_000);
  let server: PlatformServer;
  afterEach(() => server?.stop());

  it('RATE-SEC-CONCURRENCY RATE-ERR-SECONDARY: 110 requests at once of one identity — 100 are served, 10 get 403 naming the secondary limit, without retry-after, and 10 violations are counted', async () => {
    server = await startPlatformServer({ tokens: [{ token, kind: 'personal', login: 'dev' }], latencyMs: 400 });
    const answers = await Promise.all(Array.from({ length: 110 }, () => call(server.url, 'GET', '/repos/gantry/demo', { token })));
    const refused = answers.filter((a) => a.status !== 200);
    assert.equal(refused.length, 10);
    for (const answer of refused) {
      assert.equal(answer.status, 403);
      assert.match(answer.body.message, SECONDARY);
      assert.match(answer.body.documentation_url, /secondary-rate-limits/);
      assert.equal(answer.headers['retry-after'], undefined);
      assert.notEqual(rate(answer).remaining, 0, 'remaining is not 0: the client backs off at least a minute (RATE-ERR-SECONDARY-BACKOFF)');
      assert.deepEqual(
        RATE_HEADERS.filter((name) => answer.headers[name] === undefined),
        [],
      );
    }
    const report = server.violations();
    assert.deepEqual([report.total, report.byKind.concurrency], [10, 10]);
    assert.equal(report.violations[0]!.endpoint, 'GET /repos/{owner}/{repo}');
    assert.ok(server.stats().maxInFlight['user:dev']! > 100, 'the stats saw more than 100 in flight');
    // Another identity is not held by dev's load.
    const other = server.issueToken({ kind: 'personal', login: 'other' });
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo', { token: other })).status, 200);
  });

  it('RATE-SEC-POINTS-REST RATE-COST-REST-READ RATE-HDR-RETRY-AFTER: 900 GETs a minute per endpoint (method + path template); the 901st gets 403 with retry-after; another endpoint has its own 900', async () => {
    server = await startPlatformServer({ tokens: [{ token, kind: 'personal', login: 'dev' }] });
    for (let i = 0; i < 900; i++) {
      const answer = await call(server.url, 'GET', i % 2 ? '/repos/gantry/demo' : '/repos/gantry/site', { token });
      assert.equal(answer.status, 200, `request ${i}`);
    }
    const refused = await call(server.url, 'GET', '/repos/gantry/demo', { token });
    assert.equal(refused.status, 403);
    assert.match(refused.body.message, SECONDARY);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo/issues', { token })).status, 200);
    assert.equal(server.violations().byKind.points, 1);
  });

  it('RATE-SEC-POINTS-REST RATE-COST-REST-WRITE: a POST costs 5 points, so 180 writes to one endpoint fill its minute (creation limits raised to see points alone)', async () => {
    server = await startPlatformServer({ tokens: [{ token, kind: 'personal', login: 'dev' }], limits: { creationPerMinute: 10_000, creationPerHour: 10_000 } });
    for (let i = 0; i < 180; i++) assert.equal((await call(server.url, 'POST', '/repos/gantry/demo/issues', { token, body: { title: `t${i}` } })).status, 201);
    const refused = await call(server.url, 'POST', '/repos/gantry/site/issues', { token, body: { title: 'one more' } });
    assert.equal(refused.status, 403);
    assert.match(refused.body.message, SECONDARY);
    assert.deepEqual(server.violations().byKind.points, 1);
  });

  it('RATE-SEC-CONTENT-CREATION: 80 creations a minute across endpoints; the 81st is refused with retry-after and counted; after the (scaled) minute it goes through', async () => {
    server = await startPlatformServer({ tokens: [{ token, kind: 'personal', login: 'dev' }], windowScale: 0.05 }); // a minute of 3 s
    for (let i = 0; i < 80; i++) {
      const answer =
        i % 2
          ? await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success', context: `c${i}` } })
          : await call(server.url, 'POST', '/repos/gantry/demo/issues', { token, body: { title: `issue ${i}` } });
      assert.equal(answer.status, 201, `creation ${i}`);
    }
    const refused = await call(server.url, 'POST', '/repos/gantry/demo/issues/1/comments', { token, body: { body: 'the 81st' } });
    assert.equal(refused.status, 403);
    assert.match(refused.body.message, SECONDARY);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 3, `retry-after ${retryAfter} within the scaled minute`);
    assert.equal(server.violations().byKind['creation-minute'], 1);
    // A read is no creation.
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo/issues/1/comments', { token })).status, 200);
    await sleep(retryAfter * 1000 + 50);
    assert.equal((await call(server.url, 'POST', '/repos/gantry/demo/issues/1/comments', { token, body: { body: 'later' } })).status, 201);
  });

  it('RATE-SEC-CONTENT-CREATION: at most 500 creations an hour (the minute limit raised to see the hour alone); 429 when the server is set to answer so', async () => {
    server = await startPlatformServer({
      tokens: [{ token, kind: 'personal', login: 'dev' }],
      limits: { creationPerMinute: 10_000, pointsPerMinute: 100_000 },
      limitStatus: { secondary: 429 },
    });
    for (let i = 0; i < 500; i++)
      assert.equal(
        (await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'pending', context: `c${i % 7}` } })).status,
        201,
      );
    const refused = await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success' } });
    assert.equal(refused.status, 429);
    assert.match(refused.body.message, SECONDARY);
    assert.ok(Number(refused.headers['retry-after']) > 60, 'the hour, not the minute');
    assert.equal(server.violations().byKind['creation-hour'], 1);
  });

  it('GET /_gantry/violations lists them, DELETE forgets them, POST /_gantry/reset opens fresh windows', async () => {
    server = await startPlatformServer({});
    for (let i = 0; i < 62; i++) await call(server.url, 'GET', '/repos/gantry/demo');
    const listed = await call(server.url, 'GET', '/_gantry/violations');
    assert.deepEqual([listed.body.total, listed.body.byKind.primary, listed.body.violations.length], [2, 2, 2]);
    assert.equal(listed.headers['x-ratelimit-limit'], undefined, 'admin calls are not the platform and are not limited');
    assert.equal((await call(server.url, 'DELETE', '/_gantry/violations')).body.total, 0);
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo')).status, 403);
    assert.equal((await call(server.url, 'POST', '/_gantry/reset')).status, 200);
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo')).status, 200);
    assert.equal(server.violations().total, 0);
  });
});
