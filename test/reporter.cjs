'use strict';
// Mocha's spec output, closed by the one line CI reads: "N passed, N failed, N skipped".
// A failing hook stops the tests it guards: those tests are counted as failed (they did not pass), so a broken
// `before` can never shrink the run to a smaller green one.
// Under mocha --parallel the files run in workers with test/reporter-worker.cjs, which sends each file's planned test
// count and wall and CPU time along with its events: the counts and GANTRY_TEST_TIMES mean the same in both modes.
const Mocha = require('mocha');

const { writeFileSync } = require('node:fs');

const { fileTimes } = require('./reporter-times.cjs');

const { EVENT_RUN_BEGIN, EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;

class GantryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const parallel = typeof runner.isParallelMode === 'function' && runner.isParallelMode();
    if (parallel) runner.workerReporter(require.resolve('./reporter-worker.cjs'));
    let planned = 0;
    let passed = 0;
    let testsFailed = 0;
    let hooksFailed = 0;
    let skipped = 0;
    // Serial: the main process loaded every file, runner.total is the plan. Parallel: it loaded none (0), each worker
    // sends its file's count.
    runner.once(EVENT_RUN_BEGIN, () => {
      planned += runner.total;
    });
    runner.on('gantry:planned', ({ total }) => {
      planned += total;
    });
    runner.on(EVENT_TEST_PASS, () => {
      passed += 1;
    });
    runner.on(EVENT_TEST_FAIL, (runnable) => {
      if (runnable.type === 'hook') hooksFailed += 1;
      else testsFailed += 1;
    });
    runner.on(EVENT_TEST_PENDING, () => {
      skipped += 1;
    });
    runner.once(EVENT_RUN_END, () => {
      const notRun = Math.max(0, planned - passed - testsFailed - skipped);
      const failed = testsFailed + Math.max(hooksFailed, notRun);
      // Registered after Spec's epilogue, so these are the last lines; written synchronously because --exit follows.
      if (notRun > 0) process.stdout.write(`\n${notRun} test(s) did not run because a hook failed; they are counted as failed\n`);
      process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    });
    // GANTRY_TEST_TIMES=<file>: each test file's wall and CPU time (its hooks and reaped child processes included),
    // slowest first — where a run's time goes.
    const timesPath = process.env.GANTRY_TEST_TIMES;
    if (timesPath) {
      const took = new Map();
      const add = (file, ms, cpuMs) => {
        const row = took.get(file) ?? { ms: 0, cpuMs: 0 };
        took.set(file, { ms: row.ms + ms, cpuMs: row.cpuMs === null || cpuMs === null ? null : row.cpuMs + cpuMs });
      };
      if (parallel) runner.on('gantry:file-time', ({ file, ms, cpuMs }) => add(file, ms, cpuMs));
      else fileTimes(runner, add);
      const began = Date.now();
      runner.once(EVENT_RUN_END, () => {
        const rows = [...took].sort((a, b) => b[1].ms - a[1].ms).map(([file, row]) => ({ file, ...row }));
        const totalMs = rows.reduce((sum, row) => sum + row.ms, 0);
        const totalCpuMs = rows.some((row) => row.cpuMs === null) ? null : rows.reduce((sum, row) => sum + row.cpuMs, 0);
        writeFileSync(timesPath, `${JSON.stringify({ totalMs, totalCpuMs, wallMs: Date.now() - began, files: rows }, null, 1)}\n`);
      });
    }
  }
}

module.exports = GantryReporter;
