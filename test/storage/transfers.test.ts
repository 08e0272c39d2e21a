// Transfers of the storage client against the embedded storage server on 127.0.0.1: media, multipart (binary-safe)
// and resumable uploads round-tripped, a 5xx and an expired session in the middle of a resumable upload, an upload
// aborted and finished by resumeUpload, a changed source refused, downloads cut and resumed (in the same call and
// by a rerun), files.export and its 10 MB limit, and the session URI and token kept out of every message and log line.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { createLogger } from '../../lib/log.js';
import { StorageError } from '../../lib/storage/errors.js';
import { download } from '../../lib/storage/download.js';
import { exportFile } from '../../lib/storage/export.js';
import { createStorageTransport, type StorageTransport } from '../../lib/storage/transport.js';
import { resumeUpload, upload, type UploadOptions } from '../../lib/storage/upload/index.js';
import { harness, TOKEN, type Harness, type Json } from '../devserver/storage/helpers.js';

const KIB256 = 256 * 1024;
const MIB = 1024 * 1024;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const fast = { attempts: 6, initialMs: 5, maxMs: 40 };

async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  assert.fail('expected the call to fail');
}

/** Everything an error shows a user or a log: message, hint, stack, fields, JSON, inspect, and its causes'. */
function everythingSaid(error: unknown): string {
  const out: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth += 1) {
    const e = current as Record<string, unknown>;
    out.push(String(e.message), String(e.hint ?? ''), String(e.stack ?? ''), JSON.stringify(e) ?? '', inspect(e, { depth: 6 }));
    current = e.cause;
  }
  return out.join('\n');
}

