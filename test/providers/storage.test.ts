// StorageFolder, StorageFile and StoragePermission through the engine harness (consumer mode: the packed gantry in
// a Pulumi project, the real dynamic-provider plugin) against the embedded storage server on 127.0.0.1. What the
// resources did is read back from the server with the library's client (files, revisions, permissions, the trash);
// the uploads are counted from the server's request log. The token and a secret content are canaries searched for
// in the state file, every `__provider` and everything printed.
import assert from 'node:assert/strict';
import { restoreProcessEnv } from '../process-env.js';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStorageServer, type StorageServer } from '../../devserver/storage/index.js';
import { createStorageClient, StorageError, type StorageClient } from '../../lib/storage/index.js';
import { upload } from '../../lib/storage/upload/index.js';
import { storageFileOperations } from '../../providers/storage-file-operations.js';
import { storageFolderOperations } from '../../providers/storage-folder-operations.js';
import { storagePermissionOperations } from '../../providers/storage-permission-operations.js';
import { makeTempDir, removeTempDir } from '../harness/consumer.js';
import { assertProviderHygiene, expectDeploymentFailure, Harness, UNKNOWN, type Stack } from '../harness/index.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'storage.cjs'), esm: path.join(programs, 'storage.mjs') };
const md5 = (data: string | Buffer) => createHash('md5').update(data).digest('hex');

interface Args {
  folders?: Array<Record<string, unknown>>;
  files?: Array<Record<string, unknown>>;
  permissions?: Array<Record<string, unknown>>;
}

