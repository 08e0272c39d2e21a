// One upload in a fresh plain-node process (no TypeScript loader in its memory), so that its peak RSS is the
// uploader's alone. Prints { ms, cpuMs, userMs, bytes, md5, fileId, maxRssMb } as one JSON line; the CPU times are
// the upload's alone (user + system of every thread, measured around it as the wall time is, not loading the library). The token comes in
// STORAGE_TOKEN; BENCH_STORAGE_DIST names another build's dist folder to load Gantry from.
//   node worker.mjs gantry <url> <file> [--chunk-mib N] [--no-md5] [--cut-at N]
//       a resumable upload with the compiled library (dist/), default options unless given; with --cut-at, a cut
//       fault is armed through the admin API once that many bytes were sent
//   node worker.mjs raw <url> <file>
//       the baseline: one media upload, the file streamed with node:http
import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';

const [mode, url, file, ...flags] = process.argv.slice(2);
const flag = (name) => {
  const i = flags.indexOf(name);
  return i < 0 ? undefined : flags[i + 1];
};
const cutAt = flag('--cut-at');
const chunkMiB = flag('--chunk-mib');
const token = process.env.STORAGE_TOKEN;
const size = statSync(file).size;
// The library is loaded before the clock starts: the baseline loads nothing either.
const dist = process.env.BENCH_STORAGE_DIST ? pathToFileURL(`${process.env.BENCH_STORAGE_DIST}/`) : new URL('../../dist/', import.meta.url);
const gantry =
  mode === 'raw'
    ? undefined
    : {
        ...(await import(new URL('lib/storage/transport.js', dist).href)),
        ...(await import(new URL('lib/storage/upload/index.js', dist).href)),
        ...(await import(new URL('lib/log.js', dist).href)),
      };
const cpuBefore = process.cpuUsage();
const started = performance.now();
let result;
if (mode === 'raw') {
  result = await new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/upload/storage/v2/files?uploadType=media`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': String(size) },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          response.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString())) : reject(new Error(`raw upload: ${response.statusCode}`)),
        );
      },
    );
    request.on('error', reject);
    createReadStream(file).pipe(request);
  });
} else {
  const { createStorageTransport, upload, silentLogger } = gantry;
  const transport = createStorageTransport({ baseUrl: url, token, logger: silentLogger });
  let armed = cutAt === undefined;
  result = await upload(transport, {
    source: file,
    metadata: { title: basename(file) },
    uploadType: 'resumable',
    ...(chunkMiB !== undefined ? { chunkSize: Number(chunkMiB) * 1024 * 1024 } : {}),
    ...(flags.includes('--no-md5') ? { verifyMd5: false } : {}),
    logger: silentLogger,
    retry: { initialMs: 10 },
    onProgress: ({ sent }) => {
      if (!armed && sent >= Number(cutAt)) {
        armed = true;
        // The next chunk request is cut by the server 3 MiB and a bit into its body. Armed with node:http, not fetch:
        // fetch loads undici (~10 MB), which the peak RSS would count as the uploader's.
        http
          .request(`${url}/_gantry/faults`, { method: 'POST' }, (response) => response.resume())
          .end(JSON.stringify({ kind: 'cut', afterBytes: 3 * 1024 * 1024 + 4321, direction: 'upload' }));
      }
    },
  });
  transport.close();
}
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
console.log(
  JSON.stringify({
    ms,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    userMs: Math.round(cpu.user / 1000),
    bytes: Number(result.fileSize),
    md5: result.md5Checksum,
    fileId: result.id,
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
