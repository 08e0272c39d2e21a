// bench/install: install a ~200 MB tar.gz module from the embedded registry over loopback (download + hardened
// extraction + content hash, streamed) against `tar xzf` of the same file; peak RSS of the installing process, and
// again with an archive twice as large to show memory stays flat; page faults (minor, major) and CPU per install of the
// installing process and of `tar xzf` (with its gzip); the CPU the registry spent serving each install (it shares this
// machine, where a real registry would not); what one page fault costs on this machine, which says whether it is a
// slow or a fast one of its kind (docs/performance.md). Prints ONE JSON object.
//
//   npm run bench -- install      (or: npm run build && node --import tsx bench/install/index.ts [sizeMb])
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRegistryProcess } from '../lib/registry-process.js';

const sizeMb = Number(process.argv[2] ?? 200);
const here = dirname(fileURLToPath(import.meta.url));
// The installing process runs the compiled library with plain node (no TypeScript loader in its memory).
if (!existsSync(join(here, '..', '..', 'dist', 'lib', 'sources', 'fetch.js'))) {
  console.error('bench/install runs the compiled library: run `npm run build` first (`npm run bench` does)');
  process.exit(2);
}
const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-install-'));

/**
 * A module whose tar.gz is about `mb` MiB: 1 MiB files, three quarters random bytes (incompressible) and a quarter
 * text (which gzip shrinks to almost nothing), so about 1.3 files per archive MiB.
 */
async function makeArchive(version: string, mb: number): Promise<string> {
  const files = Math.round(mb / 0.76);
  const content = join(dir, `content-${version}`);
  await mkdir(join(content, 'data'), { recursive: true });
  await writeFile(join(content, 'main.tf'), 'variable "name" {}\n');
  const text = Buffer.from('resource "null_resource" "x" { triggers = { a = "b" } }\n'.repeat(4800)).subarray(0, 256 * 1024);
  for (let i = 0; i < files; i += 1)
    await writeFile(join(content, 'data', `blob-${String(i).padStart(4, '0')}.bin`), Buffer.concat([randomBytes(768 * 1024), text]));
  const archive = join(dir, 'registry', 'bench', 'big', 'null', `${version}.tar.gz`);
  await mkdir(dirname(archive), { recursive: true });
  const made = spawnSync('tar', ['czf', archive, '-C', content, '.']);
  if (made.status !== 0) throw new Error(`tar czf failed: ${made.stderr}`);
  await rm(content, { recursive: true, force: true });
  return archive;
}

/** One run's cost: wall time, page faults and CPU (user + system) of the process that did the work. */
interface Cost {
  ms: number;
  minorFaults: number;
  majorFaults: number;
  cpuMs: number;
}

/**
 * `tar xzf` run by a shell that then prints its own /proc stat: once tar is reaped, the shell's cminflt, cmajflt,
 * cutime and cstime hold tar's faults and CPU and those of the gzip it ran (spawnSync gives no child rusage).
 */
function timeTar(archive: string): Cost {
  const target = join(dir, `tar-${Date.now()}`);
  spawnSync('mkdir', ['-p', target]);
  const started = performance.now();
  const result = spawnSync('sh', ['-c', 'tar xzf "$1" -C "$2"; s=$?; cat /proc/$$/stat; exit $s', 'sh', archive, target], { encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`tar xzf failed: ${result.stderr}`);
  spawnSync('rm', ['-rf', target]);
  // Fields after "(comm) ": state is field 3, so field n is at n - 3 (proc(5)); times are in clock ticks of 10 ms.
  const fields = result.stdout
    .slice(result.stdout.lastIndexOf(')') + 2)
    .trim()
    .split(' ')
    .map(Number);
  const ticks = (n: number) => fields[n - 3] as number;
  return { ms, minorFaults: ticks(11), majorFaults: ticks(13), cpuMs: (ticks(16) + ticks(17)) * 10 };
}

/**
 * What a minor page fault costs on this machine, in µs: 64 MiB freshly mapped, one byte written per page, five times
 * (the median). Some VMs of this kind make each fault exit to the host (~15 µs instead of well under 1 µs on bare
 * metal), which is what makes a machine "slow" for an install: it takes thousands of faults where tar takes hundreds.
 */
function pageFaultMicros(): number {
  const costs: number[] = [];
  for (let round = 0; round < 5; round += 1) {
    const before = process.resourceUsage().minorPageFault;
    const started = process.hrtime.bigint();
    const pages = Buffer.allocUnsafeSlow(64 * 1024 * 1024);
    for (let at = 0; at < pages.length; at += 4096) pages[at] = 1;
    const micros = Number(process.hrtime.bigint() - started) / 1000;
    costs.push(micros / Math.max(1, process.resourceUsage().minorPageFault - before));
  }
  return Number(([...costs].sort((a, b) => a - b)[2] as number).toFixed(2));
}
/** At or above this cost per fault the machine counts as a slow one of this kind (docs/performance.md). */
const slowFaultMicros = 5;

function install(host: string, version: string): Cost & { bytes: number; maxRssMb: number } {
  const dest = join(dir, `installed-${version}-${Date.now()}`);
  const result = spawnSync(process.execPath, [join(here, 'worker.mjs'), `${host}/bench/big/null`, version, dest], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (result.status !== 0) throw new Error(`the install worker failed: ${result.stderr}`);
  spawnSync('rm', ['-rf', dest]);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) as string) as Cost & { bytes: number; maxRssMb: number };
}

