// The line CI reads comes from test/reporter.cjs: tests a failing hook stopped must count as failed, never vanish.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function lastLine(...fixtures: string[]): { status: number | null; last: string; stdout: string } {
  const run = spawnSync(
    process.execPath,
    ['node_modules/mocha/bin/mocha.js', '--no-config', '--reporter', './test/reporter.cjs', ...fixtures.map((f) => `test/reporter-fixtures/${f}`)],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  return { status: run.status, last: run.stdout.trim().split('\n').at(-1) ?? '', stdout: run.stdout };
}

describe('the test reporter (the N passed, N failed, N skipped line)', () => {
  it('counts the tests a failing before hook stopped as failed, and says so', () => {
    const run = lastLine('hook-before.cjs');
    assert.equal(run.last, '1 passed, 2 failed, 1 skipped');
    assert.match(run.stdout, /2 test\(s\) did not run because a hook failed/);
    assert.notEqual(run.status, 0);
  });

  it('counts a failing after hook once when every test ran', () => {
    assert.equal(lastLine('hook-after.cjs').last, '1 passed, 1 failed, 0 skipped');
    assert.equal(lastLine('hook-before.cjs', 'hook-after.cjs').last, '2 passed, 2 failed, 1 skipped');
  });
});
