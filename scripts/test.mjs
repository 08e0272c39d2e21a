#!/usr/bin/env node
// `npm test`: every test file, in three parts. First the files that share nothing, side by side under mocha --parallel
// (most of a file's time is spent waiting on servers, child processes, Chromium and Pulumi's engine, so files overlap
// well even on 2 cores), and beside them, one after another in a mocha of their own, the few that only wait
// (ALONGSIDE); then the one that must have the machine to itself (SERIAL, docs/testing.md says why). The last line
// sums the parts — "N passed, N failed, N skipped", the line CI reads — and a part that ended without its line counts
// as one failure.
//
//   npm test                      # every part, GANTRY_TEST_JOBS (default 3) files at a time in the first
//   npm test -- --jobs 1          # every file in one serial mocha run, as before (for debugging)
//   npm test -- --grep WAIT-      # any other mocha option goes to every part
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const mochaBin = fileURLToPath(new URL('../node_modules/mocha/bin/mocha.js', import.meta.url));
const ALL = 'test/**/*.test.ts';

/** Files that run alone, after the parallel part. Keep this short; docs/testing.md gives the reason for each. */
const SERIAL = ['test/fleet/fleet.test.ts'];

/**
 * Files that spend minutes waiting on real time and little CPU (a tenth or less of their wall time, docs/testing.md):
 * they run one after another beside the parallel part instead of holding one of its few slots while they wait.
 */
const ALONGSIDE = ['test/cli/waits.test.ts', 'test/platform/fleet-budget.test.ts', 'test/ops/servers.test.ts'];

/**
 * Files the parallel part starts first: the ones that take longest (by the measured suite, docs/testing.md "CPU, file
 * by file"). Mocha hands files to its workers in the order given, so a long file that came late in the alphabet ran
 * on alone at the end while the other workers idled; longest first leaves short files for the tail. Order only: a
 * name here that no longer exists is skipped, and every other file still runs.
 */
const LONGEST_FIRST = [
  'test/analysis/local.test.ts',
  'test/providers/page-analysis-gate-local.test.ts',
  'test/mcp/conformance-client.test.ts',
  'test/harness/harness.test.ts',
  'test/providers/kv-secret.test.ts',
  'test/providers/registry-module.test.ts',
  'test/cli/storage.test.ts',
  'test/providers/storage.test.ts',
  'test/cli/demo.test.ts',
  'test/examples/stack.test.ts',
  'test/automation/provider.test.ts',
  'test/mcp/conformance-server.test.ts',
];

/** Every test file under test/, the longest first, then the rest in mocha's own (sorted) order. */
function parallelFiles() {
  const all = readdirSync(new URL('../test', import.meta.url), { recursive: true })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `test/${name.split('\\').join('/')}`)
    .filter((file) => !SERIAL.includes(file) && !ALONGSIDE.includes(file))
    .sort();
  const first = LONGEST_FIRST.filter((file) => all.includes(file));
  return [...first, ...all.filter((file) => !first.includes(file))];
}

const SUMMARY = /^(\d+) passed, (\d+) failed, (\d+) skipped$/;

function parseArgs(argv) {
  let jobs = Number(process.env.GANTRY_TEST_JOBS ?? 3);
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const jobsValue = argv[i] === '--jobs' || argv[i] === '-j' ? argv[++i] : /^--jobs=(.*)$/.exec(argv[i])?.[1];
    if (jobsValue === undefined) rest.push(argv[i]);
    else jobs = Number(jobsValue);
  }
  if (!Number.isInteger(jobs) || jobs < 1) {
    process.stderr.write(`--jobs (or GANTRY_TEST_JOBS) must be a positive integer\n`);
    process.exit(2);
  }
  return { jobs, rest };
}

/**
 * Runs mocha with `args`, its output passed through (or, with `output`, kept there to be printed later, so that two
 * parts running at once do not mix their lines); resolves to its exit code and the counts of its last line.
 */