describe('storage transfers: uploads, downloads and export against the embedded server', function () {
  this.timeout(60_000);
  let h: Harness;
  let transport: StorageTransport;
  let logs: string[];
  let served: string[];
  let dir: string;
  const logger = () => createLogger({ level: 'debug', write: (line) => logs.push(line) });

  beforeEach(async () => {
    served = [];
    logs = [];
    h = await harness({ log: (line) => served.push(line), exportLimitBytes: 200_000 });
    transport = createStorageTransport({ baseUrl: h.server.url, token: TOKEN, logger: logger() });
    dir = await mkdtemp(path.join(tmpdir(), 'gantry-transfers-'));
  });
  afterEach(async () => {
    transport.close();
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  const content = async (id: string) => Buffer.from(await (await h.raw('GET', `/storage/v2/files/${id}?alt=media`)).arrayBuffer());
  const sessionStats = async (): Promise<Array<{ id: string; bytesReceived: number; requests: number; completed: boolean }>> =>
    Object.entries((await h.admin('GET', 'stats')).sessions as Record<string, Json>).map(([id, s]) => ({ id, ...s }));
  const served2xx = (pattern: RegExp) => served.filter((line) => pattern.test(line));

  it('STO-FILES-INSERT: a Buffer without metadata is a media upload; the bytes and md5 come back equal', async () => {
    const data = randomBytes(300_000);
    const progress: number[] = [];
    const file = await upload(transport, { source: data, mimeType: 'application/x-test', logger: logger(), onProgress: (p) => progress.push(p.sent) });
    assert.equal(file.md5Checksum, md5(data));
    assert.equal(file.mimeType, 'application/x-test');
    assert.equal(file.title, 'Untitled');
    assert.ok((await content(file.id)).equals(data));
    assert.ok(served2xx(/^POST \/upload\/storage\/v2\/files 200$/).length === 1);
    assert.equal(progress.at(-1), data.length);
  });

  it('STO-FILES-INSERT: a file without a given type gets the one its extension names (.html, .json, .pdf); an unknown extension, a Buffer and a stated type are not guessed over', async () => {
    const typeOf = async (name: string, options: Partial<UploadOptions> = {}) => {
      const file = path.join(dir, name);
      await writeFile(file, '<p>report</p>');
      return (await upload(transport, { source: file, metadata: { title: name }, ...options })).mimeType;
    };
    assert.equal(await typeOf('report.html'), 'text/html');
    assert.equal(await typeOf('REPORT.JSON'), 'application/json');
    assert.equal(await typeOf('manual.pdf'), 'application/pdf');
    assert.equal(await typeOf('data.gantry-unknown'), 'application/octet-stream');
    assert.equal(await typeOf('no-extension'), 'application/octet-stream');
    assert.equal(await typeOf('page.html', { mimeType: 'text/plain' }), 'text/plain');
    assert.equal(await typeOf('page2.html', { metadata: { title: 'page2.html', mimeType: 'application/xhtml+xml' } }), 'application/xhtml+xml');
    assert.equal((await upload(transport, { source: Buffer.from('<p>x</p>'), metadata: { title: 'buffer.html' } })).mimeType, 'application/octet-stream');
  });

  it('STO-FILES-INSERT: metadata makes it multipart — binary-safe with `--` lines, CRLFs, a look-alike of the boundary and all 256 byte values', async () => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const tricky = Buffer.concat([
      Buffer.from('--\r\n--gantry_\r\n\r\n--\r\n'),
      every,
      Buffer.from('\r\n--gantry_0123456789abcdef--\r\nContent-Type: application/json\r\n\r\n{"title":"evil"}\r\n--'),
      every.reverse(),
      Buffer.from('\r\n\r\n--'),
    ]);
    const data = Buffer.concat([tricky, randomBytes(50_000), tricky]);
    const file = await upload(transport, { source: data, metadata: { title: 'tricky.bin', description: 'binary' }, mimeType: 'application/octet-stream' });
    assert.equal(file.title, 'tricky.bin');
    assert.equal(file.description, 'binary');
    assert.equal(file.md5Checksum, md5(data));
    assert.ok((await content(file.id)).equals(data));
    assert.ok(served2xx(/^POST \/upload\/storage\/v2\/files 200$/).length === 1);

    // A file above 5 MiB with multipart asked for explicitly is streamed from disk, its boundary checked by a scan.
    const big = Buffer.concat([tricky, randomBytes(6 * MIB), tricky]);
    const source = path.join(dir, 'big-multipart.bin');
    await writeFile(source, big);
    const streamed = await upload(transport, { source, metadata: { title: 'big-multipart.bin' }, uploadType: 'multipart' });
    assert.equal(streamed.md5Checksum, md5(big));
    assert.equal(streamed.fileSize, String(big.length));
    assert.deepEqual(await sessionStats(), [], 'no resumable session was used');
  });

  it('STO-FILES-INSERT: a file above 5 MiB goes resumable in 256 KiB-multiple chunks streamed from disk; bytes and md5 equal', async () => {
    const data = randomBytes(6 * MIB + 12_345);
    const source = path.join(dir, 'six.bin');
    await writeFile(source, data);
    const seen: Array<{ sent: number; total: number }> = [];
    const file = await upload(transport, {
      source,
      metadata: { title: 'six.bin', parents: [{ id: 'root' }] },
      chunkSize: MIB,
      onProgress: (p) => seen.push(p),
    });
    assert.equal(file.title, 'six.bin');
    assert.equal(file.md5Checksum, md5(data));
    assert.ok((await content(file.id)).equals(data));
    const [session] = await sessionStats();
    assert.equal(session!.bytesReceived, data.length, 'every byte sent once');
    assert.equal(session!.requests, 7, 'six full chunks and the last one');
    assert.deepEqual(seen.at(-1), { sent: data.length, total: data.length });
    assert.ok(
      seen.every((p, i) => i === 0 || p.sent >= seen[i - 1]!.sent),
      'progress only goes forward without failures',
    );
  });

  it('STO-FILES-INSERT: a file that shrinks while it is sent ends the upload with an error naming it (exit 2), not a request waiting forever for bytes that will not come', async () => {
    const data = randomBytes(6 * MIB + 12_345);
    const source = path.join(dir, 'shrinking.bin');
    await writeFile(source, data);
    const { truncate } = await import('node:fs/promises');
    let cut = false;
    const started = Date.now();
    const error = await rejection(
      upload(transport, {
        source,
        metadata: { title: 'shrinking.bin' },
        chunkSize: MIB,
        retry: fast,
        onProgress: ({ sent }) => {
          if (!cut && sent >= MIB) {
            cut = true;
            void truncate(source, 2 * MIB + 100);
          }
        },
      }),
    );
    assert.ok(cut, 'the file was cut during the upload');
    assert.equal(error.exitCode, 2, String(error));
    assert.match(error.message, /shrinking\.bin \(it changed while being sent\) ended after \d+ of the \d+ bytes/);
    assert.ok(Date.now() - started < 30_000, 'it ended by itself');
  });

  it("STO-FILES-UPDATE: files.update of an existing file's content, resumable and media, honours If-Match (412 conditionNotMet, exit 1)", async () => {
    const first = await upload(transport, { source: Buffer.from('version one'), metadata: { title: 'doc.txt' }, mimeType: 'text/plain' });
    const data = randomBytes(2 * MIB);
    const conflict = await rejection(
      upload(transport, { source: data, fileId: first.id, ifMatch: '"not-the-etag"', uploadType: 'resumable', chunkSize: KIB256 }),
    );
    assert.ok(conflict instanceof StorageError);
    assert.equal(conflict.status, 412);
    assert.equal(conflict.reason, 'conditionNotMet');
    assert.equal(conflict.exitCode, 1);
    const updated = await upload(transport, {
      source: data,
      fileId: first.id,
      ifMatch: first.etag!,
      uploadType: 'resumable',
      chunkSize: KIB256,
      metadata: { title: 'doc.bin' },
    });
    assert.equal(updated.id, first.id);
    assert.equal(updated.title, 'doc.bin');
    assert.equal(updated.md5Checksum, md5(data));
    assert.ok(
      served.some((line) => line === `PUT /upload/storage/v2/files/${first.id} 200`),
      'the session was started with PUT on the file',
    );
    const again = await upload(transport, { source: Buffer.from('three'), fileId: first.id });
    assert.equal(again.md5Checksum, md5(Buffer.from('three')));
    const revisions = await h.api('GET', `/storage/v2/files/${first.id}/revisions`);
    assert.equal(revisions.body.items.length, 3, 'a revision per content update');
  });

  it('STO-FILES-INSERT: a 5xx in the middle of a resumable upload is followed by a status query and the upload goes on (at most one chunk sent again)', async () => {
    const data = randomBytes(4 * MIB);
    let armed = false;
    const file = await upload(transport, {
      source: data,
      uploadType: 'resumable',
      chunkSize: KIB256,
      retry: fast,
      logger: logger(),
      onProgress: ({ sent }) => {
        if (!armed && sent >= data.length / 2) {
          armed = true;
          void h.admin('POST', 'faults', { kind: 'status', status: 503, path: '/upload/storage/v2/files', method: 'PUT' });
        }
      },
    });
    assert.equal(file.md5Checksum, md5(data));
    assert.ok(
      served.some((line) => /^PUT \/upload\/storage\/v2\/files 503$/.test(line)),
      'the server answered 503 once',
    );
    // The client sees the 503, or — when the server closes the connection while the chunk is still being written —
    // the connection break; either way it asks what the server has.
    assert.ok(
      logs.some((line) =>
        /(the service answered 503 backendError|the connection failed \(E\w+\)) sending bytes \d+–\d+ of 4194304; asking the service what it has/.test(line),
      ),
      logs.join('\n'),
    );
    const [session] = await sessionStats();
    assert.ok(session!.bytesReceived <= data.length + KIB256, `${session!.bytesReceived} bytes received`);
  });

  it('STO-FILES-INSERT: an expired session (admin API) starts a new session from byte 0 and says so in the log', async () => {
    const data = randomBytes(4 * MIB);
    let armed = false;
    const file = await upload(transport, {
      source: data,
      metadata: { title: 'expiring.bin' },
      uploadType: 'resumable',
      chunkSize: KIB256,
      retry: fast,
      logger: logger(),
      onProgress: ({ sent }) => {
        if (!armed && sent >= data.length * 0.3) {
          armed = true;
          void h.admin('POST', 'sessions/expire');
        }
      },
    });
    assert.equal(file.md5Checksum, md5(data));
    assert.equal(file.title, 'expiring.bin');
    const sessions = await sessionStats();
    assert.equal(sessions.length, 2, 'a second session');
    assert.ok(sessions[1]!.bytesReceived >= data.length && sessions[1]!.completed, 'the new session received the file from byte 0');
    assert.ok(sessions[0]!.bytesReceived < data.length && !sessions[0]!.completed);
    assert.ok(
      logs.some((line) => /upload session expired \(the service answered 404 to it\); starting a new session from byte 0/.test(line)),
      logs.join('\n'),
    );
    const list = await h.api('GET', `/storage/v2/files?q=${encodeURIComponent("title = 'expiring.bin'")}`);
    assert.equal(list.body.items.length, 1, 'one file, not two');
  });

  it('STO-FILES-INSERT: a stream of known size goes resumable; after a cut the chunk it kept is sent again from what the server has', async () => {
    const data = randomBytes(3 * MIB + 1000);
    let armed = false;
    const file = await upload(transport, {
      source: Readable.from([data.subarray(0, MIB), data.subarray(MIB, 2 * MIB), data.subarray(2 * MIB)]),
      size: data.length,
      uploadType: 'resumable',
      chunkSize: MIB,
      retry: fast,
      logger: logger(),
      onProgress: ({ sent }) => {
        if (!armed && sent >= MIB) {
          armed = true;
          void h.admin('POST', 'faults', { kind: 'cut', afterBytes: 300_000, direction: 'upload' });
        }
      },
    });
    assert.equal(file.md5Checksum, md5(data));
    const [session] = await sessionStats();
    assert.ok(session!.bytesReceived >= data.length && session!.bytesReceived <= data.length + MIB);
    const missing = await rejection(upload(transport, { source: Readable.from([Buffer.from('abc')]) }));
    assert.equal(missing.exitCode, 2);
    assert.match(missing.message, /a stream source needs options\.size/);
  });

  it('STO-FILES-INSERT: an aborted upload keeps its 0600 session file; resumeUpload finishes it and removes the file; a changed source is refused (exit 2) and the file kept', async () => {
    const data = randomBytes(4 * MIB);
    const source = path.join(dir, 'resume-me.bin');
    await writeFile(source, data);
    const sessionFile = path.join(dir, 'resume-me.session.json');
    const abort = new AbortController();
    const options: UploadOptions = {
      source,
      sessionFile,
      metadata: { title: 'resume-me.bin' },
      chunkSize: KIB256,
      signal: abort.signal,
      onProgress: ({ sent }) => {
        if (sent >= data.length / 2) abort.abort(new Error('stopped by the test'));
      },
    };
    const stopped = await rejection(upload(transport, options));
    assert.equal(stopped.message, 'stopped by the test');
    const saved = JSON.parse(await readFile(sessionFile, 'utf8')) as Json;
    assert.equal((await stat(sessionFile)).mode & 0o777, 0o600);
    assert.equal(saved.kind, 'gantry#storageUploadSession');
    assert.equal(saved.path, source);
    assert.equal(saved.size, data.length);
    assert.equal(saved.chunkSize, KIB256);
    assert.match(saved.sessionUri, /upload_id=/);
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file left',
    );
    const again = await rejection(upload(transport, options));
    assert.equal(again.exitCode, 2, 'a second upload with the same session file is refused');
    assert.match(again.message, /already exists/);

    // The source changes (same size, new content, a later mtime): refused before anything is sent.
    const changed = Buffer.from(data);
    changed[123] = changed[123]! ^ 0xff;
    await writeFile(source, changed);
    const before = (await h.admin('GET', 'stats')).requests;
    const refused = await rejection(resumeUpload(transport, sessionFile));
    assert.equal(refused.exitCode, 2);
    assert.equal(refused.code, 'STORAGE_SOURCE_CHANGED');
    assert.match(refused.message, /changed since the upload began: it was modified at .*; nothing was sent and the session file .* is kept/);
    assert.equal((await h.admin('GET', 'stats')).requests, before, 'nothing was sent');
    await stat(sessionFile);

    // The original back with the original mtime: the sample still matches, so the upload goes on.
    await writeFile(source, data);
    const { utimes } = await import('node:fs/promises');
    await utimes(source, saved.mtimeMs / 1000, saved.mtimeMs / 1000);
    const [session] = await sessionStats();
    const had = (await h.admin('GET', 'sessions')).sessions[0].received as number;
    const file = await resumeUpload(transport, sessionFile, { retry: fast, logger: logger() });
    assert.equal(file.md5Checksum, md5(data));
    assert.equal(file.title, 'resume-me.bin');
    await assert.rejects(stat(sessionFile), { code: 'ENOENT' });
    const after = (await sessionStats()).find((s) => s.id === session!.id)!;
    assert.ok(after.bytesReceived - session!.bytesReceived <= data.length - had + KIB256, 'at most one chunk sent again');
    assert.ok(logs.some((line) => /resuming the upload of resume-me\.bin/.test(line)));
  });

  it('STO-FILES-GET: a download cut mid-way resumes with Range (the server answers 206); bytes and md5 equal; the target appears only when complete', async () => {
    const data = randomBytes(3 * MIB + 7);
    const file = await upload(transport, { source: data, metadata: { title: 'down.bin' } });
    await h.admin('POST', 'faults', { kind: 'cut', afterBytes: 1_000_000, direction: 'download' });
    const target = path.join(dir, 'nested', 'down.bin');
    const seen: number[] = [];
    const result = await download(transport, file.id, { path: target, retry: fast, logger: logger(), onProgress: (p) => seen.push(p.received) });
    assert.equal(result.bytes, data.length);
    assert.equal(result.md5Checksum, md5(data));
    assert.equal(result.resumedFrom, 0);
    assert.ok((await readFile(target)).equals(data));
    assert.ok(served.includes(`GET /storage/v2/files/${file.id} 206`), `a Range request was answered: ${served.join(', ')}`);
    assert.ok(
      logs.some((line) => /download of down\.bin: the connection failed .* at byte \d+ of 3145735; asking for the rest/.test(line)),
      logs.join('\n'),
    );
    assert.deepEqual((await readdir(path.dirname(target))).sort(), ['down.bin'], 'no partial file left');
  });

  it('STO-FILES-GET: a download that gives up (exit 3) keeps its partial and leaves the old target alone; a rerun resumes from the partial and replaces the target', async () => {
    const data = randomBytes(2 * MIB);
    const file = await upload(transport, { source: data, metadata: { title: 'rerun.bin' } });
    const target = path.join(dir, 'rerun.bin');
    await writeFile(target, 'the old content');
    await h.admin('POST', 'faults', { kind: 'cut', afterBytes: 700_000, direction: 'download' });
    const failed = await rejection(download(transport, file.id, { path: target, retry: { attempts: 1 }, logger: logger() }));
    assert.equal(failed.exitCode, 3);
    assert.equal(failed.code, 'STORAGE_TRANSFER_GAVE_UP');
    // What reached the disk before the cut (the bytes still in flight when the server reset the connection are lost).
    const kept = /the (\d+) bytes received are kept in .*\.rerun\.bin\.[0-9a-f]{16}\.gantry-download: run the download again/.exec(String(failed.hint));
    assert.ok(kept && Number(kept[1]) > 0 && Number(kept[1]) <= 700_000, String(failed.hint));
    assert.equal(await readFile(target, 'utf8'), 'the old content');
    const result = await download(transport, file.id, { path: target, logger: logger() });
    assert.equal(result.resumedFrom, Number(kept[1]));
    assert.ok((await readFile(target)).equals(data));
    assert.ok(served.includes(`GET /storage/v2/files/${file.id} 206`));
    assert.deepEqual(await readdir(dir), ['rerun.bin']);

    // A partial left for an older content is not used: the file changed, so it starts over.
    await h.admin('POST', 'faults', { kind: 'cut', afterBytes: 500_000, direction: 'download' });
    await rejection(download(transport, file.id, { path: path.join(dir, 'next.bin'), retry: { attempts: 1 } }));
    const newer = randomBytes(MIB);
    await upload(transport, { source: newer, fileId: file.id });
    const fresh = await download(transport, file.id, { path: path.join(dir, 'next.bin') });
    assert.equal(fresh.resumedFrom, 0);
    assert.ok((await readFile(path.join(dir, 'next.bin'))).equals(newer));

    const revision = (await h.api('GET', `/storage/v2/files/${file.id}/revisions`)).body.items[0];
    const old = await download(transport, file.id, { path: path.join(dir, 'old.bin'), revisionId: revision.id });
    assert.ok((await readFile(path.join(dir, 'old.bin'))).equals(data), "a revision's content");
    const missing = await rejection(download(transport, 'no-such-file', { path: path.join(dir, 'x.bin') }));
    assert.ok(missing instanceof StorageError && missing.status === 404 && missing.exitCode === 1);
    assert.equal(old.md5Checksum, md5(data));
  });

  it('STO-FILES-GET: a 200 instead of a 206 to the resumed request starts the partial over cleanly (through a proxy that drops Range)', async () => {
    const data = randomBytes(2 * MIB + 3);
    const file = await upload(transport, { source: data, metadata: { title: 'norange.bin' } });
    const proxy = http.createServer((req, res) => {
      const headers = { ...req.headers };
      delete headers.range;
      const upstream = http.request(`${h.server.url}${req.url}`, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
        answer.once('aborted', () => res.destroy());
      });
      upstream.once('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const through = createStorageTransport({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, token: TOKEN, logger: logger() });
    try {
      await h.admin('POST', 'faults', { kind: 'cut', afterBytes: 600_000, direction: 'download' });
      const target = path.join(dir, 'norange.bin');
      const result = await download(through, file.id, { path: target, retry: fast, logger: logger() });
      assert.ok((await readFile(target)).equals(data));
      assert.equal(result.bytes, data.length);
      assert.ok(
        logs.some((line) => /download of norange\.bin: the service answered 200 to a request for bytes \d+- ; starting over from byte 0/.test(line)),
        logs.join('\n'),
      );
      assert.ok(!served.includes(`GET /storage/v2/files/${file.id} 206`), 'the server never saw a Range');
      assert.deepEqual(await readdir(dir), ['norange.bin']);
    } finally {
      through.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('STO-FILES-INSERT: a byte changed on the way (a proxy that flips one in the second chunk) is caught by the md5 check (exit 1) for a file and for a Buffer; verifyMd5: false lets it through', async () => {
    const data = randomBytes(3 * MIB + 777);
    const source = path.join(dir, 'flipped.bin');
    await writeFile(source, data);
    // The proxy keeps the Host header, so the session URI the server hands out points at the proxy too.
    const proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (String(req.headers['content-range'] ?? '').startsWith(`bytes ${MIB}-`)) body[1000] = (body[1000] ?? 0) ^ 0xff;
        const upstream = http.request(`${h.server.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        });
        upstream.once('error', () => res.destroy());
        upstream.end(body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const through = createStorageTransport({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, token: TOKEN, logger: logger() });
    try {
      for (const from of [source, data]) {
        const error = await rejection(
          upload(through, { source: from, metadata: { title: 'flipped.bin' }, uploadType: 'resumable', chunkSize: MIB, retry: fast }),
        );
        assert.equal(error.code, 'STORAGE_MD5_MISMATCH', String(error.stack));
        assert.equal(error.exitCode, 1);
        assert.match(error.message, /the service's md5 \([0-9a-f]{32}\) is not that of the (file|bytes sent)/);
      }
      const file = await upload(through, {
        source,
        metadata: { title: 'unchecked.bin' },
        uploadType: 'resumable',
        chunkSize: MIB,
        retry: fast,
        verifyMd5: false,
      });
      assert.notEqual(file.md5Checksum, md5(data), 'the server really holds other bytes');
    } finally {
      through.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('STO-FILES-INSERT: an onProgress callback that throws ends the upload with its own error, not as a network failure', async () => {
    const failure = new Error('the progress bar broke');
    const error = await rejection(
      upload(transport, {
        source: randomBytes(2 * MIB),
        uploadType: 'resumable',
        chunkSize: KIB256,
        retry: fast,
        onProgress: ({ sent }) => {
          if (sent > KIB256) throw failure;
        },
      }),
    );
    assert.equal(error, failure);
  });

  it('STO-FILES-EXPORT: a document is exported to the asked type and written whole; above the limit 403 exportSizeLimitExceeded comes with the hint to download instead', async () => {
    const text = Buffer.from('Gantry report\n'.repeat(1000));
    const doc = await upload(transport, {
      source: text,
      metadata: { title: 'report', mimeType: 'application/vnd.google-apps.document' },
      mimeType: 'text/plain',
    });
    assert.equal(doc.mimeType, 'application/vnd.google-apps.document');
    const target = path.join(dir, 'report.txt');
    const progress: number[] = [];
    const result = await exportFile(transport, doc.id, 'text/plain', { path: target, onProgress: (p) => progress.push(p.received) });
    assert.equal(result.bytes, text.length);
    assert.ok((await readFile(target)).equals(text));

    const big = await upload(transport, {
      source: Buffer.alloc(300_000, 'a'),
      metadata: { title: 'big report', mimeType: 'application/vnd.google-apps.document' },
      mimeType: 'text/plain',
    });
    await writeFile(path.join(dir, 'big.txt'), 'kept');
    const refused = await rejection(exportFile(transport, big.id, 'text/plain', { path: path.join(dir, 'big.txt') }));
    assert.ok(refused instanceof StorageError);
    assert.equal(refused.status, 403);
    assert.equal(refused.reason, 'exportSizeLimitExceeded');
    assert.equal(refused.exitCode, 1);
    assert.match(
      refused.message,
      /GET .*\/storage\/v2\/files\/[\w-]+\/export\?mimeType=text%2Fplain answered 403 exportSizeLimitExceeded: This file is too large to be exported/,
    );
    assert.match(String(refused.hint), /limited to 10 MB: download the file itself .*alt=media/);
    assert.equal(await readFile(path.join(dir, 'big.txt'), 'utf8'), 'kept', 'the target is left alone');
    const notDoc = await upload(transport, { source: Buffer.from('plain') });
    const notExportable = await rejection(exportFile(transport, notDoc.id, 'text/plain', { path: path.join(dir, 'plain.txt') }));
    assert.equal((notExportable as unknown as StorageError).reason, 'fileNotExportable');
    assert.deepEqual((await readdir(dir)).sort(), ['big.txt', 'report.txt']);
  });

  it('STO-FILES-INSERT: the session URI and the token are in no error message, hint, cause or log line — a refused chunk and a give-up after 5xx', async () => {
    const data = randomBytes(2 * MIB);
    const source = path.join(dir, 'secret.bin');
    await writeFile(source, data);
    let armed = false;
    const refused = await rejection(
      upload(transport, {
        source,
        uploadType: 'resumable',
        chunkSize: KIB256,
        retry: fast,
        logger: logger(),
        onProgress: ({ sent }) => {
          if (!armed && sent > KIB256) {
            armed = true;
            // Every PUT, status queries included, so the 400 arrives even if the chunk's connection breaks first.
            void h.admin('POST', 'faults', { kind: 'status', status: 400, times: 50, path: '/upload/storage/v2/files', method: 'PUT' });
          }
        },
      }),
    );
    await h.admin('DELETE', 'faults');
    assert.ok(refused instanceof StorageError && refused.status === 400 && refused.exitCode === 1, String(refused));
    assert.match(refused.message, /upload_id=\[REDACTED\]/, 'the endpoint is named, the session id masked');

    armed = false;
    const sessionFile = path.join(dir, 'secret.session.json');
    const gaveUp = await rejection(
      upload(transport, {
        source,
        uploadType: 'resumable',
        chunkSize: KIB256,
        sessionFile,
        retry: { attempts: 3, initialMs: 5, maxMs: 10 },
        logger: logger(),
        onProgress: ({ sent }) => {
          if (!armed && sent > KIB256) {
            armed = true;
            void h.admin('POST', 'faults', { kind: 'status', status: 503, times: 50, path: '/upload/storage/v2/files', method: 'PUT' });
          }
        },
      }),
    );
    await h.admin('DELETE', 'faults');
    assert.equal(gaveUp.exitCode, 3);
    assert.equal(gaveUp.code, 'STORAGE_TRANSFER_GAVE_UP');
    assert.match(gaveUp.message, /the upload of secret\.bin gave up after 3 failed attempts in a row: the service answered 503 backendError/);
    assert.match(String(gaveUp.hint), /resumeUpload\(transport, '.*secret\.session\.json'\)/);

    const ids = ((await h.admin('GET', 'sessions')).sessions as Json[]).map((s) => s.id as string);
    assert.equal(ids.length, 2);
    const uri = JSON.parse(await readFile(sessionFile, 'utf8')).sessionUri as string;
    assert.ok(
      ids.some((id) => uri.includes(id)),
      'the session file holds the session URI',
    );
    const said = [everythingSaid(refused), everythingSaid(gaveUp), logs.join('\n')].join('\n');
    assert.ok(logs.length > 3, 'there were log lines to search');
    for (const secret of [TOKEN, ...ids]) assert.ok(!said.includes(secret), `a secret leaked: ${secret.slice(0, 6)}…`);

    // The rest of the upload, resumed from the session file, after the service is back.
    const file = await resumeUpload(transport, sessionFile, { retry: fast });
    assert.equal(file.md5Checksum, md5(data));
  });

  it('STO-FILES-INSERT: bad options are refused before anything is sent (exit 2)', async () => {
    const before = (await h.admin('GET', 'stats')).requests;
    const cases: Array<[UploadOptions, RegExp]> = [
      [{ source: Buffer.from('x'), chunkSize: 100_000 }, /chunkSize must be a multiple of 256 KiB/],
      [{ source: Buffer.from('x'), sessionFile: path.join(dir, 's.json') }, /a session file needs a file source/],
      [{ source: path.join(dir, 'missing.bin') }, /cannot be read \(ENOENT\)/],
      [{ source: dir }, /is not a regular file/],
      [{ source: Buffer.from('x'), mimeType: 'text/plain\r\nX-Evil: 1' }, /mimeType takes a media type/],
      [{ source: Buffer.from('x'), uploadType: 'media', sessionFile: path.join(dir, 's.json') }, /a session file is for resumable uploads/],
      [{ source: Buffer.from('x'), params: { uploadType: 'media' } }, /give the protocol as options\.uploadType/],
    ];
    for (const [options, message] of cases) {
      const error = await rejection(upload(transport, options));
      assert.equal(error.exitCode, 2, String(error));
      assert.match(error.message, message);
    }
    const notSession = path.join(dir, 'not-a-session.json');
    await writeFile(notSession, '{"kind":"something else"}');
    const bad = await rejection(resumeUpload(transport, notSession));
    assert.equal(bad.exitCode, 2);
    assert.match(bad.message, /is not a storage upload session file/);
    assert.equal((await h.admin('GET', 'stats')).requests, before);
  });
});
