// The dev servers' HTTP kit over real sockets: body limits, JSON and form parsing, replies in a server's style, the
// route table, listening. The kit knows no wire format: every failure here is the test's own.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { HttpFailure } from '../../../devserver/kit/failure.js';
import { parseForm, parseJson, readBody } from '../../../devserver/kit/body.js';
import { sendReply, type ReplyStyle } from '../../../devserver/kit/reply.js';
import { RouteTable } from '../../../devserver/kit/routes.js';
import { httpUrl } from '../../../devserver/kit/url.js';
import { close, listen } from '../../../devserver/kit/listen.js';
import { sendFile } from '../../../devserver/kit/send-file.js';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

class TestFailure extends HttpFailure {}

/** A server whose handler may throw an HttpFailure, answered as `{failure: message}`. */
async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>): Promise<{ origin: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      const failure = error as HttpFailure;
      sendReply(res, { status: failure.status, body: { failure: failure.message }, headers: failure.headers }, { json: 'application/json' });
    });
  });
  const { origin } = await listen(server, '127.0.0.1', 0);
  return { origin, server };
}

/** Sends raw bytes and reads the raw answer, so framing (Content-Length, chunks) shows. */
function raw(origin: string, text: string): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(text));
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe("LAYER-DEVKIT: the dev servers' HTTP kit", function () {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });
  const started = async (handler: Parameters<typeof serve>[0]) => {
    const s = await serve(handler);
    stops.push(() => close(s.server));
    return s.origin;
  };

  it('LAYER-DEVKIT: a failure is an Error with a status, a message and headers, rendered by no one but its server', function () {
    const failure = new TestFailure(429, 'slow down', { 'retry-after': '3' });
    assert.ok(failure instanceof HttpFailure && failure instanceof Error);
    assert.equal(failure.name, 'TestFailure');
    assert.deepEqual([failure.status, failure.message, failure.headers], [429, 'slow down', { 'retry-after': '3' }]);
  });

  it("LAYER-DEVKIT: a body over the limit is the server's own failure, at the limit it is read whole", async function () {
    const origin = await started(async (req, res) => {
      const body = await readBody(req, { limit: 8, tooLarge: (limit) => new TestFailure(413, `more than ${limit}`) });
      sendReply(res, { status: 200, body: { got: body.toString() } }, { json: 'application/json' });
    });
    const ok = await fetch(origin, { method: 'POST', body: '12345678' });
    assert.deepEqual([ok.status, await ok.json()], [200, { got: '12345678' }]);
    const big = await fetch(origin, { method: 'POST', body: '123456789' });
    assert.deepEqual([big.status, await big.json()], [413, { failure: 'more than 8' }]);
  });

  it('LAYER-DEVKIT: refuseDeclared answers from Content-Length; drainUpTo reads a large body to the end first', async function () {
    let drained = 0;
    const origin = await started(async (req, res) => {
      req.on('data', (chunk: Buffer) => (drained += chunk.length));
      await readBody(req, { limit: 4, refuseDeclared: true, drainUpTo: 1000, tooLarge: () => new TestFailure(413, 'too large') });
      sendReply(res, { status: 200 }, { json: 'application/json' });
    });
    const answer = await fetch(origin, { method: 'POST', body: 'x'.repeat(600) });
    assert.equal(answer.status, 413);
    assert.equal(drained, 600, 'the whole body was read before the answer');
  });

  it("LAYER-DEVKIT: JSON by the server's rules: empty bodies, non-objects, and its own failures", function () {
    const notJson = () => new TestFailure(400, 'not json');
    const notObject = () => new TestFailure(400, 'not an object');
    assert.deepEqual(parseJson('', { notJson, empty: 'no-bytes' }), {});
    assert.deepEqual(parseJson('  ', { notJson, empty: 'blank' }), {});
    assert.throws(() => parseJson('  ', { notJson, empty: 'no-bytes' }), /not json/);
    assert.throws(() => parseJson('', { notJson }), /not json/);
    assert.deepEqual(parseJson(Buffer.from('[1]'), { notJson }), [1]);
    assert.throws(() => parseJson('[1]', { notJson, notObject }), /not an object/);
    assert.throws(() => parseJson('null', { notJson, notObject }), /not an object/);
  });

  it('LAYER-DEVKIT: a form must say it is one unless it is empty', async function () {
    const origin = await started(async (req, res) => {
      const form = parseForm(
        (await readBody(req, { limit: 100, tooLarge: () => new TestFailure(413, 'big') })).toString(),
        req,
        () => new TestFailure(400, 'not a form'),
      );
      sendReply(res, { status: 200, body: Object.fromEntries(form) }, { json: 'application/json' });
    });
    const form = await fetch(origin, { method: 'POST', body: new URLSearchParams({ a: '1 2' }) });
    assert.deepEqual(await form.json(), { a: '1 2' });
    const json = await fetch(origin, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    assert.deepEqual([json.status, await json.json()], [400, { failure: 'not a form' }]);
    const empty = await fetch(origin, { method: 'POST', headers: { 'content-type': 'text/plain' } });
    assert.deepEqual(await empty.json(), {});
  });

  it('LAYER-DEVKIT: a reply style frames bodies: type, indentation, length or chunks, empty replies, HEAD', async function () {
    const styles: Record<string, ReplyStyle> = {
      pretty: { json: 'application/json; charset=UTF-8', indent: 1, headers: { 'cache-control': 'no-cache' }, emptyLength: 'zero-unless-no-content' },
      chunked: { json: 'application/json', length: false },
      zero: { json: 'application/json', emptyLength: 'zero', framing: 'style' },
    };
    const origin = await started(async (req, res) => {
      const url = new URL(req.url!, 'http://x');
      const style = styles[url.searchParams.get('style')!]!;
      const status = Number(url.searchParams.get('status') ?? 200);
      sendReply(
        res,
        { status, ...(url.searchParams.has('empty') ? {} : { body: { a: [1] } }), headers: url.searchParams.has('len') ? { 'content-length': '99' } : {} },
        style,
        req.method,
      );
    });
    const request = (query: string, method = 'GET') => raw(origin, `${method} /?${query} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    const pretty = await request('style=pretty&len');
    assert.match(pretty, /content-type: application\/json; charset=UTF-8\r\n/i);
    assert.match(pretty, /cache-control: no-cache\r\n/i);
    assert.match(pretty, /content-length: 99\r\n/i, "the reply's headers win by default");
    const zero = await request('style=zero&len');
    assert.match(zero, /content-length: 9\r\n/i, "the style's framing wins with framing: style");
    assert.ok(zero.endsWith('{"a":[1]}'), zero);
    const chunked = await request('style=chunked');
    assert.match(chunked, /transfer-encoding: chunked\r\n/i);
    assert.doesNotMatch(chunked, /content-length/i);
    const head = await request('style=zero', 'HEAD');
    assert.match(head, /content-length: 9\r\n/i);
    assert.ok(head.endsWith('\r\n\r\n'), 'HEAD carries no body');
    const empty204 = await request('style=pretty&empty&status=204');
    assert.match(empty204, /^HTTP\/1.1 204/);
    const emptyZero = await request('style=zero&empty&status=202');
    assert.match(emptyZero, /content-length: 0\r\n/i);
  });

  it('LAYER-DEVKIT: the route table matches in order, decodes params, answers HEAD by GET and lists allowed methods', function () {
    const table = new RouteTable([
      { method: 'GET', template: '/files/trash', name: 'trash' },
      { method: 'GET', template: '/files/{id}', name: 'get' },
      { method: 'DELETE', template: '/files/{id}', name: 'delete' },
    ]);
    const hit = (method: string, path: string) => {
      const found = table.match(method, path);
      return 'route' in found ? [found.route.name, found.params] : found.allowed;
    };
    assert.deepEqual(hit('GET', '/files/trash'), ['trash', {}]);
    assert.deepEqual(hit('GET', '/files/a%20b'), ['get', { id: 'a b' }]);
    assert.deepEqual(hit('HEAD', '/files/x'), ['get', { id: 'x' }]);
    assert.deepEqual(hit('PUT', '/files/x'), ['GET', 'DELETE']);
    assert.deepEqual(hit('GET', '/files/'), []);
    assert.deepEqual(hit('GET', '/files/%E0'), [], 'a param that does not decode matches nothing');
    assert.deepEqual(hit('GET', '/files/x/'), [], 'a trailing slash is a different path by default');
    const lenient = new RouteTable([{ method: 'GET', template: '/repos/{owner}' }], { ignoreTrailingSlash: true, decodeLiterals: true });
    const found = lenient.match('GET', '/%72epos/me/');
    assert.ok('route' in found && found.params.owner === 'me');
  });

  it('LAYER-DEVKIT: a `*` route answers the methods the routes before it do not; headAsGet: false leaves HEAD to it', function () {
    const routes = [
      { method: 'GET', template: '/_admin/log', name: 'read' },
      { method: 'DELETE', template: '/_admin/log', name: 'clear' },
      { method: '*', template: '/_admin/log', name: 'refuse' },
      { method: 'GET', template: '/_admin/stats', name: 'stats' },
    ];
    const strict = new RouteTable(routes, { headAsGet: false });
    const hit = (table: RouteTable<(typeof routes)[number]>, method: string, path: string) => {
      const found = table.match(method, path);
      return 'route' in found ? found.route.name : found.allowed;
    };
    assert.equal(hit(strict, 'DELETE', '/_admin/log'), 'clear');
    assert.equal(hit(strict, 'PATCH', '/_admin/log'), 'refuse');
    assert.equal(hit(strict, 'HEAD', '/_admin/log'), 'refuse');
    assert.deepEqual(hit(strict, 'HEAD', '/_admin/stats'), ['GET'], 'HEAD is not GET when told so');
    assert.equal(hit(new RouteTable(routes), 'HEAD', '/_admin/stats'), 'stats');
  });

  it('LAYER-DEVKIT: httpUrl takes absolute http and https URLs only', function () {
    assert.equal(httpUrl('https://hooks.example/x?y=1')?.host, 'hooks.example');
    assert.equal(httpUrl('http://127.0.0.1:3000/hooks')?.port, '3000');
    for (const bad of ['ftp://x/', '/hooks', 'not a url', 'javascript:alert(1)']) assert.equal(httpUrl(bad), undefined, bad);
  });

  it('LAYER-DEVKIT: listen gives the origin of the address bound, and close ends kept-alive connections', async function () {
    const server = http.createServer((_req, res) => res.end('ok'));
    const { origin, port } = await listen(server, '127.0.0.1', 0);
    assert.equal(origin, `http://127.0.0.1:${port}`);
    const agent = new http.Agent({ keepAlive: true });
    await new Promise<void>((resolve) => http.get(origin, { agent }, (res) => res.resume().on('end', resolve)));
    const started = Date.now();
    await close(server);
    assert.ok(Date.now() - started < 2000, 'close did not wait for the idle connection');
    agent.destroy();
    const taken = http.createServer();
    await listen(taken, '127.0.0.1', 0).then(({ port: held }) => assert.rejects(listen(http.createServer(), '127.0.0.1', held), /EADDRINUSE/));
    await close(taken);
  });

  it('LAYER-DEVKIT: sendFile sends a file whole or a range of it, every byte in order, to a reader that pauses until writes queue', async function () {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-kit-'));
    // Every MiB different: a buffer reused before the socket took it would send one MiB twice.
    const content = randomBytes(16 * 1024 * 1024 + 12_345);
    const file = join(dir, 'archive.bin');
    await writeFile(file, content);
    const { origin, server } = await serve(async (req, res) => {
      const ranged = req.url === '/range';
      const [start, end] = ranged ? [1_000_000, 12_500_000] : [0, content.length - 1];
      res.writeHead(200, { 'content-length': String(end - start + 1) });
      await sendFile(res, file, ranged ? { start, end } : {});
    });
    const fetchSlowly = (path: string) =>
      new Promise<Buffer>((resolve, reject) => {
        http
          .get(`${origin}${path}`, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => {
              chunks.push(chunk);
              // A pause long enough for the socket's buffers to fill and the server's writes to queue behind them.
              if (chunks.length === 1) {
                res.pause();
                setTimeout(() => res.resume(), 300);
              }
            });
            res.once('end', () => resolve(Buffer.concat(chunks)));
            res.once('error', reject);
          })
          .once('error', reject);
      });
    const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    assert.equal(digest(await fetchSlowly('/whole')), digest(content));
    assert.equal(digest(await fetchSlowly('/range')), digest(content.subarray(1_000_000, 12_500_001)));
    await close(server);
    await rm(dir, { recursive: true, force: true });
  });

  it('LAYER-DEVKIT: sendFile rejects when the client goes away mid-body, and leaves no descriptor open', async function () {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-kit-'));
    const file = join(dir, 'big.bin');
    await writeFile(file, Buffer.alloc(64 * 1024 * 1024, 9));
    const openBefore = (await readdir('/proc/self/fd')).length;
    let outcome: Promise<unknown> | undefined;
    const { origin, server } = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-length': String(64 * 1024 * 1024) });
      outcome = sendFile(res, file).then(
        () => 'sent',
        (error: unknown) => error,
      );
      await outcome;
    });
    await new Promise<void>((resolve) => {
      http.get(`${origin}/big`, (res) => {
        res.once('data', () => {
          res.destroy();
          resolve();
        });
      });
    });
    const ended = await outcome;
    // The socket's own error (a reset) or the close, whichever the server hears first.
    assert.ok(ended instanceof Error && /went away|ECONNRESET|EPIPE/.test(ended.message), String(ended));
    await close(server);
    assert.ok((await readdir('/proc/self/fd')).length <= openBefore, 'the file is closed');
    await rm(dir, { recursive: true, force: true });
  });
});
