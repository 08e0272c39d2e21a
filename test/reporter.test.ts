// The line CI reads comes from test/reporter.cjs: tests a failing hook stopped must count as failed, never vanish.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

type Run = { status: number | null; last: string; stdout: string };

function lastLine(...fixtures: string[]): Run {
  return mocha([], ...fixtures);
}

/** The same fixtures under mocha --parallel: each file in a worker process, its events replayed in the main one. */
function lastLineParallel(...fixtures: string[]): Run {
  return mocha(['--parallel', '--jobs', '2'], ...fixtures);
}

function mocha(flags: string[], ...fixtures: string[]): Run {
  const run = spawnSync(
    process.execPath,
    ['node_modules/mocha/bin/mocha.js', '--no-config', ...flags, '--reporter', './test/reporter.cjs', ...fixtures.map((f) => `test/reporter-fixtures/${f}`)],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  return { status: run.status, last: run.stdout.trim().split('\n').at(-1) ?? '', stdout: run.stdout };
}

for (const [mode, run] of [
  ['serial', lastLine],
  ['parallel', lastLineParallel],
] as const) {
  describe(`the test reporter (the N passed, N failed, N skipped line), ${mode}`, () => {
    it('counts the tests a failing before hook stopped as failed, and says so', () => {
      const result = run('hook-before.cjs');
      assert.equal(result.last, '1 passed, 2 failed, 1 skipped');
      assert.match(result.stdout, /2 test\(s\) did not run because a hook failed/);
      assert.notEqual(result.status, 0);
    });

    it('counts a failing after hook once when every test ran', () => {
      assert.equal(run('hook-after.cjs').last, '1 passed, 1 failed, 0 skipped');
      assert.equal(run('hook-before.cjs', 'hook-after.cjs').last, '2 passed, 2 failed, 1 skipped');
    });
  });
}

interface Times {
  totalMs: number;
  totalCpuMs: number;
  wallMs: number;
  files: { file: string; ms: number; cpuMs: number }[];
}

/** Runs the fixtures with GANTRY_TEST_TIMES set; returns the last line printed and the file it wrote. */
function timed(flags: string[], ...fixtures: string[]): { last: string | undefined; written: Times } {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-times-'));
  try {
    const times = join(dir, 'times.json');
    const run = spawnSync(
      process.execPath,
      ['node_modules/mocha/bin/mocha.js', '--no-config', ...flags, '--reporter', './test/reporter.cjs', ...fixtures.map((f) => `test/reporter-fixtures/${f}`)],
      { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, GANTRY_TEST_TIMES: times } },
    );
    return { last: run.stdout.trim().split('\n').at(-1), written: JSON.parse(readFileSync(times, 'utf8')) as Times };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("GANTRY_TEST_TIMES (each file's wall and CPU time)", () => {
  for (const flags of [[], ['--parallel', '--jobs', '2']]) {
    const where = flags.length ? ', measured in the worker under --parallel' : '';

    it(`names each file with the time it took${where}`, () => {
      const { last, written } = timed(flags, 'slow.cjs', 'hook-after.cjs');
      assert.equal(last, '2 passed, 1 failed, 0 skipped');
      assert.deepEqual(
        written.files.map((row) => row.file),
        ['test/reporter-fixtures/slow.cjs', 'test/reporter-fixtures/hook-after.cjs'],
      );
      assert.ok(written.files[0]!.ms >= 300, `slow.cjs took ${written.files[0]!.ms} ms`);
      assert.equal(written.totalMs, written.files[0]!.ms + written.files[1]!.ms);
      assert.ok(written.wallMs >= 300);
    });

    it(`adds each file's CPU time, its reaped child processes' included${where}`, () => {
      const { last, written } = timed(flags, 'busy.cjs', 'slow.cjs');
      assert.equal(last, '2 passed, 0 failed, 0 skipped');
      const cpu = Object.fromEntries(written.files.map((row) => [row.file, row.cpuMs]));
      // The child's 400 ms of user time, plus its start; the sleeping file spends next to nothing.
      assert.ok(cpu['test/reporter-fixtures/busy.cjs']! >= 400, `busy.cjs: ${cpu['test/reporter-fixtures/busy.cjs']} ms of CPU`);
      assert.ok(cpu['test/reporter-fixtures/slow.cjs']! < 200, `slow.cjs: ${cpu['test/reporter-fixtures/slow.cjs']} ms of CPU`);
      assert.equal(written.totalCpuMs, cpu['test/reporter-fixtures/busy.cjs']! + cpu['test/reporter-fixtures/slow.cjs']!);
    });
  }
});
