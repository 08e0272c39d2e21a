// properties, comments and replies, shared drives, apps, labels and files.export of the embedded storage server.
import assert from 'node:assert/strict';
import { harness, reasonOf, type Harness } from './helpers.js';

describe('devserver/storage: properties, comments, drives, apps, labels, export', function () {
  this.timeout(20_000);
  let h: Harness;
  before(async () => {
    h = await harness({ exportLimitBytes: 1000 });
  });
  after(() => h.close());
  const newFile = async (body: Record<string, unknown> = { title: 'x' }) => (await h.api('POST', '/storage/v2/files', body)).body as { id: string };

  it('STO-PROPERTIES-INSERT STO-PROPERTIES-LIST STO-PROPERTIES-GET STO-PROPERTIES-PATCH STO-PROPERTIES-UPDATE STO-PROPERTIES-DELETE: key and visibility name a property; insert updates an existing one', async () => {
    const file = await newFile();
    const made = await h.api('POST', `/storage/v2/files/${file.id}/properties`, { key: 'build', value: '41', visibility: 'PUBLIC' });
    assert.equal(made.body.kind, 'storage#property');
    assert.equal((await h.api('POST', `/storage/v2/files/${file.id}/properties`, { key: 'build', value: '42', visibility: 'PUBLIC' })).body.value, '42');
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/properties/build`)).status, 404, 'visibility defaults to private');
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/properties/build?visibility=public`)).body.value, '42');
    assert.equal((await h.api('PATCH', `/storage/v2/files/${file.id}/properties/build?visibility=public`, { value: '43' })).body.value, '43');
    assert.equal((await h.api('PUT', `/storage/v2/files/${file.id}/properties/build?visibility=public`, { value: '44' })).body.value, '44');
    const list = await h.api('GET', `/storage/v2/files/${file.id}/properties`);
    assert.equal(list.body.kind, 'storage#propertyList');
    assert.deepEqual(
      list.body.items.map((p: { key: string; value: string }) => `${p.key}=${p.value}`),
      ['build=44'],
    );
    assert.equal(
      (await h.api('POST', `/storage/v2/files/${file.id}/properties`, { key: 'k', value: 'v'.repeat(200) })).status,
      400,
      'key + value at most 124 bytes',
    );
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${file.id}/properties/build?visibility=public`)).status, 204);
    assert.deepEqual((await h.api('GET', `/storage/v2/files/${file.id}/properties`)).body.items, []);
  });

  it('STO-COMMENTS-INSERT STO-COMMENTS-LIST STO-COMMENTS-GET STO-COMMENTS-PATCH STO-COMMENTS-UPDATE STO-COMMENTS-DELETE STO-REPLIES-INSERT STO-REPLIES-LIST STO-REPLIES-GET STO-REPLIES-PATCH STO-REPLIES-UPDATE STO-REPLIES-DELETE', async () => {
    const file = await newFile();
    const comment = (await h.api('POST', `/storage/v2/files/${file.id}/comments`, { content: 'Looks <good>' })).body;
    assert.equal(comment.kind, 'storage#comment');
    assert.equal(comment.htmlContent, 'Looks &#60;good&#62;');
    assert.equal((await h.api('POST', `/storage/v2/files/${file.id}/comments`, {})).status, 400);
    assert.equal((await h.api('PATCH', `/storage/v2/files/${file.id}/comments/${comment.commentId}`, { content: 'edited' })).body.content, 'edited');
    assert.equal((await h.api('PUT', `/storage/v2/files/${file.id}/comments/${comment.commentId}`, { content: 'again' })).body.content, 'again');
    const reply = (await h.api('POST', `/storage/v2/files/${file.id}/comments/${comment.commentId}/replies`, { content: 'fixed', verb: 'resolve' })).body;
    assert.equal(reply.kind, 'storage#commentReply');
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/comments/${comment.commentId}`)).body.status, 'resolved');
    assert.equal(
      (await h.api('PATCH', `/storage/v2/files/${file.id}/comments/${comment.commentId}/replies/${reply.replyId}`, { content: 'really fixed' })).body.content,
      'really fixed',
    );
    assert.equal(
      (await h.api('PUT', `/storage/v2/files/${file.id}/comments/${comment.commentId}/replies/${reply.replyId}`, { content: 'done' })).body.content,
      'done',
    );
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/comments/${comment.commentId}/replies/${reply.replyId}`)).body.content, 'done');
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/comments/${comment.commentId}/replies`)).body.items.length, 1);
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${file.id}/comments/${comment.commentId}/replies/${reply.replyId}`)).status, 204);
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/comments/${comment.commentId}/replies`)).body.items.length, 0);
    assert.equal((await h.raw('DELETE', `/storage/v2/files/${file.id}/comments/${comment.commentId}`)).status, 204);
    assert.deepEqual((await h.api('GET', `/storage/v2/files/${file.id}/comments`)).body.items, []);
    const tombstones = (await h.api('GET', `/storage/v2/files/${file.id}/comments?includeDeleted=true`)).body.items;
    assert.equal(tombstones[0].deleted, true);
    assert.equal(tombstones[0].content, undefined);
  });

  it('STO-DRIVES-INSERT STO-DRIVES-LIST STO-DRIVES-GET STO-DRIVES-UPDATE STO-DRIVES-HIDE STO-DRIVES-UNHIDE STO-DRIVES-DELETE: requestId is required and idempotent', async () => {
    assert.equal(reasonOf((await h.api('POST', '/storage/v2/drives', { name: 'Team' })).body), 'required');
    const drive = (await h.api('POST', '/storage/v2/drives?requestId=r1', { name: 'Team' })).body;
    assert.equal(drive.kind, 'storage#drive');
    assert.equal((await h.api('POST', '/storage/v2/drives?requestId=r1', { name: 'Other' })).body.id, drive.id);
    assert.equal((await h.api('PUT', `/storage/v2/drives/${drive.id}`, { name: 'Renamed' })).body.name, 'Renamed');
    assert.equal((await h.api('POST', `/storage/v2/drives/${drive.id}/hide`)).body.hidden, true);
    assert.equal((await h.api('POST', `/storage/v2/drives/${drive.id}/unhide`)).body.hidden, false);
    assert.equal((await h.api('GET', `/storage/v2/drives/${drive.id}`)).body.name, 'Renamed');
    assert.deepEqual(
      (await h.api('GET', '/storage/v2/drives')).body.items.map((d: { id: string }) => d.id),
      [drive.id],
    );
    assert.equal((await h.raw('DELETE', `/storage/v2/drives/${drive.id}`)).status, 204);
    assert.equal((await h.api('GET', `/storage/v2/drives/${drive.id}`)).status, 404);
  });

  it('STO-APPS-LIST STO-APPS-GET: one app, Gantry', async () => {
    const apps = (await h.api('GET', '/storage/v2/apps')).body;
    assert.equal(apps.kind, 'storage#appList');
    assert.equal((await h.api('GET', `/storage/v2/apps/${apps.items[0].id}`)).body.name, 'Gantry');
    assert.equal((await h.api('GET', '/storage/v2/apps/0')).status, 404);
  });

  it('STO-FILES-LISTLABELS STO-FILES-MODIFYLABELS: labels added with fields, listed, removed', async () => {
    const file = await newFile();
    const modified = await h.api('POST', `/storage/v2/files/${file.id}/modifyLabels`, {
      labelModifications: [{ labelId: 'release', fieldModifications: [{ fieldId: 'stage', setTextValues: ['beta'] }] }],
    });
    assert.equal(modified.body.kind, 'storage#modifyLabelsResponse');
    assert.deepEqual(
      modified.body.modifiedLabels[0].fields.stage,
      { kind: 'storage#labelField', id: 'stage', valueType: 'text', text: ['beta'] },
      "Drive v2's LabelField names (googleapis.test.ts found textValues)",
    );
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}/listLabels`)).body.items[0].id, 'release');
    await h.api('POST', `/storage/v2/files/${file.id}/modifyLabels`, { labelModifications: [{ labelId: 'release', removeLabel: true }] });
    assert.deepEqual((await h.api('GET', `/storage/v2/files/${file.id}/listLabels`)).body.items, []);
  });

  it('STO-FILES-EXPORT: a workspace document exports to its formats; other files are fileNotExportable; above the limit is exportSizeLimitExceeded', async () => {
    const upload = async (text: string) =>
      (
        await h.raw(
          'POST',
          '/upload/storage/v2/files?uploadType=multipart',
          `--b\r\nContent-Type: application/json\r\n\r\n{"title":"doc","mimeType":"application/vnd.google-apps.document"}\r\n--b\r\nContent-Type: text/plain\r\n\r\n${text}\r\n--b--`,
          { 'content-type': 'multipart/related; boundary=b' },
        )
      ).json() as Promise<{ id: string }>;
    const doc = await upload('hello doc');
    const exported = await h.raw('GET', `/storage/v2/files/${doc.id}/export?mimeType=text/plain`);
    assert.equal(exported.status, 200);
    assert.equal(exported.headers.get('content-type'), 'text/plain');
    assert.equal(await exported.text(), 'hello doc');
    assert.equal((await h.api('GET', `/storage/v2/files/${doc.id}/export?mimeType=image/png`)).status, 400);
    assert.equal(reasonOf((await h.api('GET', `/storage/v2/files/${doc.id}/export`)).body), 'required');
    const plain = await newFile();
    assert.equal(reasonOf((await h.api('GET', `/storage/v2/files/${plain.id}/export?mimeType=text/plain`)).body), 'fileNotExportable');
    const big = await upload('x'.repeat(1001));
    const refused = await h.api('GET', `/storage/v2/files/${big.id}/export?mimeType=text/plain`);
    assert.equal(refused.status, 403);
    assert.equal(reasonOf(refused.body), 'exportSizeLimitExceeded');
  });
});
