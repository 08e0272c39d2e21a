// bench/pin: pin 500 modules against the embedded registry (in its own process) with 20 ms added to every request,
// at the default concurrency (16) and one module at a time, against the latency-bound ideal. Prints ONE JSON object.
//
//   npm run bench -- pin          (or: node --import tsx bench/pin/index.ts [modules] [latencyMs])
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as createTar } from 'tar';
import { writeSyntheticModules } from '../../devserver/registry/index.js';
import { silentLogger } from '../../lib/log.js';
import { RegistryClient } from '../../lib/registry/client.js';
import { parseManifest } from '../../lib/registry/manifest.js';
import { defaultConcurrency, pin } from '../../lib/registry/modules.js';
import { startRegistryProcess } from '../lib/registry-process.js';

const count = Number(process.argv[2] ?? 500);
const latencyMs = Number(process.argv[3] ?? 20);
const concurrency = defaultConcurrency;

const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-pin-'));
const tails = await writeSyntheticModules(join(dir, 'modules'), { count, versionsPerModule: 3 });
// Ready archives, as a real registry stores them: a folder would be tarred and gzipped by the registry on every
// download, server CPU that competes with the client on a 2-core machine and is no part of what pin costs.
for (const tail of tails) {
  const moduleDir = join(dir, 'modules', ...tail.split('/'));
  for (const entry of await readdir(moduleDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const versionDir = join(moduleDir, entry.name);
    await createTar({ gzip: true, cwd: versionDir, file: `${versionDir}.tar.gz`, portable: true }, await readdir(versionDir));
    await rm(versionDir, { recursive: true });
  }
}
const server = await startRegistryProcess(join(dir, 'modules'), latencyMs);
try {
  const manifest = parseManifest(
    JSON.stringify(Object.fromEntries(tails.map((tail, i) => [`m${i}`, { source: `${server.host}/${tail}`, version: '~> 1.0' }]))),
    'bench',
    {},
  );

  const run = async (limit: number) => {
    const client = new RegistryClient({ env: {}, logger: silentLogger });
    await server.clearRequests();
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const result = await pin(manifest, { version: 1, modules: {} }, { client, concurrency: limit, logger: silentLogger });
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    client.close();
    if (Object.keys(result.lock.modules).length !== count) throw new Error('not every module was pinned');
    return { ms, cpuMs: (cpu.user + cpu.system) / 1000, requests: await server.requests() };
  };

  // The first run is a fresh process's (what one `gantry modules pin` costs); the JIT needs a few thousand requests
  // to settle, so the figure against the target is the median of three runs after it.
  const cold = await run(concurrency);
  const warm = [await run(concurrency), await run(concurrency), await run(concurrency)].sort((a, b) => a.ms - b.ms);
  const parallel = warm[1]!;
  const sequential = await run(1);

  // The floor of client CPU per request on the machine as it is during this run: the same requests (paths of the
  // median warm run) sent again with bare node:http — keep-alive agent, 16 in flight, bodies collected, nothing parsed.
  // Both CPU figures swing with the machine's load (a loopback write wakes the server inside the writer's system call),
  // so compare gantry against this floor from the same run rather than against figures from another day.
  const rawCpuUsPerRequest = async (paths: string[]) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const get = (path: string) =>
      new Promise<void>((resolve, reject) => {
        http
          .get(`${server.url}${path}`, { agent }, (response) => {
            response.on('data', () => undefined);
            response.once('end', resolve);
            response.once('error', reject);
          })
          .once('error', reject);
      });
    let next = 0;
    const cpuBefore = process.cpuUsage();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < paths.length) await get(paths[next++]!);
      }),
    );
    const cpu = process.cpuUsage(cpuBefore);
    agent.destroy();
    return (cpu.user + cpu.system) / paths.length;
  };

  // The latency-bound ideal: discovery, then each module's chain of delayed requests (versions, download location,
  // archive — the archive download is delayed like every other request), in waves of `concurrency`.
  const isAdmin = (path: string) => path.startsWith('/_gantry/') && !path.startsWith('/_gantry/archives/');
  const delayed = parallel.requests.filter((r) => !isAdmin(r.path) && !r.path.startsWith('/.well-known/'));
  const discoveries = parallel.requests.filter((r) => r.path.startsWith('/.well-known/')).length;
  const perModule = delayed.length / count;
  const rawUs = await rawCpuUsPerRequest(delayed.map((r) => r.path));
  const idealMs = discoveries * latencyMs + Math.ceil(count / concurrency) * perModule * latencyMs;
  console.log(
    JSON.stringify({
      bench: 'pin',
      modules: count,
      latencyMs,
      concurrency,
      delayedRequestsPerModule: Number(perModule.toFixed(2)),
      gantryMs: Math.round(parallel.ms),
      idealMs: Math.round(idealMs),
      ratioToIdeal: Number((parallel.ms / idealMs).toFixed(3)),
      target: '<= 1.25 x ideal',
      warmRunsMs: warm.map((r) => Math.round(r.ms)),
      coldMs: Math.round(cold.ms),
      coldRatioToIdeal: Number((cold.ms / idealMs).toFixed(3)),
      coldClientCpuMsPerModule: Number((cold.cpuMs / count).toFixed(2)),
      sequentialMs: Math.round(sequential.ms),
      speedupVsSequential: Number((sequential.ms / parallel.ms).toFixed(2)),
      clientCpuMsPerModule: Number((parallel.cpuMs / count).toFixed(2)),
      clientCpuUsPerRequest: Math.round((parallel.cpuMs * 1000) / delayed.length),
      rawHttpCpuUsPerRequest: Math.round(rawUs),
      clientCpuVsRawHttp: Number(((parallel.cpuMs * 1000) / delayed.length / rawUs).toFixed(2)),
      sequentialClientCpuMsPerModule: Number((sequential.cpuMs / count).toFixed(2)),
      loadAverage: Number(loadavg()[0]?.toFixed(1)),
    }),
  );
} finally {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
