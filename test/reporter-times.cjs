'use strict';
// Each test file's wall time, its hooks included: from the start of its top-level suite to that suite's end.
const Mocha = require('mocha');
const path = require('node:path');

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

/** Calls `took(file, ms)` as each top-level suite of a file ends (a file with several calls it once per suite). */
function fileTimes(runner, took) {
  const started = new Map();
  runner.on(EVENT_SUITE_BEGIN, (suite) => {
    if (suite.file && suite.parent?.root) started.set(suite, Date.now());
  });
  runner.on(EVENT_SUITE_END, (suite) => {
    if (!started.has(suite)) return;
    took(path.relative(process.cwd(), suite.file), Date.now() - started.get(suite));
    started.delete(suite);
  });
}

module.exports = { fileTimes };