const small = await makeArchive('1.0.0', sizeMb);
const large = await makeArchive('2.0.0', sizeMb * 2);
const server = await startRegistryProcess(join(dir, 'registry'), 0);
try {
  const archiveBytes = (await stat(small)).size;
  const faultMicros = pageFaultMicros();
  install(server.host, '1.0.0'); // warm the page cache and the registry
  timeTar(small);
  const runs = 3;
  const gantryRuns: Cost[] = [];
  const registryCpu: number[] = [];
  const tarRuns: Cost[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const registryBefore = server.cpuMs();
    const run = install(server.host, '1.0.0');
    registryCpu.push(server.cpuMs() - registryBefore);
    gantryRuns.push(run);
    rss.push(run.maxRssMb);
    tarRuns.push(timeTar(small));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  const gantry = gantryRuns.map((run) => run.ms);
  const tar = tarRuns.map((run) => run.ms);
  // Page faults and CPU per install (medians), the installing process's against tar's with its gzip: on some VMs each
  // fault is dear, and load distorts them much less than it does the wall-clock ratio.
  const costs = (prefix: string, list: Cost[]) => ({
    [`${prefix}MinorFaults`]: median(list.map((run) => run.minorFaults)),
    [`${prefix}MajorFaults`]: median(list.map((run) => run.majorFaults)),
    [`${prefix}CpuMs`]: median(list.map((run) => run.cpuMs)),
  });
  const doubled = install(server.host, '2.0.0');
  const mbPerSecond = (ms: number) => Number((archiveBytes / 1024 / 1024 / (ms / 1000)).toFixed(1));
  console.log(
    JSON.stringify({
      bench: 'install',
      archiveMb: Number((archiveBytes / 1024 / 1024).toFixed(1)),
      gantryMs: Math.round(median(gantry)),
      gantryMbPerSecond: mbPerSecond(median(gantry)),
      baseline: 'tar xzf (same file, local disk, no download)',
      tarMs: Math.round(median(tar)),
      tarMbPerSecond: mbPerSecond(median(tar)),
      ratio: Number((median(tar) / median(gantry)).toFixed(3)),
      ...costs('gantry', gantryRuns),
      ...costs('tar', tarRuns),
      target: 'ratio >= 0.8, peak RSS <= 128 MB and flat when the archive doubles',
      // The registry serves from this machine (a real one is remote): what it spends comes out of the client's second core.
      registryCpuMs: Math.round(median(registryCpu)),
      pageFaultMicros: faultMicros,
      machine: faultMicros >= slowFaultMicros ? 'slow: page faults are dear here' : 'fast: page faults are cheap here',
      peakRssMb: Math.max(...rss),
      doubledArchiveMb: Number(((await stat(large)).size / 1024 / 1024).toFixed(1)),
      doubledPeakRssMb: doubled.maxRssMb,
      doubledGantryMs: Math.round(doubled.ms),
      doubledGantryMinorFaults: doubled.minorFaults,
    }),
  );
} finally {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
