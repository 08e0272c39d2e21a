// A content update at PUT /upload/storage/v2/files/{fileId} honours addParents and removeParents as the metadata-only
// files.update/patch does (STO-FILES-UPDATE, AMB-24): media, multipart and resumable move the file; a bad addParents is
// refused with the same error as files.patch gives, before anything changes — content and parents stay as they were.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { harness, jsonOf, reasonOf, type Harness, type Json } from './helpers.js';

const FOLDER = 'application/vnd.google-apps.folder';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

describe('devserver/storage: a content update moves the file with addParents/removeParents', function () {
  this.timeout(20_000);
  let h: Harness;
  let rootId: string;
  before(async () => {
    h = await harness();
    rootId = (await h.api('GET', '/storage/v2/files/root')).body.id;
  });
  after(() => h.close());

  const folder = async (title: string): Promise<string> => (await h.api('POST', '/storage/v2/files', { title, mimeType: FOLDER })).body.id;
  const uploaded = async (text: string): Promise<Json> =>
    jsonOf(await h.raw('POST', '/upload/storage/v2/files?uploadType=media', Buffer.from(text), { 'content-type': 'text/plain' }));
  /** The parent ids as parents.list gives them. */
  const parentsOf = async (id: string): Promise<string[]> =>
    (await h.api('GET', `/storage/v2/files/${id}/parents`)).body.items.map((p: { id: string }) => p.id);
  const inFolder = async (id: string): Promise<string[]> =>
    (await h.api('GET', `/storage/v2/files?q=${encodeURIComponent(`'${id}' in parents`)}`)).body.items.map((f: { id: string }) => f.id);
  const content = async (id: string): Promise<string> => (await h.raw('GET', `/storage/v2/files/${id}?alt=media`)).text();
  const multipart = (metadata: unknown, media: string) => {
    const boundary = 'parents-boundary';
    return {
      body: `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata)}\r\n--${boundary}\r\nContent-Type: text/plain\r\n\r\n${media}\r\n--${boundary}--\r\n`,
      headers: { 'content-type': `multipart/related; boundary=${boundary}` },
    };
  };
  const resumable = async (id: string, query: string, metadata: unknown, data: string): Promise<Response> => {
    const start = await h.raw('PUT', `/upload/storage/v2/files/${id}?uploadType=resumable${query}`, JSON.stringify(metadata), {
      'content-type': 'application/json; charset=UTF-8',
      'x-upload-content-type': 'text/plain',
      'x-upload-content-length': String(data.length),
    });
    if (start.status !== 200) return start;
    const location = new URL(start.headers.get('location')!);
    return h.raw('PUT', location.pathname + location.search, data, { 'content-range': `bytes 0-${data.length - 1}/${data.length}` });
  };

  it('STO-FILES-UPDATE STO-PARENTS-LIST AMB-24: uploadType=media, multipart and resumable updates add and remove parents, and the listings show the move', async () => {
    const a = await folder('up-A');
    const b = await folder('up-B');
    const c = await folder('up-C');
    const file = await uploaded('one');
    assert.deepEqual(await parentsOf(file.id), [rootId]);

    const media = await h.raw('PUT', `/upload/storage/v2/files/${file.id}?uploadType=media&addParents=${a}&removeParents=root`, Buffer.from('two'), {
      'content-type': 'text/plain',
    });
    assert.equal(media.status, 200);
    assert.deepEqual(
      (await jsonOf(media)).parents.map((p: { id: string }) => p.id),
      [a],
    );
    assert.deepEqual(await parentsOf(file.id), [a]);
    assert.deepEqual(await inFolder(a), [file.id]);
    assert.ok(!(await inFolder(rootId)).includes(file.id), 'no longer in the root');
    assert.equal(await content(file.id), 'two');

    const parts = multipart({ title: 'moved.txt' }, 'three');
    const multi = await h.raw('PUT', `/upload/storage/v2/files/${file.id}?uploadType=multipart&addParents=${b}`, parts.body, parts.headers);
    assert.equal(multi.status, 200);
    const multiBody = await jsonOf(multi);
    assert.equal(multiBody.title, 'moved.txt');
    assert.deepEqual(await parentsOf(file.id), [a, b], 'added beside A');
    assert.equal(await content(file.id), 'three');

    const done = await resumable(file.id, `&addParents=${c}&removeParents=${a},${b}`, { title: 'resumed.txt' }, 'four');
    assert.equal(done.status, 200);
    assert.equal((await jsonOf(done)).md5Checksum, md5('four'));
    assert.deepEqual(await parentsOf(file.id), [c]);
    assert.deepEqual(await inFolder(c), [file.id]);
    assert.deepEqual(await inFolder(a), []);
    assert.equal(await content(file.id), 'four');
  });

  it('STO-FILES-UPDATE STO-FILES-PATCH AMB-24: a bad addParents is the error files.patch gives, and the content, metadata and parents stay as they were', async () => {
    const a = await folder('bad-A');
    const file = await uploaded('kept');
    assert.equal((await h.api('PATCH', `/storage/v2/files/${file.id}?addParents=${a}&removeParents=root`, {})).status, 200);
    const plain = await uploaded('not a folder');
    const before = (await h.api('GET', `/storage/v2/files/${file.id}`)).body;
    const parts = multipart({ title: 'must-not-apply' }, 'changed');
    const attempts: Array<[string, string, () => Promise<Response>]> = [];
    for (const [bad, why] of [
      ['1doesNotExist0000000', 'missing'],
      [plain.id, 'not a folder'],
    ] as const) {
      const query = `addParents=${bad}&removeParents=${a}`;
      attempts.push(
        [
          bad,
          `media, ${why}`,
          () => h.raw('PUT', `/upload/storage/v2/files/${file.id}?uploadType=media&${query}`, Buffer.from('changed'), { 'content-type': 'text/plain' }),
        ],
        [bad, `multipart, ${why}`, () => h.raw('PUT', `/upload/storage/v2/files/${file.id}?uploadType=multipart&${query}`, parts.body, parts.headers)],
        [bad, `resumable, ${why}`, () => resumable(file.id, `&${query}`, { title: 'must-not-apply' }, 'changed')],
      );
    }
    for (const [bad, what, attempt] of attempts) {
      const patch = await h.api('PATCH', `/storage/v2/files/${file.id}?addParents=${bad}&removeParents=${a}`, { title: 'must-not-apply' });
      const res = await attempt();
      const body = await jsonOf(res);
      assert.equal(res.status, patch.status, what);
      assert.ok(res.status === 400 || res.status === 404, what);
      assert.equal(reasonOf(body), reasonOf(patch.body), what);
      assert.deepEqual(
        [body.error.message, body.error.errors[0].location, body.error.errors[0].locationType],
        [patch.body.error.message, 'addParents', 'parameter'],
        what,
      );
      assert.equal(res.headers.get('location'), null, `${what}: no session`);
    }
    const after = (await h.api('GET', `/storage/v2/files/${file.id}`)).body;
    assert.deepEqual(await parentsOf(file.id), [a]);
    assert.equal(await content(file.id), 'kept');
    assert.deepEqual(
      [after.title, after.headRevisionId, after.md5Checksum, after.etag, after.modifiedDate],
      [before.title, before.headRevisionId, before.md5Checksum, before.etag, before.modifiedDate],
    );
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/revisions`)).body.items.length, 1, 'no revision was made');
  });

  it('STO-FILES-UPDATE AMB-24: a resumable update whose addParents folder is deleted before the last byte is refused then, and the content and parents stay as they were', async () => {
    const b = await folder('gone-B');
    const file = await uploaded('old');
    const start = await h.raw(
      'PUT',
      `/upload/storage/v2/files/${file.id}?uploadType=resumable&addParents=${b}&removeParents=root`,
      JSON.stringify({ title: 'new' }),
      { 'content-type': 'application/json; charset=UTF-8', 'x-upload-content-type': 'text/plain', 'x-upload-content-length': '3' },
    );
    assert.equal(start.status, 200);
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${b}`)).status, 204);
    const location = new URL(start.headers.get('location')!);
    const last = await h.raw('PUT', location.pathname + location.search, 'new', { 'content-range': 'bytes 0-2/3' });
    assert.equal(last.status, 404);
    const body = await jsonOf(last);
    assert.equal(reasonOf(body), 'notFound');
    assert.equal(body.error.errors[0].location, 'addParents');
    assert.deepEqual(await parentsOf(file.id), [rootId]);
    const after = (await h.api('GET', `/storage/v2/files/${file.id}`)).body;
    assert.deepEqual([after.title, after.headRevisionId], [file.title, file.headRevisionId]);
    assert.equal(await content(file.id), 'old');
  });
});
