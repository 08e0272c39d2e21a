// bench/storage: a resumable upload of a 1 GiB file to the embedded storage server (32 MiB chunks, each a range of
// the file streamed from disk, md5 checked against the service's) against a raw upload of the same file to the same
// server in the same run — one `uploadType=media` POST streaming the file with node:http, which is the server's raw
// endpoint (it has no plain PUT); the peak RSS of the uploading process at 1 GiB and at 2 GiB (flat, ≤ 128 MB); and
// the bytes sent again after the server cuts the upload at 50 % (≤ one chunk, by the server's own count). Beside the
// default upload, where its time goes: the same upload with 8 MiB chunks (four times the round trips) and with
// 32 MiB chunks but no md5 check. Each upload reports its wall time, its CPU time and its peak RSS. Prints ONE JSON
// object as its last stdout line; progress goes to stderr.
//
//   npm run bench -- storage      (or: npm run build && node --import tsx bench/storage/index.ts [sizeMiB])
//   BENCH_STORAGE_RUNS (3)        rounds at 1 GiB, each running the four uploads in a rotated order
//   BENCH_STORAGE_DIST            another build's dist folder to measure (e.g. `tsc -p tsconfig.build.json --outDir …`)
//
// Each upload runs in a child process of its own, plain node without a TypeScript loader (worker.mjs; Gantry's side
// from dist/), so its peak RSS is the uploader's alone; the server runs in another process (server-process.ts).
// Both sides' bytes go over loopback to the same server, which writes them to disk and computes their md5 either way.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStorageProcess } from './server-process.js';

const MIB = 1024 * 1024;
const sizeMiB = Number(process.argv[2] ?? 1024);
const runs = Number(process.env.BENCH_STORAGE_RUNS ?? 3);
const chunk = 32 * MIB;
const here = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(here, '..', '..', 'dist', 'lib', 'storage', 'upload', 'index.js'))) {
  console.error('bench/storage runs the compiled library: run `npm run build` first (`npm run bench` does)');
  process.exit(2);
}

/** A file of `size` bytes: a fixed pseudo-random MiB, every 4 KiB page stamped with its MiB's index. Returns the md5. */
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
  for (let mib = 0; mib * MIB < size; mib += 1) {
    for (let page = 0; page < MIB; page += 4096) block.writeUInt32LE(mib, page);
    const n = Math.min(MIB, size - mib * MIB);
    await handle.write(block, 0, n, mib * MIB);
    hash.update(block.subarray(0, n));
  }
  await handle.close();
  return hash.digest('hex');
}

interface Run {
  ms: number;
  /** CPU time of the upload in its process (user + system, every thread; loading the library not counted), and its user part. */
  cpuMs: number;
  userMs: number;
  bytes: number;
  md5: string;
  fileId: string;
  maxRssMb: number;
}

