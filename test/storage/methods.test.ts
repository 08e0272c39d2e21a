// Every method of the storage client against the embedded storage server, over real sockets: each test names the
// STO-* rules of the methods it calls. Content uploads are the transfers' tests; where a method needs a file with
// content (revisions, export), the test makes one with a plain upload request.
import assert from 'node:assert/strict';
import { createStorageClient, StorageError, type StorageClient } from '../../lib/storage/index.js';
import { collect, rejection, setup, TOKEN, type Setup } from './helpers.js';

const FOLDER = 'application/vnd.google-apps.folder';

describe('storage client: the 70 methods against the embedded server', function () {
  this.timeout(30_000);
  let s: Setup;
  let client: StorageClient;
  before(async () => {
    s = await setup({ exportLimitBytes: 1000 });
    client = s.client;
  });
  after(() => s.close());

  /** A file with content, made the way an upload makes one (the upload client is tested elsewhere). */
  const upload = async (text: string, metadata: Record<string, unknown> = { title: 'doc.txt' }, fileId?: string) => {
    const body = `--b\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(metadata)}\r\n--b\r\nContent-Type: text/plain\r\n\r\n${text}\r\n--b--`;
    const res = await s.h.raw(fileId ? 'PUT' : 'POST', `/upload/storage/v2/files${fileId ? `/${fileId}` : ''}?uploadType=multipart`, body, {
      'content-type': 'multipart/related; boundary=b',
    });
    assert.equal(res.status, 200);
    return (await res.json()) as { id: string; headRevisionId: string };
  };

  it('STO-ABOUT-GET STO-BASE-PREFIX STO-VER-V2: about.get under /storage/v2 of the base URL (given with or without /storage/v2)', async () => {
    const about = await client.about.get();
    assert.equal(about.kind, 'storage#about');
    assert.ok(about.rootFolderId);
    assert.equal(about.user?.emailAddress, 'dev@gantry.test');
    assert.match(s.served.at(-1)!, /^GET \/storage\/v2\/about 200$/);
    const other = createStorageClient({ baseUrl: `${s.h.server.url}/storage/v2/`, token: TOKEN });
    try {
      assert.equal((await other.about.get({ fields: 'rootFolderId' })).rootFolderId, about.rootFolderId);
      assert.deepEqual(Object.keys(await other.about.get({ fields: 'rootFolderId,kind' })).sort(), ['kind', 'rootFolderId']);
    } finally {
      other.close();
    }
  });

  it('STO-FILES-INSERT STO-FILES-GET STO-FILES-PATCH STO-FILES-UPDATE STO-FILES-COPY STO-FILES-TOUCH: metadata inserted, read, patched, replaced, copied and touched', async () => {
    const folder = await client.files.insert({ requestBody: { title: 'reports', mimeType: FOLDER } });
    assert.equal(folder.kind, 'storage#file');
    const file = await client.files.insert({
      requestBody: { title: 'a.json', mimeType: 'application/json', parents: [{ id: folder.id! }], description: 'first' },
    });
    assert.equal(file.parents?.[0]?.id, folder.id);
    const read = await client.files.get({ fileId: file.id!, fields: 'id,title,description,labels(starred,trashed)' });
    assert.deepEqual(read, { id: file.id, title: 'a.json', description: 'first', labels: { starred: false, trashed: false } });
    const patched = await client.files.patch({ fileId: file.id!, requestBody: { description: 'second', labels: { starred: true } }, ifMatch: file.etag! });
    assert.equal(patched.description, 'second');
    assert.equal(patched.labels?.starred, true);
    assert.ok(Number(patched.version) > Number(file.version));
    const updated = await client.files.update({ fileId: file.id!, requestBody: { title: 'b.json' }, ifMatch: patched.etag! });
    assert.equal(updated.title, 'b.json');
    const copy = await client.files.copy({ fileId: file.id!, requestBody: { title: 'c.json' } });
    assert.notEqual(copy.id, file.id);
    assert.equal(copy.title, 'c.json');
    assert.equal((await client.files.copy({ fileId: file.id! })).title, 'Copy of b.json');
    await new Promise((r) => setTimeout(r, 5));
    const touched = await client.files.touch({ fileId: file.id! });
    assert.ok(touched.modifiedDate! > updated.modifiedDate!);
    const moved = await client.files.patch({ fileId: file.id!, addParents: 'root', removeParents: folder.id! });
    assert.deepEqual(
      moved.parents?.map((p) => p.isRoot),
      [true],
    );
  });

  it('STO-FILES-TRASH STO-FILES-UNTRASH STO-FILES-DELETE STO-FILES-EMPTYTRASH: trash and back, delete for good, and the trash emptied', async () => {
    const file = await client.files.insert({ requestBody: { title: 'old' } });
    const trashed = await client.files.trash({ fileId: file.id! });
    assert.equal(trashed.labels?.trashed, true);
    assert.equal(trashed.explicitlyTrashed, true);
    assert.equal((await client.files.untrash({ fileId: file.id! })).labels?.trashed, false);
    assert.equal(await client.files.delete({ fileId: file.id! }), undefined);
    assert.equal((await rejection(client.files.get({ fileId: file.id! }))).reason, 'notFound');
    const other = await client.files.insert({ requestBody: { title: 'trash me' } });
    await client.files.trash({ fileId: other.id! });
    assert.equal(await client.files.emptyTrash(), undefined);
    assert.equal((await rejection(client.files.get({ fileId: other.id! }))).status, 404);
    assert.match(
      s.served.find((line) => line.startsWith('DELETE /storage/v2/files/trash'))!,
      / 204$/,
    );
  });

  it('STO-FILES-LIST: q, orderBy, maxResults and a fields mask; .all() pages to the end', async () => {
    const folder = await client.files.insert({ requestBody: { title: 'list here', mimeType: FOLDER } });
    for (const title of ['c', 'a', 'b']) await client.files.insert({ requestBody: { title, parents: [{ id: folder.id! }] } });
    const q = `'${folder.id}' in parents and trashed = false`;
    const first = await client.files.list({ q, orderBy: 'title', maxResults: 2 });
    assert.equal(first.kind, 'storage#fileList');
    assert.deepEqual(
      first.items?.map((f) => f.title),
      ['a', 'b'],
    );
    assert.ok(first.nextPageToken);
    const second = await client.files.list({ q, orderBy: 'title', maxResults: 2, pageToken: first.nextPageToken! });
    assert.deepEqual(
      second.items?.map((f) => f.title),
      ['c'],
    );
    assert.equal(second.nextPageToken, undefined);
    assert.deepEqual(
      (await collect(client.files.list.all({ q, orderBy: 'title desc', maxResults: 1, fields: 'items(title)' }))).map((f) => f.title),
      ['c', 'b', 'a'],
    );
    const refused = await rejection(client.files.list({ q: 'fullText contains "x"' }));
    assert.equal(refused.reason, 'invalid');
    assert.equal(refused.location, 'q');
  });

  it('AMB-23 STO-FILES-GENERATEIDS STO-FILES-GENERATECSETOKEN: ids usable in insert; a CSE token; the literal paths before {fileId}', async () => {
    const ids = await client.files.generateIds({ maxResults: 2, space: 'drive' });
    assert.equal(ids.kind, 'storage#generatedIds');
    assert.equal(ids.ids?.length, 2);
    assert.equal((await client.files.insert({ requestBody: { id: ids.ids![0]!, title: 'pre-made id' } })).id, ids.ids![0]);
    const cse = await client.files.generateCseToken();
    assert.equal(cse.kind, 'storage#generateCseTokenResponse');
    assert.equal(cse.jwt?.split('.').length, 3);
    const file = await client.files.insert({ requestBody: { title: 'cse' } });
    assert.equal((await client.files.generateCseToken({ fileId: file.id! })).fileId, file.id);
    assert.equal((await rejection(client.files.get({ fileId: 'trash' }))).reason, 'notFound', 'GET files/trash is files.get of "trash"');
  });

  it('STO-FILES-LISTLABELS STO-FILES-MODIFYLABELS: a label set by field, listed (one page and .all()), removed', async () => {
    const file = await client.files.insert({ requestBody: { title: 'labelled' } });
    const modified = await client.files.modifyLabels({
      fileId: file.id!,
      requestBody: { labelModifications: [{ labelId: 'release', fieldModifications: [{ fieldId: 'stage', setTextValues: ['beta'] }] }] },
    });
    assert.equal(modified.kind, 'storage#modifyLabelsResponse');
    assert.deepEqual(modified.modifiedLabels?.[0]?.fields?.stage?.text, ['beta']);
    assert.equal((await client.files.listLabels({ fileId: file.id! })).items?.[0]?.id, 'release');
    assert.deepEqual(
      (await collect(client.files.listLabels.all({ fileId: file.id!, maxResults: 1 }))).map((l) => l.id),
      ['release'],
    );
    await client.files.modifyLabels({ fileId: file.id!, requestBody: { labelModifications: [{ labelId: 'release', removeLabel: true }] } });
    assert.deepEqual((await client.files.listLabels({ fileId: file.id! })).items, []);
  });

  it('STO-FILES-EXPORT: a storage document exported to a format it offers (bytes); a plain file is fileNotExportable; over the limit exportSizeLimitExceeded with advice', async () => {
    const doc = await upload('hello doc', { title: 'doc', mimeType: 'application/vnd.google-apps.document' });
    const bytes = await client.files.export({ fileId: doc.id, mimeType: 'text/plain' });
    assert.ok(Buffer.isBuffer(bytes));
    assert.equal(bytes.toString(), 'hello doc');
    const plain = await client.files.insert({ requestBody: { title: 'plain' } });
    const refused = await rejection(client.files.export({ fileId: plain.id!, mimeType: 'text/plain' }));
    assert.ok(refused instanceof StorageError);
    assert.equal(refused.reason, 'fileNotExportable');
    const big = await upload('x'.repeat(1001), { title: 'big', mimeType: 'application/vnd.google-apps.document' });
    const tooBig = await rejection(client.files.export({ fileId: big.id, mimeType: 'text/plain' }));
    assert.equal(tooBig.reason, 'exportSizeLimitExceeded');
    assert.match(String(tooBig.hint), /10 MB/);
  });

  it('STO-PARENTS-LIST STO-PARENTS-INSERT STO-PARENTS-GET STO-PARENTS-DELETE STO-CHILDREN-LIST STO-CHILDREN-INSERT STO-CHILDREN-GET STO-CHILDREN-DELETE: a file in two folders and out again', async () => {
    const a = await client.files.insert({ requestBody: { title: 'A', mimeType: FOLDER } });
    const b = await client.files.insert({ requestBody: { title: 'B', mimeType: FOLDER } });
    const file = await client.files.insert({ requestBody: { title: 'f', parents: [{ id: a.id! }] } });
    const added = await client.parents.insert({ fileId: file.id!, requestBody: { id: b.id! } });
    assert.equal(added.kind, 'storage#parentReference');
    assert.deepEqual(
      (await client.parents.list({ fileId: file.id! })).items?.map((p) => p.id),
      [a.id, b.id],
    );
    assert.deepEqual(
      (await collect(client.parents.list.all({ fileId: file.id! }))).map((p) => p.id),
      [a.id, b.id],
    );
    assert.equal((await client.parents.get({ fileId: file.id!, parentId: b.id! })).id, b.id);
    const children = await client.children.list({ folderId: b.id! });
    assert.equal(children.kind, 'storage#childList');
    assert.deepEqual(
      children.items?.map((c) => c.id),
      [file.id],
    );
    assert.equal((await client.children.get({ folderId: a.id!, childId: file.id! })).kind, 'storage#childReference');
    assert.equal(await client.children.delete({ folderId: a.id!, childId: file.id! }), undefined);
    assert.equal(await client.parents.delete({ fileId: file.id!, parentId: b.id! }), undefined);
    assert.deepEqual((await client.files.get({ fileId: file.id! })).parents, []);
    assert.equal((await client.children.insert({ folderId: a.id!, requestBody: { id: file.id! } })).id, file.id);
    assert.deepEqual(
      (await collect(client.children.list.all({ folderId: a.id!, maxResults: 1 }))).map((c) => c.id),
      [file.id],
    );
  });

  it('STO-PERMISSIONS-INSERT STO-PERMISSIONS-LIST STO-PERMISSIONS-GET STO-PERMISSIONS-PATCH STO-PERMISSIONS-UPDATE STO-PERMISSIONS-DELETE STO-PERMISSIONS-GETIDFOREMAIL: shared, changed, removed; the id for an address', async () => {
    const file = await client.files.insert({ requestBody: { title: 'shared' } });
    const reader = await client.permissions.insert({
      fileId: file.id!,
      requestBody: { role: 'reader', type: 'user', value: 'ann@example.com' },
      sendNotificationEmails: false,
    });
    assert.equal(reader.kind, 'storage#permission');
    const idFor = await client.permissions.getIdForEmail({ email: 'ann@example.com' });
    assert.equal(idFor.kind, 'storage#permissionId');
    assert.equal(idFor.id, reader.id);
    assert.deepEqual(
      (await client.permissions.list({ fileId: file.id! })).items?.map((p) => p.role),
      ['owner', 'reader'],
    );
    assert.deepEqual(
      (await collect(client.permissions.list.all({ fileId: file.id! }))).map((p) => p.role),
      ['owner', 'reader'],
    );
    assert.equal((await client.permissions.patch({ fileId: file.id!, permissionId: reader.id!, requestBody: { role: 'writer' } })).role, 'writer');
    assert.equal((await client.permissions.update({ fileId: file.id!, permissionId: reader.id!, requestBody: { role: 'commenter' } })).role, 'commenter');
    assert.equal((await client.permissions.get({ fileId: file.id!, permissionId: reader.id! })).role, 'commenter');
    const owner = (await client.permissions.list({ fileId: file.id! })).items![0]!;
    const refused = await rejection(client.permissions.delete({ fileId: file.id!, permissionId: owner.id! }));
    assert.equal(refused.reason, 'cannotRemoveOwner');
    assert.equal(refused.exitCode, 1);
    assert.equal(await client.permissions.delete({ fileId: file.id!, permissionId: reader.id! }), undefined);
    assert.equal((await rejection(client.permissions.get({ fileId: file.id!, permissionId: reader.id! }))).status, 404);
  });

  it('STO-PROPERTIES-INSERT STO-PROPERTIES-LIST STO-PROPERTIES-GET STO-PROPERTIES-PATCH STO-PROPERTIES-UPDATE STO-PROPERTIES-DELETE: a public property by key and visibility', async () => {
    const file = await client.files.insert({ requestBody: { title: 'props' } });
    assert.equal(
      (await client.properties.insert({ fileId: file.id!, requestBody: { key: 'build', value: '41', visibility: 'PUBLIC' } })).kind,
      'storage#property',
    );
    assert.equal(
      (await client.properties.insert({ fileId: file.id!, requestBody: { key: 'build', value: '42', visibility: 'PUBLIC' } })).value,
      '42',
      'insert updates',
    );
    assert.equal((await client.properties.get({ fileId: file.id!, propertyKey: 'build', visibility: 'public' })).value, '42');
    assert.equal((await client.properties.patch({ fileId: file.id!, propertyKey: 'build', visibility: 'public', requestBody: { value: '43' } })).value, '43');
    assert.equal((await client.properties.update({ fileId: file.id!, propertyKey: 'build', visibility: 'public', requestBody: { value: '44' } })).value, '44');
    assert.deepEqual(
      (await client.properties.list({ fileId: file.id! })).items?.map((p) => `${p.key}=${p.value}`),
      ['build=44'],
    );
    assert.deepEqual(
      (await collect(client.properties.list.all({ fileId: file.id! }))).map((p) => p.key),
      ['build'],
    );
    assert.equal(await client.properties.delete({ fileId: file.id!, propertyKey: 'build', visibility: 'public' }), undefined);
    assert.deepEqual((await client.properties.list({ fileId: file.id! })).items, []);
  });

  it('STO-COMMENTS-INSERT STO-COMMENTS-LIST STO-COMMENTS-GET STO-COMMENTS-PATCH STO-COMMENTS-UPDATE STO-COMMENTS-DELETE STO-REPLIES-INSERT STO-REPLIES-LIST STO-REPLIES-GET STO-REPLIES-PATCH STO-REPLIES-UPDATE STO-REPLIES-DELETE: a thread resolved by a reply; deletes leave tombstones', async () => {
    const file = await client.files.insert({ requestBody: { title: 'discussed' } });
    const comment = await client.comments.insert({ fileId: file.id!, requestBody: { content: 'Looks good' } });
    assert.equal(comment.kind, 'storage#comment');
    const ref = { fileId: file.id!, commentId: comment.commentId! };
    assert.equal((await client.comments.patch({ ...ref, requestBody: { content: 'edited' } })).content, 'edited');
    assert.equal((await client.comments.update({ ...ref, requestBody: { content: 'again' } })).content, 'again');
    const reply = await client.replies.insert({ ...ref, requestBody: { content: 'fixed', verb: 'resolve' } });
    assert.equal(reply.kind, 'storage#commentReply');
    assert.equal((await client.comments.get(ref)).status, 'resolved');
    const replyRef = { ...ref, replyId: reply.replyId! };
    assert.equal((await client.replies.patch({ ...replyRef, requestBody: { content: 'really fixed' } })).content, 'really fixed');
    assert.equal((await client.replies.update({ ...replyRef, requestBody: { content: 'done' } })).content, 'done');
    assert.equal((await client.replies.get(replyRef)).content, 'done');
    assert.equal((await client.replies.list(ref)).items?.length, 1);
    assert.equal((await collect(client.replies.list.all({ ...ref, maxResults: 1 }))).length, 1);
    assert.equal(await client.replies.delete(replyRef), undefined);
    assert.equal((await client.replies.get({ ...replyRef, includeDeleted: true })).deleted, true);
    assert.equal(await client.comments.delete(ref), undefined);
    assert.deepEqual((await client.comments.list({ fileId: file.id! })).items, []);
    const tombstones = await collect(client.comments.list.all({ fileId: file.id!, includeDeleted: true, maxResults: 1 }));
    assert.deepEqual(
      tombstones.map((c) => [c.deleted, c.content]),
      [[true, undefined]],
    );
  });

  it('STO-REVISIONS-LIST STO-REVISIONS-GET STO-REVISIONS-PATCH STO-REVISIONS-UPDATE STO-REVISIONS-DELETE: one revision per content update; the head deleted falls back; the last stays', async () => {
    const first = await upload('v1');
    await upload('v2-', {}, first.id);
    const revisions = await client.revisions.list({ fileId: first.id });
    assert.equal(revisions.kind, 'storage#revisionList');
    assert.deepEqual(
      revisions.items?.map((r) => r.fileSize),
      ['2', '3'],
    );
    assert.deepEqual(
      (await collect(client.revisions.list.all({ fileId: first.id, maxResults: 1 }))).map((r) => r.fileSize),
      ['2', '3'],
    );
    const ref = { fileId: first.id, revisionId: first.headRevisionId };
    assert.equal((await client.revisions.get(ref)).md5Checksum?.length, 32);
    assert.equal((await client.revisions.patch({ ...ref, requestBody: { pinned: true } })).pinned, true);
    assert.equal((await client.revisions.update({ ...ref, requestBody: { pinned: false } })).pinned, false);
    assert.equal(await client.revisions.delete({ fileId: first.id, revisionId: revisions.items![1]!.id! }), undefined);
    assert.equal((await client.files.get({ fileId: first.id })).headRevisionId, first.headRevisionId);
    assert.equal((await rejection(client.revisions.delete(ref))).reason, 'cannotDeleteOnlyRevision');
  });

  it('STO-DRIVES-INSERT STO-DRIVES-LIST STO-DRIVES-GET STO-DRIVES-UPDATE STO-DRIVES-HIDE STO-DRIVES-UNHIDE STO-DRIVES-DELETE: a shared drive by requestId (idempotent), renamed, hidden, removed', async () => {
    const drive = await client.drives.insert({ requestId: 'req-1', requestBody: { name: 'Team' } });
    assert.equal(drive.kind, 'storage#drive');
    assert.equal((await client.drives.insert({ requestId: 'req-1', requestBody: { name: 'Other' } })).id, drive.id);
    assert.equal((await client.drives.update({ driveId: drive.id!, requestBody: { name: 'Renamed' } })).name, 'Renamed');
    assert.equal((await client.drives.hide({ driveId: drive.id! })).hidden, true);
    assert.equal((await client.drives.unhide({ driveId: drive.id! })).hidden, false);
    assert.equal((await client.drives.get({ driveId: drive.id! })).name, 'Renamed');
    assert.deepEqual(
      (await client.drives.list()).items?.map((d) => d.id),
      [drive.id],
    );
    assert.deepEqual(
      (await collect(client.drives.list.all({ maxResults: 1 }))).map((d) => d.id),
      [drive.id],
    );
    assert.equal(await client.drives.delete({ driveId: drive.id! }), undefined);
    assert.equal((await rejection(client.drives.get({ driveId: drive.id! }))).reason, 'notFound');
  });

  it('STO-APPS-LIST STO-APPS-GET: the installed apps, and one by id', async () => {
    const apps = await client.apps.list();
    assert.equal(apps.kind, 'storage#appList');
    assert.equal((await client.apps.get({ appId: apps.items![0]!.id! })).name, 'Gantry');
    assert.deepEqual(
      (await collect(client.apps.list.all())).map((a) => a.name),
      ['Gantry'],
    );
    assert.equal((await rejection(client.apps.get({ appId: '0' }))).status, 404);
  });

  it('STO-BASE-PREFIX: a path parameter is one encoded segment — an id with "/", "..", "?" or "#" never reaches another path; "." and ".." alone are refused', async () => {
    const file = await client.files.insert({ requestBody: { title: 'keep me' } });
    const escaped = await rejection(client.files.get({ fileId: '../about' }));
    assert.ok(escaped instanceof StorageError);
    assert.equal(escaped.reason, 'notFound');
    assert.ok(s.served.includes('GET /storage/v2/files/..%2Fabout 404'), s.served.slice(-3).join('; '));
    assert.equal((await rejection(client.files.delete({ fileId: `x/../${file.id}` }))).status, 404);
    assert.equal((await client.files.get({ fileId: file.id! })).title, 'keep me', 'the file was not deleted through a path that resolves to it');
    assert.equal((await rejection(client.files.get({ fileId: `${file.id}?alt=media#x` }))).reason, 'notFound');
    assert.equal((await rejection(client.files.get({ fileId: '%2e%2e' }))).reason, 'notFound');
    assert.ok(s.served.includes('GET /storage/v2/files/%252e%252e 404'));
    const before = await s.requests();
    for (const fileId of ['..', '.', '']) {
      const refused = await rejection(client.files.get({ fileId }));
      assert.equal(refused.exitCode, 2, fileId);
      assert.match(refused.message, /^files\.get: params\.fileId/);
    }
    assert.equal(await s.requests(), before, 'nothing was sent');
  });

  it('STO-FILES-GET STO-FILES-INSERT: a parameter a method does not take, of the wrong type, or missing is a UsageError (exit 2) naming the method, and nothing is sent', async () => {
    const before = await s.requests();
    const cases: Array<[() => Promise<unknown>, RegExp]> = [
      [() => client.files.get({ fileId: 'x', maxResult: 2 } as never), /^files\.get: unknown parameter "maxResult"/],
      [() => client.files.list({ maxResults: 'ten' } as never), /^files\.list: params\.maxResults must be a whole number/],
      [() => client.files.list({ maxResults: -1 }), /^files\.list: params\.maxResults/],
      [() => client.files.get({ fileId: 'x', supportsAllDrives: 'yes' } as never), /^files\.get: params\.supportsAllDrives must be true or false/],
      [() => client.files.get({} as never), /^files\.get: params\.fileId must be a non-empty string/],
      [() => client.files.get({ fileID: 'x' } as never), /^files\.get: unknown parameter "fileID" \(did you mean "fileId"\?\)/],
      [() => client.files.get(null as never), /^files\.get: params must be an object/],
      [() => client.comments.insert({ fileId: 'x' } as never), /^comments\.insert: params\.requestBody is required/],
      [() => client.files.insert({ requestBody: 'title' as never }), /^files\.insert: params\.requestBody must be an object/],
      [() => client.drives.insert({ requestBody: { name: 'x' } } as never), /^drives\.insert: params\.requestId is required/],
      [() => client.files.get({ fileId: 'x', alt: 'media' as never }), /^files\.get: alt=media is not a metadata call/],
      [() => client.files.insert({ requestBody: {}, ifMatch: '"e"' } as never), /^files\.insert: unknown parameter "ifMatch"/],
      [async () => client.files.list.all({ q: 42 } as never), /^files\.list\.all: params\.q must be a string/],
    ];
    for (const [call, message] of cases) {
      const error = await rejection(call());
      assert.equal(error.name, 'UsageError', error.message);
      assert.equal(error.exitCode, 2);
      assert.match(error.message, message);
    }
    assert.equal(await s.requests(), before, 'no request reached the server');
  });
});
