/**
 * The resumable upload protocol (lib/storage/upload/resumable.ts) in process, against a programmed Drive v2 upload
 * service on 127.0.0.1: the session start, the chunks' Content-Range, what a 308's Range makes the client send next,
 * status queries after failures, expired sessions, the md5 check kept in step with the service, and the answers no
 * service should give (a bad Range, a missing Location, a 308 that holds everything). The service keeps a session's
 * bytes as Drive does and answers wire-exactly; a test intercepts the requests where it injects a fault, and reads
 * every request the client sent. Content is ASCII, so the recorded bodies are the bytes. Round trips with the whole
 * embedded storage server are test/storage/transfers.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ProtocolError } from '../../lib/http/index.js';
import { createLogger } from '../../lib/log.js';
import { StorageError } from '../../lib/storage/errors.js';
import { createStorageTransport, type StorageTransport } from '../../lib/storage/transport.js';
import { resumeUpload, upload, type UploadOptions, type UploadProgress } from '../../lib/storage/upload/index.js';
import { sendJson, startHttpPeer, type HttpPeer, type RecordedRequest } from '../peers/http.js';
import { fastRetry, rejection, TOKEN } from './helpers.js';

const KIB256 = 256 * 1024;
const fast = { attempts: 4, initialMs: 1, maxMs: 2 };
const md5 = (data: string | Buffer) => createHash('md5').update(data).digest('hex');
/** ASCII bytes that differ from one position to the next, so that a shifted range changes the md5. */
function ascii(size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1) out[i] = 97 + ((i * 7 + (i >> 9)) % 26);
  return out;
}

type Answer = (request: RecordedRequest, response: ServerResponse, socket: Socket) => void | Promise<void>;

interface Session {
  id: string;
  start: RecordedRequest;
  total: number;
  bytes: string;
}

