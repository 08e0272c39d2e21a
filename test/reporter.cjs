'use strict';
// Mocha's spec output, closed by the one line CI reads: "N passed, N failed, N skipped".
// A failing hook stops the tests it guards: those tests are counted as failed (they did not pass), so a broken
// `before` can never shrink the run to a smaller green one.
const Mocha = require('mocha');

const { writeFileSync } = require('node:fs');
const path = require('node:path');

const { EVENT_RUN_BEGIN, EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

class GantryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    let planned = 0;
    let passed = 0;
    let testsFailed = 0;
    let hooksFailed = 0;
    let skipped = 0;
    runner.once(EVENT_RUN_BEGIN, () => {
      planned = runner.total;
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
    // GANTRY_TEST_TIMES=<file>: each test file's wall time (its hooks included), slowest first — where a run's time goes.
    const timesPath = process.env.GANTRY_TEST_TIMES;
    if (timesPath) {
      const started = new Map();
      const took = new Map();
      runner.on(EVENT_SUITE_BEGIN, (suite) => {
        if (suite.file && suite.parent?.root) started.set(suite, Date.now());
      });
      runner.on(EVENT_SUITE_END, (suite) => {
        if (!started.has(suite)) return;
        const file = path.relative(process.cwd(), suite.file);
        took.set(file, (took.get(file) ?? 0) + Date.now() - started.get(suite));
      });
      runner.once(EVENT_RUN_END, () => {
        const rows = [...took].sort((a, b) => b[1] - a[1]).map(([file, ms]) => ({ file, ms }));
        writeFileSync(timesPath, `${JSON.stringify({ totalMs: rows.reduce((sum, row) => sum + row.ms, 0), files: rows }, null, 1)}\n`);
      });
    }
  }
}

module.exports = GantryReporter;
