// `gantry storage` as a user runs it — the built command in its own process — against the embedded storage server
// (in this process, on a real socket): each command's happy path and its --json, bad input refused before anything is
// sent (exit 2), the service's "no" (exit 1), `| head -1` on a long listing, changes --watch until Ctrl-C, and the
// token in no output and no argv.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStorageTransport } from '../../lib/storage/transport.js';
import { exportFile } from '../../lib/storage/export.js';
import { upload } from '../../lib/storage/upload/index.js';
import { harness, TOKEN, type Harness, type Json } from '../devserver/storage/helpers.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
/** The token the command is given: searched for in everything it prints. */
const CANARY = 'ya29.canary-storage-cli-4f1e2d';
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

describe('gantry storage (the command, against the embedded storage server)', function () {
  this.timeout(120_000);
  let h: Harness;
  let dir: string;
  const printed: string[] = [];
  const argvs: string[][] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-storage-cli-'));
    await Promise.all(['home', 'state', 'config', 'work'].map((name) => mkdir(join(dir, name))));
    h = await harness({ tokens: [CANARY] });
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  function env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
    const base: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      HOME: join(dir, 'home'),
      XDG_STATE_HOME: join(dir, 'state'),
      GANTRY_CONFIG_DIR: join(dir, 'config'),
      GANTRY_LOG: 'warn',
      STORAGE_BASE_URL: h.server.url,
      STORAGE_TOKEN: CANARY,
      ...extra,
    };
    return Object.fromEntries(Object.entries(base).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
  }

  function gantry(
    args: string[],
    options: {
      env?: NodeJS.ProcessEnv;
      shell?: string;
      onStderr?: (all: string, child: ChildProcess) => void;
      onStdout?: (all: string, child: ChildProcess) => void;
    } = {},
  ): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = options.shell
        ? spawn('bash', ['--norc', '-c', options.shell], { env: options.env ?? env(), cwd: join(dir, 'work') })
        : spawn(process.execPath, [bin, ...args], { env: options.env ?? env(), cwd: join(dir, 'work') });
      argvs.push(options.shell ? [options.shell] : args);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk;
        options.onStdout?.(stdout, child);
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk;
        options.onStderr?.(stderr, child);
      });
      child.on('error', reject);
      child.on('close', (code, signal) => {
        printed.push(stdout, stderr);
        resolve({ code, signal, stdout, stderr });
      });
    });
  }

  /** Runs and expects exit 0, returning the run. */
  async function ok(args: string[], options: Parameters<typeof gantry>[1] = {}): Promise<Run> {
    const run = await gantry(args, options);
    assert.equal(run.code, 0, `gantry ${args.join(' ')}: ${run.stderr}`);
    return run;
  }

  const json = async (args: string[]): Promise<Json> => JSON.parse((await ok([...args, '--json'])).stdout);
  const jsonLines = (text: string): Json[] =>
    text
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));

  it("STO-ABOUT-GET: about prints the account, root folder and quota, and where the token comes from; --json is about.get's resource", async () => {
    const table = await ok(['storage', 'about']);
    assert.match(table.stdout, /^WHAT\s+VALUE$/m);
    assert.match(table.stdout, /^user\s+Gantry Dev <dev@gantry\.test>$/m);
    assert.match(table.stdout, /^token\s+from STORAGE_TOKEN$/m);
    assert.match(table.stdout, /^root folder\s+0A\S+$/m);
    const about = await json(['storage', 'about']);
    assert.equal(about.kind, 'storage#about');
    assert.match(table.stdout, new RegExp(`^root folder\\s+${about.rootFolderId}$`, 'm'));
  });

  it('STO-FILES-INSERT STO-FILES-LIST STO-FILES-GET: mkdir, put (multipart with --parent, --name, --mime), ls (folders marked, sizes), get to a file, a folder and stdout', async () => {
    const folder = await json(['storage', 'mkdir', 'reports']);
    assert.equal(folder.mimeType, 'application/vnd.google-apps.folder');
    const inner = await ok(['storage', 'mkdir', 'inner', '--parent', folder.id]);
    assert.match(inner.stdout, new RegExp(`^Created folder inner \\(\\S+\\) in ${folder.id}$`, 'm'));

    const data = randomBytes(200_000);
    await writeFile(join(dir, 'work', 'report.bin'), data);
    const put = await json(['storage', 'put', 'report.bin', '--parent', folder.id, '--name', 'Report 1.bin', '--mime', 'application/x-report']);
    assert.equal(put.title, 'Report 1.bin');
    assert.equal(put.mimeType, 'application/x-report');
    assert.equal(put.md5Checksum, md5(data));
    assert.deepEqual(
      put.parents.map((p: Json) => p.id),
      [folder.id],
    );
    const human = await ok(['storage', 'put', 'report.bin']);
    assert.match(human.stdout, /^Uploaded \S+report\.bin as report\.bin \(\S+\), 195 KiB, md5 [0-9a-f]{32}$/m);

    const listed = await ok(['storage', 'ls', folder.id]);
    const lines = listed.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID\s+TITLE\s+MIMETYPE\s+SIZE\s+MODIFIED$/);
    assert.match(lines[1]!, /^\S+\s+inner\/\s+application\/vnd\.google-apps\.folder\s+-\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'folders first, marked with /');
    assert.match(lines[2]!, new RegExp(`^${put.id}\\s+Report 1\\.bin\\s+application/x-report\\s+200000\\s+\\d{4}-`));
    assert.equal(lines.length, 3);
    const root = await ok(['storage', 'ls']);
    assert.match(root.stdout, /\sreports\/\s/);
    assert.match(root.stdout, /\sreport\.bin\s/);
    assert.doesNotMatch(root.stdout, /Report 1\.bin/, 'ls without a folder is the root');
    const queried = jsonLines((await ok(['storage', 'ls', '--query', "title contains 'Report 1'", '--json'])).stdout);
    assert.deepEqual(
      queried.map((f) => f.id),
      [put.id],
      '--query alone searches everywhere',
    );

    const got = await json(['storage', 'get', put.id, '-o', 'copy.bin']);
    assert.equal(got.bytes, data.length);
    assert.equal(got.resumedFrom, 0);
    assert.ok((await readFile(join(dir, 'work', 'copy.bin'))).equals(data));
    await mkdir(join(dir, 'work', 'into'));
    const intoFolder = await ok(['storage', 'get', put.id, '-o', 'into']);
    assert.match(intoFolder.stdout, /^Downloaded Report 1\.bin \(\S+\) to \S+into\/Report 1\.bin, 195 KiB, md5 [0-9a-f]{32} checked$/m);
    assert.ok((await readFile(join(dir, 'work', 'into', 'Report 1.bin'))).equals(data));
    // A name taken from the title never replaces a file that is there (it may be the source that was uploaded).
    await writeFile(join(dir, 'work', 'into', 'Report 1.bin'), 'mine');
    const again = await gantry(['storage', 'get', put.id, '-o', 'into']);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /into\/Report 1\.bin"? already exists: a name taken from the title does not replace a file/);
    assert.match(again.stderr, /hint: give -o '\S+\/into\/Report 1\.bin' to replace it/);
    assert.equal(await readFile(join(dir, 'work', 'into', 'Report 1.bin'), 'utf8'), 'mine', 'the local file is untouched');
    const toStdout = await gantry([], { shell: `node ${JSON.stringify(bin)} storage get ${put.id} -o - | md5sum` });
    assert.equal(toStdout.stdout.split(' ')[0], md5(data), 'get -o - writes the bytes alone');
  });

  it('STO-FILES-UPDATE STO-REVISIONS-LIST: put --replace uploads a new revision (of a file, not a folder); revisions lists both; get --revision gets the old one', async () => {
    const first = Buffer.from('first version\n');
    const second = Buffer.from('second version, longer\n');
    await writeFile(join(dir, 'work', 'notes.txt'), first);
    const file = await json(['storage', 'put', 'notes.txt', '--mime', 'text/plain']);
    await writeFile(join(dir, 'work', 'notes.txt'), second);
    const replaced = await ok(['storage', 'put', 'notes.txt', '--replace', file.id]);
    assert.match(replaced.stdout, new RegExp(`as notes\\.txt \\(${file.id}\\), 23 B, md5 ${md5(second)}: a new revision$`, 'm'));
    const table = await ok(['storage', 'revisions', file.id]);
    assert.match(table.stdout, /^ID\s+MODIFIED\s+SIZE\s+MD5\s+BY\s+PINNED$/m);
    const revisions = await json(['storage', 'revisions', file.id]);
    assert.deepEqual(
      revisions.map((r: Json) => r.md5Checksum),
      [md5(first), md5(second)],
    );
    const old = await gantry([], { shell: `node ${JSON.stringify(bin)} storage get ${file.id} --revision ${revisions[0].id} -o -` });
    assert.equal(old.stdout, first.toString());
    // A folder has no content to replace: exit 1 from its metadata, with the --parent to use, and no upload.
    const folder = await json(['storage', 'mkdir', 'releases']);
    const requests = h.server.stats().requests;
    const intoFolder = await gantry(['storage', 'put', 'notes.txt', '--replace', folder.id]);
    assert.equal(intoFolder.code, 1, intoFolder.stderr);
    assert.match(intoFolder.stderr, new RegExp(`^error: --replace ${folder.id}: releases is a folder, which has no content to replace$`, 'm'));
    assert.match(intoFolder.stderr, new RegExp(`^hint: upload into it with: gantry storage put notes\\.txt --parent ${folder.id}$`, 'm'));
    assert.equal(h.server.stats().requests - requests, 1, 'only the metadata was asked for');
  });

  it('STO-FILES-EXPORT: export writes a storage document as the asked type, to a file named after it or to stdout; a plain file is refused before anything else (exit 1), and by the service with fileNotExportable', async () => {
    const transport = createStorageTransport({ baseUrl: h.server.url, token: TOKEN });
    const text = Buffer.from('Gantry report\n'.repeat(50));
    const doc = await upload(transport, {
      source: text,
      metadata: { title: 'Quarterly', mimeType: 'application/vnd.google-apps.document' },
      mimeType: 'text/plain',
    });
    const plain = await upload(transport, { source: Buffer.from('plain'), metadata: { title: 'plain.txt' } });
    const exported = await json(['storage', 'export', doc.id, '--mime', 'text/plain']);
    assert.equal(exported.path, join(dir, 'work', 'Quarterly.txt'));
    assert.ok((await readFile(exported.path)).equals(text));
    const piped = await gantry([], { shell: `node ${JSON.stringify(bin)} storage export ${doc.id} --mime text/plain -o - | head -1` });
    assert.equal(piped.stdout, 'Gantry report\n');
    // Not exportable is said first, even when the file it would be written to exists (nothing is asked of the service).
    await writeFile(join(dir, 'work', 'plain.txt'), 'already here');
    const exports = h.server.stats().requests;
    const refused = await gantry(['storage', 'export', plain.id, '--mime', 'text/plain']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /^error: plain\.txt \(\S+\) is a file of its own type \(application\/octet-stream\), not a storage document: only documents can be exported$/m,
    );
    assert.match(refused.stderr, new RegExp(`^hint: download it as it is with: gantry storage get ${plain.id}$`, 'm'));
    assert.equal(h.server.stats().requests - exports, 1, 'only the metadata was asked for');
    assert.equal(await readFile(join(dir, 'work', 'plain.txt'), 'utf8'), 'already here');
    // The service's own refusal, for a client that asks without looking (the library's exportFile), keeps its hint.
    const direct = await exportFile(transport, plain.id, 'text/plain', { path: join(dir, 'direct.txt') }).then(
      () => undefined,
      (error: Error & { hint?: string }) => error,
    );
    assert.match(String(direct?.message), /403 fileNotExportable/);
    assert.match(String(direct?.hint), /^only storage documents .* use `gantry storage get`/);
    transport.close();
    const document = await gantry(['storage', 'get', doc.id]);
    assert.equal(document.code, 1, 'a document has no content of its own to download');
    assert.match(document.stderr, /hint: export it: gantry storage export \S+ --mime text\/plain/);
    const unoffered = await gantry(['storage', 'export', doc.id, '--mime', 'image/png', '-o', 'doc.png']);
    assert.equal(unoffered.code, 1, unoffered.stderr);
    assert.match(unoffered.stderr, /^hint: the document cannot be exported as that type: ask for one its exportLinks/m);
  });

  it('STO-FILES-PATCH STO-FILES-TRASH STO-FILES-UNTRASH STO-FILES-DELETE: mv changes the parents; trash and untrash; rm --yes deletes, and get is then exit 1 (404)', async () => {
    const from = await json(['storage', 'mkdir', 'from']);
    const to = await json(['storage', 'mkdir', 'to']);
    await writeFile(join(dir, 'work', 'moving.txt'), 'moving');
    const file = await json(['storage', 'put', 'moving.txt', '--parent', from.id]);
    const moved = await json(['storage', 'mv', file.id, '--to', to.id]);
    assert.deepEqual(
      moved.parents.map((p: Json) => p.id),
      [to.id],
    );
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}`)).body.parents.length, 1);
    const trashed = await ok(['storage', 'trash', file.id]);
    assert.match(trashed.stdout, /^Trashed moving\.txt \(\S+\); gantry storage untrash \S+ brings it back$/m);
    assert.equal((await ok(['storage', 'ls', to.id])).stdout, '', 'a trashed file is not listed');
    assert.equal(jsonLines((await ok(['storage', 'ls', to.id, '--trashed', '--json'])).stdout)[0].id, file.id);
    const untrashed = await json(['storage', 'untrash', file.id]);
    assert.equal(untrashed.labels.trashed, false);
    const notTrashed = await ok(['storage', 'untrash', file.id]);
    assert.match(notTrashed.stdout, /^moving\.txt \(\S+\) is not in the trash: nothing to restore$/m, 'no claim of a restore that did not happen');
    // A --query that names trashed decides the trash itself; with --trashed as well it is exit 2, nothing sent.
    await ok(['storage', 'trash', file.id]);
    assert.deepEqual(
      jsonLines((await ok(['storage', 'ls', '--query', "trashed = true and title = 'moving.txt'", '--json'])).stdout).map((f) => f.id),
      [file.id],
    );
    const both = await gantry(['storage', 'ls', '--trashed', '--query', 'trashed = false']);
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /--trashed and a --query that names trashed/);
    const malformed = await gantry(['storage', 'ls', to.id, '--query', "title = 'x' or or title = 'y'"]);
    assert.equal(malformed.code, 1, malformed.stderr);
    assert.match(
      malformed.stderr,
      /^hint: check the --query syntax \(docs\/storage\.md\); it was sent, your query first and the listing's own filters after it, as: \(title = 'x' or or title = 'y'\) and '\S+' in parents and trashed = false$/m,
    );
    await ok(['storage', 'untrash', file.id]);
    // At a terminal (script(1) gives it one) rm names the file and asks; only y deletes.
    const asked = (answer: string) =>
      gantry([], { shell: `printf '${answer}\\n' | script -qec ${JSON.stringify(`node ${bin} storage rm ${file.id}`)} /dev/null` });
    const declined = await asked('n');
    assert.equal(declined.code, 1, declined.stdout);
    assert.match(declined.stdout, /Delete moving\.txt \(\S+\) permanently\? It skips the trash and cannot be undone\. \[y\/N\]/);
    assert.match(declined.stdout, /Nothing deleted\./);
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}`)).status, 200, 'still there');
    const removed = await json(['storage', 'rm', file.id, '--yes']);
    assert.deepEqual(removed, { id: file.id, title: 'moving.txt', deleted: true });
    const gone = await gantry(['storage', 'get', file.id]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /answered 404 notFound/);
    assert.match(gone.stderr, /^hint: no such file/m);
  });

  it('STO-PERMISSIONS-INSERT: share gives a user, a domain and anyone a role; a commenter is a reader with the additional role commenter', async () => {
    await writeFile(join(dir, 'work', 'shared.txt'), 'shared');
    const file = await json(['storage', 'put', 'shared.txt']);
    const user = await ok(['storage', 'share', file.id, '--email', 'Ana@Example.com', '--role', 'writer']);
    assert.match(user.stdout, /^Shared \S+ with user ana@example\.com as writer \(permission \S+\)$/m);
    const anyone = await json(['storage', 'share', file.id, '--type', 'anyone', '--role', 'reader']);
    assert.equal(anyone.type, 'anyone');
    const domain = await json(['storage', 'share', file.id, '--domain', 'example.org', '--role', 'reader']);
    assert.equal(domain.domain, 'example.org');
    await ok(['storage', 'share', file.id, '--email', 'bo@example.com', '--role', 'commenter', '--no-notify']);
    const permissions = (await h.api('GET', `/storage/v2/files/${file.id}/permissions`)).body.items as Json[];
    const bo = permissions.find((p) => p.emailAddress === 'bo@example.com');
    assert.equal(bo.role, 'reader');
    assert.deepEqual(permissions.map((p) => `${p.type}:${p.role}`).sort(), ['anyone:reader', 'domain:reader', 'user:owner', 'user:reader', 'user:writer']);
  });

  it('STO-CHANGES-LIST: changes prints the log with the token to go on from; --page-token starts there; --json ends with the startPageToken', async () => {
    const all = jsonLines((await ok(['storage', 'changes', '--json'])).stdout);
    const last = all.at(-1)!;
    assert.equal(last.kind, 'storage#startPageToken');
    assert.ok(all.slice(0, -1).every((c) => c.kind === 'storage#change'));
    await ok(['storage', 'mkdir', 'after-the-token']);
    const table = await ok(['storage', 'changes', '--page-token', last.startPageToken]);
    const rows = table.stdout.trimEnd().split('\n');
    assert.match(rows[0]!, /^CHANGE\s+TIME\s+FILE ID\s+TITLE\s+WHAT$/);
    assert.equal(rows.length, 2, table.stdout);
    assert.match(rows[1]!, /\safter-the-token\s+changed$/);
    assert.match(table.stderr, new RegExp(`^Next: gantry storage changes --page-token ${Number(last.startPageToken) + 1}$`, 'm'));
  });

  it('STO-CHANGES-WATCH STO-CHANNELS-STOP: changes --watch prints the sync, then each change and what it announces, until Ctrl-C — which stops the channel (exit 0)', async () => {
    let created = false;
    let channel = '';
    let pid = 0;
    const run = await gantry(['storage', 'changes', '--watch', '--listen', '127.0.0.1:0'], {
      onStderr: (all, child) => {
        const m = /Watching changes: channel (\S+) /.exec(all);
        if (m && !created) {
          created = true;
          channel = m[1]!;
          pid = child.pid!;
          // What `ps` shows of the running command: its arguments, never the token.
          argvs.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'));
          void h.api('POST', '/storage/v2/files', { title: 'seen-by-watch' });
        }
      },
      onStdout: (all, child) => {
        if (/seen-by-watch\s+changed/.test(all)) child.kill('SIGINT');
      },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(pid > 0);
    assert.match(run.stdout, /^notification 1: sync at \S+Z$/m);
    assert.match(run.stdout, /^notification 2: change at \S+Z$/m);
    assert.match(run.stdout, /\sseen-by-watch\s+changed$/m);
    assert.match(run.stderr, /^Next: gantry storage changes --page-token \d+$/m);
    const sent = await h.server.notifications();
    assert.deepEqual(
      sent.filter((d) => d.channelId === channel).map((d) => d.state),
      ['sync', 'change'],
    );
    assert.equal((await h.api('POST', '/storage/v2/channels/stop', { id: channel })).status, 404, 'the command stopped its channel');
  });

  it('STO-FILES-LIST: `ls --all | head -1` ends quietly with exit 0 and stops listing; --json is one file per line', async () => {
    const folder = (await h.api('POST', '/storage/v2/files', { title: 'many', mimeType: 'application/vnd.google-apps.folder' })).body;
    for (let i = 0; i < 250; i += 1) await h.api('POST', '/storage/v2/files', { title: `f${String(i).padStart(3, '0')}`, parents: [{ id: folder.id }] });
    const before = h.server.stats().requests;
    const head = await gantry([], { shell: `node ${JSON.stringify(bin)} storage ls ${folder.id} --all | head -1; echo "exit \${PIPESTATUS[0]}" >&2` });
    assert.match(head.stdout, /^ID\s+TITLE\s+MIMETYPE\s+SIZE\s+MODIFIED\n$/);
    assert.match(head.stderr, /^exit 0$/m);
    assert.doesNotMatch(head.stderr, /error|EPIPE|at /);
    const lines = await gantry([], { shell: `node ${JSON.stringify(bin)} storage ls ${folder.id} --all --json | head -2; echo "exit \${PIPESTATUS[0]}" >&2` });
    assert.deepEqual(
      jsonLines(lines.stdout).map((f) => f.title),
      ['f000', 'f001'],
    );
    assert.match(lines.stderr, /^exit 0$/m);
    assert.ok(h.server.stats().requests - before < 12, `the listing stopped with the reader (${h.server.stats().requests - before} requests)`);
    const counted = await ok(['storage', 'ls', folder.id, '--all', '--json']);
    assert.equal(jsonLines(counted.stdout).length, 250);
    const first = await ok(['storage', 'ls', folder.id]);
    assert.equal(first.stdout.trimEnd().split('\n').length, 101, 'the first 100 and a header');
    assert.match(first.stderr, /More files than the 100 listed: --max N lists more, --all every one/);
    const five = await ok(['storage', 'ls', folder.id, '--max', '5', '--json']);
    assert.deepEqual(
      jsonLines(five.stdout).map((f) => f.title),
      ['f000', 'f001', 'f002', 'f003', 'f004'],
    );
  });

  it('STO-FILES-GET: `get -o - > /dev/full` says the output was lost in one line (exit 2, as every command), not as a failure of the service', async () => {
    const transport = createStorageTransport({ baseUrl: h.server.url, token: TOKEN });
    const big = await upload(transport, { source: randomBytes(3 * 1024 * 1024), metadata: { title: 'big.bin' } });
    transport.close();
    const full = await gantry([], { shell: `node ${JSON.stringify(bin)} storage get ${big.id} -o - > /dev/full; echo "exit $?" >&2` });
    assert.match(full.stderr, /^exit 2$/m);
    assert.deepEqual(
      full.stderr.split('\n').filter((line) => /^error:/.test(line)),
      ['error: the output could not be written to stdout: ENOSPC (no space left on the device)'],
    );
    assert.doesNotMatch(full.stderr, /hint:|at \S+:\d+/);
  });

  it('bad input is exit 2 with a message naming it, and nothing is sent — for every command', async () => {
    await writeFile(join(dir, 'work', 'ok.txt'), 'ok');
    await mkdir(join(dir, 'work', 'a-folder'), { recursive: true });
    const cases: Array<[string[], RegExp, NodeJS.ProcessEnv?]> = [
      [['storage', 'ls', 'a/b'], /the folder id a\/b is not an id/],
      [['storage', 'ls', '--all', '--max', '3'], /--all and --max contradict/],
      [['storage', 'ls', '--max', '0'], /--max takes a whole number/],
      [['storage', 'ls', '--query', ' '], /--query is empty/],
      [['storage', 'ls', '--query', "title = 'x' and"], /--query "title = 'x' and" ends with 'and': a term must follow it/],
      [['storage', 'ls', '--query', "or title = 'x'"], /begins with 'or': a term must come before it/],
      [['storage', 'ls', '--query', "title = 'it\\'s"], /has a quote that is not closed/],
      [['storage', 'ls', '--query', "(title = 'a)' or starred = true"], /leaves a parenthesis open/],
      [['storage', 'ls', '--query', "title = 'x')"], /closes a parenthesis it did not open/],
      [['storage', 'put', 'missing.txt'], /missing\.txt does not exist/],
      [['storage', 'put', 'a-folder'], /a-folder is a folder: put uploads one file/],
      [['storage', 'put', '/dev/null'], /is not a regular file/],
      [['storage', 'put', 'ok.txt', '--parent', 'x y'], /--parent x y is not an id/],
      [['storage', 'put', 'ok.txt', '--mime', 'not a type'], /--mime not a type is not a media type/],
      [['storage', 'put', 'ok.txt', '--name', ''], /--name is empty/],
      [['storage', 'put', 'ok.txt', '--parent', 'abc', '--replace', 'def'], /--parent is for a new file/],
      [['storage', 'put', '--resume', 'ok.txt', '--name', 'x'], /--resume goes on with the upload as it was started: --name cannot change it/],
      [['storage', 'put', '--resume', 'ok.txt'], /no interrupted upload of \S+ok\.txt to http:\/\/127\.0\.0\.1:\d+ to resume/],
      [['storage', 'get', '../etc'], /the file id \.\.\/etc is not an id/],
      [['storage', 'get', 'abc', '-o', 'no/such/folder/file.bin'], /the folder \S+no\/such\/folder does not exist/],
      [['storage', 'get', 'abc', '-o', 'missing-folder/'], /the folder \S+missing-folder does not exist/],
      [['storage', 'get', 'abc', '--revision', 'a b'], /--revision a b is not an id/],
      [['storage', 'get', 'abc', '-o', '-', '--json'], /--json and -o - both want stdout/],
      [['storage', 'export', 'abc'], /required option '--mime <type>' not specified/],
      [['storage', 'export', 'abc', '--mime', 'pdf'], /--mime pdf is not a media type/],
      [['storage', 'export', 'a?b', '--mime', 'text/plain'], /the file id a\?b is not an id/],
      [['storage', 'mkdir', ' '], /the folder title is empty/],
      [['storage', 'mkdir', 'x', '--parent', 'a#b'], /--parent a#b is not an id/],
      [['storage', 'mv', 'abc'], /required option '--to <folderId>' not specified/],
      [['storage', 'mv', 'abc', '--to', '..'], /--to \.\. is not an id/],
      [['storage', 'trash', 'a%2Fb'], /is not an id/],
      [['storage', 'untrash', 'a b'], /is not an id/],
      [['storage', 'rm', 'abc'], /rm deletes abc permanently, without the trash: confirm with --yes/],
      [['storage', 'rm', 'a/b', '--yes'], /is not an id/],
      [['storage', 'share', 'abc', '--role', 'boss', '--email', 'a@example.com'], /--role boss is not a role/],
      [['storage', 'share', 'abc', '--role', 'reader'], /--type user needs --email/],
      [
        ['storage', 'share', 'abc', '--role', 'reader', '--email', 'a@example.com', '--domain', 'example.com'],
        /--email and --domain name two grantees: give one/,
      ],
      [['storage', 'share', 'abc', '--role', 'reader', '--email', 'not-an-address'], /--email not-an-address is not an email address/],
      [['storage', 'share', 'abc', '--role', 'reader', '--type', 'anyone', '--email', 'a@example.com'], /--type anyone takes neither/],
      [['storage', 'share', 'abc', '--role', 'writer', '--type', 'anyone'], /--type anyone cannot be given the role writer/],
      [['storage', 'share', 'abc', '--role', 'reader', '--type', 'team'], /--type team is not a grantee type/],
      [['storage', 'revisions', 'a.b'], /is not an id/],
      [['storage', 'changes', '--page-token', 'a b'], /--page-token a b is not a page token/],
      [['storage', 'changes', '--listen', '127.0.0.1:0'], /--listen goes with --watch/],
      [['storage', 'changes', '--watch', '--listen', 'nowhere'], /--listen nowhere is not host:port/],
      [['storage', 'changes', '--watch', '--address', 'http://example.com/hook'], /--address must be https/],
      [['storage', 'about', '--token', CANARY], /--token is not accepted: a token on the command line is visible/],
      [['storage', 'about'], /no storage service: pass --base-url or set STORAGE_BASE_URL/, env({ STORAGE_BASE_URL: undefined })],
      [['storage', 'about', '--base-url', 'http://storage.example.com'], /--base-url: the storage base URL must be https/],
      [['storage', 'ls'], /STORAGE_BASE_URL: the storage base URL "nope" is not a URL/, env({ STORAGE_BASE_URL: 'nope' })],
    ];
    const before = h.server.stats().requests;
    for (const [args, message, environment] of cases) {
      const run = await gantry(args, environment ? { env: environment } : {});
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, args.join(' '));
      assert.equal(run.stdout, '', args.join(' '));
    }
    assert.equal(h.server.stats().requests, before, 'nothing reached the server');
  });

  it('without STORAGE_TOKEN or a login: exit 2 (not logged in, nothing sent) with the hint to log in with the storage scope or set STORAGE_TOKEN; a bad token is 401 authError, exit 1', async () => {
    const none = await gantry(['storage', 'ls'], { env: env({ STORAGE_TOKEN: undefined }) });
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /^error: not logged in/m);
    assert.match(none.stderr, /^hint: log in with `gantry auth login --scope storage\.file` .*or set STORAGE_TOKEN$/m);
    const wrong = await gantry(['storage', 'ls'], { env: env({ STORAGE_TOKEN: 'ya29.not-a-token-the-server-knows' }) });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /answered 401 authError/);
    assert.match(wrong.stderr, /^hint: STORAGE_TOKEN is wrong, expired or revoked: set a valid one/m);
  });

  it('the token is in no output, message or argument, even with --verbose after a failure', async () => {
    const verbose = await gantry(['storage', 'get', 'no-such-file', '--verbose']);
    assert.equal(verbose.code, 1);
    assert.match(verbose.stderr, /at /, 'the stack with --verbose');
    const all = printed.join('\n');
    assert.ok(all.length > 10_000, `the runs printed ${all.length} characters`);
    assert.ok(!all.includes(CANARY), 'the token was printed');
    // Only the test that checks --token's refusal put it on a command line, on purpose.
    assert.deepEqual(
      argvs.filter((args) => args.join(' ').includes(CANARY)),
      [['storage', 'about', '--token', CANARY]],
    );
  });
});
