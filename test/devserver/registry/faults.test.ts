// Fault injection of the embedded registry: what misbehaving registries and proxies do, on demand.
import assert from 'node:assert/strict';
import http from 'node:http';
import { startRegistryServer, type RegistryServer } from '../../../devserver/registry/index.js';
import { get, tempDir, writeVersion } from './helpers.js';

/** A raw request that reports how the connection ended instead of throwing. */
function rawGet(url: string): Promise<{ status?: number; headers?: http.IncomingHttpHeaders; body: Buffer; error?: NodeJS.ErrnoException; complete: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const request = http.get(url, { agent: false }, (response) => {
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks), complete: response.complete }));
      response.on('error', (error) => resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks), error, complete: false }));
      response.on('aborted', () => resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks), complete: false }));
    });
    request.on('error', (error) => resolve({ body: Buffer.concat(chunks), error, complete: false }));
  });
}

describe('devserver/registry: fault injection', function () {
  let temp: { dir: string; remove(): Promise<void> };
  let server: RegistryServer;
  let base: string;
  const versions = '/v1/modules/acme/app/aws/versions';

  before(async () => {
    temp = await tempDir('faults');
    await writeVersion(temp.dir, 'acme/app/aws', '1.0.0', { 'main.tf': `output "padding" { value = "${'x'.repeat(20000)}" }\n` });
    await writeVersion(temp.dir, 'acme/app/aws', '1.1.0', { 'main.tf': 'output "x" { value = 1 }\n' });
    server = await startRegistryServer({ dir: temp.dir });
    base = server.url;
  });
  afterEach(() => {
    server.setFaults([]);
    server.setLatency(0);
    server.clearRequests();
  });
  after(async () => {
    await server?.stop();
    await temp?.remove();
  });

  it('REG-STATUS-429-LOAD: 429 with Retry-After and {errors}, for the next 2 matching requests only', async () => {
    server.setFaults([{ path: '/v1/modules/*/*/*/versions', kind: 'status', status: 429, retryAfter: 2, times: 2 }]);
    for (let i = 0; i < 2; i++) {
      const response = await get(base + versions);
      assert.equal(response.status, 429);
      assert.equal(response.headers.get('retry-after'), '2');
      assert.ok(Array.isArray(response.body.errors) && typeof response.body.errors[0] === 'string');
    }
    assert.equal((await get(base + versions)).status, 200, 'the third request gets through');
    assert.deepEqual(server.faults(), [], 'a spent fault retires');
  });

  it('REG-STATUS-5XX-RETRY, REG-STATUS-503-SHEDDING, REG-ERR-BODY: 500 and 503 answers carry {errors}', async () => {
    server.setFaults([
      { path: versions, kind: 'status', status: 500, times: 1 },
      { path: versions, kind: 'status', status: 503, retryAfter: 'Wed, 21 Oct 2026 07:28:00 GMT', times: 1 },
    ]);
    const first = await get(base + versions);
    assert.equal(first.status, 500);
    assert.deepEqual(first.body, { errors: ['internal error'] });
    const second = await get(base + versions);
    assert.equal(second.status, 503);
    assert.equal(second.headers.get('retry-after'), 'Wed, 21 Oct 2026 07:28:00 GMT');
    assert.ok(second.body.errors[0].includes('retry later'));
    assert.equal((await get(base + versions)).status, 200);
  });

  it('REG-ERR-PROXY-NON-JSON: a 502 from a proxy is an HTML page, not JSON', async () => {
    server.setFaults([{ path: '/v1/**', kind: 'non-json', times: 1 }]);
    const response = await get(base + versions);
    assert.equal(response.status, 502);
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
    assert.throws(() => JSON.parse(response.text));
    assert.match(response.text, /Bad Gateway/);
  });

  it('reset: the connection is reset before any response byte; the next request is served', async () => {
    server.setFaults([{ path: versions, kind: 'reset', times: 1 }]);
    const broken = await rawGet(base + versions);
    assert.equal(broken.status, undefined);
    assert.equal(broken.error?.code, 'ECONNRESET');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(
      server.requests().map((r) => r.status),
      [0],
      'the log records the reset',
    );
    assert.equal((await get(base + versions)).status, 200, 'times: 1 means the next request is served');
  });

  it('truncate: JSON bodies stop half way under a full Content-Length and the connection closes', async () => {
    server.setFaults([{ path: versions, kind: 'truncate', times: 1 }]);
    const cut = await rawGet(base + versions);
    assert.equal(cut.status, 200);
    const declared = Number(cut.headers?.['content-length']);
    assert.ok(declared > 0);
    assert.equal(cut.body.length, Math.floor(declared / 2), 'half the body');
    assert.equal(cut.complete, false, 'the message did not complete');
    assert.equal(cut.body.length, Math.floor(declared / 2));
    const whole = await get(base + versions);
    assert.equal(Number(whole.headers.get('content-length')), declared);
  });

  it('truncate: archives stop after the given number of bytes', async () => {
    const location = (await fetch(`${base}/v1/modules/acme/app/aws/1.0.0/download`)).headers.get('x-registry-get')!;
    server.setFaults([{ path: '/_gantry/archives/**', kind: 'truncate', bytes: 100, times: 1 }]);
    const cut = await rawGet(location);
    assert.equal(cut.status, 200);
    assert.equal(cut.complete, false);
    assert.equal(cut.body.length, 100);
    const whole = await rawGet(location);
    assert.equal(whole.complete, true);
    assert.ok(whole.body.length > 100);
  });

  it('respond: any status, headers and body — a discovery 404, an HTML or a non-object discovery document', async () => {
    server.setFaults([
      { path: '/.well-known/terraform.json', kind: 'respond', status: 404, body: 'not here', times: 1 },
      { path: '/.well-known/terraform.json', kind: 'respond', status: 200, headers: { 'content-type': 'text/html' }, body: '<html>login</html>', times: 1 },
      { path: '/.well-known/terraform.json', kind: 'respond', status: 200, headers: { 'content-type': 'application/json' }, body: '["modules.v1"]', times: 1 },
    ]);
    const missing = await get(`${base}/.well-known/terraform.json`);
    assert.equal(missing.status, 404);
    assert.equal(missing.text, 'not here');
    const html = await get(`${base}/.well-known/terraform.json`);
    assert.equal(html.headers.get('content-type'), 'text/html');
    const array = await get(`${base}/.well-known/terraform.json`);
    assert.deepEqual(array.body, ['modules.v1']);
    assert.equal((await get(`${base}/.well-known/terraform.json`)).body['modules.v1'], '/v1/modules/');
  });

  it('latency: latencyMs is a floor for every answer (faulted ones too); a latency fault adds to the work on its paths only', async () => {
    server.setLatency(40);
    const time = async (path: string) => {
      const started = performance.now();
      const response = await get(base + path);
      return { ms: performance.now() - started, status: response.status };
    };
    assert.ok((await time('/v1/modules')).ms >= 39);
    server.setFaults([{ path: versions, kind: 'status', status: 429, times: 1 }]);
    const limited = await time(versions);
    assert.equal(limited.status, 429);
    assert.ok(limited.ms >= 39, 'a fault answer waits for the floor too');
    server.setLatency(0);
    server.setFaults([{ path: versions, kind: 'latency', ms: 60, times: 2 }]);
    await time('/v1/modules');
    assert.equal(server.faults()[0]?.remaining, 2, 'another path does not touch the fault');
    assert.ok((await time(versions)).ms >= 59);
    assert.equal(server.faults()[0]?.remaining, 1);
  });

  it('latency with truncation and resets: the cut body and the reset still come after the floor', async () => {
    server.setLatency(50);
    server.setFaults([
      { path: versions, kind: 'truncate', times: 1 },
      { path: versions, kind: 'reset', times: 1 },
    ]);
    let started = performance.now();
    const cut = await rawGet(base + versions);
    assert.ok(performance.now() - started >= 49);
    assert.equal(cut.complete, false);
    assert.ok(cut.body.length > 0);
    started = performance.now();
    const broken = await rawGet(base + versions);
    assert.ok(performance.now() - started >= 49);
    assert.equal(broken.error?.code, 'ECONNRESET');
  });

  it('latency is per request: 80 concurrent requests with 50 ms each finish in far less than 80 x 50 ms (what bench/pin relies on)', async () => {
    server.setLatency(50);
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 80 }, () => get(base + versions)));
    const elapsed = performance.now() - started;
    assert.ok(answers.every((a) => a.status === 200));
    assert.ok(elapsed >= 49, `at least one latency (${elapsed} ms)`);
    assert.ok(elapsed < 2000, `not serialized (${elapsed} ms for 80 requests; 4000 ms if queued)`);
  });

  it('scoping: after lets the first matching requests through; method and path patterns select', async () => {
    server.setFaults([
      { path: '/v1/modules/**', method: 'HEAD', kind: 'status', status: 500 },
      { path: '/v1/modules/*/*/*/versions', kind: 'status', status: 503, after: 1, times: 1 },
    ]);
    assert.equal((await get(base + versions)).status, 200, 'the first is let through');
    assert.equal((await get(`${base}/v1/modules/acme/app/aws`)).status, 200, 'another path is untouched');
    assert.equal((await get(base + versions)).status, 503, 'the second matching one fails');
    assert.equal((await get(base + versions)).status, 200);
    assert.equal((await fetch(base + versions, { method: 'HEAD' })).status, 500, 'HEAD only');
  });

  it('faults armed at start (faults option) and the request log of what was answered', async () => {
    const armed = await startRegistryServer({ dir: temp.dir, faults: [{ path: versions, kind: 'status', status: 429, retryAfter: 0, times: 1 }] });
    try {
      assert.equal((await get(armed.url + versions)).status, 429);
      assert.equal((await get(armed.url + versions)).status, 200);
      assert.deepEqual(
        armed.requests().map((r) => [r.method, r.path, r.status]),
        [
          ['GET', versions, 429],
          ['GET', versions, 200],
        ],
      );
    } finally {
      await armed.stop();
    }
  });

  it('admin endpoint /_gantry/faults: POST adds, GET lists with remaining counts, DELETE clears; bad faults are a 400; admin calls are never faulted', async () => {
    const everything = { path: '/**', kind: 'status', status: 500 };
    let response = await get(`${base}/_gantry/faults`, { method: 'POST', body: JSON.stringify([everything, { path: versions, kind: 'reset', times: 3 }]) });
    assert.equal(response.status, 200);
    assert.deepEqual(
      response.body.faults.map((f: { kind: string; remaining: number | null }) => [f.kind, f.remaining]),
      [
        ['status', null],
        ['reset', 3],
      ],
    );
    assert.equal((await get(base + versions)).status, 500, 'the first matching fault answers');
    response = await get(`${base}/_gantry/faults`);
    assert.equal(response.status, 200, 'admin is not faulted');
    assert.equal(response.body.faults[1].remaining, 3, 'the reset fault was not consumed by a request the 500 answered');
    for (const bad of [
      '{',
      '{"kind":"explode"}',
      '{"kind":"status","status":200}',
      '{"kind":"latency","ms":-1}',
      '{"kind":"reset","path":"no-slash"}',
      '{"kind":"reset","times":1.5}',
    ]) {
      const refused = await get(`${base}/_gantry/faults`, { method: 'POST', body: bad });
      assert.equal(refused.status, 400, bad);
      assert.ok(Array.isArray(refused.body.errors), bad);
    }
    response = await get(`${base}/_gantry/faults`, { method: 'PUT', body: JSON.stringify({ path: versions, kind: 'status', status: 418, times: 1 }) });
    assert.equal(response.body.faults.length, 1, 'PUT replaces');
    assert.equal((await get(base + versions)).status, 418);
    response = await get(`${base}/_gantry/faults`, { method: 'DELETE' });
    assert.deepEqual(response.body.faults, []);
    assert.equal((await get(base + versions)).status, 200);
    const log = await get(`${base}/_gantry/requests`);
    assert.deepEqual(
      log.body.requests.map((r: { status: number }) => r.status),
      [500, 418, 200],
    );
    assert.equal((await get(`${base}/_gantry/nothing`)).status, 404);
    const huge = await get(`${base}/_gantry/faults`, { method: 'POST', body: JSON.stringify({ kind: 'reset', path: '/' + 'x'.repeat(70 * 1024) }) });
    assert.equal(huge.status, 413, 'admin bodies are capped');
  });
});
