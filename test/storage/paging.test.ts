// Paging of the storage client against the embedded server: .all() follows nextPageToken to the end with a small
// maxResults, keeps nextPageToken in a fields mask that leaves it out (googleapis#2854), follows empty pages that
// still carry a token (the server's emptyPage fault); the change log ends in newStartPageToken, which .all() keeps.
import assert from 'node:assert/strict';
import { collect, setup, type Setup } from './helpers.js';

const FOLDER = 'application/vnd.google-apps.folder';

describe('storage client: paging and the change log', function () {
  this.timeout(30_000);
  let s: Setup;
  let folder: string;
  let titles: string[];
  before(async () => {
    s = await setup();
    folder = (await s.client.files.insert({ requestBody: { title: 'paged', mimeType: FOLDER } })).id!;
    titles = Array.from({ length: 7 }, (_, i) => `f${i}`);
    for (const title of titles) await s.client.files.insert({ requestBody: { title, parents: [{ id: folder }] } });
  });
  after(() => s.close());
  afterEach(() => s.admin('DELETE', 'faults'));
  const q = () => `'${folder}' in parents`;

  it('STO-FILES-LIST STO-CHILDREN-LIST: .all() with maxResults 2 reads all 7 in 4 pages; each page is one request', async () => {
    const before = await s.requests();
    assert.deepEqual(
      (await collect(s.client.files.list.all({ q: q(), orderBy: 'title', maxResults: 2 }))).map((f) => f.title),
      titles,
    );
    assert.equal((await s.requests()) - before, 4);
    assert.equal((await collect(s.client.children.list.all({ folderId: folder, maxResults: 3 }))).length, 7);
  });

  it('STO-FILES-LIST: a fields mask without nextPageToken still pages to the end (the mask gets nextPageToken added); one page asked with it has none', async () => {
    const page = await s.client.files.list({ q: q(), maxResults: 2, fields: 'items(id,title)' });
    assert.equal(page.items?.length, 2);
    assert.equal(page.nextPageToken, undefined, 'the server applies the mask as Drive does');
    const all = await collect(s.client.files.list.all({ q: q(), orderBy: 'title', maxResults: 2, fields: 'items(id,title)' }));
    assert.deepEqual(
      all.map((f) => f.title),
      titles,
    );
    assert.deepEqual(Object.keys(all[0]!).sort(), ['id', 'title']);
    assert.ok(s.served.length > 0);
  });

  it('STO-FILES-LIST STO-CHILDREN-LIST: empty pages that still carry a token (the emptyPage fault, three in a row) are followed, nothing lost or repeated', async () => {
    await s.admin('PUT', 'faults', { kind: 'emptyPage', times: 3 });
    const before = await s.requests();
    assert.deepEqual(
      (await collect(s.client.files.list.all({ q: q(), orderBy: 'title', maxResults: 3 }))).map((f) => f.title),
      titles,
    );
    assert.equal((await s.requests()) - before, 3 + 3, 'three empty pages, then three pages of 3, 3 and 1');
    await s.admin('PUT', 'faults', { kind: 'emptyPage', times: 2 });
    assert.equal((await collect(s.client.children.list.all({ folderId: folder, maxResults: 4 }))).length, 7);
  });

  it('STO-CHANGES-GETSTARTPAGETOKEN STO-CHANGES-LIST STO-CHANGES-GET: a page has nextPageToken or newStartPageToken; .all() follows the first (and empty pages) and keeps the second to save', async () => {
    const start = await s.client.changes.getStartPageToken();
    assert.equal(start.kind, 'storage#startPageToken');
    const made = [];
    for (const title of ['c1', 'c2', 'c3']) made.push(await s.client.files.insert({ requestBody: { title } }));
    const first = await s.client.changes.list({ pageToken: start.startPageToken!, maxResults: 2 });
    assert.equal(first.kind, 'storage#changeList');
    assert.equal(first.items?.length, 2);
    assert.ok(first.nextPageToken);
    assert.equal(first.newStartPageToken, undefined);
    const last = await s.client.changes.list({ pageToken: first.nextPageToken!, maxResults: 2 });
    assert.equal(last.nextPageToken, undefined);
    assert.ok(last.newStartPageToken);
    const one = await s.client.changes.get({ changeId: first.items![0]!.id! });
    assert.equal(one.kind, 'storage#change');
    assert.equal(one.fileId, made[0]!.id);

    await s.admin('PUT', 'faults', { kind: 'emptyPage', times: 2 });
    const changes = s.client.changes.list.all({ pageToken: start.startPageToken!, maxResults: 1, fields: 'items(fileId)' });
    assert.equal(changes.newStartPageToken, undefined, 'not known before the end');
    assert.deepEqual(
      (await collect(changes)).map((c) => c.fileId),
      made.map((f) => f.id),
    );
    assert.equal(changes.newStartPageToken, last.newStartPageToken, 'the token to save, kept although the mask left it out');
    await s.client.files.patch({ fileId: made[1]!.id!, requestBody: { title: 'c2 renamed' } });
    const newer = s.client.changes.list.all({ pageToken: changes.newStartPageToken! });
    assert.deepEqual(
      (await collect(newer)).map((c) => c.file?.title),
      ['c2 renamed'],
      'only what changed since',
    );
    assert.ok(Number(newer.newStartPageToken) > Number(changes.newStartPageToken));
  });
});
