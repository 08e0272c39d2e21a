'use strict';
// Each test file's wall time and CPU time, its hooks included: from the start of its top-level suite to that suite's end.
// The CPU is the process's own (user + system) plus that of its children it has reaped, as /proc/self/stat counts them
// (utime, stime, cutime, cstime): a file's child processes — the built CLI, Pulumi's engine, Chromium — are most of
// what it spends. A process runs its files one after another, so the deltas are the file's; a child still running at
// the file's end (or reaped by nobody) is not counted. Not Linux: cpuMs is null.
const Mocha = require('mocha');
const { spawnSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const path = require('node:path');

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

let ticksPerSecond;

/** CPU milliseconds of this process and its reaped children so far, or null where /proc is not there. */
function cpuMs() {
  let stat;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces and parentheses): state is field 3, utime field 14.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
  ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
  return (ticks * 1000) / ticksPerSecond;
}

/** Calls `took(file, ms, cpuMs)` as each top-level suite of a file ends (a file with several calls it once per suite). */
function fileTimes(runner, took) {
  const started = new Map();
  runner.on(EVENT_SUITE_BEGIN, (suite) => {
    if (suite.file && suite.parent?.root) started.set(suite, { at: Date.now(), cpu: cpuMs() });
  });
  runner.on(EVENT_SUITE_END, (suite) => {
    const start = started.get(suite);
    if (!start) return;
    const cpu = cpuMs();
    took(path.relative(process.cwd(), suite.file), Date.now() - start.at, cpu === null || start.cpu === null ? null : Math.round(cpu - start.cpu));
    started.delete(suite);
  });
}

module.exports = { fileTimes };
