#!/usr/bin/env node
// `npm run mutate -- <area>`: Stryker on one area's code with the tests that cover it (stryker/<area>.config.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const areas = readdirSync(path.join(root, 'stryker'))
  .filter((name) => name.endsWith('.config.mjs'))
  .map((name) => name.slice(0, -'.config.mjs'.length))
  .sort();
const [area, ...rest] = process.argv.slice(2);
if (!area || area === '--help' || area === '-h') {
  process.stdout.write(`usage: npm run mutate -- <area> [stryker options]\nareas: ${areas.join(', ')}\n`);
  process.exit(area ? 0 : 2);
}
const config = path.join(root, 'stryker', `${area}.config.mjs`);
if (!areas.includes(area) || !existsSync(config)) {
  process.stderr.write(`gantry mutate: no area "${area}"; the areas are: ${areas.join(', ')}\n`);
  process.exit(2);
}
const stryker = path.join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
const run = spawnSync(process.execPath, [stryker, 'run', config, ...rest], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