const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-storage-'));
const server = await startStorageProcess(join(dir, 'server'));
try {
  const one = join(dir, 'one.bin');
  const two = join(dir, 'two.bin');
  const size = sizeMiB * MIB;
  console.error(`writing ${sizeMiB} MiB and ${sizeMiB * 2} MiB files`);
  const oneMd5 = await patternFile(one, size);
  const twoMd5 = await patternFile(two, size * 2);

  /** DELETE through a connection of its own (a kept-alive one may just have been closed by the server). */
  const remove = (fileId: string) =>
    new Promise<void>((resolve, reject) => {
      const request = http.request(
        `${server.url}/storage/v2/files/${fileId}`,
        { method: 'DELETE', agent: false, headers: { authorization: `Bearer ${server.token}` } },
        (response) => {
          response.resume();
          response.once('end', () => (response.statusCode === 204 ? resolve() : reject(new Error(`DELETE answered ${response.statusCode}`))));
        },
      );
      request.once('error', reject);
      request.end();
    });

  const uploadWith = async (mode: 'gantry' | 'raw', file: string, md5: string, flags: string[] = []): Promise<Run> => {
    const args = [join(here, 'worker.mjs'), mode, server.url, file, ...flags];
    const result = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, STORAGE_TOKEN: server.token }, maxBuffer: 1 << 20 });
    if (result.status !== 0) throw new Error(`the ${mode} upload failed: ${result.stderr}`);
    const run = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Run;
    if (run.md5 !== md5) throw new Error(`the ${mode} upload stored md5 ${run.md5}, not ${md5}`);
    // Keep the server's folder to one file at a time.
    await remove(run.fileId);
    console.error(
      `${mode} ${flags.join(' ')} ${(run.bytes / MIB).toFixed(0)} MiB: ${Math.round(run.ms)} ms (CPU ${run.cpuMs} ms, user ${run.userMs} ms), peak RSS ${run.maxRssMb} MB`,
    );
    return run;
  };

  await uploadWith('raw', one, oneMd5); // warm the page cache and the server
  const gantry: Run[] = [];
  const raw: Run[] = [];
  // Where the time goes: the same upload with 8 MiB chunks (more round trips), and without the md5 check.
  const smallChunks: Run[] = [];
  const noMd5: Run[] = [];
  for (let i = 0; i < runs; i += 1) {
    const round: Array<() => Promise<unknown>> = [
      async () => gantry.push(await uploadWith('gantry', one, oneMd5)),
      async () => raw.push(await uploadWith('raw', one, oneMd5)),
      async () => smallChunks.push(await uploadWith('gantry', one, oneMd5, ['--chunk-mib', '8'])),
      async () => noMd5.push(await uploadWith('gantry', one, oneMd5, ['--no-md5'])),
    ];
    // Each round in another order, so that no side always runs right after the same other one.
    for (let k = 0; k < round.length; k += 1) await round[(k + i) % round.length]!();
  }
  const doubled = await uploadWith('gantry', two, twoMd5);

  // A cut at 50 %: the bytes the server received for the session beyond the file's size were sent twice.
  const before = (await server.admin('GET', 'stats')) as { sessions: Record<string, { bytesReceived: number }> };
  const cut = await uploadWith('gantry', one, oneMd5, ['--cut-at', String(size / 2)]);
  const after = (await server.admin('GET', 'stats')) as { sessions: Record<string, { bytesReceived: number; completed: boolean }> };
  const sessions = Object.entries(after.sessions).filter(([id]) => !(id in before.sessions));
  if (sessions.length !== 1) throw new Error(`expected one new session for the cut upload, found ${sessions.length}`);
  const resent = sessions[0]![1].bytesReceived - size;

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const mbps = (ms: number) => Number((size / MIB / (ms / 1000)).toFixed(1));
  console.log(
    JSON.stringify({
      bench: 'storage',
      fileMiB: sizeMiB,
      chunkMiB: chunk / MIB,
      gantryMs: Math.round(median(gantry.map((r) => r.ms))),
      gantryMiBPerSecond: mbps(median(gantry.map((r) => r.ms))),
      baseline: 'one uploadType=media POST of the same file streamed with node:http, same server, same run',
      rawMs: Math.round(median(raw.map((r) => r.ms))),
      rawMiBPerSecond: mbps(median(raw.map((r) => r.ms))),
      ratio: Number((median(raw.map((r) => r.ms)) / median(gantry.map((r) => r.ms))).toFixed(3)),
      // CPU of the uploading process over the upload: what to compare on a shared machine, where wall time is noise.
      gantryCpuMs: median(gantry.map((r) => r.cpuMs)),
      rawCpuMs: median(raw.map((r) => r.cpuMs)),
      noMd5CheckCpuMs: median(noMd5.map((r) => r.cpuMs)),
      target: 'ratio >= 0.9; peak RSS <= 128 MB at 1 GiB and 2 GiB; bytes resent after a cut at 50 % <= one chunk',
      chunks8MiBMs: Math.round(median(smallChunks.map((r) => r.ms))),
      chunks8MiBRatio: Number((median(raw.map((r) => r.ms)) / median(smallChunks.map((r) => r.ms))).toFixed(3)),
      noMd5CheckMs: Math.round(median(noMd5.map((r) => r.ms))),
      noMd5CheckRatio: Number((median(raw.map((r) => r.ms)) / median(noMd5.map((r) => r.ms))).toFixed(3)),
      peakRssMb: Math.max(...gantry.map((r) => r.maxRssMb)),
      rawPeakRssMb: Math.max(...raw.map((r) => r.maxRssMb)),
      doubledFileMiB: sizeMiB * 2,
      doubledPeakRssMb: doubled.maxRssMb,
      doubledGantryMs: Math.round(doubled.ms),
      cutAtBytes: size / 2,
      cutGantryMs: Math.round(cut.ms),
      resentBytes: resent,
      resentChunks: Number((resent / chunk).toFixed(3)),
    }),
  );
} finally {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
