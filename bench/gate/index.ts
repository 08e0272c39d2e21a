// bench/gate: the same 3 Lighthouse runs of a page on 127.0.0.1, through `gantry gate` (the built command) and
// through Lighthouse called directly (bench/gate/lighthouse-direct.mjs), each in its own process. Rounds run in ABBA
// order so that drift on a shared machine falls on both sides. Peak memory is the largest sum of RSS over the
// process and all its descendants (Chromium's browser, renderer, GPU and utility processes), sampled every 50 ms.
// Prints ONE JSON object.
//
//   npm run bench -- gate          (or: node --import tsx bench/gate/index.ts [runs] [rounds])
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serveDemoSite } from '../../lib/cli/commands/demo/site.js';
import { examplesDir } from '../../lib/paths.js';

const runs = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 2);
const root = fileURLToPath(new URL('../../', import.meta.url));
const gantryBin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const baselineScript = fileURLToPath(new URL('./lighthouse-direct.mjs', import.meta.url));
if (!existsSync(gantryBin)) throw new Error('dist/lib/cli/main.js is missing: run `npm run build` (npm run bench does)');

// Linux reports RSS in pages; 4 KiB on every platform this runs on (x86-64, arm64 with 4K pages).
const pageSize = 4096;

function treeRssBytes(rootPid: number): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(entry);
      const ppid = Number(fields[1]);
      rss.set(pid, Number(fields[21]) * pageSize);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    } catch {
      // the process ended meanwhile
    }
  }
  let total = 0;
  const stack = [rootPid];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

async function measure(args: string[]): Promise<{ seconds: number; peakRssMB: number; stdout: string; code: number | null }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GANTRY_LOG: 'error' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let peak = 0;
  const sampler = setInterval(() => {
    if (child.pid) peak = Math.max(peak, treeRssBytes(child.pid));
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}: ${stderr.slice(-1000)}`);
  return { seconds, peakRssMB: Math.round(peak / 1024 / 1024), stdout, code };
}

const site = await serveDemoSite(examplesDir());
try {
  const gantryArgs = [gantryBin, 'gate', site.url, '--runs', String(runs), '--strategy', 'desktop', '--min', 'performance=0.9', '--json'];
  const baselineArgs = [baselineScript, site.url, String(runs)];
  const sides = { gantry: [] as Array<Awaited<ReturnType<typeof measure>>>, baseline: [] as Array<Awaited<ReturnType<typeof measure>>> };
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? (['baseline', 'gantry'] as const) : (['gantry', 'baseline'] as const);
    for (const side of order) sides[side].push(await measure(side === 'gantry' ? gantryArgs : baselineArgs));
  }
  const total = (list: typeof sides.gantry) => list.reduce((sum, m) => sum + m.seconds, 0);
  const peak = (list: typeof sides.gantry) => Math.max(...list.map((m) => m.peakRssMB));
  const gantryScores = sides.gantry.map((m) =>
    (JSON.parse(m.stdout) as { urls: Array<{ runs: Array<{ scores: { performance: number } }> }> }).urls[0].runs.map((r) => r.scores.performance),
  );
  const baselineScores = sides.baseline.map((m) => (JSON.parse(m.stdout.trim().split('\n').at(-1) ?? '{}') as { scores: number[] }).scores);
  const lighthouseVersion = (JSON.parse(readFileSync(new URL('../../node_modules/lighthouse/package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
  console.log(
    JSON.stringify({
      bench: 'gate',
      page: 'examples/site on 127.0.0.1, desktop preset, performance only',
      runsPerSide: runs,
      rounds,
      gantrySeconds: Number(total(sides.gantry).toFixed(2)),
      baselineSeconds: Number(total(sides.baseline).toFixed(2)),
      ratio: Number((total(sides.gantry) / total(sides.baseline)).toFixed(3)),
      target: '<= 1.05',
      gantryPeakRssMB: peak(sides.gantry),
      baselinePeakRssMB: peak(sides.baseline),
      memoryRatio: Number((peak(sides.gantry) / peak(sides.baseline)).toFixed(3)),
      gantrySecondsPerRound: sides.gantry.map((m) => Number(m.seconds.toFixed(2))),
      baselineSecondsPerRound: sides.baseline.map((m) => Number(m.seconds.toFixed(2))),
      gantryScores,
      baselineScores,
      lighthouse: lighthouseVersion,
      node: process.version,
    }),
  );
} finally {
  await site.stop();
}
