'use strict';
// Mocha's spec output, closed by the one line CI reads: "N passed, N failed, N skipped".
// A failing hook stops the tests it guards: those tests are counted as failed (they did not pass), so a broken
// `before` can never shrink the run to a smaller green one.
const Mocha = require('mocha');

const { EVENT_RUN_BEGIN, EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;

class GantryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    let planned = 0;
    let passed = 0;
    let testsFailed = 0;
    let hooksFailed = 0;
    let skipped = 0;
    runner.once(EVENT_RUN_BEGIN, () => { planned = runner.total; });
    runner.on(EVENT_TEST_PASS, () => { passed += 1; });
    runner.on(EVENT_TEST_FAIL, (runnable) => {
      if (runnable.type === 'hook') hooksFailed += 1;
      else testsFailed += 1;
    });
    runner.on(EVENT_TEST_PENDING, () => { skipped += 1; });
    runner.once(EVENT_RUN_END, () => {
      const notRun = Math.max(0, planned - passed - testsFailed - skipped);
      const failed = testsFailed + Math.max(hooksFailed, notRun);
      // Registered after Spec's epilogue, so these are the last lines; written synchronously because --exit follows.
      if (notRun > 0) process.stdout.write(`\n${notRun} test(s) did not run because a hook failed; they are counted as failed\n`);
      process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    });
  }
}

module.exports = GantryReporter;
