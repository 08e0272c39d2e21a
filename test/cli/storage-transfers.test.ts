// `gantry storage put` and `get` when things go wrong, as a user meets it — the built command in its own process
// against the embedded storage server: an upload killed with SIGKILL mid-way and finished by `put --resume` (the
// server's count: at most one chunk sent again), Ctrl-C, --restart, a download killed and resumed by the next run, a
// download to stdout resumed within the run, and a file that changes while it is uploaded.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStorageTransport } from '../../lib/storage/transport.js';
import { DEFAULT_CHUNK_SIZE, upload } from '../../lib/storage/upload/index.js';
import { harness, TOKEN, type Harness, type Json } from '../devserver/storage/helpers.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const MIB = 1024 * 1024;
const SIZE = 24 * MIB + 12345;
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

describe('gantry storage put and get: killed, interrupted, resumed (against the embedded storage server)', function () {
  this.timeout(120_000);
  let h: Harness;
  let dir: string;
  let work: string;
  let uploads: string;
  let served: string[];
  const printed: string[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-storage-cli-transfers-'));
    work = join(dir, 'work');
    uploads = join(dir, 'state', 'gantry', 'storage-uploads');
    await Promise.all(['home', 'state', 'config', 'work'].map((name) => mkdir(join(dir, name))));
    served = [];
    h = await harness({ log: (line) => served.push(line) });
  });
  afterEach(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: join(dir, 'home'),
    XDG_STATE_HOME: join(dir, 'state'),
    GANTRY_CONFIG_DIR: join(dir, 'config'),
    GANTRY_LOG: 'warn',
    STORAGE_BASE_URL: h.server.url,
    STORAGE_TOKEN: TOKEN,
  });

  /** Runs gantry; `onStderr` sees all of stderr so far each time more comes (to kill or interrupt it at a moment). */
  function gantry(args: string[], onStderr?: (all: string, child: ChildProcess) => void): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], { env: env(), cwd: work });
      const stdout: Buffer[] = [];
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
        onStderr?.(stderr, child);
      });
      child.on('error', reject);
      child.on('close', (code, signal) => {
        printed.push(stderr, Buffer.concat(stdout).toString('latin1'));
        resolve({ code, signal, stdout: Buffer.concat(stdout), stderr });
      });
    });
  }

  /** Kills the command with `signal` once it says it is waiting to retry after the server's cut. */
  const killWhenRetrying = (signal: NodeJS.Signals, pattern = /asking the service what it has|asking for the rest/) => {
    let sent = false;
    return (all: string, child: ChildProcess) => {
      if (!sent && pattern.test(all)) {
        sent = true;
        child.kill(signal);
      }
    };
  };

  const onlySession = async (): Promise<{ id: string; bytesReceived: number; completed: boolean }> => {
    const sessions = Object.entries(h.server.stats().sessions);
    assert.equal(sessions.length, 1, `one upload session: ${JSON.stringify(sessions)}`);
    const [id, stats] = sessions[0]!;
    return { id, ...stats };
  };

  it('STO-FILES-INSERT: a put above 5 MiB killed with SIGKILL mid-upload is finished by put --resume, at most one chunk sent again; put without --resume says an upload waits (exit 2, nothing sent)', async () => {
    const data = randomBytes(SIZE);
    await writeFile(join(work, 'big.bin'), data);
    // The first chunk is cut after 3 MiB and a bit: the command backs off before asking what the server has, and dies there.
    h.server.addFaults([{ kind: 'cut', afterBytes: 3 * MIB + 4321, direction: 'upload' }]);
    const killed = await gantry(['storage', 'put', 'big.bin', '--name', 'killed.bin'], killWhenRetrying('SIGKILL'));
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const [sessionName] = await readdir(uploads);
    assert.match(sessionName!, /^big\.bin\.[0-9a-f]{16}\.json$/);
    const sessionFile = join(uploads, sessionName!);
    assert.equal((await stat(sessionFile)).mode & 0o777, 0o600, 'the session URI is a credential: 0600');
    assert.equal((await stat(uploads)).mode & 0o777, 0o700);
    const uploadId = new URL((JSON.parse(await readFile(sessionFile, 'utf8')) as Json).sessionUri).searchParams.get('upload_id')!;
    assert.ok(uploadId.length > 8);
    const received = (await onlySession()).bytesReceived;
    assert.ok(received > 0 && received < SIZE, `the server had ${received} bytes when the command was killed`);

    const requests = h.server.stats().requests;
    const waiting = await gantry(['storage', 'put', 'big.bin']);
    assert.equal(waiting.code, 2);
    assert.match(waiting.stderr, /^error: an interrupted upload of \S+big\.bin to http:\/\/127\.0\.0\.1:\d+, started \S+, is waiting to be finished/m);
    assert.match(
      waiting.stderr,
      /^hint: go on from where it stopped with: gantry storage put --resume big\.bin — or start over: gantry storage put --restart big\.bin/m,
    );
    assert.equal(h.server.stats().requests, requests, 'nothing was sent');

    const resumed = await gantry(['storage', 'put', '--resume', 'big.bin', '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    const file = JSON.parse(resumed.stdout.toString()) as Json;
    assert.equal(file.title, 'killed.bin', 'the metadata the upload was started with');
    assert.equal(file.md5Checksum, md5(data));
    assert.equal(file.fileSize, String(SIZE));
    const session = await onlySession();
    assert.ok(session.completed);
    assert.ok(session.bytesReceived - SIZE <= DEFAULT_CHUNK_SIZE, `${session.bytesReceived - SIZE} bytes were sent again, more than one chunk`);
    assert.deepEqual(await readdir(uploads), [], 'the session file is gone once the upload is done');
    const again = await gantry(['storage', 'put', '--resume', 'big.bin']);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /no interrupted upload of \S+big\.bin/);
    assert.ok(!printed.join('\n').includes(uploadId), 'the session URI was printed');
    assert.ok(!printed.join('\n').includes(TOKEN), 'the token was printed');
  });

  it('STO-FILES-INSERT: Ctrl-C during a put exits 130 and says how to go on; --restart discards the waiting upload and starts a new one', async () => {
    const data = randomBytes(SIZE);
    await writeFile(join(work, 'big.bin'), data);
    h.server.addFaults([{ kind: 'cut', afterBytes: 2 * MIB, direction: 'upload' }]);
    const interrupted = await gantry(['storage', 'put', 'big.bin'], killWhenRetrying('SIGINT'));
    assert.equal(interrupted.code, 130, interrupted.stderr);
    assert.match(interrupted.stderr, /^Interrupted: the service keeps what it received\. Go on with: gantry storage put --resume big\.bin$/m);
    assert.equal((await readdir(uploads)).length, 1);
    const restarted = await gantry(['storage', 'put', '--restart', 'big.bin', '--json']);
    assert.equal(restarted.code, 0, restarted.stderr);
    assert.match(restarted.stderr, /Discarded the interrupted upload of \S+big\.bin; starting over/);
    assert.equal((JSON.parse(restarted.stdout.toString()) as Json).md5Checksum, md5(data));
    const sessions = Object.values(h.server.stats().sessions);
    assert.equal(sessions.length, 2, 'a new session');
    assert.deepEqual(
      sessions.map((s) => s.completed),
      [false, true],
    );
    assert.deepEqual(await readdir(uploads), []);
  });

  it('STO-FILES-INSERT: a second put of the same file while the first runs is refused (exit 1, the running process named, nothing sent); the first finishes; a lock left by a killed put is taken over', async () => {
    const data = randomBytes(SIZE);
    await writeFile(join(work, 'big.bin'), data);
    h.server.addFaults([{ kind: 'cut', afterBytes: 2 * MIB, direction: 'upload' }]);
    // The first put is frozen (SIGSTOP) while it waits to retry after the cut: alive, in the middle of its upload.
    let frozen: ChildProcess | undefined;
    let second: Promise<Run> | undefined;
    let requests = 0;
    let requestsWhileFrozen = -1;
    const first = gantry(['storage', 'put', 'big.bin', '--json'], (all, child) => {
      if (frozen || !/asking the service what it has|asking for the rest/.test(all)) return;
      frozen = child;
      child.kill('SIGSTOP');
      // What the first had already sent reaches the server in this half second; then the count stands still.
      second = new Promise((resolve) => setTimeout(resolve, 500))
        .then(() => {
          requests = h.server.stats().requests;
          return gantry(['storage', 'put', 'big.bin']);
        })
        .finally(() => {
          requestsWhileFrozen = h.server.stats().requests - requests;
          child.kill('SIGCONT');
        });
    });
    const done = await first;
    assert.ok(second, 'the first put was frozen mid-upload');
    const refused = await second;
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      new RegExp(`^error: an upload of \\S+big\\.bin to http://127\\.0\\.0\\.1:\\d+ is in progress in process ${frozen!.pid}, since \\S+$`, 'm'),
    );
    assert.match(
      refused.stderr,
      new RegExp(`^hint: wait for it to finish, or stop it \\(kill ${frozen!.pid}\\) and go on with: gantry storage put --resume big\\.bin$`, 'm'),
    );
    assert.equal(requestsWhileFrozen, 0, 'the second put sent nothing');
    assert.equal(done.code, 0, done.stderr);
    assert.equal((JSON.parse(done.stdout.toString()) as Json).md5Checksum, md5(data));
    assert.equal(Object.keys(h.server.stats().sessions).length, 1, 'one session: the second put did not start its own or join the first');
    assert.deepEqual(await readdir(uploads), [], 'no session file and no lock left');

    // A put killed with SIGKILL leaves its lock; its process is gone, so the next put takes the lock over.
    h.server.addFaults([{ kind: 'cut', afterBytes: 2 * MIB, direction: 'upload' }]);
    const killed = await gantry(['storage', 'put', 'big.bin'], killWhenRetrying('SIGKILL'));
    assert.equal(killed.signal, 'SIGKILL');
    assert.equal((await readdir(uploads)).filter((name) => name.endsWith('.lock')).length, 1);
    const resumed = await gantry(['storage', 'put', '--resume', 'big.bin', '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.stdout.toString()) as Json).md5Checksum, md5(data));
    assert.deepEqual(await readdir(uploads), []);
  });

  it('STO-FILES-GET: a get killed with SIGKILL mid-download keeps the bytes it had; the next run goes on from there with Range and checks the md5', async () => {
    const data = randomBytes(SIZE);
    const transport = createStorageTransport({ baseUrl: h.server.url, token: TOKEN });
    const file = await upload(transport, { source: data, metadata: { title: 'download.bin' } });
    transport.close();
    h.server.addFaults([{ kind: 'cut', afterBytes: 5 * MIB, direction: 'download' }]);
    const killed = await gantry(['storage', 'get', file.id, '-o', 'out.bin'], killWhenRetrying('SIGKILL'));
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const partial = (await readdir(work)).find((name) => name.endsWith('.gantry-download'));
    assert.ok(partial, `a partial file: ${(await readdir(work)).join(', ')}`);
    const kept = (await stat(join(work, partial))).size;
    assert.ok(kept > 0 && kept <= 5 * MIB, `the partial holds what arrived before the cut: ${kept} bytes`);
    await assert.rejects(stat(join(work, 'out.bin')), { code: 'ENOENT' }, 'the target is written only when complete');

    served.length = 0;
    const resumed = await gantry(['storage', 'get', file.id, '-o', 'out.bin', '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    const result = JSON.parse(resumed.stdout.toString()) as Json;
    assert.equal(result.resumedFrom, kept);
    assert.equal(result.bytes, SIZE);
    assert.equal(result.md5Checksum, md5(data));
    assert.match(resumed.stderr, new RegExp(`^Went on from byte ${kept}, which an earlier run had received\\.$`, 'm'));
    assert.ok(served.includes(`GET /storage/v2/files/${file.id} 206`), `the rest came as a 206: ${served.join('; ')}`);
    assert.ok((await readFile(join(work, 'out.bin'))).equals(data));
    assert.deepEqual(
      (await readdir(work)).filter((name) => name.includes('gantry-download')),
      [],
      'no partial left',
    );
  });

  it("STO-FILES-GET: get -o - goes on after a cut within the run (Range), and stdout holds exactly the file's bytes", async () => {
    const data = randomBytes(9 * MIB);
    const transport = createStorageTransport({ baseUrl: h.server.url, token: TOKEN });
    const file = await upload(transport, { source: data, metadata: { title: 'piped.bin' } });
    transport.close();
    h.server.addFaults([{ kind: 'cut', afterBytes: 3 * MIB + 7, direction: 'download' }]);
    served.length = 0;
    const run = await gantry(['storage', 'get', file.id, '-o', '-']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.length, data.length);
    assert.ok(run.stdout.equals(data));
    // The server wrote 3 MiB + 7 bytes before destroying the socket; how many of them reached the reader before the
    // reset depends on the kernel, so the run must say where it broke and ask for exactly the rest from there.
    const broke = /the transfer broke at byte (\d+); asking for the rest/.exec(run.stderr);
    assert.ok(broke, run.stderr);
    const at = Number(broke[1]);
    assert.ok(at > 0 && at <= 3 * MIB + 7, `broke at ${at}, at most the bytes the server sent`);
    assert.ok(served.includes(`GET /storage/v2/files/${file.id} 206`), served.join('; '));
  });

  it('STO-FILES-INSERT STO-FILES-GET: on a terminal put and get draw a progress bar with bytes and rate on stderr; off a terminal, none', async () => {
    await writeFile(join(work, 'shown.bin'), randomBytes(SIZE));
    // script(1) runs the command on a pseudo-terminal, as a person at a terminal would.
    const onTerminal = (command: string) =>
      new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        const child = spawn('script', ['-qfec', command, '/dev/null'], { env: env(), cwd: work });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, output }));
      });
    const put = await onTerminal(`node ${JSON.stringify(bin)} storage put shown.bin --json`);
    assert.equal(put.code, 0, put.output);
    // eslint-disable-next-line no-control-regex -- the bar's terminal codes are what is checked
    assert.match(put.output, /\r\x1b\[2Kput shown\.bin \[[#.]{24}\] \d+% [\d.]+ (?:B|KiB|MiB) \/ 24 MiB {2}[\d.]+ (?:B|KiB|MiB)\/s/);
    const id = (JSON.parse(put.output.slice(put.output.indexOf('{'))) as Json).id as string;
    const get = await onTerminal(`node ${JSON.stringify(bin)} storage get ${id} -o copy.bin`);
    assert.equal(get.code, 0, get.output);
    // eslint-disable-next-line no-control-regex -- the bar's terminal codes are what is checked
    assert.match(get.output, /\r\x1b\[2Kget shown\.bin \[[#.]{24}\] \d+% [\d.]+ (?:B|KiB|MiB) \/ 24 MiB {2}[\d.]+ (?:B|KiB|MiB)\/s/);
    const plain = await gantry(['storage', 'get', id, '-o', 'copy2.bin']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stderr, '', 'no progress off a terminal');
  });

  it('STO-FILES-INSERT: a file that changes while it is uploaded is a clear error (exit 1): the upload stops, nothing is stored and no session is left to resume with other bytes', async () => {
    for (const [name, change, size] of [
      ['grows.bin', (path: string) => appendFile(path, 'more'), SIZE + 4],
      ['shrinks.bin', (path: string) => truncate(path, 5 * MIB), 5 * MIB],
    ] as const) {
      await writeFile(join(work, name), randomBytes(SIZE));
      h.server.addFaults([{ kind: 'cut', afterBytes: 2 * MIB, direction: 'upload' }]);
      let changed: Promise<void> | undefined;
      const run = await gantry(['storage', 'put', name], (all) => {
        if (!changed && /asking the service what it has/.test(all)) changed = change(join(work, name));
      });
      assert.equal(run.code, 1, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(
          `^error: \\S+${name.replace('.', '\\.')} changed while it was being uploaded \\(its size went from ${SIZE} to ${size} bytes\\): the upload was stopped; nothing was stored$`,
          'm',
        ),
      );
      assert.match(run.stderr, /^hint: upload it again once nothing writes to it/m);
      assert.deepEqual(await readdir(uploads), [], 'no session to resume with other bytes');
      assert.deepEqual((await h.api('GET', `/storage/v2/files?q=${encodeURIComponent(`title = '${name}'`)}`)).body.items, []);
    }
  });
});
