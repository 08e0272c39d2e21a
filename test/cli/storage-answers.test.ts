// `gantry storage` where a first trial went wrong: folder cycles (mv into itself or a subfolder), untrash inside a
// trashed folder, changes --watch after a startup error (it must end, and print no token it never had confirmed),
// no login at all (exit 2, nothing sent), hints that fit where the token and the base URL come from, a notice when
// the retries start, rm naming what it deleted. The built command in its own process against the embedded storage
// server on a real socket; a plain HTTP server stands for a base URL that is no storage API.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { harness, type Harness, type Json } from '../devserver/storage/helpers.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const CANARY = 'ya29.canary-storage-answers-7c3b';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

describe('gantry storage: what it says when the service or the setup says no', function () {
  this.timeout(120_000);
  let h: Harness;
  let dir: string;
  let plain: Server;
  let plainUrl: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-storage-answers-'));
    await Promise.all(['home', 'state', 'config', 'work'].map((name) => mkdir(join(dir, name))));
    h = await harness({ tokens: [CANARY] });
    // A web server that is not the storage API: every path is a 404 page in HTML.
    plain = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body><h1>Not Found</h1></body></html>');
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  });
  after(async () => {
    await h.close();
    await new Promise((resolve) => plain.close(resolve));
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
    options: { env?: NodeJS.ProcessEnv; onStderr?: (all: string, child: ChildProcess) => void; killAfterMs?: number } = {},
  ): Promise<Run> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const child = spawn(process.execPath, [bin, ...args], { env: options.env ?? env(), cwd: join(dir, 'work') });
      // A command that does not end is a failure of its own: it is killed, and its signal says so.
      const guard = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 60_000);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
        options.onStderr?.(stderr, child);
      });
      child.on('error', reject);
      child.on('close', (code, signal) => {
        clearTimeout(guard);
        resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
      });
    });
  }

  async function ok(args: string[]): Promise<Run> {
    const run = await gantry(args);
    assert.equal(run.code, 0, `gantry ${args.join(' ')}: ${run.stderr}`);
    return run;
  }
  const json = async (args: string[]): Promise<Json> => JSON.parse((await ok([...args, '--json'])).stdout);
  const parentsOf = async (id: string): Promise<string[]> => (await h.api('GET', `/storage/v2/files/${id}`)).body.parents.map((p: Json) => p.id);

  it("STO-FILES-PATCH: mv X --to X is exit 2 with nothing sent; mv of a folder into its own subfolder is the service's 400 badRequest (exit 1) naming both; the folder stays where it was", async () => {
    const root = (await h.api('GET', '/storage/v2/files/root')).body.id as string;
    const a = await json(['storage', 'mkdir', 'outer']);
    const b = await json(['storage', 'mkdir', 'inner', '--parent', a.id]);
    const before = h.server.stats().requests;
    const self = await gantry(['storage', 'mv', a.id, '--to', a.id]);
    assert.equal(self.code, 2, self.stderr);
    assert.match(self.stderr, new RegExp(`^error: mv ${a.id} --to ${a.id}: a file or folder cannot be moved into itself$`, 'm'));
    assert.equal(h.server.stats().requests, before, 'nothing was sent');
    const rootIntoItself = await gantry(['storage', 'mv', 'root', '--to', root]);
    assert.equal(rootIntoItself.code, 1, rootIntoItself.stderr);
    assert.match(rootIntoItself.stderr, /cannot be moved into itself/);

    const down = await gantry(['storage', 'mv', a.id, '--to', b.id]);
    assert.equal(down.code, 1, down.stderr);
    assert.match(down.stderr, /answered 400 badRequest \(addParents\): A folder cannot be placed inside itself or one of its descendants/);
    assert.match(
      down.stderr,
      new RegExp(`^hint: inner \\(${b.id}\\) is inside outer \\(${a.id}\\): a folder cannot be moved into one of its own subfolders$`, 'm'),
    );
    assert.deepEqual(await parentsOf(a.id), [root], 'outer is still in the root');
    assert.match((await ok(['storage', 'ls'])).stdout, new RegExp(`^${a.id}\\s+outer/`, 'm'));
    // The other way round is an ordinary move.
    const up = await ok(['storage', 'mv', b.id, '--to', 'root']);
    assert.match(up.stdout, new RegExp(`^Moved inner \\(${b.id}\\) to My Drive \\(${root}\\)$`, 'm'));
  });

  it('STO-FILES-UNTRASH: untrash of a file inside a trashed folder says it is still in the trash and names that folder (exit 1), not "Restored"; untrash of the folder restores both', async () => {
    const folder = await json(['storage', 'mkdir', 'binned']);
    await writeFile(join(dir, 'work', 'inside.txt'), 'inside');
    const file = await json(['storage', 'put', 'inside.txt', '--parent', folder.id]);
    await ok(['storage', 'trash', folder.id]);
    const still = await gantry(['storage', 'untrash', file.id]);
    assert.equal(still.code, 1, still.stderr);
    assert.doesNotMatch(still.stdout, /Restored/);
    assert.match(
      still.stderr,
      new RegExp(`^error: inside\\.txt \\(${file.id}\\) is still in the trash because the folder binned \\(${folder.id}\\) above it is$`, 'm'),
    );
    assert.match(still.stderr, new RegExp(`^hint: gantry storage untrash ${folder.id} restores that folder with everything in it$`, 'm'));
    const read = (await h.api('GET', `/storage/v2/files/${file.id}`)).body;
    assert.deepEqual([read.labels.trashed, read.explicitlyTrashed], [true, false], 'how the service says it: trashed through its folder');
    const asJson = await gantry(['storage', 'untrash', file.id, '--json']);
    assert.equal(asJson.code, 1);
    assert.equal(JSON.parse(asJson.stdout).labels.trashed, true, '--json prints the answer as it is');
    const restored = await ok(['storage', 'untrash', folder.id]);
    assert.match(restored.stdout, new RegExp(`^Restored binned \\(${folder.id}\\) from the trash$`, 'm'));
    assert.equal((await h.api('GET', `/storage/v2/files/${file.id}`)).body.labels.trashed, false);
  });

  it('STO-FILES-DELETE: rm names what it deleted — a file by its title, a folder with everything in it; --json carries the title', async () => {
    await writeFile(join(dir, 'work', 'doomed.txt'), 'doomed');
    const file = await json(['storage', 'put', 'doomed.txt']);
    const removed = await ok(['storage', 'rm', file.id, '--yes']);
    assert.match(removed.stdout, new RegExp(`^Deleted doomed\\.txt \\(${file.id}\\) permanently$`, 'm'));
    const folder = await json(['storage', 'mkdir', 'doomed-folder']);
    assert.deepEqual(await json(['storage', 'rm', folder.id, '--yes']), { id: folder.id, title: 'doomed-folder', deleted: true });
    const again = await gantry(['storage', 'rm', folder.id, '--yes']);
    assert.equal(again.code, 1, 'gone: 404');
    assert.match(again.stderr, /answered 404 notFound/);
  });

  it('STO-CHANGES-WATCH: changes --watch with a wrong token prints the 401 and exits 1 at once (the notification receiver closed), printing no token to go on from', async () => {
    const wrong = await gantry(['storage', 'changes', '--watch'], { env: env({ STORAGE_TOKEN: 'ya29.not-a-token-the-server-knows' }), killAfterMs: 20_000 });
    assert.equal(wrong.signal, null, `it had to be killed: ${wrong.stderr}`);
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.ok(wrong.ms < 10_000, `it took ${wrong.ms} ms`);
    assert.match(wrong.stderr, /answered 401 authError/);
    assert.doesNotMatch(wrong.stderr, /Next:/);
    const nowhere = await gantry(['storage', 'changes', '--watch'], { env: env({ STORAGE_BASE_URL: plainUrl }), killAfterMs: 20_000 });
    assert.equal(nowhere.signal, null, `it had to be killed: ${nowhere.stderr}`);
    assert.equal(nowhere.code, 1, nowhere.stderr);
    assert.ok(nowhere.ms < 10_000, `it took ${nowhere.ms} ms`);
  });

  it('STO-CHANGES-WATCH STO-CHANGES-LIST: changes --watch --page-token the service refuses is its 400 (exit 1) with no "Next:" line for that token', async () => {
    const refused = await gantry(['storage', 'changes', '--watch', '--page-token', 'abc'], { killAfterMs: 20_000 });
    assert.equal(refused.signal, null, `it had to be killed: ${refused.stderr}`);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /answered 400/);
    assert.doesNotMatch(refused.stderr, /Next:/);
    assert.doesNotMatch(refused.stderr, /Watching changes/);
  });

  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: without STORAGE_TOKEN and without a login it is exit 2 (setup, nothing sent), the hint naming both ways in', async () => {
    const before = h.server.stats().requests;
    for (const args of [
      ['storage', 'ls'],
      ['storage', 'changes', '--watch'],
    ]) {
      const none = await gantry(args, { env: env({ STORAGE_TOKEN: undefined }), killAfterMs: 20_000 });
      assert.equal(none.code, 2, none.stderr);
      assert.match(none.stderr, /^error: not logged in/m);
      assert.match(none.stderr, /^hint: log in with `gantry auth login --scope storage\.file` .*or set STORAGE_TOKEN$/m);
    }
    assert.equal(h.server.stats().requests, before, 'nothing reached the server');
  });

  it("a 401 to STORAGE_TOKEN says to set a valid one; a 404 that is not the storage API's own answer says the base URL is not a storage API", async () => {
    const wrong = await gantry(['storage', 'ls'], { env: env({ STORAGE_TOKEN: 'ya29.not-a-token-the-server-knows' }) });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /answered 401 authError/);
    assert.match(wrong.stderr, /^hint: STORAGE_TOKEN is wrong, expired or revoked: set a valid one \(or unset it to use the gantry auth login\)$/m);
    assert.doesNotMatch(wrong.stderr, /gantry auth refresh/);

    const fromEnv = await gantry(['storage', 'about'], { env: env({ STORAGE_BASE_URL: plainUrl }) });
    assert.equal(fromEnv.code, 1, fromEnv.stderr);
    assert.match(fromEnv.stderr, /answered 404: non-JSON body/);
    assert.match(fromEnv.stderr, new RegExp(`^hint: ${plainUrl.replace(/[.:/]/g, '\\$&')} does not look like a storage API .*check STORAGE_BASE_URL`, 'm'));
    assert.doesNotMatch(fromEnv.stderr, /no such file/);
    const fromFlag = await gantry(['storage', 'ls', '--base-url', plainUrl]);
    assert.equal(fromFlag.code, 1, fromFlag.stderr);
    assert.match(fromFlag.stderr, /^hint: \S+ does not look like a storage API .*check --base-url/m);
    // The storage API's own 404 keeps its hint.
    const missing = await gantry(['storage', 'get', 'noSuchFile123']);
    assert.match(missing.stderr, /^hint: no such file/m);
  });

  it('a service that does not answer: one line on stderr when the retries start, long before they end', async () => {
    // A port nobody listens on: connections are refused, and the storage policy retries for up to half a minute.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    let noticedAt = 0;
    const started = Date.now();
    const run = await gantry(['storage', 'about', '--base-url', `http://127.0.0.1:${port}`], {
      onStderr: (all, child) => {
        if (!noticedAt && /trying again/.test(all)) {
          noticedAt = Date.now();
          // Shortly after the first retry's note the command is not waited for: by then no flood, at most the next
          // retry's note when its wait would leave 5 s without a word.
          setTimeout(() => child.kill('SIGTERM'), 2_500).unref();
        }
      },
      killAfterMs: 20_000,
    });
    assert.ok(noticedAt > 0, `no notice: ${run.stderr}`);
    assert.ok(noticedAt - started < 5_000, `the notice came after ${noticedAt - started} ms`);
    const lines = run.stderr.trim().split('\n');
    assert.ok(lines.length <= 2, run.stderr);
    // The one notice of every group's waits (WAIT-SAID-AND-BOUNDED): what failed, when it tries again, how many tries.
    assert.match(lines[0]!, new RegExp(`^127\\.0\\.0\\.1:${port}: network error ECONNREFUSED; trying again at \\d\\d:\\d\\d:\\d\\d \\(attempt 2 of 6\\)$`));
    for (const line of lines.slice(1)) assert.match(line, /: network error ECONNREFUSED; trying again at \d\d:\d\d:\d\d \(attempt [3-6] of 6\)$/, run.stderr);
    assert.ok(run.ms < 15_000);
  });

  it('put --help says what a file changing mid-upload leaves: nothing stored', async () => {
    const help = await ok(['storage', 'put', '--help']);
    assert.match(help.stdout, /A file that changes while it is being uploaded stops the upload \(exit 1\): nothing is\s+stored/);
    assert.doesNotMatch(help.stdout, /a new upload of\s+it moved to the trash/);
  });
});
