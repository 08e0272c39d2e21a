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

describe("GANTRY_TEST_TIMES (each file's wall time)", () => {
  for (const flags of [[], ['--parallel', '--jobs', '2']]) {
    it(`names each file with the time it took${flags.length ? ', measured in the worker under --parallel' : ''}`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'gantry-times-'));
      try {
        const times = join(dir, 'times.json');
        const run = spawnSync(
          process.execPath,
          [
            'node_modules/mocha/bin/mocha.js',
            '--no-config',
            ...flags,
            '--reporter',
            './test/reporter.cjs',
            'test/reporter-fixtures/slow.cjs',
            'test/reporter-fixtures/hook-after.cjs',
          ],
          { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, GANTRY_TEST_TIMES: times } },
        );
        assert.equal(run.stdout.trim().split('\n').at(-1), '2 passed, 1 failed, 0 skipped');
        const written = JSON.parse(readFileSync(times, 'utf8')) as { totalMs: number; wallMs: number; files: { file: string; ms: number }[] };
        assert.deepEqual(
          written.files.map((row) => row.file),
          ['test/reporter-fixtures/slow.cjs', 'test/reporter-fixtures/hook-after.cjs'],
        );
        assert.ok(written.files[0].ms >= 300, `slow.cjs took ${written.files[0].ms} ms`);
        assert.equal(written.totalMs, written.files[0].ms + written.files[1].ms);
        assert.ok(written.wallMs >= 300);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
