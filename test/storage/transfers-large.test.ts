// Large resumable uploads against the embedded storage server: a 300 MB file (a deterministic pattern, each MiB
// stamped with its index, written to the OS temp folder) cut by the server at 40 % and at 90 % resumes from what the
// server kept and sends at most one chunk again, counted by the server's own stats; and an uploading process killed
// with SIGKILL is finished by resumeUpload from its session file in this process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createLogger } from '../../lib/log.js';
import { createStorageTransport, type StorageTransport } from '../../lib/storage/transport.js';
import { DEFAULT_CHUNK_SIZE, resumeUpload, upload } from '../../lib/storage/upload/index.js';
import { harness, TOKEN, type Harness, type Json } from '../devserver/storage/helpers.js';

const MIB = 1024 * 1024;
const SIZE = 300_000_000;
const CHUNK = DEFAULT_CHUNK_SIZE;
/** The cut tests use 8 MiB chunks, so that a cut at 90 % still has whole chunks after it. */
const CUT_CHUNK = 8 * MIB;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fast = { attempts: 6, initialMs: 5, maxMs: 40 };

/** Writes `size` bytes of a fixed pseudo-random MiB, every 4 KiB page stamped with its MiB's index; returns the md5. */
async function patternFile(file: string, size: number): Promise<string> {
  const block = Buffer.alloc(MIB);
  let x = 0x9e3779b9;
  for (let i = 0; i < MIB; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    block.writeUInt32LE(x >>> 0, i);
  }
  const hash = createHash('md5');
  const handle = await open(file, 'w');
  try {
    for (let mib = 0; mib * MIB < size; mib += 1) {
      for (let page = 0; page < MIB; page += 4096) block.writeUInt32LE(mib, page);
      const n = Math.min(MIB, size - mib * MIB);
      await handle.write(block, 0, n, mib * MIB);
      hash.update(block.subarray(0, n));
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

describe('storage transfers: a 300 MB resumable upload cut, resumed, and finished after its process was killed', function () {
  this.timeout(120_000);
  let dir: string;
  let source: string;
  let sourceMd5: string;
  let h: Harness;
  let transport: StorageTransport;
  let logs: string[];
  const logger = () => createLogger({ level: 'debug', write: (line) => logs.push(line) });

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gantry-transfers-large-'));
    source = path.join(dir, 'big.bin');
    sourceMd5 = await patternFile(source, SIZE);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    logs = [];
    h = await harness();
    transport = createStorageTransport({ baseUrl: h.server.url, token: TOKEN, logger: logger() });
  });
  afterEach(async () => {
    transport.close();
    await h.close();
  });

  const onlySession = async (): Promise<{ id: string; bytesReceived: number; requests: number; completed: boolean }> => {
    const sessions = Object.entries((await h.admin('GET', 'stats')).sessions as Record<string, Json>);
    assert.equal(sessions.length, 1, 'one session');
    const [id, stats] = sessions[0]!;
    return { id, ...stats };
  };

  for (const fraction of [0.4, 0.9]) {
    it(`STO-FILES-INSERT: cut by the server at ${fraction * 100} %, it asks what the server has, goes on from there and sends at most one chunk again`, async () => {
      let armed = false;
      let cutAt = 0;
      const file = await upload(transport, {
        source,
        metadata: { title: 'big.bin' },
        chunkSize: CUT_CHUNK,
        retry: fast,
        logger: logger(),
        onProgress: ({ sent }) => {
          if (!armed && sent >= fraction * SIZE) {
            armed = true;
            cutAt = sent;
            // The next chunk request is cut after 3 MiB and a bit: the server keeps what reached its disk.
            void h.admin('POST', 'faults', { kind: 'cut', afterBytes: 3 * MIB + 4321, direction: 'upload' });
          }
        },
      });
      assert.equal(file.md5Checksum, sourceMd5);
      assert.equal(file.fileSize, String(SIZE));
      const session = await onlySession();
      assert.ok(session.completed);
      assert.ok(session.bytesReceived >= SIZE, `${session.bytesReceived} bytes received`);
      assert.ok(session.bytesReceived - SIZE <= CUT_CHUNK, `${session.bytesReceived - SIZE} bytes were sent again, more than one chunk`);
      const broke = logs
        .map((line) => /the connection failed \(\w+\) sending bytes (\d+)–\d+ of 300000000; asking the service what it has/.exec(line))
        .find(Boolean);
      assert.ok(broke, `the cut was seen: ${logs.join('\n')}`);
      assert.ok(Number(broke[1]) >= cutAt && Number(broke[1]) <= cutAt + 2 * CUT_CHUNK, `cut at byte ${broke[1]}, armed at ${cutAt}`);
      assert.ok(
        logs.some((line) => /the service has \d+ of 300000000 bytes; going on from there/.test(line)),
        'it went on from the status query',
      );
    });
  }

  it('STO-FILES-INSERT: an uploading process killed with SIGKILL is finished by resumeUpload from its session file, at most one chunk sent again', async () => {
    const sessionFile = path.join(dir, 'killed.session.json');
    const script = path.join(dir, 'upload-child.mts');
    await writeFile(
      script,
      [
        `import { createStorageTransport } from ${JSON.stringify(pathToFileURL(path.join(root, 'lib/storage/transport.ts')).href)};`,
        `import { upload } from ${JSON.stringify(pathToFileURL(path.join(root, 'lib/storage/upload/index.ts')).href)};`,
        'const [baseUrl, source, sessionFile] = process.argv.slice(2);',
        'const transport = createStorageTransport({ baseUrl, token: process.env.STORAGE_TOKEN });',
        "await upload(transport, { source, sessionFile, metadata: { title: 'killed.bin' } });",
        "process.stdout.write('done\\n');",
      ].join('\n'),
    );
    // The token goes through the environment, never argv.
    const child = spawn(process.execPath, ['--import', 'tsx', script, h.server.url, source, sessionFile], {
      cwd: root,
      env: { ...process.env, STORAGE_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const deadline = Date.now() + 60_000;
    let received = 0;
    while (Date.now() < deadline && child.exitCode === null) {
      const sessions = (await h.admin('GET', 'sessions')).sessions as Json[];
      received = (sessions[0]?.received as number | undefined) ?? 0;
      if (received >= 0.3 * SIZE) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill('SIGKILL');
    const end = await exited;
    assert.equal(end.signal, 'SIGKILL', `the child was to be killed mid-upload; it ended: ${JSON.stringify(end)} ${output}`);
    assert.ok(received >= 0.3 * SIZE && received < SIZE, `the server had ${received} bytes when the child was killed`);
    assert.equal((await stat(sessionFile)).mode & 0o777, 0o600);
    const saved = JSON.parse(await readFile(sessionFile, 'utf8')) as Json;
    assert.equal(saved.path, source);
    assert.equal(saved.chunkSize, CHUNK);

    const file = await resumeUpload(transport, sessionFile, { retry: fast, logger: logger() });
    assert.equal(file.md5Checksum, sourceMd5);
    assert.equal(file.title, 'killed.bin');
    await assert.rejects(stat(sessionFile), { code: 'ENOENT' });
    const resumedAt = logs.map((line) => /the service has (\d+) of 300000000 bytes; going on from there/.exec(line)).find(Boolean);
    assert.ok(resumedAt && Number(resumedAt[1]) >= received, `resumed from what the server had: ${logs.join('\n')}`);
    const session = await onlySession();
    assert.ok(session.completed);
    assert.ok(session.bytesReceived - SIZE <= CHUNK, `${session.bytesReceived - SIZE} bytes were sent twice, more than one chunk`);
    const found = await h.api('GET', `/storage/v2/files?q=${encodeURIComponent("title = 'killed.bin'")}`);
    assert.equal(found.body.items.length, 1);
  });
});
