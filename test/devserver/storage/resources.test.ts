// about, the change log, parents/children references, permissions and revisions of the embedded storage server.
import assert from 'node:assert/strict';
import { harness, reasonOf, type Harness } from './helpers.js';

const FOLDER = 'application/vnd.google-apps.folder';

describe('devserver/storage: about, changes, references, permissions, revisions', function () {
  this.timeout(20_000);
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  it('STO-ABOUT-GET: about answers the user, the root folder id and the quota', async () => {
    const about = await h.api('GET', '/storage/v2/about');
    assert.equal(about.status, 200);
    assert.equal(about.body.kind, 'storage#about');
    assert.equal(about.body.user.emailAddress, 'dev@gantry.test');
    const root = await h.api('GET', '/storage/v2/files/root');
    assert.equal(about.body.rootFolderId, root.body.id);
    assert.match(about.body.quotaBytesTotal, /^\d+$/);
  });

  it('STO-CHANGES-GETSTARTPAGETOKEN STO-CHANGES-LIST STO-CHANGES-GET: changes after the start token page with nextPageToken and end with newStartPageToken, never both', async () => {
    const start = (await h.api('GET', '/storage/v2/changes/startPageToken')).body;
    assert.equal(start.kind, 'storage#startPageToken');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await h.api('POST', '/storage/v2/files', { title: `change ${i}` })).body.id);
    await h.raw('DELETE', `/storage/v2/files/${ids[0]}`);
    const seen: { fileId: string; deleted: boolean }[] = [];
    let token: string = start.startPageToken;
    let newStart: string | undefined;
    while (!newStart) {
      const page = await h.api('GET', `/storage/v2/changes?pageToken=${token}&maxResults=2`);
      assert.equal(page.status, 200);
      assert.equal(page.body.kind, 'storage#changeList');
      assert.ok(!(page.body.nextPageToken && page.body.newStartPageToken), 'never both');
      seen.push(...page.body.items.map((c: { fileId: string; deleted: boolean }) => ({ fileId: c.fileId, deleted: c.deleted })));
      token = page.body.nextPageToken;
      newStart = page.body.newStartPageToken;
    }
    assert.deepEqual(
      seen.map((c) => c.fileId),
      [ids[1], ids[2], ids[0]],
    );
    assert.equal(seen[2]!.deleted, true);
    const idle = await h.api('GET', `/storage/v2/changes?pageToken=${newStart}`);
    assert.deepEqual(idle.body.items, []);
    assert.equal(idle.body.newStartPageToken, newStart);
    assert.equal((await h.api('GET', '/storage/v2/changes?pageToken=abc')).status, 400);
    const one = await h.api('GET', `/storage/v2/changes/${Number(newStart) - 1}`);
    assert.equal(one.body.kind, 'storage#change');
    assert.equal((await h.api('GET', '/storage/v2/changes/999999')).status, 404);
  });

  it('STO-PARENTS-LIST STO-PARENTS-INSERT STO-PARENTS-GET STO-PARENTS-DELETE STO-CHILDREN-LIST STO-CHILDREN-INSERT STO-CHILDREN-GET STO-CHILDREN-DELETE: references edit the same parents', async () => {
    const a = (await h.api('POST', '/storage/v2/files', { title: 'A', mimeType: FOLDER })).body;
    const b = (await h.api('POST', '/storage/v2/files', { title: 'B', mimeType: FOLDER })).body;
    const file = (await h.api('POST', '/storage/v2/files', { title: 'f', parents: [{ id: a.id }] })).body;
    const added = await h.api('POST', `/storage/v2/files/${file.id}/parents`, { id: b.id });
    assert.equal(added.body.kind, 'storage#parentReference');
    assert.deepEqual(
      (await h.api('GET', `/storage/v2/files/${file.id}/parents`)).body.items.map((p: { id: string }) => p.id),
      [a.id, b.id],
    );
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/parents/${b.id}`)).status, 200);
    const children = await h.api('GET', `/storage/v2/files/${b.id}/children`);
    assert.equal(children.body.kind, 'storage#childList');
    assert.deepEqual(
      children.body.items.map((c: { id: string }) => c.id),
      [file.id],
    );
    assert.equal((await h.api('GET', `/storage/v2/files/${a.id}/children/${file.id}`)).body.kind, 'storage#childReference');
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${a.id}/children/${file.id}`)).status, 204);
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${file.id}/parents/${b.id}`)).status, 204);
    assert.deepEqual((await h.api('GET', `/storage/v2/files/${file.id}`)).body.parents, []);
    assert.equal((await h.api('POST', `/storage/v2/files/${a.id}/children`, { id: file.id })).status, 200);
    assert.equal((await h.api('POST', `/storage/v2/files/${a.id}/parents`, { id: a.id })).status, 400, 'not inside itself');
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/children`)).status, 400, 'not a folder');
  });

  it('STO-FILES-PATCH STO-FILES-UPDATE STO-PARENTS-INSERT STO-CHILDREN-INSERT: a folder placed inside itself or one of its descendants is 400 badRequest (Drive\'s "cycle in the directory graph"), and the refused request changes nothing', async () => {
    const a = (await h.api('POST', '/storage/v2/files', { title: 'cycle-A', mimeType: FOLDER })).body;
    const b = (await h.api('POST', '/storage/v2/files', { title: 'cycle-B', mimeType: FOLDER, parents: [{ id: a.id }] })).body;
    const c = (await h.api('POST', '/storage/v2/files', { title: 'cycle-C', mimeType: FOLDER, parents: [{ id: b.id }] })).body;
    const plain = (await h.api('POST', '/storage/v2/files', { title: 'cycle-file' })).body;
    const root = (await h.api('GET', '/storage/v2/files/root')).body;
    const refusals: Array<[string, string, unknown, string]> = [
      ['PATCH', `/storage/v2/files/${a.id}?addParents=${a.id}&removeParents=${root.id}`, {}, 'addParents'],
      ['PATCH', `/storage/v2/files/${a.id}?addParents=${c.id}&removeParents=${root.id}`, {}, 'addParents'],
      ['PUT', `/storage/v2/files/${a.id}?addParents=${b.id}`, {}, 'addParents'],
      ['PATCH', `/storage/v2/files/${a.id}`, { title: 'renamed', parents: [{ id: c.id }] }, 'parents'],
      ['PUT', `/storage/v2/files/${a.id}`, { title: 'renamed', parents: [{ id: a.id }] }, 'parents'],
      ['PATCH', `/storage/v2/files/${a.id}?addParents=${c.id}`, { title: 'renamed' }, 'addParents'],
      ['POST', `/storage/v2/files/${a.id}/parents`, { id: a.id }, 'id'],
      ['POST', `/storage/v2/files/${a.id}/parents`, { id: c.id }, 'id'],
      ['POST', `/storage/v2/files/${b.id}/children`, { id: a.id }, 'folderId'],
      ['POST', `/storage/v2/files/${a.id}/children`, { id: a.id }, 'folderId'],
    ];
    for (const [method, path, body, location] of refusals) {
      const refused = await h.api(method, path, body);
      assert.equal(refused.status, 400, `${method} ${path}`);
      assert.equal(reasonOf(refused.body), 'badRequest', `${method} ${path}`);
      assert.equal(refused.body.error.message, 'A folder cannot be placed inside itself or one of its descendants');
      assert.deepEqual([refused.body.error.errors[0].location, refused.body.error.errors[0].locationType], [location, 'parameter'], `${method} ${path}`);
    }
    const after = (await h.api('GET', `/storage/v2/files/${a.id}`)).body;
    assert.deepEqual(
      after.parents.map((p: { id: string }) => p.id),
      [root.id],
      'A is still in the root',
    );
    assert.equal(after.title, 'cycle-A', 'nothing of a refused patch was applied');
    assert.equal(after.etag, a.etag, 'not even its version');
    assert.deepEqual(
      (await h.api('GET', `/storage/v2/files/${c.id}`)).body.parents.map((p: { id: string }) => p.id),
      [b.id],
    );
    const notFolder = await h.api('PATCH', `/storage/v2/files/${c.id}?addParents=${plain.id}`, {});
    assert.equal(notFolder.status, 400, 'addParents must name a folder');
    assert.equal(notFolder.body.error.errors[0].location, 'addParents');
    assert.equal(reasonOf((await h.api('PATCH', `/storage/v2/files/${root.id}?addParents=${a.id}`, {})).body), 'cannotModifyRootFolder');
    // A descendant may move up, and a folder into a sibling's subtree.
    const up = await h.api('PATCH', `/storage/v2/files/${c.id}?addParents=${a.id}&removeParents=${b.id}`, {});
    assert.equal(up.status, 200);
    assert.deepEqual(
      up.body.parents.map((p: { id: string }) => p.id),
      [a.id],
    );
    assert.equal((await h.api('PATCH', `/storage/v2/files/${b.id}?addParents=${c.id}&removeParents=${a.id}`, {})).status, 200, 'B into C, now its sibling');
  });

  it('STO-PERMISSIONS-INSERT STO-PERMISSIONS-PATCH: a commenter is Drive v2\'s reader with additionalRoles ["commenter"], kept on read and on a patch that leaves it alone, dropped with a role that is not reader; anything else in additionalRoles is 400', async () => {
    const file = (await h.api('POST', '/storage/v2/files', { title: 'commented' })).body;
    const inserted = await h.api('POST', `/storage/v2/files/${file.id}/permissions`, {
      role: 'reader',
      additionalRoles: ['commenter'],
      type: 'user',
      value: 'cora@example.com',
    });
    assert.equal(inserted.status, 200);
    assert.deepEqual([inserted.body.role, inserted.body.additionalRoles], ['reader', ['commenter']]);
    const read = await h.api('GET', `/storage/v2/files/${file.id}/permissions/${inserted.body.id}`);
    assert.deepEqual(read.body.additionalRoles, ['commenter']);
    const kept = await h.api('PATCH', `/storage/v2/files/${file.id}/permissions/${inserted.body.id}`, { withLink: false });
    assert.deepEqual(kept.body.additionalRoles, ['commenter']);
    const writer = await h.api('PATCH', `/storage/v2/files/${file.id}/permissions/${inserted.body.id}`, { role: 'writer' });
    assert.equal(writer.body.role, 'writer');
    assert.equal(writer.body.additionalRoles, undefined);
    for (const bad of [
      { role: 'reader', additionalRoles: ['owner'] },
      { role: 'writer', additionalRoles: ['commenter'] },
      { role: 'reader', additionalRoles: 'commenter' },
    ]) {
      const refused = await h.api('POST', `/storage/v2/files/${file.id}/permissions`, { ...bad, type: 'user', value: 'dan@example.com' });
      assert.equal(refused.status, 400, JSON.stringify(bad));
      assert.equal(refused.body.error.errors[0].location, 'additionalRoles');
    }
  });

  it('STO-PERMISSIONS-INSERT STO-PERMISSIONS-LIST STO-PERMISSIONS-GET STO-PERMISSIONS-PATCH STO-PERMISSIONS-UPDATE STO-PERMISSIONS-DELETE STO-PERMISSIONS-GETIDFOREMAIL', async () => {
    const file = (await h.api('POST', '/storage/v2/files', { title: 'shared' })).body;
    const inserted = await h.api('POST', `/storage/v2/files/${file.id}/permissions`, { role: 'reader', type: 'user', value: 'Ann@example.com' });
    assert.equal(inserted.status, 200);
    assert.equal(inserted.body.kind, 'storage#permission');
    const idFor = await h.api('GET', '/storage/v2/permissionIds/ann@example.com');
    assert.equal(idFor.body.kind, 'storage#permissionId');
    assert.equal(idFor.body.id, inserted.body.id);
    const list = await h.api('GET', `/storage/v2/files/${file.id}/permissions`);
    assert.deepEqual(
      list.body.items.map((p: { role: string }) => p.role),
      ['owner', 'reader'],
    );
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}`)).body.shared, true);
    assert.equal((await h.api('PATCH', `/storage/v2/files/${file.id}/permissions/${inserted.body.id}`, { role: 'writer' })).body.role, 'writer');
    assert.equal((await h.api('PUT', `/storage/v2/files/${file.id}/permissions/${inserted.body.id}`, { role: 'commenter' })).body.role, 'commenter');
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/permissions/${inserted.body.id}`)).body.role, 'commenter');
    const bad = await h.api('POST', `/storage/v2/files/${file.id}/permissions`, { role: 'boss', type: 'user', value: 'x@example.com' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.errors[0].location, 'role');
    assert.equal((await h.api('POST', `/storage/v2/files/${file.id}/permissions`, { role: 'reader', type: 'user', value: 'no-at' })).status, 400);
    const owner = list.body.items[0].id;
    assert.equal(reasonOf((await h.api('DELETE', `/storage/v2/files/${file.id}/permissions/${owner}`)).body), 'cannotRemoveOwner');
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${file.id}/permissions/${inserted.body.id}`)).status, 204);
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/permissions/${inserted.body.id}`)).status, 404);
  });

  it('STO-REVISIONS-LIST STO-REVISIONS-GET STO-REVISIONS-PATCH STO-REVISIONS-UPDATE STO-REVISIONS-DELETE: one revision per content update, downloadable; the head deleted makes the previous one head', async () => {
    const up = async (text: string, id?: string) =>
      (
        await h.raw(id ? 'PUT' : 'POST', `/upload/storage/v2/files${id ? `/${id}` : ''}?uploadType=media`, text, { 'content-type': 'text/plain' })
      ).json() as Promise<{ id: string; headRevisionId: string }>;
    const first = await up('v1');
    await up('v2-', first.id);
    const revisions = (await h.api('GET', `/storage/v2/files/${first.id}/revisions`)).body;
    assert.equal(revisions.kind, 'storage#revisionList');
    assert.equal(revisions.items.length, 2);
    assert.deepEqual(
      revisions.items.map((r: { fileSize: string }) => r.fileSize),
      ['2', '3'],
    );
    const old = await h.raw('GET', `/storage/v2/files/${first.id}/revisions/${first.headRevisionId}?alt=media`);
    assert.equal(await old.text(), 'v1');
    assert.equal((await h.api('PATCH', `/storage/v2/files/${first.id}/revisions/${first.headRevisionId}`, { pinned: true })).body.pinned, true);
    assert.equal((await h.api('PUT', `/storage/v2/files/${first.id}/revisions/${first.headRevisionId}`, { pinned: false })).body.pinned, false);
    const head = revisions.items[1].id;
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${first.id}/revisions/${head}`)).status, 204);
    const file = (await h.api('GET', `/storage/v2/files/${first.id}`)).body;
    assert.equal(file.headRevisionId, first.headRevisionId);
    assert.equal(file.fileSize, '2');
    assert.equal(reasonOf((await h.api('DELETE', `/storage/v2/files/${first.id}/revisions/${first.headRevisionId}`)).body), 'cannotDeleteOnlyRevision');
  });
});