describe('storage resumable uploads: offsets, 308s and status queries against a programmed service', function () {
  this.timeout(20_000);
  let peer: HttpPeer;
  let transport: StorageTransport;
  let logs: string[];
  let dir: string;
  let sessions: Session[];
  /** A test's fault: an answer for this request instead of the service's, or undefined to let the service answer. */
  let intercept: (request: RecordedRequest, session: Session | undefined) => Answer | undefined;
  /** What the service answers with the file; a test may change it (a wrong md5, a fields mask). */
  let fileOf: (session: Session) => unknown;

  const sessionOf = (url: string) => sessions.find((s) => url.includes(`upload_id=${s.id}`));
  const location = (s: Session) => `${peer.url}/upload/storage/v2/files?uploadType=resumable&upload_id=${s.id}`;
  const incomplete = (s: Session) => (_: RecordedRequest, res: ServerResponse) =>
    void res.writeHead(308, s.bytes.length > 0 ? { range: `bytes=0-${s.bytes.length - 1}` } : {}).end();

  /** Drive's side of the protocol: 200 + Location for a start, 308 + Range for a chunk or query, the file when complete. */
  const service: Answer = (req, res, socket) => {
    const session = sessionOf(req.url);
    const fault = intercept(req, session);
    if (fault) return fault(req, res, socket);
    if (req.url.includes('uploadType=resumable') && !session) {
      const started: Session = { id: `sess-${sessions.length + 1}-Qx7vK2pL9d`, start: req, total: Number(req.headers['x-upload-content-length']), bytes: '' };
      sessions.push(started);
      return void res.writeHead(200, { location: location(started), 'content-length': '0' }).end();
    }
    if (!session) return sendJson(res, 404, { error: { code: 404, message: 'Not Found', errors: [{ reason: 'notFound' }] } });
    const m = /^bytes (?:\*|(\d+)-(\d+))\/(\d+)$/.exec(String(req.headers['content-range']));
    if (!m) return sendJson(res, 400, { error: { code: 400, message: 'Invalid Content-Range', errors: [{ reason: 'badContent' }] } });
    if (m[1] !== undefined) {
      assert.equal(Number(m[1]), session.bytes.length, `a chunk starts where the service is (${req.headers['content-range']})`);
      assert.equal(req.body.length, Number(m[2]) - Number(m[1]) + 1);
      session.bytes += req.body;
    }
    if (session.bytes.length === session.total) return sendJson(res, 200, fileOf(session));
    return incomplete(session)(req, res);
  };

  const fileResource = (s: Session) => ({
    kind: 'drive#file',
    id: `file-${sessions.indexOf(s) + 1}`,
    title: (JSON.parse(s.start.body || '{}') as { title?: string }).title ?? 'Untitled',
    mimeType: s.start.headers['x-upload-content-type'],
    fileSize: String(s.bytes.length),
    md5Checksum: md5(s.bytes),
  });

  /** The requests after the session start, as `METHOD content-range`. */
  const ranges = () => peer.requests.filter((r) => !r.url.includes('uploadType=resumable') || sessionOf(r.url)).map((r) => r.headers['content-range']);
  const put = (options: Partial<UploadOptions> & Pick<UploadOptions, 'source'>) =>
    upload(transport, {
      uploadType: 'resumable',
      chunkSize: KIB256,
      retry: fast,
      logger: createLogger({ level: 'debug', write: (line) => logs.push(line) }),
      ...options,
    });

  /** Uploads `data`, checks that it arrived whole, and returns the Content-Ranges the client sent. */
  const uploaded = async (data: Buffer) => {
    assert.equal((await put({ source: data })).md5Checksum, md5(data));
    return ranges();
  };

  /** Answers the chunk or query whose Content-Range is `range` (the `times` first ones) with `answer`. */
  const onRange =
    (range: string, answer: (s: Session) => Answer, times = 1) =>
    (req: RecordedRequest, s: Session | undefined): Answer | undefined =>
      s && req.headers['content-range'] === range && times-- > 0 ? answer(s) : undefined;
  const storageError =
    (status: number, reason: string): Answer =>
    (_r, res) =>
      sendJson(res, status, { error: { code: status, message: reason, errors: [{ reason }] } });

  before(async () => {
    peer = await startHttpPeer((req, res, socket) => service(req, res, socket));
  });
  after(async () => {
    await peer.close();
  });
  beforeEach(async () => {
    peer.requests.length = 0;
    sessions = [];
    logs = [];
    intercept = () => undefined;
    fileOf = fileResource;
    transport = createStorageTransport({ baseUrl: peer.url, token: TOKEN, retry: fastRetry });
    dir = await mkdtemp(path.join(tmpdir(), 'gantry-resumable-'));
  });
  afterEach(async () => {
    transport.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('STO-FILES-INSERT: the session starts with POST ?uploadType=resumable, the metadata as JSON, X-Upload-Content-Type/-Length and the params; chunks of chunkSize follow with Content-Range a-b/total; progress only goes forward', async () => {
    const data = ascii(600_000);
    const seen: UploadProgress[] = [];
    const file = await put({ source: data, metadata: { title: 'a.txt' }, mimeType: 'text/plain', params: { pinned: true }, onProgress: (p) => seen.push(p) });
    assert.equal(file.md5Checksum, md5(data));
    assert.equal(file.title, 'a.txt');
    const [start, ...rest] = peer.requests;
    assert.equal(start!.method, 'POST');
    assert.equal(start!.url, '/upload/storage/v2/files?pinned=true&uploadType=resumable');
    assert.equal(start!.headers['x-upload-content-type'], 'text/plain');
    assert.equal(start!.headers['x-upload-content-length'], '600000');
    assert.match(String(start!.headers['content-type']), /^application\/json/);
    assert.deepEqual(JSON.parse(start!.body), { title: 'a.txt' });
    assert.equal(start!.headers['if-match'], undefined);
    assert.deepEqual(
      rest.map((r) => [r.method, r.headers['content-range'], r.headers['content-length']]),
      [
        ['PUT', 'bytes 0-262143/600000', '262144'],
        ['PUT', 'bytes 262144-524287/600000', '262144'],
        ['PUT', 'bytes 524288-599999/600000', '75712'],
      ],
    );
    assert.ok(
      rest.every((r) => r.headers.authorization === `Bearer ${TOKEN}`),
      'the session is on the service origin: the token goes along',
    );
    assert.deepEqual(seen.at(-1), { sent: 600_000, total: 600_000 });
    assert.ok(
      seen.every((p, i) => p.total === 600_000 && (i === 0 || p.sent > seen[i - 1]!.sent)),
      `progress strictly forward, each value once: ${seen.map((p) => p.sent).join(' ')}`,
    );
    assert.ok(
      logs.some((line) => line.includes('upload of the content: resumable session started (600000 bytes, chunks of 262144)')),
      logs.join('\n'),
    );
    assert.ok(!logs.some((line) => line.includes('going on from there')), 'no status query, no "the service has" line');
  });

  it('STO-FILES-INSERT: without a chunkSize 1 MiB goes in one 32 MiB-sized chunk; no metadata starts the session with {}; a 1-byte upload reports its byte', async () => {
    const data = ascii(1024 * 1024);
    const file = await put({ source: data, chunkSize: undefined });
    assert.equal(file.md5Checksum, md5(data));
    assert.deepEqual(ranges(), ['bytes 0-1048575/1048576']);
    assert.equal(peer.requests[0]!.body, '{}');
    assert.equal(peer.requests[0]!.headers['x-upload-content-type'], 'application/octet-stream');

    const seen: UploadProgress[] = [];
    const one = await put({ source: Buffer.from('x'), onProgress: (p) => seen.push(p) });
    assert.equal(one.md5Checksum, md5('x'));
    assert.deepEqual(seen, [{ sent: 1, total: 1 }]);
  });

  it("STO-FILES-UPDATE: files.update starts the session with PUT on the file's path (its id encoded) and If-Match", async () => {
    const file = await put({ source: ascii(1000), fileId: 'dir/file 1', ifMatch: '"etag-7"' });
    assert.equal(file.md5Checksum, md5(ascii(1000)));
    const start = peer.requests[0]!;
    assert.equal(start.method, 'PUT');
    assert.equal(start.url, '/upload/storage/v2/files/dir%2Ffile%201?uploadType=resumable');
    assert.equal(start.headers['if-match'], '"etag-7"');
  });

  it('STO-FILES-INSERT: a 503 to the session start is sent again (a second start makes no second file)', async () => {
    let starts = 0;
    intercept = (req) =>
      req.url.includes('uploadType=resumable') && !sessionOf(req.url) && ++starts === 1
        ? (_r, res) => sendJson(res, 503, { error: { code: 503, message: 'busy', errors: [{ reason: 'backendError' }] } })
        : undefined;
    const file = await put({ source: ascii(1000) });
    assert.equal(file.md5Checksum, md5(ascii(1000)));
    assert.equal(starts, 2);
  });

  it('STO-FILES-INSERT: the session URI from Location: missing or empty is a ProtocolError naming the request; relative resolves on the base URL; other schemes and user credentials are refused; https is taken', async () => {
    const starting = (headers: Record<string, string>) => {
      intercept = (req) => (req.url.includes('uploadType=resumable') && !sessionOf(req.url) ? (_r, res) => void res.writeHead(200, headers).end() : undefined);
    };
    for (const headers of [{}, { location: '' }] as Array<Record<string, string>>) {
      starting(headers);
      const error = await rejection(put({ source: ascii(10) }));
      assert.ok(error instanceof ProtocolError, String(error));
      assert.equal(
        error.message,
        'POST /upload/storage/v2/files?uploadType=resumable answered 200 without a Location header: the service started no upload session',
      );
    }
    for (const [uri, message] of [
      ['ftp://127.0.0.1/upload?upload_id=abcdefgh12', /the upload session URI is not http\(s\) \(ftp:\)/],
      [`http://someone@127.0.0.1:${peer.port}/upload?upload_id=abcdefgh12`, /the upload session URI carries user credentials/],
      [`http://:pw-7f3a9c2e1b@127.0.0.1:${peer.port}/upload?upload_id=abcdefgh12`, /the upload session URI carries user credentials/],
    ] as const) {
      starting({ location: uri });
      const error = await rejection(put({ source: ascii(10) }));
      assert.ok(error instanceof ProtocolError, String(error));
      assert.match(error.message, message);
    }
    // https is a session URI like any other: the upload goes there (here nothing listens, so the connection fails).
    starting({ location: 'https://127.0.0.1:1/upload?upload_id=abcdefgh12' });
    const refused = await rejection(put({ source: ascii(10), retry: { attempts: 1, initialMs: 1, maxMs: 1 } }));
    assert.equal(refused.code, 'STORAGE_TRANSFER_GAVE_UP', String(refused));
    assert.match(refused.message, /the connection failed \(ECONNREFUSED\)/);

    // A relative Location is a path on the service.
    intercept = (req) =>
      req.url.includes('uploadType=resumable') && !sessionOf(req.url)
        ? (_r, res) => {
            const started: Session = { id: 'relative-9dK2mQ', start: req, total: 10, bytes: '' };
            sessions.push(started);
            res.writeHead(200, { location: `/upload/storage/v2/files?uploadType=resumable&upload_id=${started.id}` }).end();
          }
        : undefined;
    const file = await put({ source: ascii(10) });
    assert.equal(file.md5Checksum, md5(ascii(10)));
  });

  it('STO-FILES-INSERT: 308 with Range bytes=0-n sends byte n+1 next; a 308 without Range sends from byte 0 again; a part of a chunk kept still has its md5 checked', async () => {
    const data = ascii(3 * KIB256);
    // The first chunk is kept but for its last 2 bytes; then the second is answered without a Range (the service lost all).
    let chunks = 0;
    intercept = (req, s) => {
      if (!s || !req.headers['content-range']?.startsWith('bytes 0-') || req.headers['content-range'] === 'bytes */786432') return undefined;
      chunks += 1;
      if (chunks === 1) {
        s.bytes = req.body.slice(0, KIB256 - 2);
        return incomplete(s);
      }
      return undefined;
    };
    const file = await put({ source: data });
    assert.equal(file.md5Checksum, md5(data));
    assert.deepEqual(ranges(), ['bytes 0-262143/786432', 'bytes 262142-524285/786432', 'bytes 524286-786429/786432', 'bytes 786430-786431/786432']);
    assert.ok(!logs.some((line) => line.includes('went back')), 'the md5 follows the part kept');

    peer.requests.length = 0;
    sessions = [];
    intercept = onRange('bytes 262144-524287/786432', (s) => (_r, res) => {
      s.bytes = '';
      res.writeHead(308).end();
    });
    assert.deepEqual(await uploaded(data), [
      'bytes 0-262143/786432',
      'bytes 262144-524287/786432',
      'bytes 0-262143/786432',
      'bytes 262144-524287/786432',
      'bytes 524288-786431/786432',
    ]);

    // The same partial answer, and a service whose md5 is not of the bytes: the check still follows the kept part.
    peer.requests.length = 0;
    sessions = [];
    chunks = 0;
    intercept = (req, s) => {
      if (!s || !req.headers['content-range']?.startsWith('bytes 0-') || req.headers['content-range'] === 'bytes */786432') return undefined;
      chunks += 1;
      if (chunks === 1) {
        s.bytes = req.body.slice(0, 1000);
        return incomplete(s);
      }
      return undefined;
    };
    fileOf = (s) => ({ ...fileResource(s), md5Checksum: md5('other bytes') });
    const mismatch = await rejection(put({ source: data }));
    assert.equal(mismatch.code, 'STORAGE_MD5_MISMATCH', String(mismatch));
    assert.equal(mismatch.exitCode, 1);
    assert.match(
      mismatch.message,
      new RegExp(`the upload of the content completed, but the service's md5 \\(${md5('other bytes')}\\) is not that of the bytes sent \\(${md5(data)}\\)`),
    );
  });
  it('STO-FILES-INSERT: a Range that is not bytes=0-n is a ProtocolError naming the header, quoted short', async () => {
    for (const range of ['bytes=5-9', 'nbytes=0-9', 'bytes=0-9,20-29', 'bytes=0-', 'bytes=0-1234567890123456', `bytes=0-9${'x'.repeat(300)}`]) {
      intercept = onRange('bytes 0-262143/600000', () => (_r, res) => void res.writeHead(308, { range }).end());
      const error = await rejection(put({ source: ascii(600_000) }));
      assert.ok(error instanceof ProtocolError, `${range}: ${String(error)}`);
      assert.match(error.message, /^the upload session answered 308 with a Range header that is not bytes=0-n: /, range);
      assert.ok(error.message.length < 200, `the header is quoted short: ${error.message.length} characters`);
    }
  });

  it('STO-FILES-INSERT: a Range beyond the total is a ProtocolError; a 308 that holds every byte gets one status query, then a ProtocolError', async () => {
    intercept = onRange('bytes 0-262143/600000', () => (_r, res) => void res.writeHead(308, { range: 'bytes=0-999999' }).end());
    const beyond = await rejection(put({ source: ascii(600_000) }));
    assert.ok(beyond instanceof ProtocolError, String(beyond));
    assert.equal(beyond.message, 'the upload session says it has 1000000 bytes of 600000');

    peer.requests.length = 0;
    let full = 0;
    intercept = (req, s) =>
      s && (req.headers['content-range'] === 'bytes 524288-599999/600000' || req.headers['content-range'] === 'bytes */600000')
        ? ++full > 5
          ? storageError(400, 'badRequest')
          : (_r, res) => void res.writeHead(308, { range: 'bytes=0-599999' }).end()
        : undefined;
    const held = await rejection(put({ source: ascii(600_000) }));
    assert.ok(held instanceof ProtocolError, String(held));
    assert.equal(held.message, 'the upload session holds all 600000 bytes but did not answer with the file');
    assert.deepEqual(ranges().slice(-2), ['bytes 524288-599999/600000', 'bytes */600000']);
  });

  it('STO-FILES-INSERT: the final answer: a body that is not JSON is a ProtocolError; a fields mask without id or md5 comes back as it is (unchecked); null is {}; a number, list or string is a ProtocolError', async () => {
    const finalAnswer = (answer: Answer) => {
      intercept = onRange('bytes 0-9/10', () => answer);
    };
    finalAnswer((_r, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('not json'));
    const error = await rejection(put({ source: ascii(10) }));
    assert.ok(error instanceof ProtocolError, String(error));
    assert.equal(error.message, 'the upload session answered 200 with a body that is not JSON: the file resource was expected');
    finalAnswer((_r, res) => sendJson(res, 200, { title: 'masked' }));
    assert.deepEqual(await put({ source: ascii(10) }), { title: 'masked' });
    finalAnswer((_r, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('null'));
    assert.deepEqual(await put({ source: ascii(10) }), {});
    for (const [body, what] of [
      ['5', 'a number'],
      ['[]', 'a list'],
      ['"done"', 'a string'],
    ]) {
      finalAnswer((_r, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(body));
      const odd = await rejection(put({ source: ascii(10) }));
      assert.ok(odd instanceof ProtocolError, String(odd));
      assert.equal(odd.message, `the upload session answered 200 with JSON that is not an object (${what}): the file resource was expected`);
    }
    // Drive's md5 may come in capitals.
    intercept = () => undefined;
    fileOf = (s) => ({ ...fileResource(s), md5Checksum: md5(s.bytes).toUpperCase() });
    assert.equal((await put({ source: ascii(10) })).md5Checksum, md5(ascii(10)).toUpperCase());
  });

  it('STO-FILES-INSERT: a 503 on a chunk, then on the status query: each is logged with where it was, the query (bytes */total, empty) tells where to go on, and nothing else is sent again', async () => {
    const data = ascii(600_000);
    let queries = 0;
    intercept = (req, s) => {
      if (!s) return undefined;
      if (req.headers['content-range'] === 'bytes 262144-524287/600000' && !queries) return storageError(503, 'backendError');
      if (req.headers['content-range'] === 'bytes */600000' && ++queries === 1) return storageError(503, 'backendError');
      // A 308 is never a redirect here, whatever it carries.
      if (req.headers['content-range'] === 'bytes */600000')
        return (_r, res) => void res.writeHead(308, { range: 'bytes=0-262143', location: `${peer.url}/elsewhere` }).end();
      return undefined;
    };
    assert.deepEqual(await uploaded(data), [
      'bytes 0-262143/600000',
      'bytes 262144-524287/600000',
      'bytes */600000',
      'bytes */600000',
      'bytes 262144-524287/600000',
      'bytes 524288-599999/600000',
    ]);
    const query = peer.requests.find((r) => r.headers['content-range'] === 'bytes */600000')!;
    assert.equal(query.headers['content-length'], '0');
    assert.equal(query.body, '');
    const said = logs.join('\n');
    assert.match(
      said,
      /upload of the content: the service answered 503 backendError sending bytes 262144–524287 of 600000; asking the service what it has in \d+ ms \(attempt 2 of 4\)/,
    );
    assert.match(
      said,
      /upload of the content: the service answered 503 backendError asking what it has of 600000 bytes; asking the service what it has in \d+ ms \(attempt 3 of 4\)/,
    );
    assert.equal(logs.filter((line) => line.includes('the service has 262144 of 600000 bytes; going on from there')).length, 1, said);
    assert.ok(!said.includes('went back'), 'the status query gave what the service had confirmed: the md5 is still followed');
  });

  it('STO-FILES-INSERT: a 400 on a chunk ends the upload with that StorageError (exit 1): no status query, no new session', async () => {
    intercept = onRange('bytes 262144-524287/600000', () => storageError(400, 'badContent'));
    const error = await rejection(put({ source: ascii(600_000) }));
    assert.ok(error instanceof StorageError, String(error));
    assert.equal(error.status, 400);
    assert.equal(error.exitCode, 1);
    assert.deepEqual(ranges(), ['bytes 0-262143/600000', 'bytes 262144-524287/600000']);
    assert.equal(sessions.length, 1);
  });

  it('STO-FILES-INSERT: without a session file, a give-up says to try again later and how to be able to resume', async () => {
    intercept = onRange('bytes 0-9/10', () => storageError(503, 'backendError'), 10);
    const error = await rejection(put({ source: ascii(10), retry: { attempts: 2, initialMs: 1, maxMs: 1 } }));
    assert.equal(error.code, 'STORAGE_TRANSFER_GAVE_UP', String(error));
    assert.equal(error.exitCode, 3);
    assert.match(error.message, /^the upload of the content gave up after 2 failed attempts in a row: the service answered 503 backendError/);
    assert.equal(error.hint, 'try again later; give a sessionFile to be able to resume such an upload from where it stopped');
  });

  it('STO-FILES-INSERT: an expired session (404, 410) starts a new one from byte 0 the way the first began; three expiries are survived, a fourth ends the upload with its answer', async () => {
    const data = ascii(3 * KIB256);
    /** Each of the first `n` sessions expires at its second chunk, 404 and 410 in turn. */
    const expiring = (n: number) => (req: RecordedRequest, s: Session | undefined) =>
      s && sessions.indexOf(s) < n && req.headers['content-range'] === 'bytes 262144-524287/786432'
        ? storageError(sessions.indexOf(s) % 2 ? 410 : 404, 'notFound')
        : undefined;
    intercept = expiring(3);
    const seen: number[] = [];
    const file = await put({ source: data, metadata: { title: 'expiring.txt' }, onProgress: (p) => seen.push(p.sent) });
    assert.equal(file.md5Checksum, md5(data));
    assert.equal(sessions.length, 4);
    for (const s of sessions.slice(1)) {
      assert.equal(s.start.url, sessions[0]!.start.url);
      assert.equal(s.start.body, sessions[0]!.start.body);
      const first = peer.requests.find((r) => sessionOf(r.url) === s);
      assert.equal(first!.headers['content-range'], 'bytes 0-262143/786432', 'a new session gets the first chunk, no status query');
    }
    assert.equal(seen.filter((sent) => sent === 0).length, 3, `progress back to 0 at each new session: ${seen.join(' ')}`);
    assert.equal(
      logs.filter((line) => /the upload session expired \(the service answered 404 to it\); starting a new session from byte 0/.test(line)).length,
      2,
    );
    assert.equal(logs.filter((line) => /the upload session expired \(the service answered 410 to it\)/.test(line)).length, 1);

    sessions = [];
    intercept = expiring(10);
    const error = await rejection(put({ source: data }));
    assert.ok(error instanceof StorageError, String(error));
    assert.equal(error.status, 410, 'the fourth expiry (a 410) is the error');
    assert.equal(sessions.length, 4, 'three new sessions, not a fourth');

    // A file (its md5 on a worker, no tracker to reset) starts over as well.
    sessions = [];
    intercept = expiring(1);
    const source = path.join(dir, 'expiring.bin');
    await writeFile(source, data);
    assert.equal((await put({ source })).md5Checksum, md5(data));
    assert.equal(sessions.length, 2);
  });

  it('STO-FILES-INSERT: a session URI on another origin gets no bearer token; its 404 starts a new session, its 400 is a StorageError', async () => {
    const other = await startHttpPeer((req, res, socket) => service(req, res, socket));
    try {
      intercept = (req) =>
        req.url.includes('uploadType=resumable') && !sessionOf(req.url)
          ? (_r, res) => {
              const started: Session = {
                id: `elsewhere-${sessions.length}-7hQ2xPz`,
                start: req,
                total: Number(req.headers['x-upload-content-length']),
                bytes: '',
              };
              sessions.push(started);
              res.writeHead(200, { location: `${other.url}/upload/storage/v2/files?uploadType=resumable&upload_id=${started.id}` }).end();
            }
          : undefined;
      const data = ascii(600_000);
      const file = await put({ source: data });
      assert.equal(file.md5Checksum, md5(data));
      assert.equal(other.requests.length, 3);
      assert.ok(
        other.requests.every((r) => r.headers.authorization === undefined),
        'no token to another origin',
      );

      const started = intercept;
      let expired = false;
      intercept = (req, s) =>
        s && !expired && req.headers['content-range'] === 'bytes 262144-524287/600000' ? ((expired = true), storageError(404, 'notFound')) : started(req, s);
      assert.equal((await put({ source: data })).md5Checksum, md5(data));
      assert.ok(expired);

      intercept = (req, s) => (s && req.headers['content-range'] === 'bytes 0-262143/600000' ? storageError(400, 'badContent') : started(req, s));
      const refused = await rejection(put({ source: data }));
      assert.ok(refused instanceof StorageError && refused.status === 400, String(refused));
    } finally {
      await other.close();
    }
  });

  it('STO-FILES-INSERT: resumeUpload asks first (bytes */total) and goes on from what the service has; an expired session is started again from the session file: PUT on the fileId, metadata, params, If-Match', async () => {
    const data = ascii(3 * KIB256);
    const source = path.join(dir, 'resume.txt');
    await writeFile(source, data);
    const sessionFile = path.join(dir, 'resume.session.json');
    const abort = new AbortController();
    const options = {
      source,
      sessionFile,
      fileId: 'target-1',
      ifMatch: '"etag-3"',
      metadata: { title: 'resume.txt' },
      params: { pinned: true },
      mimeType: 'text/plain',
      signal: abort.signal,
      onProgress: ({ sent }: UploadProgress) => {
        if (sent >= KIB256) abort.abort(new Error('stopped by the test'));
      },
    };
    assert.equal((await rejection(put(options))).message, 'stopped by the test');
    const first = sessions[0]!;
    const had = first.bytes.length;
    assert.ok(had < data.length);

    peer.requests.length = 0;
    const file = await resumeUpload(transport, sessionFile, { retry: fast, logger: createLogger({ level: 'debug', write: (line) => logs.push(line) }) });
    assert.equal(file.md5Checksum, md5(data));
    assert.equal(ranges()[0], `bytes */${data.length}`);
    assert.equal(ranges()[1], `bytes ${had}-${Math.min(had + KIB256, data.length) - 1}/${data.length}`);
    assert.ok(logs.some((line) => line.includes(`the service has ${had} of ${data.length} bytes; going on from there`)));
    await assert.rejects(readFile(sessionFile), { code: 'ENOENT' });

    // Again, and this time the session has expired when the upload is resumed.
    sessions = [];
    const again = new AbortController();
    assert.equal(
      (await rejection(put({ ...options, signal: again.signal, onProgress: ({ sent }) => sent >= KIB256 && again.abort(new Error('stopped')) }))).message,
      'stopped',
    );
    intercept = onRange(`bytes */${data.length}`, () => storageError(404, 'notFound'));
    assert.equal(
      (await resumeUpload(transport, sessionFile, { retry: fast, logger: createLogger({ level: 'debug', write: (line) => logs.push(line) }) })).md5Checksum,
      md5(data),
    );
    assert.equal(sessions.length, 2);
    const [before, after] = sessions.map((s) => s.start);
    for (const start of [before!, after!]) {
      assert.equal(start.method, 'PUT');
      assert.equal(start.url, '/upload/storage/v2/files/target-1?pinned=true&uploadType=resumable');
      assert.equal(start.headers['if-match'], '"etag-3"');
      assert.equal(start.headers['x-upload-content-type'], 'text/plain');
      assert.deepEqual(JSON.parse(start.body), { title: 'resume.txt' });
    }
  });

  it('STO-FILES-INSERT: an abort while the session start or a chunk waits for its answer ends the upload at once with the reason', async () => {
    for (const waiting of ['start', 'chunk'] as const) {
      const abort = new AbortController();
      const reason = new Error(`stopped during the ${waiting}`);
      intercept = (req, s) => ((waiting === 'start' ? !s : s && req.headers['content-range'] === 'bytes 0-9/10') ? () => abort.abort(reason) : undefined);
      const error = await rejection(put({ source: ascii(10), signal: abort.signal }));
      assert.equal(error, reason);
    }
  });

  it('STO-FILES-INSERT: an onProgress that throws is called no more and ends the upload with its own error once its chunk is answered, even when that answer is a failure', async () => {
    const failure = new Error('the progress bar broke');
    let calls = 0;
    const onProgress = () => {
      calls += 1;
      throw failure;
    };
    // A file's 2 MiB chunk is read 1 MiB at a time: progress comes twice while it is sent, the callback is called once.
    const source = path.join(dir, 'progress.txt');
    await writeFile(source, ascii(3 * 1024 * 1024));
    assert.equal(await rejection(put({ source, chunkSize: 2 * 1024 * 1024, onProgress })), failure);
    assert.equal(calls, 1);
    assert.deepEqual(ranges(), ['bytes 0-2097151/3145728'], 'nothing sent after the answer to the chunk');

    calls = 0;
    intercept = onRange('bytes 0-262143/600000', () => storageError(400, 'badContent'));
    assert.equal(await rejection(put({ source: ascii(600_000), onProgress })), failure);
    assert.equal(calls, 1);

    calls = 0;
    intercept = () => undefined;
    peer.requests.length = 0;
    assert.equal(await rejection(put({ source: ascii(1000), onProgress })), failure, 'thrown on the last (here the only) chunk too');
    assert.equal(calls, 1);
    assert.deepEqual(ranges(), ['bytes 0-999/1000'], 'the file was sent whole; only the callback failed');
  });

  it('STO-FILES-INSERT: an empty upload is one status query (bytes */0) answered with the file; a 308 to it is a ProtocolError, not a loop', async () => {
    const seen: UploadProgress[] = [];
    const file = await put({ source: Buffer.alloc(0), onProgress: (p) => seen.push(p) });
    assert.equal(file.md5Checksum, md5(''));
    assert.deepEqual(ranges(), ['bytes */0']);
    assert.deepEqual(seen, [{ sent: 0, total: 0 }]);

    // The service says it holds all 0 bytes but gives no file: asking again would get the same answer, forever.
    peer.requests.length = 0;
    let queries = 0;
    intercept = (_req, s) => (s ? (++queries > 5 ? storageError(400, 'badRequest') : (_r, res) => void res.writeHead(308).end()) : undefined);
    const error = await rejection(put({ source: Buffer.alloc(0) }));
    assert.ok(error instanceof ProtocolError, String(error));
    assert.equal(error.message, 'the upload session holds all 0 bytes but did not answer with the file');
    assert.deepEqual(ranges(), ['bytes */0']);
  });

  it('STO-FILES-INSERT: a service that goes back below what it confirmed gets the bytes again; its md5 is then not followed (said once in the log)', async () => {
    const data = ascii(4 * KIB256);
    const goingBack = () =>
      onRange('bytes 786432-1048575/1048576', (s) => (_r, res) => {
        s.bytes = s.bytes.slice(0, 100);
        res.writeHead(308, { range: 'bytes=0-99' }).end();
      });
    intercept = goingBack();
    const file = await put({ source: data });
    assert.equal(file.md5Checksum, md5(data));
    assert.deepEqual(ranges().slice(3), [
      'bytes 786432-1048575/1048576',
      'bytes 100-262243/1048576',
      'bytes 262244-524387/1048576',
      'bytes 524388-786531/1048576',
      'bytes 786532-1048575/1048576',
    ]);
    assert.deepEqual(
      logs.filter((line) => line.includes('went back')),
      ['debug: upload of the content: the service went back to byte 100; its md5 is not checked'],
    );

    // As the log says: the service's md5 is then not compared.
    sessions = [];
    intercept = goingBack();
    fileOf = (s) => ({ ...fileResource(s), md5Checksum: md5('other bytes') });
    assert.equal((await put({ source: data })).md5Checksum, md5('other bytes'));
  });

  it('STO-FILES-INSERT: the last chunk kept but answered 503: the status query gets the file, whose md5 is checked against all the bytes sent', async () => {
    const data = ascii(600_000);
    const keptBut503 = () =>
      onRange('bytes 524288-599999/600000', (s) => (req, res, socket) => {
        s.bytes += req.body;
        return storageError(503, 'backendError')(req, res, socket);
      });
    intercept = keptBut503();
    assert.equal((await put({ source: data })).md5Checksum, md5(data));
    assert.deepEqual(ranges().slice(-2), ['bytes 524288-599999/600000', 'bytes */600000']);
    sessions = [];
    intercept = keptBut503();
    fileOf = (s) => ({ ...fileResource(s), md5Checksum: md5('other bytes') });
    const mismatch = await rejection(put({ source: data }));
    assert.deepEqual(
      [mismatch.code, mismatch.hint],
      ['STORAGE_MD5_MISMATCH', 'the file file-1 holds other bytes than the source: upload it again (files.update with fileId)'],
      'the bytes sent from memory: the same advice as for a file',
    );
  });

  it("STO-FILES-INSERT: a file that grows while it is sent: the service's md5 is not the file's, and the message gives both sizes", async () => {
    const data = ascii(1000);
    const source = path.join(dir, 'growing.txt');
    await writeFile(source, data);
    // The file grows before the service answers the start (the md5 of a file is read from the file once sending begins).
    intercept = (req, s) => {
      if (!s && req.url.includes('uploadType=resumable')) appendFileSync(source, 'ten bytes!');
      return undefined;
    };
    const error = await rejection(put({ source }));
    assert.equal(error.code, 'STORAGE_MD5_MISMATCH', String(error));
    assert.equal(error.exitCode, 1);
    assert.equal(
      error.message,
      `the upload of growing.txt completed, but the service's md5 (${md5(data)}) is not that of the file (${md5(Buffer.concat([data, Buffer.from('ten bytes!')]))}, 1010 bytes instead of 1000); did the file change while it was sent?`,
    );
    assert.equal(error.hint, `the file file-1 holds other bytes than the source: upload it again (files.update with fileId)`);

    // The same size and other bytes: the message gives no sizes.
    intercept = () => undefined;
    fileOf = (s) => ({ ...fileResource(s), md5Checksum: md5('other bytes') });
    const grown = Buffer.concat([data, Buffer.from('ten bytes!')]);
    const other = await rejection(put({ source }));
    assert.equal(
      other.message,
      `the upload of growing.txt completed, but the service's md5 (${md5('other bytes')}) is not that of the file (${md5(grown)}); did the file change while it was sent?`,
    );
  });
});
