// Uploads of the embedded storage server: media, multipart (binary-safe), downloads with Range, revisions on every
// content update, and Drive's resumable protocol including a transfer cut mid-way and resumed from the status query.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { harness, jsonOf, reasonOf, type Harness } from './helpers.js';

const KIB256 = 256 * 1024;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

function multipart(boundary: string, metadata: unknown, media: Buffer, mediaType: string): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata)}\r\n--${boundary}\r\nContent-Type: ${mediaType}\r\n\r\n`,
    ),
    media,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

describe('devserver/storage: uploads and downloads', function () {
  this.timeout(60_000);
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  const startSession = async (total: number, metadata: unknown = { title: 'big.bin' }, path = '/upload/storage/v2/files', method = 'POST') => {
    const res = await h.raw(method, `${path}?uploadType=resumable`, JSON.stringify(metadata), {
      'content-type': 'application/json; charset=UTF-8',
      'x-upload-content-type': 'application/octet-stream',
      'x-upload-content-length': String(total),
    });
    assert.equal(res.status, 200);
    const location = res.headers.get('location');
    assert.ok(location, 'a Location with the session URI');
    return location;
  };
  const put = (location: string, body: Buffer, range: string) =>
    fetch(location, { method: 'PUT', body, headers: { authorization: 'Bearer ya29.storage-test-token', 'content-range': range } });

  it('STO-FILES-INSERT AMB-24: uploadType=media stores the bytes; alt=media streams them back; Range gives 206, an unsatisfiable one 416', async () => {
    const data = randomBytes(100_000);
    const res = await h.raw('POST', '/upload/storage/v2/files?uploadType=media', data, { 'content-type': 'application/x-test' });
    assert.equal(res.status, 200);
    const file = await jsonOf(res);
    assert.equal(file.kind, 'storage#file');
    assert.equal(file.mimeType, 'application/x-test');
    assert.equal(file.title, 'Untitled');
    assert.equal(file.fileSize, String(data.length));
    assert.equal(file.md5Checksum, md5(data));
    assert.ok(file.headRevisionId);
    const whole = await h.raw('GET', `/storage/v2/files/${file.id}?alt=media`);
    assert.equal(whole.status, 200);
    assert.ok(Buffer.from(await whole.arrayBuffer()).equals(data));
    const part = await h.raw('GET', `/storage/v2/files/${file.id}?alt=media`, undefined, { range: 'bytes=1000-1999' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 1000-1999/${data.length}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(data.subarray(1000, 2000)));
    const tail = await h.raw('GET', `/storage/v2/files/${file.id}?alt=media`, undefined, { range: 'bytes=99000-' });
    assert.equal(tail.status, 206);
    assert.equal((await tail.arrayBuffer()).byteLength, 1000);
    const beyond = await h.raw('GET', `/storage/v2/files/${file.id}?alt=media`, undefined, { range: 'bytes=100000-' });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), `bytes */${data.length}`);
    assert.equal((await h.api('POST', '/upload/storage/v2/files')).status, 400, 'uploadType is required');
  });

  it('STO-FILES-INSERT: uploadType=multipart is binary-safe (all 256 byte values, CRLFs and a look-alike boundary in the media)', async () => {
    const boundary = 'gantry_boundary_42';
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const media = Buffer.concat([all, Buffer.from(`\r\n--${boundary.slice(0, -1)}\r\n\r\n--`), all, all]);
    const body = multipart(boundary, { title: 'bytes.bin', mimeType: 'application/x-bytes' }, media, 'application/octet-stream');
    const res = await h.raw('POST', '/upload/storage/v2/files?uploadType=multipart', body, { 'content-type': `multipart/related; boundary=${boundary}` });
    assert.equal(res.status, 200);
    const file = await jsonOf(res);
    assert.equal(file.title, 'bytes.bin');
    assert.equal(file.mimeType, 'application/x-bytes');
    assert.equal(file.md5Checksum, md5(media));
    const back = Buffer.from(await (await h.raw('GET', `/storage/v2/files/${file.id}?alt=media`)).arrayBuffer());
    assert.ok(back.equals(media));
    const broken = await h.raw('POST', '/upload/storage/v2/files?uploadType=multipart', body.subarray(0, body.length - 10), {
      'content-type': `multipart/related; boundary=${boundary}`,
    });
    assert.equal(broken.status, 400);
    assert.equal(reasonOf(await jsonOf(broken)), 'badContent');
  });

  it('STO-FILES-UPDATE: a content update at /upload/storage/v2/files/{fileId} makes a new head revision (md5Checksum, fileSize, headRevisionId); If-Match is checked', async () => {
    const first = await jsonOf(await h.raw('POST', '/upload/storage/v2/files?uploadType=media', Buffer.from('one'), { 'content-type': 'text/plain' }));
    const stale = await h.raw('PUT', `/upload/storage/v2/files/${first.id}?uploadType=media`, Buffer.from('two!'), {
      'content-type': 'text/plain',
      'if-match': '"stale"',
    });
    assert.equal(stale.status, 412);
    const second = await jsonOf(
      await h.raw('PUT', `/upload/storage/v2/files/${first.id}?uploadType=media`, Buffer.from('two!'), {
        'content-type': 'text/plain',
        'if-match': first.etag,
      }),
    );
    assert.equal(second.id, first.id);
    assert.notEqual(second.headRevisionId, first.headRevisionId);
    assert.equal(second.fileSize, '4');
    assert.equal(second.md5Checksum, md5(Buffer.from('two!')));
    assert.equal(await (await h.raw('GET', `/storage/v2/files/${first.id}?alt=media`)).text(), 'two!');
    assert.equal(await (await h.raw('GET', `/storage/v2/files/${first.id}?alt=media&revisionId=${first.headRevisionId}`)).text(), 'one');
  });

  it('STO-FILES-INSERT: a resumable upload of a few MB cut mid-chunk resumes from the Range of the status query; 308 never carries a Location; the server received at most one chunk again', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 12_345);
    const chunk = 4 * KIB256;
    const location = await startSession(data.length);
    const sessionId = new URL(location).searchParams.get('upload_id')!;
    const nothing = await put(location, Buffer.alloc(0), `bytes */${data.length}`);
    assert.equal(nothing.status, 308);
    assert.equal(nothing.headers.get('range'), null, 'no Range: nothing received yet');
    assert.equal(nothing.headers.get('location'), null);
    const firstChunk = await put(location, data.subarray(0, chunk), `bytes 0-${chunk - 1}/${data.length}`);
    assert.equal(firstChunk.status, 308);
    assert.equal(firstChunk.headers.get('range'), `bytes=0-${chunk - 1}`);
    assert.equal(firstChunk.headers.get('location'), null);
    await h.admin('POST', 'faults', { kind: 'cut', afterBytes: 300_000 });
    await assert.rejects(put(location, data.subarray(chunk, 2 * chunk), `bytes ${chunk}-${2 * chunk - 1}/${data.length}`));
    const status = await put(location, Buffer.alloc(0), `bytes */${data.length}`);
    assert.equal(status.status, 308);
    assert.equal(status.headers.get('location'), null);
    const m = /^bytes=0-(\d+)$/.exec(status.headers.get('range') ?? '');
    assert.ok(m, `a Range header, got ${status.headers.get('range')}`);
    let offset = Number(m[1]) + 1;
    assert.ok(offset > chunk && offset <= chunk + 300_000, `kept the bytes before the cut (${offset})`);
    let final: Response | undefined;
    while (offset < data.length) {
      const end = Math.min(offset + chunk, data.length);
      const res = await put(location, data.subarray(offset, end), `bytes ${offset}-${end - 1}/${data.length}`);
      if (end < data.length) assert.equal(res.status, 308);
      else final = res;
      offset = end;
    }
    assert.equal(final!.status, 200);
    const file = await jsonOf(final!);
    assert.equal(file.title, 'big.bin');
    assert.equal(file.fileSize, String(data.length));
    assert.equal(file.md5Checksum, md5(data));
    const back = Buffer.from(await (await h.raw('GET', `/storage/v2/files/${file.id}?alt=media`)).arrayBuffer());
    assert.ok(back.equals(data));
    const stats = await h.admin('GET', 'stats');
    const received = stats.sessions[sessionId].bytesReceived;
    assert.ok(received >= data.length && received <= data.length + chunk, `received ${received} for ${data.length}`);
    const after = await put(location, Buffer.alloc(0), `bytes */${data.length}`);
    assert.equal(after.status, 200, 'a status query after completion answers the file');
  });

  it('STO-FILES-INSERT: a 16 MB resumable upload cut at 40 % and at 90 % finishes with at most one chunk sent again per cut', async () => {
    const data = randomBytes(16 * 1024 * 1024);
    const chunk = 8 * KIB256;
    const location = await startSession(data.length);
    const sessionId = new URL(location).searchParams.get('upload_id')!;
    const cuts = [Math.floor(data.length * 0.4), Math.floor(data.length * 0.9)];
    let offset = 0;
    let final: Response | undefined;
    while (!final) {
      const end = Math.min(offset + chunk, data.length);
      const cut = cuts.find((c) => c >= offset && c < end);
      if (cut !== undefined) {
        cuts.splice(cuts.indexOf(cut), 1);
        await h.admin('POST', 'faults', { kind: 'cut', afterBytes: cut - offset });
      }
      try {
        const res = await put(location, data.subarray(offset, end), `bytes ${offset}-${end - 1}/${data.length}`);
        if (res.status === 200) final = res;
        else assert.equal(res.status, 308);
        offset = end;
      } catch {
        const status = await put(location, Buffer.alloc(0), `bytes */${data.length}`);
        assert.equal(status.status, 308);
        offset = Number(/^bytes=0-(\d+)$/.exec(status.headers.get('range')!)![1]) + 1;
      }
    }
    assert.equal(cuts.length, 0, `both cuts happened: ${JSON.stringify(cuts)}`);
    assert.equal((await jsonOf(final)).md5Checksum, md5(data));
    const received = (await h.admin('GET', 'stats')).sessions[sessionId].bytesReceived;
    assert.ok(received - data.length <= 2 * chunk, `resent ${received - data.length} bytes`);
  });

  it('STO-FILES-INSERT: a chunk that is not a multiple of 256 KiB (unless last) is 400; an unknown or expired session is 404; a resent chunk overlapping received bytes is accepted', async () => {
    const data = randomBytes(2 * KIB256 + 10);
    const location = await startSession(data.length);
    const odd = await put(location, data.subarray(0, 1000), `bytes 0-999/${data.length}`);
    assert.equal(odd.status, 400);
    assert.equal(reasonOf(await jsonOf(odd)), 'badContent');
    assert.equal((await put(location, data.subarray(0, KIB256), `bytes 0-${KIB256 - 1}/${data.length}`)).status, 308);
    const again = await put(location, data.subarray(0, 2 * KIB256), `bytes 0-${2 * KIB256 - 1}/${data.length}`);
    assert.equal(again.status, 308);
    assert.equal(again.headers.get('range'), `bytes=0-${2 * KIB256 - 1}`);
    const gap = await put(location, data.subarray(2 * KIB256 + 5), `bytes ${2 * KIB256 + 5}-${data.length - 1}/${data.length}`);
    assert.equal(gap.status, 400);
    const last = await put(location, data.subarray(2 * KIB256), `bytes ${2 * KIB256}-${data.length - 1}/${data.length}`);
    assert.equal(last.status, 200);
    assert.equal((await jsonOf(last)).md5Checksum, md5(data));
    const unknown = await put(`${h.server.url}/upload/storage/v2/files?uploadType=resumable&upload_id=nope`, Buffer.alloc(0), 'bytes */10');
    assert.equal(unknown.status, 404);
    assert.equal(reasonOf(await jsonOf(unknown)), 'notFound');
    const doomed = await startSession(KIB256);
    const id = new URL(doomed).searchParams.get('upload_id')!;
    assert.deepEqual(await h.admin('POST', `sessions/${id}/expire`), { expired: true });
    assert.equal((await put(doomed, Buffer.alloc(0), `bytes */${KIB256}`)).status, 404);
  });

  it('STO-FILES-INSERT: a status query while a stalled chunk is still open answers at once with the bytes that arrived (the newest request of a session wins)', async () => {
    const data = randomBytes(2 * KIB256);
    const location = new URL(await startSession(data.length));
    const stalled = http.request({
      host: location.hostname,
      port: location.port,
      path: location.pathname + location.search,
      method: 'PUT',
      headers: {
        authorization: 'Bearer ya29.storage-test-token',
        'content-range': `bytes 0-${data.length - 1}/${data.length}`,
        'content-length': String(data.length),
      },
    });
    stalled.on('error', () => {});
    stalled.write(data.subarray(0, 100_000));
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const status = await put(location.href, Buffer.alloc(0), `bytes */${data.length}`);
    assert.ok(Date.now() - started < 2000, 'did not wait for the stalled chunk');
    assert.equal(status.status, 308);
    assert.equal(status.headers.get('range'), 'bytes=0-99999');
    stalled.destroy();
    const rest = await put(location.href, data.subarray(100_000), `bytes 100000-${data.length - 1}/${data.length}`);
    assert.equal(rest.status, 200);
    assert.equal((await jsonOf(rest)).md5Checksum, md5(data));
  });

  it('STO-FILES-UPDATE: a resumable update at PUT /upload/storage/v2/files/{fileId} replaces the content and applies the metadata', async () => {
    const file = (await h.api('POST', '/storage/v2/files', { title: 'resumable-target' })).body;
    const data = randomBytes(KIB256 + 1);
    const location = await startSession(data.length, { title: 'renamed' }, `/upload/storage/v2/files/${file.id}`, 'PUT');
    assert.equal((await put(location, data.subarray(0, KIB256), `bytes 0-${KIB256 - 1}/${data.length}`)).status, 308);
    const done = await put(location, data.subarray(KIB256), `bytes ${KIB256}-${data.length - 1}/${data.length}`);
    assert.equal(done.status, 200);
    const body = await jsonOf(done);
    assert.equal(body.id, file.id);
    assert.equal(body.title, 'renamed');
    assert.equal(body.md5Checksum, md5(data));
  });
});
