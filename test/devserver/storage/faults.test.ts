// Fault injection and persistence of the embedded storage server: a 5xx once, a quota answering 403
// userRateLimitExceeded, a download cut and resumed with Range, options refused, state kept across a restart.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStorageServer } from '../../../devserver/storage/index.js';
import { harness, jsonOf, reasonOf, type Harness } from './helpers.js';

describe('devserver/storage: faults and persistence', function () {
  this.timeout(30_000);
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(() => h.close());

  it("STO-FILES-LIST: a status fault answers 503 backendError once in Drive's error shape, then the request succeeds", async () => {
    await h.admin('POST', 'faults', { kind: 'status', status: 503, path: '/storage/v2/files' });
    const failed = await h.api('GET', '/storage/v2/files');
    assert.equal(failed.status, 503);
    assert.equal(reasonOf(failed.body), 'backendError');
    assert.equal((await h.api('GET', '/storage/v2/files')).status, 200);
    assert.deepEqual((await h.admin('GET', 'faults')).faults, []);
  });

  it('STO-FILES-GET: a quota answers 403 userRateLimitExceeded (domain usageLimits) once its window is spent', async () => {
    await h.admin('PUT', 'faults', { kind: 'quota', requests: 2, windowMs: 60_000 });
    assert.equal((await h.api('GET', '/storage/v2/files')).status, 200);
    assert.equal((await h.api('GET', '/storage/v2/files')).status, 200);
    const limited = await h.api('GET', '/storage/v2/files');
    assert.equal(limited.status, 403);
    assert.equal(reasonOf(limited.body), 'userRateLimitExceeded');
    assert.equal(limited.body.error.errors[0].domain, 'usageLimits');
    await h.admin('DELETE', 'faults');
    assert.equal((await h.api('GET', '/storage/v2/files')).status, 200);
    assert.equal((await h.admin('POST', 'faults', { kind: 'nope' })).message, "a fault's kind is cut, status, quota or emptyPage");
  });

  it('STO-FILES-LIST: a quota can answer 429 rateLimitExceeded instead', async () => {
    await h.admin('PUT', 'faults', { kind: 'quota', requests: 0, reason: 'rateLimitExceeded', status: 429 });
    const limited = await h.api('GET', '/storage/v2/files');
    assert.equal(limited.status, 429);
    assert.equal(reasonOf(limited.body), 'rateLimitExceeded');
  });

  it('STO-FILES-LIST STO-CHILDREN-LIST STO-CHANGES-LIST: an emptyPage fault answers an empty page that still carries a token to the same place', async () => {
    const start = (await h.api('GET', '/storage/v2/changes/startPageToken')).body.startPageToken;
    const folder = (await h.api('POST', '/storage/v2/files', { title: 'f', mimeType: 'application/vnd.google-apps.folder' })).body;
    await h.api('POST', '/storage/v2/files', { title: 'c', parents: [{ id: folder.id }] });
    await h.admin('POST', 'faults', { kind: 'emptyPage' });
    const files = await h.api('GET', '/storage/v2/files?maxResults=5');
    assert.deepEqual(files.body.items, []);
    assert.ok(files.body.nextPageToken);
    assert.equal((await h.api('GET', `/storage/v2/files?maxResults=5&pageToken=${files.body.nextPageToken}`)).body.items.length, 2);
    await h.admin('POST', 'faults', { kind: 'emptyPage' });
    const children = await h.api('GET', `/storage/v2/files/${folder.id}/children`);
    assert.deepEqual(children.body.items, []);
    assert.equal((await h.api('GET', `/storage/v2/files/${folder.id}/children?pageToken=${children.body.nextPageToken}`)).body.items.length, 1);
    await h.admin('POST', 'faults', { kind: 'emptyPage' });
    const changes = await h.api('GET', `/storage/v2/changes?pageToken=${start}`);
    assert.deepEqual(changes.body.items, []);
    assert.equal(changes.body.nextPageToken, start);
    assert.equal(changes.body.newStartPageToken, undefined);
    assert.equal((await h.api('GET', `/storage/v2/changes?pageToken=${start}`)).body.items.length, 2);
  });

  it('STO-FILES-GET: a download cut after N bytes resumes with Range from where it broke', async () => {
    const data = randomBytes(500_000);
    const file = await jsonOf(await h.raw('POST', '/upload/storage/v2/files?uploadType=media', data, { 'content-type': 'application/octet-stream' }));
    await h.admin('POST', 'faults', { kind: 'cut', afterBytes: 200_000, direction: 'download' });
    const res = await h.raw('GET', `/storage/v2/files/${file.id}?alt=media`);
    assert.equal(res.status, 200);
    const got: Buffer[] = [];
    await assert.rejects(async () => {
      for await (const chunk of res.body!) got.push(Buffer.from(chunk));
    });
    const first = Buffer.concat(got);
    assert.equal(first.length, 200_000);
    const rest = await h.raw('GET', `/storage/v2/files/${file.id}?alt=media`, undefined, { range: `bytes=${first.length}-` });
    assert.equal(rest.status, 206);
    assert.ok(Buffer.concat([first, Buffer.from(await rest.arrayBuffer())]).equals(data));
  });

  it('STO-BASE-PREFIX: bad options are refused before listening; files and resumable sessions persist across a restart', async () => {
    await assert.rejects(startStorageServer({ dir: '' }), /folder/);
    await assert.rejects(startStorageServer({ dir: h.dir, token: 'short' }), /token/);
    await assert.rejects(startStorageServer({ dir: h.dir, port: 70000 }), /port/);
    const dir = await mkdtemp(path.join(tmpdir(), 'gantry-storage-restart-'));
    try {
      const one = await harness({}, dir);
      const file = (await one.api('POST', '/storage/v2/files', { title: 'kept' })).body;
      const start = await one.raw('POST', '/upload/storage/v2/files?uploadType=resumable', JSON.stringify({ title: 'half' }), {
        'content-type': 'application/json',
        'x-upload-content-length': String(256 * 1024 + 1),
      });
      const location = new URL(start.headers.get('location')!);
      const chunk = randomBytes(256 * 1024);
      assert.equal(
        (await one.raw('PUT', location.pathname + location.search, chunk, { 'content-range': `bytes 0-${chunk.length - 1}/${chunk.length + 1}` })).status,
        308,
      );
      await one.close();
      const two = await harness({}, dir);
      try {
        assert.equal((await two.api('GET', `/storage/v2/files/${file.id}`)).body.title, 'kept');
        const status = await two.raw('PUT', location.pathname + location.search, undefined, { 'content-range': `bytes */${chunk.length + 1}` });
        assert.equal(status.status, 308);
        assert.equal(status.headers.get('range'), `bytes=0-${chunk.length - 1}`);
        const done = await two.raw('PUT', location.pathname + location.search, Buffer.from([7]), {
          'content-range': `bytes ${chunk.length}-${chunk.length}/${chunk.length + 1}`,
        });
        assert.equal(done.status, 200);
        assert.equal((await jsonOf(done)).fileSize, String(chunk.length + 1));
      } finally {
        await two.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