function mocha(args, env = process.env, output = undefined) {
  return new Promise((resolve) => {
    const color = process.stdout.isTTY ? ['--color'] : [];
    const child = spawn(process.execPath, [mochaBin, ...color, ...args], { cwd: root, env, stdio: ['inherit', 'pipe', output ? 'pipe' : 'inherit'] });
    const write = output ? (chunk) => output.push(chunk) : (chunk) => process.stdout.write(chunk);
    child.stderr?.on('data', write);
    let summary;
    let pending = '';
    child.stdout.on('data', (chunk) => {
      write(chunk);
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) summary = SUMMARY.exec(line) ?? summary;
    });
    child.on('close', (code, signal) => {
      summary = SUMMARY.exec(pending) ?? summary;
      const [passed, failed, skipped] = summary ? summary.slice(1).map(Number) : [0, 1, 0];
      if (!summary) write(`\nmocha ${args.join(' ')} ended (${signal ?? `exit ${code}`}) before reporting: counted as 1 failed\n`);
      resolve({ ok: code === 0 && summary !== undefined, passed, failed, skipped });
    });
  });
}

const { jobs, rest } = parseArgs(process.argv.slice(2));
// Each part: its title, its mocha arguments, and whether it runs beside the one before it (its output printed after).
const parts =
  jobs === 1
    ? [{ args: [ALL, ...rest] }]
    : [
        { title: `in parallel, ${jobs} files at a time`, args: ['--parallel', '--jobs', String(jobs), ...parallelFiles(), ...rest] },
        { title: `beside them, one after another: ${ALONGSIDE.join(' ')}`, args: [...ALONGSIDE, ...rest], beside: true },
        { title: `alone, one after another: ${SERIAL.join(' ')}`, args: [...SERIAL, ...rest] },
      ];
// GANTRY_TEST_TIMES: each part writes its own, merged into the one asked for.
const timesPath = process.env.GANTRY_TEST_TIMES;
const partTimes = parts.map((_, index) => (timesPath && parts.length > 1 ? `${timesPath}.part${index}` : timesPath));
const envOf = (index) => (timesPath ? { ...process.env, GANTRY_TEST_TIMES: partTimes[index] } : process.env);
const heading = (part) => (part.title ? `\n== ${part.title}\n` : '');
const results = [];
const began = Date.now();
for (let index = 0; index < parts.length; index++) {
  const part = parts[index];
  const next = parts[index + 1];
  process.stdout.write(heading(part));
  if (next?.beside) {
    const output = [];
    const [first, second] = await Promise.all([mocha(part.args, envOf(index)), mocha(next.args, envOf(index + 1), output)]);
    process.stdout.write(heading(next));
    for (const chunk of output) process.stdout.write(chunk);
    results.push(first, second);
    index += 1;
  } else {
    results.push(await mocha(part.args, envOf(index)));
  }
}
if (timesPath && parts.length > 1) {
  const written = partTimes.flatMap((file) => {
    try {
      return [JSON.parse(readFileSync(file, 'utf8'))];
    } catch {
      return [];
    } finally {
      rmSync(file, { force: true });
    }
  });
  const files = written.flatMap((part) => part.files).sort((a, b) => b.ms - a.ms);
  const add = (key) => written.reduce((total, part) => (total === null || part[key] === null ? null : total + part[key]), 0);
  // The run's own wall time: the parts' would count the part that runs beside another twice.
  const totals = { totalMs: add('totalMs'), totalCpuMs: add('totalCpuMs'), wallMs: Date.now() - began };
  writeFileSync(timesPath, `${JSON.stringify({ ...totals, jobs, files }, null, 1)}\n`);
}
const sum = (key) => results.reduce((total, result) => total + result[key], 0);
const failed = sum('failed');
process.stdout.write(`\n${sum('passed')} passed, ${failed} failed, ${sum('skipped')} skipped\n`);
process.exit(failed === 0 && results.every((result) => result.ok) ? 0 : 1);
