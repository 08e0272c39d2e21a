// An independent real client against the embedded storage server: googleapis' own Drive v2 client
// (@googleapis/drive 22.0.0, on googleapis-common 8 and gaxios 7), unmodified, over real sockets on 127.0.0.1,
// through a test-only proxy that renames `/drive/v2` to `/storage/v2` (drive-path-proxy.ts says why). Every one of
// the spec's 70 methods goes through it, and every JSON answer is checked against the schema the client's
// declarations (generated from Drive's discovery document) give that method (drive-schema.ts): no property Drive v2
// does not have, every value of Drive's JSON type, the resource's kind with `drive#` read as `storage#`.
//
// Two gaps of the client itself, pinned here so that a change in them shows: the `rootUrl` given to `drive()` is not
// applied to upload URLs (they still go to www.googleapis.com), so uploads pass `{ rootUrl }` per call; and a
// multipart upload of a Buffer throws in the client (`part.body.pipe is not a function`) before anything is sent —
// a Buffer goes as a stream.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { auth, drive, type drive_v2 } from '@googleapis/drive';
import { clientMethods, responseSchema, shapeProblems } from './drive-schema.js';
import { startPathProxy, type PathProxy } from './drive-path-proxy.js';
import { harness, TOKEN, type Harness } from './helpers.js';

const FOLDER = 'application/vnd.google-apps.folder';
const md5 = (bytes: Buffer | string) => createHash('md5').update(bytes).digest('hex');
/** Bytes that break a text-minded multipart reader: CR LF, a fake delimiter, NUL and high bytes. */
const TRICKY = Buffer.concat([
  Buffer.from('\r\n--boundary\r\n\r\n--'),
  Buffer.from([0, 255, 254, 13, 10, 13, 10, 45, 45]),
  Buffer.alloc(70_000, 0xa5),
  Buffer.from('\r\n'),
]);

interface ClientResponse<T> {
  status: number;
  data: T;
  headers: Headers | Record<string, unknown>;
}

interface DriveError extends Error {
  status?: number;
  response?: {
    status: number;
    data: { error: { code: number; message: string; errors: { domain: string; reason: string; message: string; location?: string; locationType?: string }[] } };
  };
}

