import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { inspect } from 'node:util';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpClient, definePolicy, HttpError, NetworkError, parseRetryAfter, ProtocolError, REDACTED, type RetryPolicy } from '../../lib/http/index.js';
import { UsageError } from '../../lib/errors.js';
import { createLogger } from '../../lib/log.js';
import { sendJson, startHttpPeer, type HttpPeer } from '../peers/http.js';
import { makeTestPki, type TestPki } from '../peers/tls.js';

const fast: RetryPolicy = {
  retries: 3,
  statuses: [429, 500, 502, 503, 504],
  errorCodes: ['ECONNRESET', 'ECONNREFUSED'],
  backoff: { initialMs: 5, maxMs: 20, factor: 2, jitter: 0.5 },
  retryAfterMaxMs: 5_000,
  budgetMs: 10_000,
};

describe('HTTP core (lib/http)', () => {
  let peer: HttpPeer;
  before(async () => {
    peer = await startHttpPeer((_req, res) => sendJson(res, 200, {}));
  });
  after(() => peer.close());
  beforeEach(() => {
    peer.requests.length = 0;
  });

  it('a header value with a line break or a control character is a usage error before sending (exit 2), never a network error, and the value is not shown', async () => {
    const token = 'canary-header-token-7a1';
    for (const [value, said] of [
      [`${token}\n`, /contains a line break at position 24 of 24/],
      [`${token}\u0000x`, /contains the control character U\+0000/],
    ] as const) {
      const client = createHttpClient({ baseUrl: peer.url, retry: fast });
      const error = await client.request({ url: '/x', headers: { 'X-Secrets-Token': value } }).catch((e: unknown) => e);
      assert.ok(error instanceof UsageError, String(error));
      assert.equal(error.exitCode, 2);
      assert.equal(error.code, 'INVALID_HEADER_VALUE');
      assert.match(error.message, said);
      assert.match(error.message, /^the x-secrets-token header's value/);
      assert.ok(!`${error.message} ${error.hint}`.includes(token), 'the value is never shown');
      assert.throws(() => createHttpClient({ baseUrl: peer.url, headers: { authorization: `Bearer ${value}` } }), UsageError);
    }
    assert.equal(peer.requests.length, 0, 'nothing was sent');
  });

  it('sends JSON with a gantry User-Agent, resolves paths against the base URL and parses the answer', async () => {
    peer.handle((req, res) => sendJson(res, 201, { echo: JSON.parse(req.body), path: req.url }));
    const client = createHttpClient({ baseUrl: `${peer.url}/v1/`, retry: fast });
    const response = await client.request<{ echo: unknown; path: string }>({
      method: 'POST',
      url: 'kv/a b',
      json: { a: 1 },
      searchParams: { x: [1, 2], y: undefined },
    });
    assert.equal(response.status, 201);
    assert.deepEqual(response.body, { echo: { a: 1 }, path: '/v1/kv/a%20b?x=1&x=2' });
    assert.match(String(peer.requests[0]!.headers['user-agent']), /^gantry\/\d+\.\d+\.\d+/);
    assert.equal(peer.requests[0]!.headers['content-type'], 'application/json');
    client.close();
  });

  it('REG-STATUS-5XX-RETRY SEC-STATUS-500: retries a 5xx the policy names and succeeds', async () => {
    let calls = 0;
    peer.handle((_req, res) => (++calls < 3 ? sendJson(res, 500, { errors: ['boom'] }) : sendJson(res, 200, { ok: true })));
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const response = await client.request({ url: '/x' });
    assert.equal(response.attempts, 3);
    assert.deepEqual(response.body, { ok: true });
    client.close();
  });

  it("REG-STATUS-5XX-RETRY: stops after the policy's retries and reports the attempts and the service errors", async () => {
    peer.handle((_req, res) => sendJson(res, 502, { errors: ['upstream down'] }));
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await assert.rejects(client.request({ url: '/x' }), (error: HttpError) => {
      assert.ok(error instanceof HttpError);
      assert.equal(error.status, 502);
      assert.equal(error.attempts, 4);
      assert.deepEqual(error.errors, ['upstream down']);
      assert.equal(error.exitCode, 3);
      assert.match(error.message, /after 4 attempts: upstream down/);
      return true;
    });
    assert.equal(peer.requests.length, 4);
    client.close();
  });

  it('REG-STATUS-4XX-NO-RETRY: never retries a 4xx the policy does not name', async () => {
    peer.handle((_req, res) => sendJson(res, 400, { errors: ['bad'] }));
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await assert.rejects(client.request({ url: '/x' }), (error: HttpError) => error.status === 400 && error.attempts === 1);
    assert.equal(peer.requests.length, 1);
    client.close();
  });

  it('onRetry is told of each retry before its wait (method, redacted URL, reason, delay, attempt); none when the first attempt succeeds', async () => {
    let calls = 0;
    peer.handle((_req, res) => (++calls < 3 ? sendJson(res, 503, {}) : sendJson(res, 200, {})));
    const notices: Array<{ method: string; url: string; reason: string; delayMs: number; attempt: number }> = [];
    const client = createHttpClient({ baseUrl: peer.url, retry: fast, onRetry: (notice) => notices.push(notice) });
    await client.request({ url: '/flaky?access_token=canary-on-retry' });
    assert.deepEqual(
      notices.map((n) => [n.method, n.reason, n.attempt]),
      [
        ['GET', 'status 503', 1],
        ['GET', 'status 503', 2],
      ],
    );
    assert.ok(
      notices.every((n) => !n.url.includes('canary-on-retry') && n.delayMs >= 0),
      JSON.stringify(notices),
    );
    notices.length = 0;
    await client.request({ url: '/flaky' });
    assert.deepEqual(notices, []);
    client.close();
  });

  it('a status the policy names with reasons is retried only when the error body gives one of them (403 rateLimitExceeded yes, insufficientPermissions no)', async () => {
    const googleError = (reason: string) => ({ error: { code: 403, message: reason, errors: [{ domain: 'usageLimits', reason, message: reason }] } });
    const policy = definePolicy({ reasons: { 403: ['userRateLimitExceeded', 'rateLimitExceeded'] } }, fast);
    let calls = 0;
    peer.handle((_req, res) => (++calls < 3 ? sendJson(res, 403, googleError('userRateLimitExceeded')) : sendJson(res, 200, { ok: true })));
    const client = createHttpClient({ baseUrl: peer.url, retry: policy });
    const response = await client.request<{ ok: boolean }>({ url: '/limited' });
    assert.deepEqual([response.status, response.attempts, calls], [200, 3, 3]);

    calls = 0;
    peer.handle((_req, res) => {
      calls += 1;
      sendJson(res, 403, googleError('insufficientPermissions'));
    });
    const error = await client.request({ url: '/forbidden' }).catch((e: unknown) => e);
    assert.ok(error instanceof HttpError, String(error));
    assert.deepEqual([error.status, error.attempts, calls], [403, 1, 1]);
  });

  it('REG-STATUS-429-LOAD RATE-ERR-SECONDARY-RETRY-AFTER: waits the seconds Retry-After asks for before retrying', async () => {
    const times: number[] = [];
    peer.handle((_req, res) => {
      times.push(Date.now());
      if (times.length === 1) sendJson(res, 429, { errors: ['slow down'] }, { 'retry-after': '1' });
      else sendJson(res, 200, {});
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await client.request({ url: '/x' });
    assert.equal(times.length, 2);
    assert.ok(times[1]! - times[0]! >= 950, `waited ${times[1]! - times[0]!} ms`);
    client.close();
  });

  it('honours Retry-After given as an HTTP date (RFC 9110; the rate-limit rules give only seconds)', async () => {
    const times: number[] = [];
    peer.handle((_req, res) => {
      times.push(Date.now());
      // HTTP dates have one-second resolution: two seconds ahead waits at least one full second.
      if (times.length === 1) sendJson(res, 503, {}, { 'retry-after': new Date(Date.now() + 2000).toUTCString() });
      else sendJson(res, 200, {});
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await client.request({ url: '/x' });
    assert.ok(times[1]! - times[0]! >= 1000, `waited ${times[1]! - times[0]!} ms`);
    client.close();
  });

  it('does not retry when Retry-After asks for longer than the policy allows, and says so', async () => {
    peer.handle((_req, res) => sendJson(res, 429, { errors: ['later'] }, { 'retry-after': '3600' }));
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await assert.rejects(client.request({ url: '/x' }), (error: HttpError) => error.status === 429 && error.attempts === 1);
    client.close();
  });

  it('stops retrying when the total retry budget is spent', async () => {
    peer.handle((_req, res) => sendJson(res, 503, {}));
    const policy = definePolicy({ retries: 10, budgetMs: 120, backoff: { initialMs: 50, maxMs: 50, factor: 1, jitter: 0 }, statusBackoff: {} }, fast);
    const client = createHttpClient({ baseUrl: peer.url, retry: policy });
    const started = Date.now();
    await assert.rejects(client.request({ url: '/x' }), (error: HttpError) => error.attempts === 3);
    assert.ok(Date.now() - started < 1000);
    client.close();
  });

  it('REG-STATUS-503-SHEDDING: uses the gentler schedule a policy gives 503', async () => {
    const times: number[] = [];
    peer.handle((_req, res) => {
      times.push(Date.now());
      sendJson(res, times.length < 2 ? 503 : 200, {});
    });
    const policy = definePolicy({ statusBackoff: { 503: { initialMs: 300, maxMs: 1000, jitter: 0 } } }, fast);
    const client = createHttpClient({ baseUrl: peer.url, retry: policy });
    await client.request({ url: '/x' });
    assert.ok(times[1]! - times[0]! >= 290, `waited ${times[1]! - times[0]!} ms`);
    client.close();
  });

  it('retries a connection reset, then reports a typed NetworkError when the peer keeps resetting', async () => {
    peer.handle((_req, _res, socket) => {
      socket.destroy();
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await assert.rejects(client.request({ url: '/x' }), (error: NetworkError) => {
      assert.ok(error instanceof NetworkError, String(error));
      assert.equal(error.errorCode, 'ECONNRESET');
      assert.equal(error.attempts, 4);
      return true;
    });
    client.close();
  });

  it('reports a refused connection with what to check next', async () => {
    const client = createHttpClient({ baseUrl: 'http://127.0.0.1:1', retry: definePolicy({ retries: 0 }, fast) });
    await assert.rejects(
      client.request({ url: '/x' }),
      (error: NetworkError) => error.errorCode === 'ECONNREFUSED' && /server is running/.test(error.hint ?? ''),
    );
    client.close();
  });

  it("keeps the raw body of a non-JSON error (a proxy's HTML 502)", async () => {
    peer.handle((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: definePolicy({ retries: 0 }, fast) });
    await assert.rejects(client.request({ url: '/x' }), (error: HttpError) => {
      assert.equal(error.errors, undefined);
      assert.match(error.rawBody ?? '', /502 Bad Gateway/);
      assert.match(error.message, /non-JSON body: <html><body><h1>502 Bad Gateway/);
      return true;
    });
    client.close();
  });

  it('SEC-ERR-BODY: surfaces the service errors array and the {error: {message}} shape', async () => {
    peer.handle((req, res) =>
      req.url === '/a'
        ? sendJson(res, 403, { errors: ['permission denied'] })
        : sendJson(res, 400, { error: { code: 400, message: 'Invalid value for url', errors: [] } }),
    );
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await assert.rejects(client.request({ url: '/a' }), (error: HttpError) => error.errors?.[0] === 'permission denied' && /policy/.test(error.hint ?? ''));
    await assert.rejects(client.request({ url: '/b' }), (error: HttpError) => /Invalid value for url/.test(error.message));
    client.close();
  });

  it('a success whose body is not JSON is a ProtocolError, not a crash', async () => {
    peer.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>login page</html>');
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await assert.rejects(
      client.request({ url: '/x' }),
      (error: ProtocolError) => error instanceof ProtocolError && /not JSON \(text\/html\)/.test(error.message),
    );
    client.close();
  });

  it('refuses a buffered body above the limit, naming the address and the limit; a body of exactly the limit is taken', async () => {
    peer.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(req.url === '/over' ? 1001 : 1000));
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const refused = await client.request({ url: '/over', maxBodyBytes: 1000, responseType: 'text' }).catch((error: unknown) => error);
    assert.ok(refused instanceof ProtocolError, String(refused));
    assert.match(refused.message, /^the response from http:\/\/127\.0\.0\.1:\d+\/over is larger than 1000 bytes$/);
    assert.match(refused.hint ?? '', /raise the limit/);
    const exact = await client.request<string>({ url: '/exact', maxBodyBytes: 1000, responseType: 'text' });
    assert.equal(exact.body.length, 1000);
    client.close();
  });

  it('a 300 (no Location, so nothing to follow) is not a success by default; an error body of blank lines is kept as neither body nor text', async () => {
    peer.handle((req, res) => {
      res.writeHead(req.url === '/choices' ? 300 : 404, { 'content-type': 'text/plain' });
      res.end(req.url === '/choices' ? 'pick one' : '  \n\t\n');
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const choices = await client.request({ url: '/choices', responseType: 'text' }).catch((error: unknown) => error);
    assert.ok(choices instanceof HttpError && choices.status === 300, String(choices));
    const blank = await client.request({ url: '/blank' }).catch((error: unknown) => error);
    assert.ok(blank instanceof HttpError && blank.status === 404, String(blank));
    assert.equal(blank.rawBody, undefined);
    assert.equal(blank.body, undefined);
    client.close();
  });

  it('redacts tokens, key= and access_token= from error messages, the kept body and headers (inspect, JSON), and registered secrets from logs', async () => {
    const token = 'canary-token-8f2c1d';
    peer.handle((req, res) => {
      res.setHeader('set-cookie', 'session=cookie-value-77x; HttpOnly');
      sendJson(res, 401, {
        errors: [`token ${String(req.headers['x-secrets-token'])} is not valid`],
        auth: { client_token: 'issued-token-5521' },
        echo: String(req.headers['x-secrets-token']),
      });
    });
    const lines: string[] = [];
    const client = createHttpClient({
      baseUrl: peer.url,
      retry: fast,
      headers: { 'X-Secrets-Token': token },
      logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }),
    });
    await assert.rejects(client.request({ url: '/x?key=apikey123&access_token=tok456&plain=1' }), (error: HttpError) => {
      // Everything the error keeps, as --verbose, a log or a JSON dump would show it.
      const everything = `${error.message} ${error.url} ${JSON.stringify(error.errors)} ${error.hint} ${inspect(error, { depth: 8 })} ${JSON.stringify(error.body)} ${JSON.stringify(error.headers)}`;
      assert.ok(!everything.includes(token), everything);
      assert.ok(!everything.includes('issued-token-5521'), 'a credential-named field of the body');
      assert.ok(!everything.includes('cookie-value-77x'), 'a cookie the server set');
      assert.equal((error.body as { errors: string[] }).errors.length, 1, 'the body is kept, redacted');
      assert.ok(!everything.includes('apikey123'), everything);
      assert.ok(!everything.includes('tok456'), everything);
      assert.match(error.url, /plain=1/);
      assert.ok(everything.includes(REDACTED));
      return true;
    });
    createLogger({ write: (line) => lines.push(line) }).warn(`Authorization: Bearer abc.def.ghi and ${token}`);
    assert.ok(
      lines.every((line) => !line.includes(token) && !line.includes('abc.def.ghi')),
      lines.join('\n'),
    );
    client.close();
  });

  it('never forwards credentials to another origin on a redirect', async () => {
    const other = await startHttpPeer((_req, res) => sendJson(res, 200, { landed: true }));
    peer.handle((_req, res) => {
      res.writeHead(302, { location: `${other.url}/elsewhere` });
      res.end();
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast, headers: { Authorization: 'Bearer registry-only-token' } });
    const response = await client.request<{ landed: boolean }>({ url: '/x', headers: { 'X-Secrets-Token': 'also-secret-value' } });
    assert.equal(response.body.landed, true);
    assert.equal(response.redirectUrls.length, 1);
    assert.equal(peer.requests[0]!.headers.authorization, 'Bearer registry-only-token');
    assert.equal(other.requests[0]!.headers.authorization, undefined);
    assert.equal(other.requests[0]!.headers['x-secrets-token'], undefined);
    await other.close();
    client.close();
  });

  it("the client's response timeout applies to every request; a request's own timeouts replace it", async () => {
    peer.handle((_req, res) => {
      setTimeout(() => sendJson(res, 200, { late: true }), 300);
    });
    const noRetry = { ...fast, retries: 0 };
    const strict = createHttpClient({ baseUrl: peer.url, retry: noRetry, timeouts: { response: 100 } });
    const failed = await strict.request({ url: '/slow' }).catch((error: unknown) => error);
    assert.ok(failed instanceof NetworkError, String(failed));
    assert.equal(failed.errorCode, 'ETIMEDOUT');
    const relaxed = await strict.request<{ late: boolean }>({ url: '/slow', timeouts: { response: 2_000 } });
    assert.equal(relaxed.body.late, true);
    strict.close();
    const lenient = createHttpClient({ baseUrl: peer.url, retry: noRetry, timeouts: { response: 2_000 } });
    assert.equal((await lenient.request<{ late: boolean }>({ url: '/slow' })).body.late, true);
    const overridden = await lenient.request({ url: '/slow', timeouts: { response: 100 } }).catch((error: unknown) => error);
    assert.ok(overridden instanceof NetworkError && overridden.errorCode === 'ETIMEDOUT', String(overridden));
    lenient.close();
  });

  it("the client's total timeout bounds a buffered request; a stream without its own total has none", async () => {
    peer.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part ');
      setTimeout(() => res.end('second part'), 300);
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: { ...fast, retries: 0 }, timeouts: { total: 100 } });
    const failed = await client.request({ url: '/dribble', responseType: 'text' }).catch((error: unknown) => error);
    assert.ok(failed instanceof NetworkError && failed.errorCode === 'ETIMEDOUT', String(failed));
    const streamed = await client.stream({ url: '/dribble' });
    let text = '';
    for await (const chunk of streamed.body) text += String(chunk);
    assert.equal(text, 'first part second part');
    client.close();
  });

  it("a caller's signal ends a request waiting for headers and a body being streamed, and is let go of after a request", async () => {
    peer.handle((req, res) => {
      if (req.url === '/quick') return sendJson(res, 200, { quick: true });
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (req.url === '/dribble') res.write('first part ');
      // Never finishes: only the caller's signal ends these.
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const kept = new AbortController();
    await client.request({ url: '/quick', signal: kept.signal });
    assert.equal(EventEmitter.getEventListeners(kept.signal, 'abort').length, 0);

    const waiting = new AbortController();
    const started = Date.now();
    setTimeout(() => waiting.abort(new Error('the caller gave up')), 100);
    const failed = await client.request({ url: '/hang', signal: waiting.signal }).catch((error: unknown) => error);
    assert.ok(failed instanceof Error && /the caller gave up/.test(failed.message), String(failed));
    assert.ok(Date.now() - started < 2_000);

    const streaming = new AbortController();
    const opened = await client.stream({ url: '/dribble', signal: streaming.signal });
    const chunks: string[] = [];
    const reading = (async () => {
      for await (const chunk of opened.body) chunks.push(String(chunk));
    })();
    await new Promise((resolve) => setTimeout(resolve, 50));
    streaming.abort(new Error('stop streaming'));
    await assert.rejects(reading, /stop streaming/);
    assert.deepEqual(chunks, ['first part ']);
    client.close();
  });

  it('followRedirects: false hands the redirect itself back', async () => {
    peer.handle((req, res) => {
      if (req.url === '/from') {
        res.writeHead(302, { location: '/to' });
        res.end();
      } else sendJson(res, 200, { landed: true });
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const kept = await client.request({ url: '/from', followRedirects: false, accept: [302] });
    assert.equal(kept.status, 302);
    assert.equal(kept.headers.location, '/to');
    const followed = await client.request<{ landed: boolean }>({ url: '/from' });
    assert.equal(followed.body.landed, true);
    client.close();
  });

  it('a 303 turns a POST into a GET without its body; 307 keeps both; a redirect loop ends in a ProtocolError', async () => {
    peer.handle((req, res) => {
      if (req.url === '/see-other') {
        res.writeHead(303, { location: '/landing' });
        res.end();
      } else if (req.url === '/temporary') {
        res.writeHead(307, { location: '/landing' });
        res.end();
      } else if (req.url?.startsWith('/loop')) {
        res.writeHead(302, { location: `/loop${Number(req.url.slice(5) || 0) + 1}` });
        res.end();
      } else sendJson(res, 200, { method: req.method, body: req.body });
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast, maxRedirects: 3 });
    const seeOther = await client.request<{ method: string; body: string }>({ method: 'POST', url: '/see-other', json: { a: 1 } });
    assert.deepEqual(seeOther.body, { method: 'GET', body: '' });
    assert.deepEqual(seeOther.redirectUrls, [`${peer.url}/landing`]);
    const temporary = await client.request<{ method: string; body: string }>({ method: 'POST', url: '/temporary', json: { a: 1 } });
    assert.deepEqual(temporary.body, { method: 'POST', body: '{"a":1}' });
    peer.requests.length = 0;
    const loop = await client.request({ url: '/loop' }).catch((error: unknown) => error);
    assert.ok(loop instanceof ProtocolError && /redirected more than 3 times/.test(loop.message), String(loop));
    assert.equal(peer.requests.length, 4);
    client.close();
  });

  it('decodes gzip, deflate and br bodies, and sends credentials in the URL as Basic auth, never in the request line', async () => {
    const zlib = await import('node:zlib');
    const json = Buffer.from(JSON.stringify({ packed: true }));
    peer.handle((req, res) => {
      const encoding = req.url!.slice(1);
      const body =
        encoding === 'gzip' ? zlib.gzipSync(json) : encoding === 'deflate' ? zlib.deflateSync(json) : encoding === 'br' ? zlib.brotliCompressSync(json) : json;
      res.writeHead(200, { 'content-type': 'application/json', ...(encoding === 'plain' ? {} : { 'content-encoding': encoding }) });
      res.end(body);
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    for (const encoding of ['gzip', 'deflate', 'br', 'plain']) {
      assert.deepEqual((await client.request({ url: `/${encoding}` })).body, { packed: true }, encoding);
    }
    assert.match(String(peer.requests[0]!.headers['accept-encoding']), /gzip/);
    peer.requests.length = 0;
    const withUser = new URL(`${peer.url}/plain`);
    withUser.username = 'deploy';
    withUser.password = 'url-pass word';
    await client.request({ url: withUser });
    assert.equal(peer.requests[0]!.url, '/plain');
    assert.equal(peer.requests[0]!.headers.authorization, `Basic ${Buffer.from('deploy:url-pass word').toString('base64')}`);
    client.close();
  });

  it('streams a download to disk with progress, writing under a temporary name and renaming into place', async () => {
    const payload = Buffer.alloc(3 * 1024 * 1024, 7);
    peer.handle((_req, res) => {
      res.writeHead(200, { 'content-length': String(payload.length) });
      res.end(payload);
    });
    const dir = await mkdtemp(join(tmpdir(), 'gantry-http-'));
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const seen: number[] = [];
    const result = await client.download({ url: '/file', path: join(dir, 'out.bin'), onProgress: (p) => seen.push(p.transferred) });
    assert.equal(result.bytes, payload.length);
    assert.equal(seen.at(-1), payload.length);
    assert.ok(seen.length > 1);
    assert.deepEqual(await readFile(join(dir, 'out.bin')), payload);
    assert.deepEqual(await readdir(dir), ['out.bin']);
    client.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a download above its limit fails and leaves the previous file untouched', async () => {
    peer.handle((_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(200_000));
    });
    const dir = await mkdtemp(join(tmpdir(), 'gantry-http-'));
    await writeFile(join(dir, 'out.bin'), 'previous');
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    await assert.rejects(client.download({ url: '/file', path: join(dir, 'out.bin'), maxBytes: 50_000 }), ProtocolError);
    assert.equal(await readFile(join(dir, 'out.bin'), 'utf8'), 'previous');
    assert.deepEqual(await readdir(dir), ['out.bin']);
    client.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a streamed body that breaks off fails as a typed NetworkError that keeps no credentials; one of exactly maxBytes is handed over whole, one past it fails as a ProtocolError', async () => {
    const token = 'canary-stream-token-51c';
    peer.handle((req, res) => {
      if (req.url === '/endless') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write(Buffer.alloc(64 * 1024, 1));
        const more = setInterval(() => res.write(Buffer.alloc(64 * 1024, 2)), 5);
        res.on('close', () => clearInterval(more));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(100_000, 1), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast, headers: { authorization: `Bearer ${token}` } });
    const broken = await client.stream({ url: '/cut' });
    let received = 0;
    const failed = await (async () => {
      for await (const chunk of broken.body) received += (chunk as Buffer).length;
    })().catch((error: unknown) => error);
    assert.ok(failed instanceof NetworkError, String(failed));
    assert.equal(failed.attempts, 1);
    assert.equal(received, 100_000, 'what came before the break is handed over');
    assert.ok(!inspect(failed, { depth: 8 }).includes(token));

    const exact = await client.stream({ url: '/cut', maxBytes: 100_000 });
    received = 0;
    await (async () => {
      for await (const chunk of exact.body) received += (chunk as Buffer).length;
    })().catch(() => undefined);
    assert.equal(received, 100_000, 'a body of exactly maxBytes is handed over whole');

    const capped = await client.stream({ url: '/endless', maxBytes: 300_000 });
    received = 0;
    const refused = await (async () => {
      for await (const chunk of capped.body) received += (chunk as Buffer).length;
    })().catch((error: unknown) => error);
    assert.ok(refused instanceof ProtocolError && /larger than the 300000 bytes allowed/.test(refused.message), String(refused));
    assert.ok(received <= 300_000, `${received} bytes handed over`);
    client.close();
  });

  it('a streamed body is read no faster than its reader takes it: a paused reader holds the transfer back', async () => {
    const payload = 64 * 1024 * 1024;
    let written = 0;
    peer.handle((_req, res) => {
      res.writeHead(200, { 'content-length': String(payload) });
      const piece = Buffer.alloc(256 * 1024, 3);
      const pump = () => {
        while (written < payload) {
          written += piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const opened = await client.stream({ url: '/big' });
    let received = 0;
    let paused = false;
    opened.body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received >= 1024 * 1024 && !paused) {
        paused = true;
        opened.body.pause();
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.ok(written < payload / 2, `the server got ${written} of ${payload} bytes out while the reader was paused`);
    assert.ok(opened.body.readableLength < 4 * 1024 * 1024, `${opened.body.readableLength} bytes held`);
    const rest = new Promise((resolve) => opened.body.once('end', resolve));
    opened.body.resume();
    await rest;
    assert.equal(received, payload);
    client.close();
  });

  it('streams a request body as it is read, and never sends a streamed body twice (no retry, a 307 handed back)', async () => {
    const { Readable } = await import('node:stream');
    const chunks = () =>
      Readable.from(
        (function* () {
          for (let i = 0; i < 64; i += 1) yield Buffer.alloc(16 * 1024, i);
        })(),
      );
    let failNext = false;
    peer.handle((req, res) => {
      if (req.url === '/again') return void res.writeHead(307, { location: '/upload' }).end();
      if (failNext) {
        failNext = false;
        return sendJson(res, 503, { errors: ['busy'] });
      }
      sendJson(res, 200, { bytes: Buffer.byteLength(req.body, 'latin1'), chunked: req.headers['transfer-encoding'] === 'chunked' });
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const sent = await client.request<{ bytes: number; chunked: boolean }>({
      method: 'PUT',
      url: '/upload',
      body: chunks(),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.deepEqual(sent.body, { bytes: 1024 * 1024, chunked: true });
    peer.requests.length = 0;
    failNext = true;
    const busy = await client.request({ method: 'PUT', url: '/upload', body: chunks() }).catch((error: unknown) => error);
    assert.ok(busy instanceof HttpError && busy.status === 503 && busy.attempts === 1, String(busy));
    assert.equal(peer.requests.length, 1, 'a 503 the policy retries is not retried with a streamed body');
    const redirected = await client.request({ method: 'PUT', url: '/again', body: chunks() }).catch((error: unknown) => error);
    assert.ok(redirected instanceof HttpError && redirected.status === 307, String(redirected));
    client.close();
  });

  it('LAYER-HTTP: an async iterable body is streamed like a stream, each chunk written before the next is asked for (one buffer refilled throughout arrives intact), and never sent twice', async () => {
    const { createHash } = await import('node:crypto');
    const expected = createHash('md5');
    for (let i = 0; i < 64; i += 1) expected.update(Buffer.alloc(16 * 1024, i));
    // The same buffer, refilled for every chunk: a chunk still queued when the next was asked for would arrive overwritten.
    const refilled = async function* () {
      const buffer = Buffer.alloc(16 * 1024);
      for (let i = 0; i < 64; i += 1) yield buffer.fill(i);
    };
    let failNext = false;
    peer.handle((req, res) => {
      if (failNext) {
        failNext = false;
        return sendJson(res, 503, { errors: ['busy'] });
      }
      sendJson(res, 200, { md5: createHash('md5').update(Buffer.from(req.body, 'latin1')).digest('hex') });
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const sent = await client.request<{ md5: string }>({ method: 'PUT', url: '/upload', body: refilled(), headers: { 'content-length': String(1024 * 1024) } });
    assert.equal(sent.body.md5, expected.digest('hex'));
    peer.requests.length = 0;
    failNext = true;
    const busy = await client.request({ method: 'PUT', url: '/upload', body: refilled() }).catch((error: unknown) => error);
    assert.ok(busy instanceof HttpError && busy.status === 503 && busy.attempts === 1, String(busy));
    assert.equal(peer.requests.length, 1, 'a 503 the policy retries is not retried with an iterable body');
    client.close();
  });

  it('sends custom methods such as LIST', async () => {
    // Node's own HTTP parser rejects LIST, so this checks the request line the client writes on the wire.
    const net = await import('node:net');
    const server = net.createServer((socket) =>
      socket.once('data', (chunk) => {
        socket.end(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${JSON.stringify({ line: chunk.toString().split('\r\n')[0] }).length}\r\n\r\n${JSON.stringify({ line: chunk.toString().split('\r\n')[0] })}`,
        );
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const client = createHttpClient({ baseUrl: `http://127.0.0.1:${port}`, retry: fast });
    const response = await client.request<{ line: string }>({ method: 'LIST', url: '/v1/secret/metadata/' });
    assert.equal(response.body.line, 'LIST /v1/secret/metadata/ HTTP/1.1');
    client.close();
    server.close();
  });

  it('pages a list by its Link rel="next" header (got\'s default paging), each page with the core\'s retries, up to countLimit', async () => {
    let failed = false;
    peer.handle((req, res) => {
      const page = Number(new URL(req.url!, peer.url).searchParams.get('page') ?? '1');
      if (page === 2 && !failed) {
        failed = true;
        return sendJson(res, 503, {});
      }
      const link = page < 3 ? { link: `</items?page=${page + 1}>; rel="next", </items?page=3>; rel="last"` } : {};
      sendJson(res, 200, [`item-${page}a`, `item-${page}b`], link);
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    const items: string[] = [];
    for await (const item of client.paginate<string>({ url: '/items', transform: (response) => response.body as string[] })) items.push(item);
    assert.deepEqual(items, ['item-1a', 'item-1b', 'item-2a', 'item-2b', 'item-3a', 'item-3b']);
    assert.equal(peer.requests.length, 4, 'three pages, the second retried once');
    peer.requests.length = 0;
    const some: string[] = [];
    for await (const item of client.paginate<string>({ url: '/items', countLimit: 3, transform: (response) => response.body as string[] })) some.push(item);
    assert.deepEqual(some, ['item-1a', 'item-1b', 'item-2a']);
    assert.equal(peer.requests.length, 2);
    client.close();
  });

  it("a malformed Link header (an empty list, no <…>, a next URL that does not parse) is a ProtocolError, not got's bare Error (found by PROP-HTTP-HEADERS)", async () => {
    peer.handle((req, res) => {
      const page = new URL(req.url!, peer.url).searchParams.get('page');
      sendJson(res, 200, ['x'], { link: page === 'bad-url' ? '<http://[::1>; rel="next"' : 'items?page=2; rel="next"' });
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast });
    for (const url of ['/items', '/items?page=bad-url']) {
      await assert.rejects(
        (async () => {
          for await (const item of client.paginate<string>({ url, transform: (response) => response.body as string[] })) void item;
        })(),
        (error: unknown) => error instanceof ProtocolError && /Link header of .* is malformed/.test(error.message),
      );
    }
    client.close();
  });

  it('parseRetryAfter keeps a delta-seconds too long for a number finite (found by PROP-HTTP-HEADERS: 400 digits were Infinity)', () => {
    assert.equal(parseRetryAfter('9'.repeat(400)), Number.MAX_SAFE_INTEGER);
    assert.equal(parseRetryAfter('120'), 120_000);
  });

  describe('TLS', () => {
    let pki: TestPki;
    let tlsPeer: HttpPeer;
    before(async () => {
      pki = makeTestPki();
      tlsPeer = await startHttpPeer((_req, res) => sendJson(res, 200, { ok: true }), { tls: { cert: pki.cert, key: pki.key, ca: pki.ca } });
    });
    after(async () => {
      await tlsPeer.close();
      pki.remove();
    });

    it('refuses a server whose CA is not trusted, with a hint about the CA bundle', async () => {
      const client = createHttpClient({ baseUrl: tlsPeer.url, retry: fast });
      await assert.rejects(client.request({ url: '/x' }), (error: NetworkError) => error instanceof NetworkError && /CA bundle/.test(error.hint ?? ''));
      client.close();
    });

    it('SEC-AUTH-TLS: an https address of a plain-http server fails at once with a hint to use http://', async () => {
      const plain = await startHttpPeer((_req, res) => sendJson(res, 200, { ok: true }));
      const address = plain.url.replace(/^http:/, 'https:');
      const client = createHttpClient({ baseUrl: address, retry: fast });
      const { host } = new URL(plain.url);
      await assert.rejects(client.request({ url: '/x' }), (error: NetworkError) => {
        assert.ok(error instanceof NetworkError, String(error));
        assert.equal(error.diagnosis, 'plain-http-server');
        assert.equal(error.hint, `the server at ${host} speaks plain http, not TLS: use http://${host}, or serve TLS there`);
        return true;
      });
      client.close();
      await plain.close();
    });

    it('trusts a CA given as a file and as a folder', async () => {
      for (const tls of [{ caFile: pki.caFile }, { caPath: pki.dir }]) {
        const client = createHttpClient({ baseUrl: tlsPeer.url, retry: fast, tls });
        assert.equal((await client.request({ url: '/x' })).status, 200);
        client.close();
      }
    });

    it('trusts a c_rehash-style CA folder (<hash>.0 links, a README, a dangling link) and refuses a folder with no certificate', async () => {
      const hashed = join(pki.dir, 'hashed');
      await mkdir(hashed);
      await symlink(pki.caFile, join(hashed, '5f2a9c1e.0'));
      await symlink(join(pki.dir, 'no-such-file'), join(hashed, '0badc0de.0'));
      await writeFile(join(hashed, 'README'), 'the CAs this service trusts\n');
      const client = createHttpClient({ baseUrl: tlsPeer.url, retry: fast, tls: { caPath: hashed } });
      assert.equal((await client.request({ url: '/x' })).status, 200);
      client.close();
      const empty = join(pki.dir, 'no-certificates');
      await mkdir(empty);
      await writeFile(join(empty, 'README'), 'nothing here\n');
      assert.throws(
        () => createHttpClient({ tls: { caPath: empty } }),
        (error: unknown) => error instanceof UsageError && /holds no PEM certificate/.test(error.message),
      );
    });

    it('checks the server name it is told to, and skip-verify works but warns', async () => {
      const wrongName = createHttpClient({ baseUrl: tlsPeer.url, retry: fast, tls: { caFile: pki.caFile, serverName: 'not-this-host.example' } });
      await assert.rejects(wrongName.request({ url: '/x' }), NetworkError);
      wrongName.close();
      const warnings: string[] = [];
      const insecure = createHttpClient({
        baseUrl: tlsPeer.url,
        retry: fast,
        tls: { skipVerify: true },
        logger: createLogger({ write: (l) => warnings.push(l) }),
      });
      assert.equal((await insecure.request({ url: '/x' })).status, 200);
      assert.match(warnings.join('\n'), /verification is disabled/);
      insecure.close();
    });

    it('presents a client certificate when the server requires one', async () => {
      const mutual = await startHttpPeer((_req, res) => sendJson(res, 200, { ok: true }), {
        tls: { cert: pki.cert, key: pki.key, ca: pki.ca, requestCert: true },
      });
      const anonymous = createHttpClient({ baseUrl: mutual.url, retry: definePolicy({ retries: 0 }, fast), tls: { caFile: pki.caFile } });
      await assert.rejects(anonymous.request({ url: '/x' }));
      anonymous.close();
      const client = createHttpClient({
        baseUrl: mutual.url,
        retry: fast,
        tls: { caFile: pki.caFile, certFile: pki.clientCertFile, keyFile: pki.clientKeyFile },
      });
      assert.equal((await client.request({ url: '/x' })).status, 200);
      client.close();
      await mutual.close();
    });
  });
});

describe('redaction (lib/redact)', () => {
  it('masks a key= value without swallowing the prose around the URL', async () => {
    const { redact, redactUrl } = await import('../../lib/redact.js');
    assert.equal(
      redact('failed (GET http://h/x?key=abc123) [see http://h/y?a=1&access_token=zz9]'),
      `failed (GET http://h/x?key=${REDACTED}) [see http://h/y?a=1&access_token=${REDACTED}]`,
    );
    const once = redactUrl('http://h/x?key=abc123&b=2');
    assert.equal(redact(redact(once)), once, 'redaction is idempotent');
  });
});
