'use strict';
// The reporter of a mocha --parallel worker: mocha's own buffered one (each file's events are sent to the main process,
// where test/reporter.cjs counts them), plus two events only the worker can know. `gantry:planned`: the file's test
// count, so that tests a failing `before` hook stopped still count as failed. `gantry:file-time`: the file's wall and CPU
// time, since the main process receives a file's events all at once, after the file ended.
const Mocha = require('mocha');
const ParallelBuffered = require('mocha/lib/nodejs/reporters/parallel-buffered');
const { SerializableEvent } = require('mocha/lib/nodejs/serializer');
const { fileTimes } = require('./reporter-times.cjs');

const { EVENT_RUN_BEGIN } = Mocha.Runner.constants;

class GantryWorkerReporter extends ParallelBuffered {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_BEGIN, () => {
      this.events.push(SerializableEvent.create('gantry:planned', { total: runner.total }));
    });
    fileTimes(runner, (file, ms, cpuMs) => this.events.push(SerializableEvent.create('gantry:file-time', { file, ms, cpuMs })));
  }
}

module.exports = GantryWorkerReporter;
