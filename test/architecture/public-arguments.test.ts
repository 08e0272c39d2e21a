// The class "bad input to a public function is a TypeError from deep inside" (issue 11, item 13): every function
// and class the package exports (`gantry`, lib/index.ts) is called with arguments of the wrong type — nothing, null,
// a number, an empty object, a bare string, a pair — and may succeed or throw a GantryError (a UsageError naming the
// function and the argument), never a TypeError or a system error. Runs in a scratch folder: nothing may be written.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as gantry from '../../lib/index.js';

/** Exports that take anything by design (redaction, logging, predicates) or are error classes. */
const takesAnything = new Set([
  'createLogger',
  'getLogger',
  'setLogger',
  'redact',
  'redactHeaders',
  'redactUrl',
  'registerSecret',
  'isGantryError',
  'isWebDriverError',
  'exitCodeForStatus',
  'exitCodeForSystemError',
  'serviceErrors',
  'decideRetry',
  'nextLink',
  'parseRetryAfter',
  'definePolicy',
  'silentLogger',
  'version',
]);

const badArguments: unknown[][] = [[], [undefined], [null], [42], [{}], ['x'], ['x', 42], [{}, {}], [null, null, null]];

function settle<T>(value: T | Promise<T>, ms: number): Promise<T | 'still running'> {
  return Promise.race([Promise.resolve(value), new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), ms))]);
}

describe('public functions: arguments of the wrong type are a GantryError, never a TypeError', function () {
  this.timeout(120_000);
  let scratch: string;
  let cwd: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gantry-arguments-'));
    cwd = process.cwd();
    process.chdir(scratch);
  });
  after(async () => {
    process.chdir(cwd);
    await rm(scratch, { recursive: true, force: true });
  });

  it('every exported function and class (lib/index.ts), with nothing, null, a number, {}, a string and pairs', async () => {
    const exported = Object.entries(gantry).filter(([name, value]) => typeof value === 'function' && !takesAnything.has(name) && !/Error$/.test(name));
    assert.ok(exported.length > 30, `the package exports its functions (${exported.length})`);
    const wrong: string[] = [];
    const misnamed: string[] = [];
    for (const [name, fn] of exported) {
      for (const args of badArguments) {
        try {
          const isClass = /^[A-Z]/.test(name);
          let result: unknown = isClass ? new (fn as new (...a: unknown[]) => unknown)(...args) : (fn as (...a: unknown[]) => unknown)(...args);
          result = await settle(result, 2000);
          if (result && typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
            for await (const item of result as AsyncIterable<unknown>) void item;
          }
          const close = (result as { close?: () => unknown } | undefined)?.close;
          if (typeof close === 'function') await settle(close.call(result), 2000);
        } catch (error) {
          const call = `${name}(${args.map((a) => JSON.stringify(a) ?? 'undefined').join(', ')})`;
          if (!(error instanceof gantry.GantryError)) wrong.push(`${call} threw ${(error as Error)?.constructor?.name}: ${(error as Error)?.message}`);
          else if (error.code === 'INVALID_ARGUMENT') {
            // The class "an error blames a function the caller never called" (writeLockFile's bad lock said
            // `formatLockFile:`): a refused argument names the function that was called, or its class.
            const blamed = /^([\w.]+):/.exec(error.message)?.[1];
            if (blamed !== undefined && blamed !== name && !blamed.startsWith(`${name}.`)) misnamed.push(`${call} blames ${blamed}: ${error.message}`);
          }
        }
      }
    }
    assert.deepEqual(wrong, [], `${wrong.length} calls threw something other than a GantryError`);
    assert.deepEqual(misnamed, [], `${misnamed.length} refused arguments name a function other than the one called`);
    assert.deepEqual(await readdir(scratch), [], 'bad arguments wrote nothing');
  });

  it('the UsageError names the function and the argument, and says what it takes', () => {
    const error = (() => {
      try {
        gantry.createHttpClient(null as never);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(error instanceof gantry.UsageError);
    assert.equal(error.exitCode, 2);
    assert.match(error.message, /^createHttpClient: options must be an object \(or left out\), got null$/);
  });
});
