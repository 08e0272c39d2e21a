// files.* of the embedded storage server over real sockets: insert, get, list (q, paging, fields), patch/update with
// If-Match, copy, trash/untrash cascading, delete, emptyTrash, touch, generateIds, and AMB-23's routing.
import assert from 'node:assert/strict';
import { harness, jsonOf, reasonOf, type Harness } from './helpers.js';

const FOLDER = 'application/vnd.google-apps.folder';

describe('devserver/storage: files', function () {
  this.timeout(20_000);
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  it("STO-BASE-PREFIX STO-VER-V2: a request without a valid bearer token is 401 in Drive's error shape; unknown paths are 404, wrong methods 405", async () => {
    const none = await fetch(`${h.server.url}/storage/v2/files`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate')!, /^Bearer /);
    const body = await jsonOf(none);
    assert.equal(reasonOf(body), 'required', 'no credentials: Login Required');
    assert.equal(body.error.errors[0].location, 'Authorization');
    const bad = await h.raw('GET', '/storage/v2/files', undefined, { authorization: 'Bearer wrong-token-x' });
    assert.equal(bad.status, 401);
    assert.equal(reasonOf(await jsonOf(bad)), 'authError');
    assert.match(bad.headers.get('www-authenticate')!, /error="invalid_token"/);
    assert.equal(
      (await h.raw('GET', '/storage/v2/about?access_token=ya29.storage-test-token', undefined, { authorization: '' })).status,
      200,
      'access_token in the query, as Google accepts',
    );
    assert.equal((await h.raw('GET', '/drive/v2/files')).status, 404, 'outside the API: the plain 404 page (outside-api.test.ts)');
    const unknown = await h.api('GET', '/storage/v2/nothing/here');
    assert.equal(unknown.status, 404);
    assert.equal(reasonOf(unknown.body), 'notFound', 'an unknown path inside the API is its JSON notFound');
    const wrong = await h.api('PATCH', '/storage/v2/files');
    assert.equal(wrong.status, 405);
    assert.equal(reasonOf(wrong.body), 'methodNotAllowed');
  });

  it('STO-FILES-INSERT STO-FILES-GET: insert (metadata only) answers a storage#file; get answers it again; an unknown id is 404 notFound', async () => {
    const made = await h.api('POST', '/storage/v2/files', { title: 'notes.txt', mimeType: 'text/plain', description: 'd' });
    assert.equal(made.status, 200);
    assert.equal(made.body.kind, 'storage#file');
    assert.match(made.body.id, /^[A-Za-z0-9_-]{20,}$/);
    assert.equal(made.body.title, 'notes.txt');
    assert.equal(made.body.parents[0].kind, 'storage#parentReference');
    assert.equal(made.body.parents[0].isRoot, true);
    assert.equal(made.body.labels.trashed, false);
    const got = await h.api('GET', `/storage/v2/files/${made.body.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.etag, made.body.etag);
    const missing = await h.api('GET', '/storage/v2/files/1doesNotExist00000');
    assert.equal(missing.status, 404);
    assert.equal(reasonOf(missing.body), 'notFound');
    assert.equal(missing.body.error.errors[0].location, 'fileId');
    const badParent = await h.api('POST', '/storage/v2/files', { title: 'x', parents: [{ id: '1nope000000000' }] });
    assert.equal(badParent.status, 404);
    const notJson = await h.raw('POST', '/storage/v2/files', '{nope', { 'content-type': 'application/json' });
    assert.equal(notJson.status, 400);
    assert.equal(reasonOf(await jsonOf(notJson)), 'parseError');
  });

  it('STO-FILES-LIST: q (in parents, trashed, title, mimeType), maxResults and pageToken paging, and a fields mask that keeps nextPageToken', async () => {
    const folder = (await h.api('POST', '/storage/v2/files', { title: 'list-folder', mimeType: FOLDER })).body;
    for (let i = 0; i < 5; i++)
      await h.api('POST', '/storage/v2/files', { title: `item ${i}`, mimeType: i % 2 ? 'text/plain' : 'image/png', parents: [{ id: folder.id }] });
    const q = encodeURIComponent(`'${folder.id}' in parents and trashed = false`);
    const titles: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await h.api('GET', `/storage/v2/files?q=${q}&maxResults=2&fields=nextPageToken,items(id,title)${token ? `&pageToken=${token}` : ''}`);
      assert.equal(page.status, 200);
      assert.deepEqual(Object.keys(page.body).sort(), page.body.nextPageToken ? ['items', 'nextPageToken'] : ['items']);
      for (const item of page.body.items) assert.deepEqual(Object.keys(item).sort(), ['id', 'title']);
      titles.push(...page.body.items.map((i: { title: string }) => i.title));
      token = page.body.nextPageToken;
      pages++;
    } while (token);
    assert.equal(pages, 3);
    assert.deepEqual(titles, ['item 0', 'item 1', 'item 2', 'item 3', 'item 4']);
    const pngs = await h.api('GET', `/storage/v2/files?q=${encodeURIComponent(`'${folder.id}' in parents and mimeType = 'image/png'`)}`);
    assert.equal(pngs.body.kind, 'storage#fileList');
    assert.equal(pngs.body.items.length, 3);
    const byTitle = await h.api('GET', `/storage/v2/files?q=${encodeURIComponent("title = 'item 3'")}`);
    assert.deepEqual(
      byTitle.body.items.map((i: { title: string }) => i.title),
      ['item 3'],
    );
    const bad = await h.api('GET', `/storage/v2/files?q=${encodeURIComponent('fullText contains "x" or')}`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.errors[0].location, 'q');
    assert.equal((await h.api('GET', '/storage/v2/files?maxResults=1001')).status, 400);
    assert.equal((await h.api('GET', '/storage/v2/files?pageToken=garbage')).status, 400);
  });

  it('STO-FILES-LIST: orderBy sorts by title, folder, createdDate (desc too); an unknown key is 400', async () => {
    const folder = (await h.api('POST', '/storage/v2/files', { title: 'order-folder', mimeType: FOLDER })).body;
    for (const title of ['b', 'C', 'a']) await h.api('POST', '/storage/v2/files', { title, parents: [{ id: folder.id }] });
    await h.api('POST', '/storage/v2/files', { title: 'z-sub', mimeType: FOLDER, parents: [{ id: folder.id }] });
    const q = encodeURIComponent(`'${folder.id}' in parents`);
    const titles = async (order: string) =>
      (await h.api('GET', `/storage/v2/files?q=${q}&orderBy=${encodeURIComponent(order)}`)).body.items.map((i: { title: string }) => i.title);
    assert.deepEqual(await titles('title'), ['C', 'a', 'b', 'z-sub']);
    assert.deepEqual(await titles('folder,title_natural'), ['z-sub', 'a', 'b', 'C']);
    assert.deepEqual(await titles('createdDate desc'), ['z-sub', 'a', 'C', 'b']);
    assert.equal((await h.api('GET', `/storage/v2/files?orderBy=size`)).status, 400);
  });

  it('STO-FILES-PATCH STO-FILES-UPDATE: patch and update change metadata and the etag; If-Match with a stale etag is 412 conditionNotMet', async () => {
    const file = (await h.api('POST', '/storage/v2/files', { title: 'a' })).body;
    const patched = await h.api('PATCH', `/storage/v2/files/${file.id}`, { title: 'b' }, { 'if-match': file.etag });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.title, 'b');
    assert.notEqual(patched.body.etag, file.etag);
    const stale = await h.api('PUT', `/storage/v2/files/${file.id}`, { title: 'c' }, { 'if-match': file.etag });
    assert.equal(stale.status, 412);
    assert.equal(reasonOf(stale.body), 'conditionNotMet');
    assert.equal(stale.body.error.errors[0].locationType, 'header');
    const updated = await h.api('PUT', `/storage/v2/files/${file.id}`, { title: 'c' }, { 'if-match': patched.body.etag });
    assert.equal(updated.body.title, 'c');
    assert.equal((await h.api('PATCH', `/storage/v2/files/${file.id}`, { title: 5 })).status, 400);
  });

  it('STO-FILES-TRASH STO-FILES-UNTRASH STO-FILES-DELETE STO-FILES-EMPTYTRASH: trash is a label cascading to children; untrash restores them; delete and emptyTrash remove for good', async () => {
    const folder = (await h.api('POST', '/storage/v2/files', { title: 'trash-folder', mimeType: FOLDER })).body;
    const child = (await h.api('POST', '/storage/v2/files', { title: 'child', parents: [{ id: folder.id }] })).body;
    const trashed = await h.api('POST', `/storage/v2/files/${folder.id}/trash`);
    assert.equal(trashed.body.labels.trashed, true);
    assert.equal(trashed.body.explicitlyTrashed, true);
    const childNow = (await h.api('GET', `/storage/v2/files/${child.id}`)).body;
    assert.equal(childNow.labels.trashed, true);
    assert.equal(childNow.explicitlyTrashed, false);
    await h.api('POST', `/storage/v2/files/${folder.id}/untrash`);
    assert.equal((await h.api('GET', `/storage/v2/files/${child.id}`)).body.labels.trashed, false);
    await h.api('PATCH', `/storage/v2/files/${folder.id}`, { labels: { trashed: true } });
    assert.equal((await h.api('GET', `/storage/v2/files/${child.id}`)).body.labels.trashed, true);
    const empty = await h.raw('DELETE', '/storage/v2/files/trash');
    assert.equal(empty.status, 204);
    assert.equal((await h.api('GET', `/storage/v2/files/${folder.id}`)).status, 404);
    assert.equal((await h.api('GET', `/storage/v2/files/${child.id}`)).status, 404);
    const other = (await h.api('POST', '/storage/v2/files', { title: 'gone' })).body;
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${other.id}`)).status, 204);
    assert.equal((await h.api('GET', `/storage/v2/files/${other.id}`)).status, 404);
    assert.equal((await h.api('GET', '/storage/v2/files/root')).status, 200);
    assert.equal((await h.raw('DELETE', '/storage/v2/files/root')).status, 403);
  });

  it('AMB-23 STO-FILES-GENERATEIDS STO-FILES-GENERATECSETOKEN: files/trash, files/generateIds and files/generateCseToken are matched before {fileId}', async () => {
    const ids = await h.api('GET', '/storage/v2/files/generateIds?maxResults=3');
    assert.equal(ids.status, 200);
    assert.equal(ids.body.kind, 'storage#generatedIds');
    assert.equal(ids.body.ids.length, 3);
    const withId = await h.api('POST', '/storage/v2/files', { id: ids.body.ids[0], title: 'pre-made id' });
    assert.equal(withId.body.id, ids.body.ids[0]);
    assert.equal((await h.api('POST', '/storage/v2/files', { id: ids.body.ids[0] })).status, 409);
    const cse = await h.api('GET', '/storage/v2/files/generateCseToken');
    assert.equal(cse.status, 200);
    assert.equal(cse.body.kind, 'storage#generateCseTokenResponse');
    assert.equal((await h.api('GET', '/storage/v2/files/trash')).status, 404, 'GET files/trash is files.get of an id "trash"');
  });

  it('STO-FILES-COPY STO-FILES-TOUCH: copy makes a new file ("Copy of …" unless titled); touch bumps modifiedDate', async () => {
    const source = (await h.api('POST', '/storage/v2/files', { title: 'orig', properties: [{ key: 'k', value: 'v' }] })).body;
    const copied = await h.api('POST', `/storage/v2/files/${source.id}/copy`, {});
    assert.equal(copied.status, 200);
    assert.notEqual(copied.body.id, source.id);
    assert.equal(copied.body.title, 'Copy of orig');
    assert.equal(copied.body.properties[0].key, 'k');
    const named = await h.api('POST', `/storage/v2/files/${source.id}/copy`, { title: 'named' });
    assert.equal(named.body.title, 'named');
    await new Promise((r) => setTimeout(r, 5));
    const touched = await h.api('POST', `/storage/v2/files/${source.id}/touch`);
    assert.ok(touched.body.modifiedDate > source.modifiedDate);
  });

  it('STO-FILES-GET: fields masks a single file; alt must be json or media', async () => {
    const file = (await h.api('POST', '/storage/v2/files', { title: 'masked' })).body;
    const masked = await h.api('GET', `/storage/v2/files/${file.id}?fields=id,labels/trashed`);
    assert.deepEqual(masked.body, { id: file.id, labels: { trashed: false } });
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}?alt=proto`)).status, 400);
  });
});