describe("devserver/storage: cross-checked with googleapis' Drive v2 client (@googleapis/drive 22)", function () {
  this.timeout(60_000);
  let h: Harness;
  let proxy: PathProxy;
  let d: drive_v2.Drive;
  /** Per-call options of an upload: the client applies the global rootUrl to metadata URLs only. */
  let upload: { rootUrl: string };
  const covered = new Set<string>();

  /** A 2xx answer of `method`, its body checked against Drive v2's schema for it; the body is returned. */
  async function ok<T>(method: string, request: Promise<ClientResponse<T>>, options: { partial?: boolean } = {}): Promise<T> {
    const res = await request;
    covered.add(method);
    const schema = responseSchema(method);
    if (schema === 'void') assert.equal(res.status, 204, `${method}: Drive answers 204 No Content`);
    else {
      assert.equal(res.status, 200, method);
      if (schema !== 'unknown') assert.deepEqual(shapeProblems(res.data, schema, options), [], `${method}: the answer disagrees with Drive v2's ${schema}`);
    }
    return res.data;
  }

  /** The client's error for a refused request: a GaxiosError carrying Drive's error body. */
  async function refused(method: string, request: Promise<unknown>, status: number, reason: string, location?: string): Promise<DriveError> {
    const error = (await request.then(
      () => assert.fail(`${method} was expected to fail with ${status} ${reason}`),
      (e: unknown) => e,
    )) as DriveError;
    covered.add(method);
    assert.equal(error.constructor.name, 'GaxiosError', String(error));
    assert.ok(Symbol.for('gaxios-gaxios-error') in error, "a GaxiosError of the client's own gaxios");
    assert.equal(error.status, status, error.message);
    const body = error.response!.data;
    assert.equal(body.error.code, status);
    assert.equal(typeof body.error.message, 'string');
    assert.equal(body.error.errors[0]!.reason, reason, JSON.stringify(body));
    assert.equal(typeof body.error.errors[0]!.domain, 'string');
    assert.equal(error.message, body.error.errors.map((e) => e.message).join('\n'), 'gaxios builds its message from errors[].message');
    if (location !== undefined) assert.equal(body.error.errors[0]!.location, location);
    return error;
  }

  async function bytesOf(res: ClientResponse<unknown>): Promise<Buffer> {
    const data = res.data;
    if (data instanceof ArrayBuffer) return Buffer.from(data);
    const chunks: Buffer[] = [];
    for await (const chunk of data as Readable) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async function newFile(title: string, extra: drive_v2.Schema$File = {}): Promise<drive_v2.Schema$File> {
    return ok('files.insert', d.files.insert({ requestBody: { title, mimeType: 'text/plain', ...extra } }));
  }

  before(async () => {
    h = await harness();
    proxy = await startPathProxy(h.server.url);
    const credentials = new auth.OAuth2();
    credentials.setCredentials({ access_token: TOKEN });
    d = drive({ version: 'v2', auth: credentials, rootUrl: proxy.url });
    upload = { rootUrl: proxy.url };
  });
  after(async () => {
    await proxy?.close();
    await h?.close();
  });

  it("STO-ABOUT-GET STO-BASE-PREFIX STO-VER-V2: about.get with the OAuth2 client's bearer token; root resolves; a wrong token is a GaxiosError 401 authError", async () => {
    const about = await ok('about.get', d.about.get());
    assert.equal(about.user?.emailAddress, 'dev@gantry.test');
    assert.match(about.rootFolderId!, /^[A-Za-z0-9_-]{10,}$/);
    const root = await ok('files.get', d.files.get({ fileId: 'root' }));
    assert.equal(root.id, about.rootFolderId);
    assert.equal(root.mimeType, FOLDER);
    assert.deepEqual(
      proxy.seen.slice(0, 2),
      [
        { method: 'GET', path: '/drive/v2/about' },
        { method: 'GET', path: '/drive/v2/files/root' },
      ],
      "the client spoke Drive's paths",
    );
    const wrong = new auth.OAuth2();
    wrong.setCredentials({ access_token: 'ya29.not-the-token' });
    const error = await refused('about.get', drive({ version: 'v2', auth: wrong, rootUrl: proxy.url }).about.get(), 401, 'authError', 'Authorization');
    assert.equal(error.response!.data.error.errors[0]!.locationType, 'header');
  });

  it('STO-FILES-INSERT STO-FILES-GET: media and multipart uploads of a Buffer, a stream and a string, read back byte for byte with alt=media', async () => {
    const media = await ok('files.insert', d.files.insert({ media: { mimeType: 'application/octet-stream', body: TRICKY } }, upload));
    assert.equal(media.md5Checksum, md5(TRICKY));
    assert.equal(media.fileSize, String(TRICKY.length));
    assert.equal(media.title, 'Untitled');
    const streamed = await ok(
      'files.insert',
      d.files.insert({ media: { mimeType: 'image/png', body: Readable.from([TRICKY.subarray(0, 5), TRICKY.subarray(5)]) } }, upload),
    );
    assert.equal(streamed.md5Checksum, md5(TRICKY));
    assert.equal(streamed.mimeType, 'image/png', 'the media type of a media upload');

    const folder = await newFile('uploads', { mimeType: FOLDER });
    const multipart = await ok(
      'files.insert',
      d.files.insert(
        {
          requestBody: {
            title: 'tricky.bin',
            description: 'binary-safe',
            parents: [{ id: folder.id! }],
            properties: [{ key: 'origin', value: 'googleapis', visibility: 'PUBLIC' }],
          },
          media: { mimeType: 'application/x-tricky', body: Readable.from([TRICKY]) },
        },
        upload,
      ),
    );
    assert.equal(multipart.title, 'tricky.bin');
    assert.equal(multipart.description, 'binary-safe');
    assert.equal(multipart.mimeType, 'application/x-tricky');
    assert.equal(multipart.md5Checksum, md5(TRICKY), 'the multipart body came through binary-safe');
    assert.equal(multipart.fileExtension, 'bin');
    assert.deepEqual(
      multipart.parents!.map((p) => p.id),
      [folder.id],
    );
    assert.deepEqual(
      multipart.properties!.map((p) => [p.key, p.value, p.visibility]),
      [['origin', 'googleapis', 'PUBLIC']],
    );
    const text = await ok(
      'files.insert',
      d.files.insert({ requestBody: { title: 'hello.txt' }, media: { mimeType: 'text/plain', body: 'hello, storage' } }, upload),
    );
    assert.equal(text.md5Checksum, md5('hello, storage'));

    // The client's own limitation: a Buffer in a multipart upload throws before a byte is sent.
    const before = proxy.seen.length;
    await assert.rejects(d.files.insert({ requestBody: { title: 'buffer.bin' }, media: { body: TRICKY } }, upload), /part\.body\.pipe is not a function/);
    assert.equal(proxy.seen.length, before, 'nothing reached the server');

    const metadata = await ok('files.get', d.files.get({ fileId: multipart.id! }));
    assert.equal(metadata.etag, multipart.etag);
    assert.equal(metadata.headRevisionId, multipart.headRevisionId);
    for (const file of [media, streamed, multipart]) {
      assert.deepEqual(
        await bytesOf(await d.files.get({ fileId: file.id!, alt: 'media' }, { responseType: 'arraybuffer' })),
        TRICKY,
        `${file.id} as an arraybuffer`,
      );
    }
    assert.deepEqual(await bytesOf(await d.files.get({ fileId: multipart.id!, alt: 'media' }, { responseType: 'stream' })), TRICKY, 'as a stream');
    assert.equal((await bytesOf(await d.files.get({ fileId: text.id!, alt: 'media' }, { responseType: 'arraybuffer' }))).toString(), 'hello, storage');
    await refused('files.get', d.files.get({ fileId: '1doesNotExist000000' }), 404, 'notFound', 'fileId');
    await refused('files.get', d.files.get({ fileId: folder.id!, alt: 'media' }), 403, 'fileNotDownloadable');
    await refused('files.insert', d.files.insert({ requestBody: { title: 'orphan', parents: [{ id: '1noSuchFolder00000' }] } }), 404, 'notFound');
  });

  it('STO-FILES-LIST: maxResults 2 pages followed through nextPageToken to the end; q; a fields mask; a bad q is 400 invalid at q', async () => {
    const folder = await newFile('paging', { mimeType: FOLDER });
    const titles = ['p0', 'p1', 'p2', 'p3', 'p4'];
    for (const title of titles) await newFile(title, { parents: [{ id: folder.id! }] });
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const page = await ok(
        'files.list',
        d.files.list({ q: `'${folder.id}' in parents and trashed = false`, maxResults: 2, ...(pageToken ? { pageToken } : {}) }),
      );
      pages++;
      assert.ok(page.items!.length <= 2);
      seen.push(...page.items!.map((f) => f.title!));
      pageToken = page.nextPageToken ?? undefined;
    } while (pageToken);
    assert.deepEqual(seen, titles);
    assert.equal(pages, 3);
    const masked = await ok('files.list', d.files.list({ q: `'${folder.id}' in parents`, maxResults: 4, fields: 'items(id,title),nextPageToken' }), {
      partial: true,
    });
    assert.deepEqual(Object.keys(masked).sort(), ['items', 'nextPageToken']);
    assert.deepEqual(Object.keys(masked.items![0]!).sort(), ['id', 'title']);
    const byTitle = await ok('files.list', d.files.list({ q: "title = 'p3' and mimeType = 'text/plain'" }));
    assert.deepEqual(
      byTitle.items!.map((f) => f.title),
      ['p3'],
    );
    await refused('files.list', d.files.list({ q: 'modifiedDate > yesterday' }), 400, 'invalid', 'q');
  });

  it("STO-FILES-PATCH STO-FILES-UPDATE: metadata patched and replaced, new content through update's upload, etags with If-Match (412 conditionNotMet) and If-None-Match (304)", async () => {
    const a = await newFile('before.txt', { description: 'one' });
    const other = await newFile('second-parent', { mimeType: FOLDER });
    const patched = await ok('files.patch', d.files.patch({ fileId: a.id!, requestBody: { title: 'after.txt', labels: { starred: true } } }));
    assert.equal(patched.title, 'after.txt');
    assert.equal(patched.description, 'one', 'patch keeps what it does not name');
    assert.equal(patched.labels!.starred, true);
    assert.notEqual(patched.etag, a.etag, 'a change makes a new etag');
    await refused(
      'files.patch',
      d.files.patch({ fileId: a.id!, requestBody: { title: 'lost update' } }, { headers: { 'If-Match': a.etag! } }),
      412,
      'conditionNotMet',
      'If-Match',
    );
    const matched = await ok(
      'files.patch',
      d.files.patch({ fileId: a.id!, addParents: other.id!, requestBody: { description: 'two' } }, { headers: { 'If-Match': patched.etag! } }),
    );
    assert.equal(matched.description, 'two');
    assert.equal(matched.parents!.length, 2, 'addParents');
    const moved = await ok('files.patch', d.files.patch({ fileId: a.id!, removeParents: other.id!, requestBody: {} }));
    assert.equal(moved.parents!.length, 1, 'removeParents');

    const updated = await ok('files.update', d.files.update({ fileId: a.id!, requestBody: { title: 'updated.txt', description: 'three' } }));
    assert.equal(updated.title, 'updated.txt');
    assert.equal(updated.description, 'three');
    const content = await ok('files.update', d.files.update({ fileId: a.id!, media: { mimeType: 'text/plain', body: Buffer.from('version 1') } }, upload));
    assert.equal(content.md5Checksum, md5('version 1'));
    const again = await ok(
      'files.update',
      d.files.update({ fileId: a.id!, requestBody: { title: 'v2.txt' }, media: { mimeType: 'text/plain', body: Readable.from(['version 2']) } }, upload),
    );
    assert.equal(again.title, 'v2.txt');
    assert.equal(again.md5Checksum, md5('version 2'));
    assert.notEqual(again.headRevisionId, content.headRevisionId, 'a content update makes a revision');
    await refused(
      'files.update',
      d.files.update({ fileId: a.id!, media: { mimeType: 'text/plain', body: 'stale' } }, { ...upload, headers: { 'If-Match': content.etag! } }),
      412,
      'conditionNotMet',
    );
    assert.equal(
      (await bytesOf(await d.files.get({ fileId: a.id!, alt: 'media' }, { responseType: 'arraybuffer' }))).toString(),
      'version 2',
      'the refused upload changed nothing',
    );

    // The read side: a conditional get with the current etag is 304 (the client counts 304 a success for this).
    const unchanged = await d.files.get({ fileId: a.id! }, { headers: { 'If-None-Match': again.etag! } });
    assert.equal(unchanged.status, 304);
    assert.equal((unchanged.headers as unknown as Headers).get('etag'), again.etag, 'gaxios 7 hands fetch Headers');
    const changed = await ok('files.get', d.files.get({ fileId: a.id! }, { headers: { 'If-None-Match': a.etag! } }));
    assert.equal(changed.etag, again.etag, 'a stale etag gets the file');
  });

  it('STO-FILES-GENERATEIDS STO-FILES-COPY STO-FILES-TOUCH: generated ids are usable in insert and copy; a copy has the content; touch moves modifiedDate', async () => {
    const generated = await ok('files.generateIds', d.files.generateIds({ maxResults: 3 }));
    assert.equal(generated.ids!.length, 3);
    assert.equal(generated.space, 'drive');
    const named = await ok(
      'files.insert',
      d.files.insert({ requestBody: { id: generated.ids![0]!, title: 'pre-named.txt' }, media: { mimeType: 'text/plain', body: 'copy me' } }, upload),
    );
    assert.equal(named.id, generated.ids![0]);
    await refused('files.insert', d.files.insert({ requestBody: { id: generated.ids![0]!, title: 'twice' } }), 409, 'duplicate', 'id');
    const copy = await ok('files.copy', d.files.copy({ fileId: named.id!, requestBody: { id: generated.ids![1]! } }));
    assert.equal(copy.id, generated.ids![1]);
    assert.equal(copy.title, 'Copy of pre-named.txt');
    assert.equal(copy.md5Checksum, named.md5Checksum);
    const titled = await ok('files.copy', d.files.copy({ fileId: named.id!, requestBody: { title: 'the copy.txt' } }));
    assert.equal(titled.title, 'the copy.txt');
    assert.equal((await bytesOf(await d.files.get({ fileId: titled.id!, alt: 'media' }, { responseType: 'arraybuffer' }))).toString(), 'copy me');
    await new Promise((r) => setTimeout(r, 5));
    const touched = await ok('files.touch', d.files.touch({ fileId: named.id! }));
    assert.ok(touched.modifiedDate! > named.modifiedDate!, `${touched.modifiedDate} after ${named.modifiedDate}`);
    assert.notEqual(touched.etag, named.etag);
    await refused('files.touch', d.files.touch({ fileId: named.id! }, { headers: { 'If-Match': named.etag! } }), 412, 'conditionNotMet');
  });

  it("STO-FILES-TRASH STO-FILES-UNTRASH STO-FILES-DELETE STO-FILES-EMPTYTRASH: trash cascades to the folder's children and back; delete and emptyTrash remove for good; root cannot go", async () => {
    const folder = await newFile('bin-folder', { mimeType: FOLDER });
    const child = await newFile('inside.txt', { parents: [{ id: folder.id! }] });
    const trashed = await ok('files.trash', d.files.trash({ fileId: folder.id! }));
    assert.equal(trashed.labels!.trashed, true);
    assert.equal(trashed.explicitlyTrashed, true);
    const childTrashed = await ok('files.get', d.files.get({ fileId: child.id! }));
    assert.equal(childTrashed.labels!.trashed, true, 'trash cascades');
    assert.equal(childTrashed.explicitlyTrashed, false);
    const back = await ok('files.untrash', d.files.untrash({ fileId: folder.id! }));
    assert.equal(back.labels!.trashed, false);
    assert.equal((await ok('files.get', d.files.get({ fileId: child.id! }))).labels!.trashed, false, 'untrash too');

    await ok('files.trash', d.files.trash({ fileId: folder.id! }));
    await ok('files.emptyTrash', d.files.emptyTrash());
    await refused('files.get', d.files.get({ fileId: folder.id! }), 404, 'notFound');
    await refused('files.get', d.files.get({ fileId: child.id! }), 404, 'notFound');

    const doomed = await newFile('doomed.txt');
    await refused('files.delete', d.files.delete({ fileId: doomed.id! }, { headers: { 'If-Match': '"stale"' } }), 412, 'conditionNotMet');
    await ok('files.delete', d.files.delete({ fileId: doomed.id! }));
    await refused('files.get', d.files.get({ fileId: doomed.id! }), 404, 'notFound');
    await refused('files.delete', d.files.delete({ fileId: doomed.id! }), 404, 'notFound');
    await refused('files.delete', d.files.delete({ fileId: 'root' }), 403, 'cannotModifyRootFolder');
    await refused('files.trash', d.files.trash({ fileId: 'root' }), 403, 'cannotModifyRootFolder');
  });

  it('STO-FILES-EXPORT: a vnd.google-apps document exported in a format it offers; a plain file is 403 fileNotExportable; a format it lacks is 400', async () => {
    const doc = await ok(
      'files.insert',
      d.files.insert(
        { requestBody: { title: 'Report', mimeType: 'application/vnd.google-apps.document' }, media: { mimeType: 'text/plain', body: 'Quarterly report' } },
        upload,
      ),
    );
    assert.equal(doc.mimeType, 'application/vnd.google-apps.document');
    const exported = await d.files.export({ fileId: doc.id!, mimeType: 'text/plain' }, { responseType: 'arraybuffer' });
    covered.add('files.export');
    assert.equal(exported.status, 200);
    assert.equal((await bytesOf(exported)).toString(), 'Quarterly report');
    const plain = await newFile('plain.txt');
    await refused('files.export', d.files.export({ fileId: plain.id!, mimeType: 'text/plain' }), 403, 'fileNotExportable');
    await refused('files.export', d.files.export({ fileId: doc.id!, mimeType: 'image/png' }), 400, 'badRequest');
  });

  it('STO-FILES-WATCH STO-CHANGES-WATCH STO-CHANNELS-STOP: channels made through the client get a sync, then notifications; channels.stop ends them', async () => {
    const received: { state: string; channel: string; token?: string }[] = [];
    const receiver = http.createServer((req, res) => {
      received.push({
        state: String(req.headers['x-goog-resource-state']),
        channel: String(req.headers['x-goog-channel-id']),
        ...(req.headers['x-goog-channel-token'] ? { token: String(req.headers['x-goog-channel-token']) } : {}),
      });
      req.resume().once('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const address = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/notify`;
      const file = await newFile('watched.txt');
      const fileChannel = await ok(
        'files.watch',
        d.files.watch({
          fileId: file.id!,
          requestBody: { id: 'gapi-file-channel', type: 'web_hook', address, token: 'from=googleapis', expiration: String(Date.now() + 60_000) },
        }),
      );
      assert.equal(fileChannel.id, 'gapi-file-channel');
      assert.match(fileChannel.resourceId!, /\S/);
      assert.match(fileChannel.resourceUri!, new RegExp(`/storage/v2/files/${file.id}`));
      const start = await ok('changes.getStartPageToken', d.changes.getStartPageToken());
      const changeChannel = await ok(
        'changes.watch',
        d.changes.watch({ pageToken: start.startPageToken!, requestBody: { id: 'gapi-changes-channel', type: 'web_hook', address } }),
      );
      await refused(
        'changes.watch',
        d.changes.watch({ pageToken: start.startPageToken!, requestBody: { id: 'gapi-changes-channel', type: 'web_hook', address } }),
        400,
        'channelIdNotUnique',
      );
      await ok('files.patch', d.files.patch({ fileId: file.id!, requestBody: { description: 'notify' } }));
      await h.server.notifications();
      assert.deepEqual(
        received.filter((m) => m.channel === 'gapi-file-channel').map((m) => [m.state, m.token]),
        [
          ['sync', 'from=googleapis'],
          ['update', 'from=googleapis'],
        ],
      );
      assert.deepEqual(
        received.filter((m) => m.channel === 'gapi-changes-channel').map((m) => m.state),
        ['sync', 'change'],
      );

      await ok('channels.stop', d.channels.stop({ requestBody: { id: fileChannel.id!, resourceId: fileChannel.resourceId! } }));
      await ok('channels.stop', d.channels.stop({ requestBody: { id: changeChannel.id!, resourceId: changeChannel.resourceId! } }));
      await refused('channels.stop', d.channels.stop({ requestBody: { id: changeChannel.id!, resourceId: changeChannel.resourceId! } }), 404, 'notFound');
      const count = received.length;
      await ok('files.patch', d.files.patch({ fileId: file.id!, requestBody: { description: 'silence' } }));
      await h.server.notifications();
      assert.equal(received.length, count, 'no message after stop');
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });

  it('STO-PERMISSIONS-INSERT STO-PERMISSIONS-LIST STO-PERMISSIONS-GET STO-PERMISSIONS-PATCH STO-PERMISSIONS-UPDATE STO-PERMISSIONS-DELETE STO-PERMISSIONS-GETIDFOREMAIL: a reader shared, changed and removed; the id from getIdForEmail', async () => {
    const file = await newFile('shared.txt');
    const idFor = await ok('permissions.getIdForEmail', d.permissions.getIdForEmail({ email: 'alice@example.com' }));
    assert.match(idFor.id!, /^\d{20}$/);
    const made = await ok(
      'permissions.insert',
      d.permissions.insert({ fileId: file.id!, sendNotificationEmails: false, requestBody: { role: 'reader', type: 'user', value: 'alice@example.com' } }),
    );
    assert.equal(made.id, idFor.id, "a user's permission id is getIdForEmail's");
    assert.equal(made.role, 'reader');
    assert.equal(made.emailAddress, 'alice@example.com');
    const listed = await ok('permissions.list', d.permissions.list({ fileId: file.id! }));
    assert.deepEqual(listed.items!.map((p) => p.role).sort(), ['owner', 'reader']);
    assert.equal((await ok('files.get', d.files.get({ fileId: file.id! }))).shared, true);
    assert.equal((await ok('permissions.get', d.permissions.get({ fileId: file.id!, permissionId: made.id! }))).role, 'reader');
    assert.equal(
      (await ok('permissions.patch', d.permissions.patch({ fileId: file.id!, permissionId: made.id!, requestBody: { role: 'writer' } }))).role,
      'writer',
    );
    assert.equal(
      (await ok('permissions.update', d.permissions.update({ fileId: file.id!, permissionId: made.id!, requestBody: { role: 'commenter', type: 'user' } })))
        .role,
      'commenter',
    );
    const anyone = await ok('permissions.insert', d.permissions.insert({ fileId: file.id!, requestBody: { role: 'reader', type: 'anyone', withLink: true } }));
    assert.equal(anyone.withLink, true);
    await ok('permissions.delete', d.permissions.delete({ fileId: file.id!, permissionId: made.id! }));
    await refused('permissions.get', d.permissions.get({ fileId: file.id!, permissionId: made.id! }), 404, 'notFound', 'permissionId');
    const owner = listed.items!.find((p) => p.role === 'owner')!;
    await refused('permissions.delete', d.permissions.delete({ fileId: file.id!, permissionId: owner.id! }), 403, 'cannotRemoveOwner');
    await refused(
      'permissions.insert',
      d.permissions.insert({ fileId: file.id!, requestBody: { role: 'admin', type: 'user', value: 'bob@example.com' } }),
      400,
      'invalid',
      'role',
    );
  });

  it('STO-COMMENTS-INSERT STO-COMMENTS-LIST STO-COMMENTS-GET STO-COMMENTS-PATCH STO-COMMENTS-UPDATE STO-COMMENTS-DELETE STO-REPLIES-INSERT STO-REPLIES-LIST STO-REPLIES-GET STO-REPLIES-PATCH STO-REPLIES-UPDATE STO-REPLIES-DELETE: a comment thread resolved through a reply; deletes leave tombstones', async () => {
    const file = await newFile('discussed.txt');
    const comment = await ok(
      'comments.insert',
      d.comments.insert({ fileId: file.id!, requestBody: { content: 'Is this <final>?', context: { type: 'text/plain', value: 'final' } } }),
    );
    assert.equal(comment.content, 'Is this <final>?');
    assert.equal(comment.htmlContent, 'Is this &#60;final&#62;?');
    assert.equal(comment.status, 'open');
    assert.equal(comment.fileId, file.id);
    assert.equal((await ok('comments.get', d.comments.get({ fileId: file.id!, commentId: comment.commentId! }))).content, 'Is this <final>?');
    assert.equal(
      (await ok('comments.patch', d.comments.patch({ fileId: file.id!, commentId: comment.commentId!, requestBody: { content: 'Is this done?' } }))).content,
      'Is this done?',
    );
    assert.equal(
      (await ok('comments.update', d.comments.update({ fileId: file.id!, commentId: comment.commentId!, requestBody: { content: 'Is this really done?' } })))
        .content,
      'Is this really done?',
    );
    const reply = await ok('replies.insert', d.replies.insert({ fileId: file.id!, commentId: comment.commentId!, requestBody: { content: 'Almost.' } }));
    assert.equal(reply.content, 'Almost.');
    assert.equal((await ok('replies.get', d.replies.get({ fileId: file.id!, commentId: comment.commentId!, replyId: reply.replyId! }))).content, 'Almost.');
    assert.equal(
      (
        await ok(
          'replies.patch',
          d.replies.patch({ fileId: file.id!, commentId: comment.commentId!, replyId: reply.replyId!, requestBody: { content: 'Nearly.' } }),
        )
      ).content,
      'Nearly.',
    );
    assert.equal(
      (
        await ok(
          'replies.update',
          d.replies.update({ fileId: file.id!, commentId: comment.commentId!, replyId: reply.replyId!, requestBody: { content: 'Yes.' } }),
        )
      ).content,
      'Yes.',
    );
    const resolve = await ok('replies.insert', d.replies.insert({ fileId: file.id!, commentId: comment.commentId!, requestBody: { verb: 'resolve' } }));
    assert.equal(resolve.verb, 'resolve');
    assert.equal((await ok('comments.get', d.comments.get({ fileId: file.id!, commentId: comment.commentId! }))).status, 'resolved');
    const replies = await ok('replies.list', d.replies.list({ fileId: file.id!, commentId: comment.commentId!, maxResults: 1 }));
    assert.equal(replies.items!.length, 1);
    assert.ok(replies.nextPageToken, 'a second page');
    const rest = await ok(
      'replies.list',
      d.replies.list({ fileId: file.id!, commentId: comment.commentId!, maxResults: 1, pageToken: replies.nextPageToken! }),
    );
    assert.equal(rest.items![0]!.verb, 'resolve');
    await ok('replies.delete', d.replies.delete({ fileId: file.id!, commentId: comment.commentId!, replyId: reply.replyId! }));
    await refused('replies.get', d.replies.get({ fileId: file.id!, commentId: comment.commentId!, replyId: reply.replyId! }), 404, 'notFound');
    const tombstone = await ok(
      'replies.get',
      d.replies.get({ fileId: file.id!, commentId: comment.commentId!, replyId: reply.replyId!, includeDeleted: true }),
    );
    assert.equal(tombstone.deleted, true);
    assert.equal(tombstone.content, undefined);
    await ok('comments.delete', d.comments.delete({ fileId: file.id!, commentId: comment.commentId! }));
    assert.deepEqual((await ok('comments.list', d.comments.list({ fileId: file.id! }))).items, []);
    const withDeleted = await ok('comments.list', d.comments.list({ fileId: file.id!, includeDeleted: true }));
    assert.equal(withDeleted.items![0]!.deleted, true);
    await refused('comments.insert', d.comments.insert({ fileId: file.id!, requestBody: {} }), 400, 'required', 'content');
  });

  it('STO-PROPERTIES-INSERT STO-PROPERTIES-LIST STO-PROPERTIES-GET STO-PROPERTIES-PATCH STO-PROPERTIES-UPDATE STO-PROPERTIES-DELETE: public and private properties by key and visibility', async () => {
    const file = await newFile('tagged.txt');
    const pub = await ok('properties.insert', d.properties.insert({ fileId: file.id!, requestBody: { key: 'team', value: 'platform', visibility: 'PUBLIC' } }));
    assert.deepEqual([pub.key, pub.value, pub.visibility], ['team', 'platform', 'PUBLIC']);
    const priv = await ok('properties.insert', d.properties.insert({ fileId: file.id!, requestBody: { key: 'team', value: 'mine' } }));
    assert.equal(priv.visibility, 'PRIVATE', 'private by default');
    assert.equal((await ok('properties.list', d.properties.list({ fileId: file.id! }))).items!.length, 2);
    assert.equal((await ok('properties.get', d.properties.get({ fileId: file.id!, propertyKey: 'team', visibility: 'PUBLIC' }))).value, 'platform');
    assert.equal((await ok('properties.get', d.properties.get({ fileId: file.id!, propertyKey: 'team' }))).value, 'mine');
    assert.equal(
      (await ok('properties.patch', d.properties.patch({ fileId: file.id!, propertyKey: 'team', visibility: 'PUBLIC', requestBody: { value: 'infra' } })))
        .value,
      'infra',
    );
    assert.equal(
      (await ok('properties.update', d.properties.update({ fileId: file.id!, propertyKey: 'team', visibility: 'PUBLIC', requestBody: { value: 'sre' } })))
        .value,
      'sre',
    );
    const viaFile = await ok('files.get', d.files.get({ fileId: file.id! }));
    assert.deepEqual(viaFile.properties!.map((p) => `${p.key}=${p.value}/${p.visibility}`).sort(), ['team=mine/PRIVATE', 'team=sre/PUBLIC']);
    await ok('properties.delete', d.properties.delete({ fileId: file.id!, propertyKey: 'team', visibility: 'PUBLIC' }));
    await refused('properties.get', d.properties.get({ fileId: file.id!, propertyKey: 'team', visibility: 'PUBLIC' }), 404, 'notFound', 'propertyKey');
    await refused('properties.insert', d.properties.insert({ fileId: file.id!, requestBody: { key: 'k', value: 'v'.repeat(200) } }), 400, 'invalid', 'value');
  });

  it("STO-REVISIONS-LIST STO-REVISIONS-GET STO-REVISIONS-PATCH STO-REVISIONS-UPDATE STO-REVISIONS-DELETE: one revision per content update, each downloadable; the head's removal falls back; the last one stays", async () => {
    const first = await ok('files.insert', d.files.insert({ requestBody: { title: 'revised.txt' }, media: { mimeType: 'text/plain', body: 'first' } }, upload));
    const second = await ok('files.update', d.files.update({ fileId: first.id!, media: { mimeType: 'text/plain', body: 'second' } }, upload));
    const list = await ok('revisions.list', d.revisions.list({ fileId: first.id! }));
    assert.deepEqual(
      list.items!.map((r) => r.id),
      [first.headRevisionId, second.headRevisionId],
    );
    assert.deepEqual(
      list.items!.map((r) => r.md5Checksum),
      [md5('first'), md5('second')],
    );
    const old = await ok('revisions.get', d.revisions.get({ fileId: first.id!, revisionId: first.headRevisionId! }));
    assert.equal(old.fileSize, '5');
    assert.equal(
      (await bytesOf(await d.files.get({ fileId: first.id!, alt: 'media', revisionId: first.headRevisionId! }, { responseType: 'arraybuffer' }))).toString(),
      'first',
    );
    assert.equal((await ok('revisions.patch', d.revisions.patch({ fileId: first.id!, revisionId: old.id!, requestBody: { pinned: true } }))).pinned, true);
    assert.equal((await ok('revisions.update', d.revisions.update({ fileId: first.id!, revisionId: old.id!, requestBody: { pinned: false } }))).pinned, false);
    await ok('revisions.delete', d.revisions.delete({ fileId: first.id!, revisionId: second.headRevisionId! }));
    const now = await ok('files.get', d.files.get({ fileId: first.id! }));
    assert.equal(now.headRevisionId, first.headRevisionId, 'the previous revision is the head again');
    assert.equal(now.md5Checksum, md5('first'));
    await refused('revisions.delete', d.revisions.delete({ fileId: first.id!, revisionId: first.headRevisionId! }), 400, 'cannotDeleteOnlyRevision');
    await refused('revisions.get', d.revisions.get({ fileId: first.id!, revisionId: second.headRevisionId! }), 404, 'notFound', 'revisionId');
  });

  it('STO-CHILDREN-LIST STO-CHILDREN-GET STO-CHILDREN-INSERT STO-CHILDREN-DELETE STO-PARENTS-LIST STO-PARENTS-GET STO-PARENTS-INSERT STO-PARENTS-DELETE: a file in two folders and out again, children paged', async () => {
    const a = await newFile('folder A', { mimeType: FOLDER });
    const b = await newFile('folder B', { mimeType: FOLDER });
    const file = await newFile('linked.txt', { parents: [{ id: a.id! }] });
    const sibling = await newFile('sibling.txt', { parents: [{ id: a.id! }] });
    const page = await ok('children.list', d.children.list({ folderId: a.id!, maxResults: 1 }));
    assert.deepEqual(
      page.items!.map((c) => c.id),
      [file.id],
    );
    const next = await ok('children.list', d.children.list({ folderId: a.id!, maxResults: 1, pageToken: page.nextPageToken! }));
    assert.deepEqual(
      next.items!.map((c) => c.id),
      [sibling.id],
    );
    assert.equal(next.nextPageToken, undefined);
    assert.equal((await ok('children.get', d.children.get({ folderId: a.id!, childId: file.id! }))).id, file.id);
    assert.equal((await ok('children.insert', d.children.insert({ folderId: b.id!, requestBody: { id: file.id! } }))).id, file.id);
    const parents = await ok('parents.list', d.parents.list({ fileId: file.id! }));
    assert.deepEqual(parents.items!.map((p) => p.id).sort(), [a.id, b.id].sort());
    const parent = await ok('parents.get', d.parents.get({ fileId: file.id!, parentId: b.id! }));
    assert.equal(parent.isRoot, false);
    await ok('parents.delete', d.parents.delete({ fileId: file.id!, parentId: a.id! }));
    await refused('children.get', d.children.get({ folderId: a.id!, childId: file.id! }), 404, 'notFound');
    await ok('children.delete', d.children.delete({ folderId: b.id!, childId: file.id! }));
    assert.deepEqual((await ok('parents.list', d.parents.list({ fileId: file.id! }))).items, []);
    assert.equal((await ok('parents.insert', d.parents.insert({ fileId: file.id!, requestBody: { id: 'root' } }))).isRoot, true);
    await refused('parents.insert', d.parents.insert({ fileId: a.id!, requestBody: { id: a.id! } }), 400, 'badRequest', 'id');
  });

  it('STO-CHANGES-GETSTARTPAGETOKEN STO-CHANGES-LIST STO-CHANGES-GET: changes after a start token, one a page, followed to newStartPageToken', async () => {
    const start = await ok('changes.getStartPageToken', d.changes.getStartPageToken());
    const one = await newFile('change-1.txt');
    const two = await newFile('change-2.txt');
    await ok('files.delete', d.files.delete({ fileId: one.id! }));
    const changes: drive_v2.Schema$Change[] = [];
    let token: string | undefined = start.startPageToken!;
    let newStart: string | undefined;
    while (token) {
      const page: drive_v2.Schema$ChangeList = await ok('changes.list', d.changes.list({ pageToken: token, maxResults: 1 }));
      changes.push(...page.items!);
      assert.ok(!(page.nextPageToken && page.newStartPageToken), 'never both');
      token = page.nextPageToken ?? undefined;
      newStart = page.newStartPageToken ?? undefined;
    }
    assert.deepEqual(
      changes.map((c) => [c.fileId, c.deleted]),
      [
        [two.id, false],
        [one.id, true],
      ],
      "the log keeps each file's latest change",
    );
    assert.equal(changes[0]!.file!.title, 'change-2.txt');
    assert.ok(Number(newStart) > Number(start.startPageToken));
    const byId = await ok('changes.get', d.changes.get({ changeId: changes[0]!.id! }));
    assert.equal(byId.fileId, two.id);
    await refused('changes.get', d.changes.get({ changeId: '999999' }), 404, 'notFound');
    const empty = await ok('changes.list', d.changes.list({ pageToken: newStart! }));
    assert.deepEqual(empty.items, []);
    assert.equal(empty.newStartPageToken, newStart);
  });

  it('STO-DRIVES-INSERT STO-DRIVES-LIST STO-DRIVES-GET STO-DRIVES-UPDATE STO-DRIVES-HIDE STO-DRIVES-UNHIDE STO-DRIVES-DELETE: a shared drive by requestId (idempotent), renamed, hidden, removed', async () => {
    const made = await ok('drives.insert', d.drives.insert({ requestId: 'gapi-request-1', requestBody: { name: 'Releases' } }));
    assert.equal(made.name, 'Releases');
    const again = await ok('drives.insert', d.drives.insert({ requestId: 'gapi-request-1', requestBody: { name: 'Releases' } }));
    assert.equal(again.id, made.id, 'the same requestId is the same drive');
    // requestId is required on both sides: the client refuses to send without it (the server's own 400 required is
    // in extras.test.ts).
    await assert.rejects(d.drives.insert({ requestBody: { name: 'no request id' } }), /Missing required parameters: requestId/);
    assert.deepEqual(
      (await ok('drives.list', d.drives.list())).items!.map((x) => x.id),
      [made.id],
    );
    assert.equal((await ok('drives.get', d.drives.get({ driveId: made.id! }))).name, 'Releases');
    assert.equal(
      (await ok('drives.update', d.drives.update({ driveId: made.id!, requestBody: { name: 'Artefacts', colorRgb: '#00aa55' } }))).name,
      'Artefacts',
    );
    assert.equal((await ok('drives.hide', d.drives.hide({ driveId: made.id! }))).hidden, true);
    assert.equal((await ok('drives.unhide', d.drives.unhide({ driveId: made.id! }))).hidden, false);
    await ok('drives.delete', d.drives.delete({ driveId: made.id! }));
    await refused('drives.get', d.drives.get({ driveId: made.id! }), 404, 'notFound', 'driveId');
  });

  it('STO-APPS-LIST STO-APPS-GET STO-FILES-LISTLABELS STO-FILES-MODIFYLABELS STO-FILES-GENERATECSETOKEN: apps, labels set and removed by field, a CSE token for a file', async () => {
    const apps = await ok('apps.list', d.apps.list());
    assert.equal(apps.items!.length, 1);
    assert.equal((await ok('apps.get', d.apps.get({ appId: apps.items![0]!.id! }))).name, 'Gantry');
    await refused('apps.get', d.apps.get({ appId: '999' }), 404, 'notFound', 'appId');

    const file = await newFile('labelled.txt');
    assert.deepEqual((await ok('files.listLabels', d.files.listLabels({ fileId: file.id! }))).items, []);
    const modified = await ok(
      'files.modifyLabels',
      d.files.modifyLabels({
        fileId: file.id!,
        requestBody: {
          kind: 'drive#modifyLabelsRequest',
          labelModifications: [
            {
              labelId: 'release',
              fieldModifications: [
                { fieldId: 'stage', setTextValues: ['beta'] },
                { fieldId: 'build', setIntegerValues: ['42'] },
                { fieldId: 'due', setDateValues: ['2026-01-31'] },
                { fieldId: 'owner', setUserValues: ['alice@example.com'] },
                { fieldId: 'tier', setSelectionValues: ['gold'] },
              ],
            },
          ],
        },
      }),
    );
    const label = modified.modifiedLabels![0]!;
    assert.equal(label.id, 'release');
    assert.deepEqual(label.fields!.stage, { kind: 'storage#labelField', id: 'stage', valueType: 'text', text: ['beta'] });
    assert.deepEqual(label.fields!.build, { kind: 'storage#labelField', id: 'build', valueType: 'integer', integer: ['42'] });
    assert.deepEqual(label.fields!.due, { kind: 'storage#labelField', id: 'due', valueType: 'dateString', dateString: ['2026-01-31'] });
    assert.deepEqual(label.fields!.tier, { kind: 'storage#labelField', id: 'tier', valueType: 'selection', selection: ['gold'] });
    assert.equal(label.fields!.owner!.valueType, 'user');
    assert.deepEqual(
      label.fields!.owner!.user!.map((u) => [u.kind, u.emailAddress]),
      [['storage#user', 'alice@example.com']],
    );
    const listed = await ok('files.listLabels', d.files.listLabels({ fileId: file.id! }));
    assert.deepEqual(listed.items, [label]);
    await ok(
      'files.modifyLabels',
      d.files.modifyLabels({
        fileId: file.id!,
        requestBody: { labelModifications: [{ labelId: 'release', fieldModifications: [{ fieldId: 'stage', unsetValues: true }] }] },
      }),
    );
    assert.deepEqual(Object.keys((await ok('files.listLabels', d.files.listLabels({ fileId: file.id! }))).items![0]!.fields!).sort(), [
      'build',
      'due',
      'owner',
      'tier',
    ]);
    await ok(
      'files.modifyLabels',
      d.files.modifyLabels({ fileId: file.id!, requestBody: { labelModifications: [{ labelId: 'release', removeLabel: true }] } }),
    );
    assert.deepEqual((await ok('files.listLabels', d.files.listLabels({ fileId: file.id! }))).items, []);

    const token = await ok('files.generateCseToken', d.files.generateCseToken({ fileId: file.id! }));
    assert.equal(token.fileId, file.id);
    assert.equal(token.jwt!.split('.').length, 3);
    await refused('files.generateCseToken', d.files.generateCseToken({ fileId: '1noSuchFile0000000' }), 404, 'notFound');
  });

  it('STO-FILES-LIST STO-FILES-GET: a quota spent is 403 userRateLimitExceeded in the usageLimits domain — and this client gives up on it at once (no backoff on 403)', async () => {
    h.server.setFaults([{ kind: 'quota', requests: 0, windowMs: 60_000 }]);
    try {
      const before = proxy.seen.length;
      const error = await refused('files.list', d.files.list(), 403, 'userRateLimitExceeded');
      assert.equal(error.response!.data.error.errors[0]!.domain, 'usageLimits');
      assert.equal(proxy.seen.length, before + 1, 'one request: googleapis retries 429 and 5xx, never a 403 rate limit');
    } finally {
      h.server.setFaults([]);
    }
    h.server.setFaults([{ kind: 'status', status: 503, times: 1, method: 'GET', path: '/storage/v2/files/' }]);
    const root = await ok('files.get', d.files.get({ fileId: 'root' }));
    assert.equal(root.mimeType, FOLDER, 'a 503 once is retried by the client and the retry is served');
  });

  it("STO-RESOURCES: every method of the spec's table went through googleapis' client, and the client has no other (but the deprecated teamdrives.*)", () => {
    const spec = readFileSync(new URL('../../fixtures/spec/rules.md', import.meta.url), 'utf8');
    const specMethods = [...spec.matchAll(/^- STO-[A-Z]+-[A-Z]+: `([a-z]+\.[A-Za-z]+)` is `/gm)].map((m) => m[1]!).sort();
    assert.equal(specMethods.length, 70);
    assert.deepEqual(
      clientMethods()
        .filter((m) => !m.startsWith('teamdrives.'))
        .sort(),
      specMethods,
      "the client's Drive v2 methods are the spec's",
    );
    assert.deepEqual([...covered].sort(), specMethods, 'each went through the client in the tests above');
  });
});