describe('StorageFolder, StorageFile, StoragePermission (Pulumi dynamic resources) against the embedded storage server', function () {
  this.timeout(600_000);
  const token = `canary-storage-token-${Math.random().toString(36).slice(2)}`;
  const secretContent = `canary-secret-content-${Math.random().toString(36).slice(2)}`;
  let server: StorageServer;
  let serverDir: string;
  let admin: StorageClient;
  let requests: string[];
  let stack: Stack | undefined;
  const uploads = () => requests.filter((line) => / \/upload\/storage\/v2\/files/.test(line)).length;
  const revisions = async (fileId: string) => (await admin.revisions.list({ fileId })).items ?? [];
  const gone = async (fileId: string) =>
    admin.files.get({ fileId }).then(
      () => false,
      (error: unknown) => {
        if (error instanceof StorageError && error.status === 404) return true;
        throw error;
      },
    );

  before(async () => {
    serverDir = await makeTempDir('gantry-storage-provider-');
    requests = [];
    server = await startStorageServer({ dir: serverDir, token, log: (line) => requests.push(line) });
    admin = createStorageClient({ baseUrl: server.url, token });
  });
  afterEach(async () => {
    await stack?.dispose();
    stack = undefined;
  });
  after(async () => {
    admin?.close();
    await server?.stop();
    await removeTempDir(serverDir);
  });

  it('STO-FILES-INSERT, STO-FILES-UPDATE, STO-FILES-PATCH, STO-PERMISSIONS-INSERT, STO-PERMISSIONS-PATCH, STO-FILES-TRASH, STO-FILES-DELETE (esm): a folder, files and a permission are created; unchanged content is not uploaded again; new content is a new revision of the same file; rename, move and a new role are patches; delete trashes, permanentDelete deletes; the token and a secret content leak nowhere', async () => {
    const s = (stack = await Harness.consumer({ kind: 'esm', env: { STORAGE_BASE_URL: server.url, STORAGE_TOKEN: token } }));
    // A 6 MiB file beside the program, named by a relative path (resolved in the project folder, as the plugin runs there).
    const big = Buffer.alloc(6 * 1024 * 1024, 'gantry');
    await writeFile(path.join(s.dir, 'artefact.bin'), big);
    const declared = (over: { report?: Record<string, unknown>; artefact?: Record<string, unknown>; share?: Record<string, unknown> } = {}): Args => ({
      folders: [{ name: 'reports', description: 'gate reports' }, { name: 'archive' }],
      files: [
        { name: 'report', parent: '@reports', content: secretContent, secret: true, mimeType: 'text/plain', ...over.report },
        { name: 'artefact', parent: '@reports', source: 'artefact.bin', ...over.artefact },
      ],
      permissions: [
        { name: 'share', fileId: '@report', role: 'reader', type: 'user', emailAddress: 'Reviewer@Example.com', sendNotificationEmails: false, ...over.share },
      ],
    });

    // A preview first: the folder ids are not known yet, so the files' parents and the permission's file reach Check as unknowns.
    const preview = await s.preview(program, declared());
    assert.deepEqual(preview.errors, []);
    assert.deepEqual(preview.plan, { reports: 'create', archive: 'create', report: 'create', artefact: 'create', share: 'create' });
    assert.equal(preview.steps.find((step) => step.name === 'report')!.inputs?.parent, UNKNOWN);
    assert.equal(preview.steps.find((step) => step.name === 'share')!.inputs?.fileId, UNKNOWN);
    assert.equal(uploads(), 0, 'a preview uploads nothing');

    const created = await s.up(program, declared());
    assert.deepEqual(created.plan, { reports: 'create', archive: 'create', report: 'create', artefact: 'create', share: 'create' });
    const ids = Object.fromEntries(Object.entries(created.resources).map(([name, r]) => [name, r.id!]));
    const folder = await admin.files.get({ fileId: ids.reports! });
    assert.equal(folder.mimeType, 'application/vnd.google-apps.folder');
    assert.equal(folder.title, 'reports');
    assert.equal(folder.description, 'gate reports');
    assert.equal(folder.parents?.[0]?.isRoot, true, 'a folder without parent sits in the root');
    assert.equal(created.resources.reports!.outputs.alternateLink, folder.alternateLink);
    const report = await admin.files.get({ fileId: ids.report! });
    assert.deepEqual(
      [report.title, report.mimeType, report.parents?.map((p) => p.id), report.md5Checksum],
      ['report', 'text/plain', [ids.reports], md5(secretContent)],
    );
    assert.equal(created.resources.report!.outputs.contentMd5, md5(secretContent), 'the state keeps the md5 of a secret content');
    assert.equal(created.resources.report!.outputs.content, undefined, 'and no content output');
    const artefact = await admin.files.get({ fileId: ids.artefact! });
    assert.equal(artefact.md5Checksum, md5(big));
    assert.equal(artefact.fileSize, String(big.length));
    assert.equal(created.resources.artefact!.outputs.headRevisionId, artefact.headRevisionId);
    const share = await admin.permissions.get({ fileId: ids.report!, permissionId: String(created.resources.share!.outputs.permissionId) });
    assert.deepEqual([share.role, share.type, share.emailAddress], ['reader', 'user', 'reviewer@example.com']);
    assert.equal(ids.share, `${ids.report}/${share.id}`);
    await assertProviderHygiene(s, created, [token, secretContent]);

    const before = uploads();
    const same = await s.up(program, declared());
    assert.deepEqual(same.plan, { reports: 'same', archive: 'same', report: 'same', artefact: 'same', share: 'same' });
    assert.equal(uploads(), before, 'unchanged content is not uploaded again');

    // New content for the report and a move into the archive; a new name for the artefact; a new role.
    const changedContent = `${secretContent}-v2`;
    const changed = await s.up(
      program,
      declared({ report: { content: changedContent, parent: '@archive' }, artefact: { title: 'artefact-1.0.bin' }, share: { role: 'writer' } }),
    );
    assert.deepEqual(changed.plan, { reports: 'same', archive: 'same', report: 'update', artefact: 'update', share: 'update' });
    for (const name of ['report', 'artefact', 'share']) assert.equal(changed.resources[name]!.id, ids[name], `${name} keeps its id`);
    const moved = await admin.files.get({ fileId: ids.report! });
    assert.deepEqual([moved.md5Checksum, moved.parents?.map((p) => p.id)], [md5(changedContent), [ids.archive]]);
    assert.equal((await revisions(ids.report!)).length, 2, 'the new content is a second revision; the first is kept');
    const renamed = await admin.files.get({ fileId: ids.artefact! });
    assert.equal(renamed.title, 'artefact-1.0.bin');
    assert.equal((await revisions(ids.artefact!)).length, 1, 'a rename uploads nothing');
    assert.equal((await admin.permissions.get({ fileId: ids.report!, permissionId: share.id! })).role, 'writer');
    assert.equal(uploads() > before, true);
    await assertProviderHygiene(s, changed, [token, secretContent, changedContent]);

    // permanentDelete on the artefact is a change of the state alone; then the artefact leaves the program.
    const flagged = await s.up(
      program,
      declared({
        report: { content: changedContent, parent: '@archive' },
        artefact: { title: 'artefact-1.0.bin', permanentDelete: true },
        share: { role: 'writer' },
      }),
    );
    assert.deepEqual(flagged.plan, { reports: 'same', archive: 'same', report: 'same', artefact: 'update', share: 'same' });
    const withoutArtefact = declared({ report: { content: changedContent, parent: '@archive' }, share: { role: 'writer' } });
    withoutArtefact.files = withoutArtefact.files!.filter((file) => file.name !== 'artefact');
    const dropped = await s.up(program, withoutArtefact);
    assert.deepEqual(dropped.plan, { reports: 'same', archive: 'same', report: 'same', share: 'same', artefact: 'delete' });
    assert.ok(await gone(ids.artefact!), 'permanentDelete deleted the file');

    const destroyed = await s.destroy();
    assert.ok(!(await gone(ids.report!)), 'the report is trashed, not deleted');
    assert.equal((await admin.files.get({ fileId: ids.report! })).labels?.trashed, true);
    assert.equal((await admin.files.get({ fileId: ids.reports! })).labels?.trashed, true, 'the folder is trashed');
    assert.equal((await admin.files.get({ fileId: ids.archive! })).labels?.trashed, true, 'and the other one');
    await assert.rejects(
      admin.permissions.get({ fileId: ids.report!, permissionId: share.id! }),
      (error: unknown) => error instanceof StorageError && error.status === 404,
    );
    assert.deepEqual(destroyed.plan, { share: 'delete', report: 'delete', archive: 'delete', reports: 'delete' });
    await assertProviderHygiene(s, dropped, [token, secretContent, changedContent]);
    const state = await readFile(s.statePath, 'utf8');
    for (const canary of [token, secretContent, changedContent]) assert.ok(!state.includes(canary) && !s.log.includes(canary));
  });

  it('STO-FILES-GET, STO-FILES-UNTRASH (cjs, address from the stack config): drift — a file trashed outside Pulumi is seen by refresh and taken out of the trash; content changed outside is put back; a file deleted outside is created again; a folder holding what Gantry did not make is not trashed', async () => {
    const s = (stack = await Harness.consumer({ kind: 'cjs', env: { STORAGE_TOKEN: token }, config: { 'gantry:storageBaseUrl': server.url } }));
    const declared: Args = {
      folders: [{ name: 'site' }],
      files: [
        { name: 'index', parent: '@site', content: '<h1>Gantry</h1>', mimeType: 'text/html' },
        { name: 'notes', parent: '@site', content: 'notes' },
      ],
    };
    const created = await s.up(program, declared);
    const ids = Object.fromEntries(Object.entries(created.resources).map(([name, r]) => [name, r.id!]));

    await admin.files.trash({ fileId: ids.index! });
    const refreshed = await s.refresh();
    assert.deepEqual(refreshed.plan, { site: 'same', index: 'update', notes: 'same' }, 'the trash is drift');
    assert.equal(refreshed.resources.index!.outputs.trashed, true);
    const restored = await s.up(program, declared);
    assert.deepEqual(restored.plan, { site: 'same', index: 'update', notes: 'same' });
    assert.equal(restored.resources.index!.id, ids.index, 'the same file, out of the trash');
    assert.equal((await admin.files.get({ fileId: ids.index! })).labels?.trashed, false);
    assert.equal((await revisions(ids.index!)).length, 1, 'taking it out of the trash uploads nothing');

    // Content changed outside Pulumi, no refresh: Diff compares the service's md5 and the update puts the content back.
    await upload(admin.transport, { source: Buffer.from('defaced'), fileId: ids.index!, mimeType: 'text/html' });
    const repaired = await s.up(program, declared);
    assert.deepEqual(repaired.plan, { site: 'same', index: 'update', notes: 'same' });
    assert.equal((await admin.files.get({ fileId: ids.index! })).md5Checksum, md5('<h1>Gantry</h1>'));
    assert.equal((await revisions(ids.index!)).length, 3);

    // Deleted outside: without a refresh the next up replaces it (a new file); with one, refresh drops it.
    await admin.files.delete({ fileId: ids.notes! });
    const recreated = await s.up(program, declared);
    assert.deepEqual(recreated.plan, { site: 'same', index: 'same', notes: 'replace' });
    assert.notEqual(recreated.resources.notes!.id, ids.notes);
    assert.equal((await admin.files.get({ fileId: recreated.resources.notes!.id! })).title, 'notes');
    await admin.files.delete({ fileId: recreated.resources.notes!.id! });
    assert.deepEqual((await s.refresh()).plan, { site: 'same', index: 'same', notes: 'delete' });

    // Someone else's file in the folder: the folder is left alone, and says why.
    const foreign = await admin.files.insert({ requestBody: { title: 'not-gantrys.txt', parents: [{ id: ids.site! }] } });
    const refused = (await expectDeploymentFailure(s.destroy())).result;
    assert.equal(refused.errors.length, 1);
    assert.match(refused.errors[0]!, /site/);
    assert.match(refused.errors[0]!, /not-gantrys\.txt.*not in the trash/);
    assert.equal((await admin.files.get({ fileId: ids.site! })).labels?.trashed, false, 'the folder is not trashed');
    assert.equal((await admin.files.get({ fileId: foreign.id! })).labels?.trashed, false, 'nor what it holds');
    assert.equal((await admin.files.get({ fileId: ids.index! })).labels?.trashed, true, 'the stack’s own file was trashed');
    await admin.files.trash({ fileId: foreign.id! });
    await s.destroy();
    assert.equal((await admin.files.get({ fileId: ids.site! })).labels?.trashed, true);
    await assertProviderHygiene(s, created, [token]);
  });

  it('permanentDelete on a folder: refused while its trash holds an item Gantry did not make; deletes the folder with the files Gantry trashed in it', async () => {
    const s = (stack = await Harness.consumer({ kind: 'esm', env: { STORAGE_BASE_URL: server.url, STORAGE_TOKEN: token } }));
    const declared: Args = { folders: [{ name: 'tmp', permanentDelete: true }], files: [{ name: 'scratch', parent: '@tmp', content: 'x' }] };
    const created = await s.up(program, declared);
    const ids = Object.fromEntries(Object.entries(created.resources).map(([name, r]) => [name, r.id!]));
    const foreign = await admin.files.insert({ requestBody: { title: 'theirs', parents: [{ id: ids.tmp! }] } });
    await admin.files.trash({ fileId: foreign.id! });
    const refused = await expectDeploymentFailure(s.destroy());
    assert.match(refused.message, /"theirs" .* was not made by Gantry/);
    assert.ok(!(await gone(ids.tmp!)));
    await admin.files.delete({ fileId: foreign.id! });
    await s.destroy();
    assert.ok(await gone(ids.tmp!), 'the folder is deleted');
    assert.ok(await gone(ids.scratch!), 'with the file the stack had trashed in it');
  });

  it('Check names each bad property and its reason, never echoing a content; unknown values pass until known', async () => {
    const file = await storageFileOperations.check({}, { parent: 'root', name: '', source: 'a.txt', content: secretContent, mimeType: 'not a type' });
    assert.deepEqual(
      file.failures.map((f) => f.property),
      ['name', 'mimeType', 'content'],
    );
    assert.match(file.failures[2]!.reason, /exactly one of source .* and content/);
    assert.ok(!JSON.stringify(file.failures).includes(secretContent));
    const neither = await storageFileOperations.check({}, { parent: 'root', name: 'x' });
    assert.deepEqual(neither.failures, [{ property: 'source', reason: 'give exactly one of source (a local file) and content (text), got neither' }]);
    const missing = await storageFileOperations.check({}, { parent: 'root', name: 'x', source: '/nonexistent/gantry.bin' });
    assert.equal(missing.failures[0]?.property, 'source');
    assert.match(missing.failures[0]!.reason, /\/nonexistent\/gantry\.bin cannot be read \(ENOENT\)/);
    const folderSource = await storageFileOperations.check({}, { parent: 'root', name: 'x', source: programs });
    assert.match(folderSource.failures[0]!.reason, /not a regular file/);
    const large = await storageFileOperations.check({}, { parent: 'root', name: 'x', content: 'x'.repeat(5 * 1024 * 1024 + 1) });
    assert.match(large.failures[0]!.reason, /over 5242880: give a larger content as a file \(source\)/);
    const fine = await storageFileOperations.check({}, { parent: 'root', name: 'x', content: 'hello' });
    assert.deepEqual(fine.failures, []);
    assert.equal(fine.inputs.contentMd5, md5('hello'));
    const unknown = await storageFileOperations.check({}, { parent: UNKNOWN, name: UNKNOWN, content: UNKNOWN });
    assert.deepEqual(unknown.failures, []);
    assert.equal(unknown.inputs.contentMd5, undefined);

    const folder = await storageFolderOperations.check({}, { name: 'ok', parent: '../up', permanentDelete: 'yes' });
    assert.deepEqual(
      folder.failures.map((f) => f.property),
      ['parent', 'permanentDelete'],
    );
    assert.equal(folder.inputs.parent, '../up');
    assert.equal((await storageFolderOperations.check({}, { name: 'ok' })).inputs.parent, 'root');

    const permission = await storagePermissionOperations.check({}, { fileId: 'abc', role: 'editor', type: 'user', emailAddress: 'nobody' });
    assert.deepEqual(
      permission.failures.map((f) => f.property),
      ['role', 'emailAddress'],
    );
    assert.match(permission.failures[0]!.reason, /role must be one of reader, commenter, writer, owner, got "editor"/);
    const domain = await storagePermissionOperations.check(
      {},
      { fileId: 'abc', role: 'owner', type: 'domain', domain: 'example.com', emailAddress: 'a@example.com' },
    );
    assert.deepEqual(
      domain.failures.map((f) => f.property),
      ['emailAddress', 'role'],
    );
    const anyone = await storagePermissionOperations.check({}, { fileId: UNKNOWN, role: 'reader', type: 'anyone', withLink: true });
    assert.deepEqual(anyone.failures, []);
  });

  it('no STORAGE_TOKEN (and no gantry auth login): a usage error saying where to set it, and nothing sent', async () => {
    const saved = { ...process.env };
    for (const name of ['STORAGE_TOKEN', 'GANTRY_AUTH_URL', 'GANTRY_OAUTH_CLIENT_ID', 'GANTRY_AUTH_PROFILE']) delete process.env[name];
    process.env.STORAGE_BASE_URL = server.url;
    // No profile index: the machine's own logins, if any, are not this test's.
    process.env.GANTRY_CONFIG_DIR = path.join(serverDir, 'no-logins');
    const count = requests.length;
    try {
      await assert.rejects(storageFolderOperations.create({}, { name: 'x', parent: 'root' }), (error: Error & { hint?: string; exitCode?: number }) => {
        assert.match(error.message, /StorageFolder: no storage token: STORAGE_TOKEN is not set/);
        assert.match(error.hint ?? '', /export STORAGE_TOKEN.*`gantry auth login --scope storage\.file`/);
        assert.equal(error.exitCode, 2);
        return true;
      });
      delete process.env.STORAGE_BASE_URL;
      process.env.STORAGE_TOKEN = token;
      await assert.rejects(storageFolderOperations.create({}, { name: 'x', parent: 'root' }), /no storage API address/);
      assert.equal(requests.length, count);
    } finally {
      restoreProcessEnv(saved);
    }
  });

  it('a refused input fails the deployment naming the property, and creates nothing', async () => {
    const s = (stack = await Harness.consumer({ kind: 'esm', env: { STORAGE_BASE_URL: server.url, STORAGE_TOKEN: token } }));
    const count = requests.length;
    const failure = await expectDeploymentFailure(s.up(program, { files: [{ name: 'bad', parent: 'root', source: 'missing.bin' }] }));
    assert.match(failure.message, /resource 'bad': check failed: property source: source .*missing\.bin cannot be read \(ENOENT\)/);
    assert.equal(requests.length, count, 'nothing reached the service');
  });
});
