/* eslint-disable @typescript-eslint/no-explicit-any -- tests edit recorded JSON documents freely */
// The remote engine against the embedded v5 API (devserver/pageanalysis) on 127.0.0.1, serving the recorded
// real run (fixtures/light-page.v5.json) re-stamped per request, and injecting 429/500/400 faults.
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  createPageanalysisClient,
  createRemoteEngine,
  PageanalysisApiError,
  PageanalysisResponseError,
  pageanalysisRetryPolicy,
  runGate,
} from '../../lib/analysis/index.js';
import { definePolicy, NetworkError } from '../../lib/http/index.js';
import { createLogger } from '../../lib/log.js';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { recordedLighthouseResult } from './fixture.js';

const API_KEY = 'pa-key-7f3c9d2e1b';
const OPENID_TOKEN = 'tok-openid-5a8e2c';
const PROFILE_TOKEN = 'tok-profile-9d1f4b';
const fastRetry = definePolicy({ backoff: { initialMs: 5, maxMs: 20, factor: 2, jitter: 0 } }, pageanalysisRetryPolicy);

function raw(
  url: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text ? JSON.parse(text) : undefined });
      });
    });
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}

describe('analysis: the remote engine against the embedded v5 API (recorded real run)', () => {
  let server: PageanalysisServer;
  const base = () => `${server.url}/pageanalysis/v5/runPageanalysis`;

  beforeEach(async () => {
    server = await startPageanalysisServer({
      apiKeys: [API_KEY],
      tokens: { [OPENID_TOKEN]: ['openid', 'profile'], [PROFILE_TOKEN]: ['profile'] },
      analyser: recordedAnalyser(() => recordedLighthouseResult()),
    });
  });
  afterEach(async () => {
    await server.stop();
  });

  it('PAG-EP-RUN / PAG-EP-EMPTY-BODY / PAG-Q-URL / PAG-Q-CATEGORY / PAG-Q-STRATEGY / PAG-Q-LOCALE: one GET with no body and every parameter in the query', async () => {
    const client = createPageanalysisClient({ baseUrl: server.url, apiKey: API_KEY, retry: fastRetry });
    const response = await client.run({
      url: 'http://127.0.0.1:8080/shop?x=1',
      category: ['ACCESSIBILITY', 'PERFORMANCE'],
      strategy: 'MOBILE',
      locale: 'de',
      utm_campaign: 'release-42',
      utm_source: 'gantry',
      captchaToken: 'captcha-ok',
    });
    client.close();
    assert.equal(server.requests.length, 1);
    const [request] = server.requests;
    assert.equal(request.method, 'GET');
    assert.equal(request.path, '/pageanalysis/v5/runPageanalysis');
    assert.equal(request.bodyBytes, 0);
    assert.equal(request.headers['content-length'], undefined);
    assert.equal(request.headers['transfer-encoding'], undefined);
    assert.deepEqual(request.query, [
      ['url', 'http://127.0.0.1:8080/shop?x=1'],
      ['category', 'ACCESSIBILITY'],
      ['category', 'PERFORMANCE'],
      ['strategy', 'MOBILE'],
      ['locale', 'de'],
      ['utm_campaign', 'release-42'],
      ['utm_source', 'gantry'],
      ['captchaToken', 'captcha-ok'],
      ['key', API_KEY],
    ]);
    assert.equal(response.id, 'http://127.0.0.1:8080/shop?x=1');
    assert.deepEqual(Object.keys(response.beaconResult?.categories ?? {}).sort(), ['accessibility', 'performance']);
    assert.equal(response.beaconResult?.configSettings?.formFactor, 'mobile');
  });

  it('PAG-Q-UTM-CAMPAIGN / PAG-Q-UTM-SOURCE / PAG-Q-CAPTCHA-TOKEN: the engine passes client-wide campaign values and leaves absent ones out', async () => {
    const engine = createRemoteEngine({
      baseUrl: server.url,
      apiKey: API_KEY,
      utmCampaign: 'deploy',
      utmSource: 'ci',
      captchaToken: 'solved',
      retry: fastRetry,
    });
    await engine.analyze({ url: 'http://127.0.0.1:8080/', categories: ['seo'], strategy: 'DESKTOP' });
    const query = new Map(server.requests[0].query);
    assert.equal(query.get('utm_campaign'), 'deploy');
    assert.equal(query.get('utm_source'), 'ci');
    assert.equal(query.get('captchaToken'), 'solved');
    assert.equal(query.get('category'), 'SEO');
    const bare = createPageanalysisClient({ baseUrl: server.url, apiKey: API_KEY });
    await bare.run({ url: 'http://127.0.0.1:8080/' });
    bare.close();
    assert.deepEqual(
      server.requests[1].query.map(([name]) => name),
      ['url', 'key'],
    );
  });

  it('PAG-Q-CATEGORY / PAG-Q-STRATEGY defaults: no category runs PERFORMANCE only, no strategy is DESKTOP', async () => {
    const client = createPageanalysisClient({ baseUrl: server.url, apiKey: API_KEY });
    const response = await client.run({ url: 'http://127.0.0.1:8080/' });
    client.close();
    assert.deepEqual(Object.keys(response.beaconResult?.categories ?? {}), ['performance']);
    assert.equal(response.beaconResult?.configSettings?.formFactor, 'desktop');
  });

  it('PAG-Q-URL: without url the API answers 400 in its error shape, and the client never sends a request without one', async () => {
    const answer = await raw(`${base()}?key=${API_KEY}`);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 400);
    assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    assert.equal(answer.body.error.errors[0].location, 'url');
    const client = createPageanalysisClient({ baseUrl: server.url, apiKey: API_KEY });
    await assert.rejects(client.run({ url: '' }), (e: unknown) => e instanceof Error && /needs a url/.test(e.message) && (e as any).exitCode === 2);
    client.close();
    assert.equal(server.requests.length, 1);
  });

  it('PAG-ENUM-CATEGORY / PAG-ENUM-STRATEGY: the API rejects values outside the enums and accepts every listed one', async () => {
    for (const category of ['CATEGORY_UNSPECIFIED', 'ACCESSIBILITY', 'BEST_PRACTICES', 'PERFORMANCE', 'SEO']) {
      const ok = await raw(`${base()}?key=${API_KEY}&url=http://a.test/&category=${category}`);
      assert.equal(ok.status, 200, category);
    }
    for (const strategy of ['STRATEGY_UNSPECIFIED', 'DESKTOP', 'MOBILE']) {
      const ok = await raw(`${base()}?key=${API_KEY}&url=http://a.test/&strategy=${strategy}`);
      assert.equal(ok.status, 200, strategy);
    }
    const unspecified = await raw(`${base()}?key=${API_KEY}&url=http://a.test/&category=CATEGORY_UNSPECIFIED&strategy=STRATEGY_UNSPECIFIED`);
    assert.deepEqual(Object.keys(unspecified.body.beaconResult.categories), ['performance']);
    assert.equal(unspecified.body.beaconResult.configSettings.formFactor, 'desktop');
    const bad = await raw(`${base()}?key=${API_KEY}&url=http://a.test/&category=SPEED`);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /Invalid value at 'category'/);
    assert.equal((await raw(`${base()}?key=${API_KEY}&url=http://a.test/&strategy=TABLET`)).status, 400);
  });

  it('PAG-EP-EMPTY-BODY: the API refuses a GET that carries a body, and other methods', async () => {
    const withBody = await raw(`${base()}?key=${API_KEY}&url=http://a.test/`, {
      body: '{"url":"x"}',
      headers: { 'content-type': 'application/json', 'content-length': '11' },
    });
    assert.equal(withBody.status, 400);
    assert.match(withBody.body.error.message, /must be empty/);
    const post = await raw(`${base()}?key=${API_KEY}&url=http://a.test/`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET');
  });

  it('PAG-AUTH-SCOPE-OPENID: a bearer token with scope openid is accepted; without openid the API says 403 and the client surfaces it, token masked', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
    const good = createPageanalysisClient({ baseUrl: server.url, oauthToken: OPENID_TOKEN, logger });
    const response = await good.run({ url: 'http://127.0.0.1:8080/' });
    good.close();
    assert.equal(response.kind, 'pageanalysis#result');
    assert.equal(server.requests[0].headers.authorization, `Bearer ${OPENID_TOKEN}`);
    assert.equal(
      server.requests[0].query.some(([name]) => name === 'key'),
      false,
    );

    const narrow = createPageanalysisClient({ baseUrl: server.url, oauthToken: PROFILE_TOKEN, logger, retry: fastRetry });
    await assert.rejects(narrow.run({ url: 'http://127.0.0.1:8080/' }), (error: unknown) => {
      assert.ok(error instanceof PageanalysisApiError);
      assert.equal(error.status, 403);
      assert.equal(error.apiCode, 403);
      assert.match(error.message, /insufficient authentication scopes: openid is required/);
      assert.doesNotMatch(error.message + String(error.hint), new RegExp(PROFILE_TOKEN));
      return true;
    });
    narrow.close();
    assert.equal(server.requests.length, 2, '403 is not retried');
    assert.doesNotMatch(lines.join('\n'), /tok-/);
  });

  it('an API key is sent as key= and masked in every error message and log line', async () => {
    server.injectFault({ status: 500, times: 10 });
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
    const client = createPageanalysisClient({ baseUrl: server.url, apiKey: API_KEY, logger, retry: definePolicy({ retries: 1 }, fastRetry) });
    const error = await client.run({ url: 'http://127.0.0.1:8080/' }).catch((e: unknown) => e);
    client.close();
    assert.ok(error instanceof PageanalysisApiError);
    assert.match(error.message, /key=\[REDACTED\]/);
    assert.doesNotMatch(error.message, new RegExp(API_KEY));
    assert.ok(lines.length > 0, 'the retry was logged');
    assert.doesNotMatch(lines.join('\n'), new RegExp(API_KEY));
    assert.equal(new Map(server.requests[0].query).get('key'), API_KEY);
  });

  it('retries 429 and then succeeds', async () => {
    server.injectFault({ status: 429, times: 2, retryAfter: 0 });
    const engine = createRemoteEngine({ baseUrl: server.url, apiKey: API_KEY, retry: fastRetry });
    const run = await engine.analyze({ url: 'http://127.0.0.1:8080/', categories: ['performance'], strategy: 'DESKTOP' });
    assert.equal(run.response.beaconResult?.categories?.performance?.score, 1);
    assert.deepEqual(
      server.requests.map((r) => r.status),
      [429, 429, 200],
    );
  });

  it('honours Retry-After on 429: the retry waits the seconds the API asked for', async () => {
    server.injectFault({ status: 429, retryAfter: 1 });
    const client = createPageanalysisClient({ baseUrl: server.url, apiKey: API_KEY, retry: fastRetry });
    const started = Date.now();
    await client.run({ url: 'http://127.0.0.1:8080/' });
    client.close();
    assert.ok(Date.now() - started >= 1000, `waited ${Date.now() - started} ms`);
    assert.deepEqual(
      server.requests.map((r) => r.status),
      [429, 200],
    );
  });

  it('a response slower than the timeout is a timeout error after the retries; an API that is not listening a network error (exit 3)', async () => {
    await server.stop();
    server = await startPageanalysisServer({
      analyser: async (ask) => {
        await new Promise((resolve) => setTimeout(resolve, 800));
        return recordedAnalyser(() => recordedLighthouseResult())(ask);
      },
    });
    const slow = createPageanalysisClient({ baseUrl: server.url, timeoutMs: 200, retry: definePolicy({ retries: 1 }, fastRetry) });
    await assert.rejects(slow.run({ url: 'http://127.0.0.1:8080/' }), (error: unknown) => {
      assert.ok(error instanceof NetworkError);
      assert.equal(error.errorCode, 'ETIMEDOUT');
      assert.equal(error.attempts, 2);
      return true;
    });
    slow.close();
    const { url } = server;
    await server.stop();
    server = await startPageanalysisServer({ analyser: recordedAnalyser(() => recordedLighthouseResult()) });
    const down = createPageanalysisClient({ baseUrl: url, apiKey: API_KEY, retry: definePolicy({ retries: 2 }, fastRetry) });
    await assert.rejects(down.run({ url: 'http://127.0.0.1:8080/' }), (error: unknown) => {
      assert.ok(error instanceof NetworkError);
      assert.equal(error.errorCode, 'ECONNREFUSED');
      assert.equal(error.exitCode, 3);
      assert.equal(error.attempts, 3);
      assert.doesNotMatch(error.message, new RegExp(API_KEY));
      return true;
    });
    down.close();
  });

  it('retries 500 with backoff; when it persists, the API error body is in the message with the attempts', async () => {
    server.injectFault({ status: 500, times: 100 });
    const client = createPageanalysisClient({ baseUrl: server.url, apiKey: API_KEY, retry: definePolicy({ retries: 2 }, fastRetry) });
    const error = await client.run({ url: 'http://127.0.0.1:8080/' }).catch((e: unknown) => e);
    client.close();
    assert.ok(error instanceof PageanalysisApiError);
    assert.equal(error.status, 500);
    assert.equal(error.exitCode, 3);
    assert.match(
      error.message,
      /page analysis API: GET http:\/\/127\.0\.0\.1:\d+\/pageanalysis\/v5\/runPageanalysis\?\S+ answered 500 after 3 attempts: Internal error encountered\. \(backendError\)$/,
    );
    assert.equal(server.requests.length, 3);
  });

  it("the API's 400 error shape {error: {code, message, errors[]}} is surfaced at once, not retried", async () => {
    server.injectFault({ status: 400, message: "Invalid value at 'url' (ftp://x): only http and https" });
    const client = createPageanalysisClient({ baseUrl: server.url, apiKey: API_KEY, retry: fastRetry });
    const error = await client.run({ url: 'http://127.0.0.1:8080/' }).catch((e: unknown) => e);
    client.close();
    assert.ok(error instanceof PageanalysisApiError);
    assert.equal(error.status, 400);
    assert.equal(error.apiCode, 400);
    assert.deepEqual(error.reasons, ['badRequest']);
    assert.match(
      error.message,
      /^page analysis API: GET http:\/\/127\.0\.0\.1:\d+\/pageanalysis\/v5\/runPageanalysis\?url=\S+&key=\[REDACTED\] answered 400: Invalid value at 'url' \(ftp:\/\/x\): only http and https \(badRequest\)$/,
    );
    assert.equal(server.requests.length, 1);
  });

  it('a 200 whose body is not the v5 shape is a clear error naming the field', async () => {
    await server.stop();
    server = await startPageanalysisServer({
      analyser: recordedAnalyser(() => {
        const lhr = recordedLighthouseResult();
        lhr.categories.performance.score = 'excellent';
        return lhr;
      }),
    });
    const client = createPageanalysisClient({ baseUrl: server.url });
    const error = await client.run({ url: 'http://127.0.0.1:8080/' }).catch((e: unknown) => e);
    client.close();
    assert.ok(error instanceof PageanalysisResponseError);
    assert.match(error.message, /\$\.beaconResult\.categories\.performance\.score: expected a finite number, got string "excellent"/);
  });

  it('the default retry policy retries 429 and 5xx, and waits long enough for real analyses (10–60 s)', () => {
    assert.deepEqual([...pageanalysisRetryPolicy.statuses], [429, 500, 502, 503, 504]);
    assert.ok(pageanalysisRetryPolicy.retries >= 3);
    assert.ok(pageanalysisRetryPolicy.budgetMs >= 120_000);
  });

  it('a gate through the api engine: 3 runs aggregated, pass with the recorded scores, fail on an audit limit', async () => {
    const engine = createRemoteEngine({ baseUrl: server.url, apiKey: API_KEY, retry: fastRetry });
    const passed = await runGate({
      urls: ['http://127.0.0.1:8080/'],
      engine,
      thresholds: [
        { kind: 'category', category: 'performance', min: 0.9 },
        { kind: 'category', category: 'seo', min: 90 / 100 },
      ],
    });
    assert.equal(passed.status, 'pass');
    assert.equal(server.requests.length, 3);
    assert.deepEqual(
      server.requests[0].query.filter(([n]) => n === 'category').map(([, v]) => v),
      ['PERFORMANCE', 'SEO'],
    );
    const failed = await runGate({
      urls: ['http://127.0.0.1:8080/'],
      engine,
      runs: 1,
      thresholds: [{ kind: 'audit', audit: 'first-contentful-paint', operator: '<=', value: 1 }],
    });
    assert.equal(failed.status, 'fail');
    assert.equal(failed.checks[0].value, recordedLighthouseResult().audits['first-contentful-paint'].numericValue);
  });
});
