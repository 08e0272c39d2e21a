// Runs the benchmarks one after another (each in its own process, so memory figures don't mix) and prints each one's
// JSON object. `npm run bench -- pin` runs only bench/pin. Results are also written to bench/results/<name>.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const entries = readdirSync(here, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(here, entry.name, 'index.ts')))
  .map((entry) => entry.name)
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort();

if (entries.length === 0) {
  console.error(wanted.length ? `no benchmark named ${wanted.join(', ')}` : 'no benchmarks found');
  process.exit(2);
}
mkdirSync(join(here, 'results'), { recursive: true });
let failed = 0;
for (const name of entries) {
  console.error(`== bench/${name}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(here, name, 'index.ts')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const lastLine = result.stdout.trim().split('\n').at(-1) ?? '';
  if (result.status !== 0) {
    failed += 1;
    console.error(`bench/${name} failed with exit code ${result.status}`);
    continue;
  }
  console.log(lastLine);
  writeFileSync(join(here, 'results', `${name}.json`), `${lastLine}\n`);
}
process.exit(failed > 0 ? 1 : 0);
