// The logger's level from GANTRY_LOG: a value that is no level is reported once, on the logger's own output.
import assert from 'node:assert/strict';
import { createLogger, teeLogger } from '../lib/log.js';
import { gantry } from './analysis/gantry.js';

describe('log: GANTRY_LOG', () => {
  const saved = process.env.GANTRY_LOG;
  afterEach(() => {
    if (saved === undefined) delete process.env.GANTRY_LOG;
    else process.env.GANTRY_LOG = saved;
  });

  function linesWith(value: string | undefined, times = 1): string[] {
    if (value === undefined) delete process.env.GANTRY_LOG;
    else process.env.GANTRY_LOG = value;
    const lines: string[] = [];
    for (let i = 0; i < times; i += 1) {
      const logger = createLogger({ write: (line) => lines.push(line) });
      logger.info('info line');
      logger.warn('warn line');
    }
    return lines;
  }

  it('an unknown level warns once naming the accepted levels, then logs at warn', () => {
    const lines = linesWith('loud', 3);
    assert.deepEqual(
      lines.filter((l) => l.includes('GANTRY_LOG')),
      ['warn: GANTRY_LOG=loud is not a log level; using warn (the levels are debug, info, warn, error, silent)'],
    );
    assert.deepEqual(
      lines.filter((l) => !l.includes('GANTRY_LOG')),
      ['warn: warn line', 'warn: warn line', 'warn: warn line'],
    );
  });

  it('a name from Object.prototype is no level either (it once disabled all logging)', () => {
    const lines = linesWith('constructor');
    assert.match(lines[0], /GANTRY_LOG=constructor is not a log level/);
    assert.deepEqual(lines.slice(1), ['warn: warn line']);
  });

  it('known levels, in any case, and an empty or absent value, say nothing about GANTRY_LOG', () => {
    assert.deepEqual(linesWith('INFO'), ['info line', 'warn: warn line']);
    assert.deepEqual(linesWith('silent'), []);
    assert.deepEqual(linesWith(''), ['warn: warn line']);
    assert.deepEqual(linesWith(undefined), ['warn: warn line']);
  });

  it('the command warns on stderr, once, and still works', async function () {
    this.timeout(60_000);
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--runs', 'x'], { GANTRY_LOG: 'loud' });
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stderr.match(/GANTRY_LOG=loud is not a log level/g)?.length, 1, run.stderr);
    assert.match(run.stderr, /^error: --runs: "x" is not a whole number$/m);
  });
});

describe('log: teeLogger', () => {
  it('LAYER-LOG: each line goes to every logger given, at its own level, in order', () => {
    const heard: string[] = [];
    const recorder = (name: string) => createLogger({ level: 'info', write: (line) => heard.push(`${name} ${line}`) });
    const logger = teeLogger(recorder('a'), recorder('b'));
    logger.debug('quiet');
    logger.warn('loud');
    assert.equal(heard.length, 2, heard.join('\n'));
    assert.match(heard[0]!, /^a .*loud/);
    assert.match(heard[1]!, /^b .*loud/);
  });
});
