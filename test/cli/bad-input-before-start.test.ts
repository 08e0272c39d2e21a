// Classes of the second round of issue 11 for browser check and gate: bad input found only after a browser started
// (`--timeout 0` → "timed out after 0 ms", exit 1; `--locale xx-!!` → Lighthouse's "Incorrect locale information",
// exit 3), hints that show a default the flag does not have, a JavaScript configuration that ends the gate with
// success (`process.exit(0)`, a silent pass), and exit codes in help and docs that disagree with the table.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { run } from '../../lib/cli/program.js';
import { gantryBin } from '../analysis/gantry.js';

async function gantry(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, callback) {
          append(String(chunk));
          callback();
        },
      }),
      { isTTY: false, columns: 100 },
    );
  const previousExitCode = process.exitCode;
  const code = await run(['node', 'gantry', ...args], {
    stdout: sink((t) => {
      stdout += t;
    }),
    stderr: sink((t) => {
      stderr += t;
    }),
  });
  process.exitCode = previousExitCode;
  return { code, stdout, stderr };
}

function inProcessOfItsOwn(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [gantryBin, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, GANTRY_LOG: 'warn' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Nothing may start: a missing driver or browser would be reported (exit 2 too) if the flag were not checked first.
const noDriver = ['--chromedriver-path', '/nonexistent/chromedriver', '--chrome-path', '/nonexistent/chromium'];
const noChrome = ['--chrome-path', '/nonexistent/chromium', '--engine', 'local'];

describe('bad input is refused before a browser starts (class: numbers and locales checked only by the engine)', function () {
  this.timeout(120_000);

  it('every numeric flag of browser check: 0 (where it means nothing), negative, non-integer, hex and huge are exit 2 naming the flag; the hint shows the real default', async () => {
    const defaults: Record<string, string> = { '--timeout': '30000', '--title-wait': '2000' };
    const bad: Array<[string, string]> = [
      ['--timeout', '0'],
      ['--timeout', '-5'],
      ['--timeout', '1.5'],
      ['--timeout', '0x10'],
      ['--timeout', '99999999999'],
      ['--title-wait', '-5'],
      ['--title-wait', '2.5'],
      ['--title-wait', '1e3'],
      ['--title-wait', '99999999999'],
    ];
    for (const [flag, value] of bad) {
      const result = await gantry('browser', 'check', 'http://127.0.0.1:9/', flag, value, ...noDriver);
      assert.equal(result.code, 2, `${flag} ${value}: ${result.stderr}`);
      assert.match(result.stderr, new RegExp(`^error: ${flag}: `, 'm'), `${flag} ${value}: ${result.stderr}`);
      assert.match(result.stderr, new RegExp(`^hint: write it as ${flag} ${defaults[flag]} \\(the default\\)`, 'm'), `${flag} ${value}: ${result.stderr}`);
    }
    const zeroWait = await gantry('browser', 'check', 'http://127.0.0.1:9/', '--title-wait', '0', ...noDriver);
    assert.doesNotMatch(zeroWait.stderr, /--title-wait/, 'a title wait of 0 (do not wait) is allowed');
  });

  it('the library refuses a page-load timeout of 0, and non-integer or huge waits, as a UsageError', async () => {
    const { validateBrowserCheckOptions } = await import('../../lib/automation/index.js');
    for (const options of [
      { pageLoadTimeoutMs: 0 },
      { pageLoadTimeoutMs: 1.5 },
      { pageLoadTimeoutMs: 1e12 },
      { titleWaitMs: -1 },
      { titleWaitMs: Number.NaN },
    ]) {
      assert.throws(
        () => validateBrowserCheckOptions({ url: 'http://127.0.0.1:9/', ...options }),
        (error: unknown) => (error as { exitCode?: number }).exitCode === 2,
        JSON.stringify(options),
      );
    }
  });

  it('every numeric flag and the locale of gate: exit 2 before the engine starts', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--runs', '0'], /runs must be a whole number from 1 to 25/],
      [['--runs', '-1'], /--runs: "-1" is not a whole number/],
      [['--runs', '1.5'], /--runs: "1\.5" is not a whole number/],
      [['--runs', '99999999999999999999'], /runs must be a whole number from 1 to 25/],
      [['--min', 'performance=-1'], /--min performance=-1/],
      [['--min', 'performance=1e999'], /is not a number/],
      [['--audit', 'largest-contentful-paint<=-5'], /below 0/],
      [['--audit', 'largest-contentful-paint<=0x10'], /"0x10" is not a number/],
      [['--audit', 'largest-contentful-paint<=Infinity'], /is not a number/],
      [['--locale', 'xx-!!', '--runs', '1'], /the locale "xx-!!" is not a language tag/],
      [['--locale', '', '--runs', '1'], /the locale "" is not a language tag/],
    ];
    for (const [args, message] of cases) {
      const result = await gantry('gate', 'http://127.0.0.1:9/', ...args, ...noChrome);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message, `${args.join(' ')}: ${result.stderr}`);
    }
    const { runGate } = await import('../../lib/analysis/index.js');
    await assert.rejects(
      runGate({ urls: ['http://127.0.0.1:9/'], locale: 'xx-!!', engine: { name: 'never', analyze: () => assert.fail('the engine ran') } as never }),
      /not a language tag/,
    );
  });
});

describe('a JavaScript configuration cannot end the gate with success (class: a silent pass)', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-lhci-exit-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('process.exit(0) while the configuration loads is exit 2 naming the file; process.exit is restored', async () => {
    await writeFile(join(dir, '.lighthouserc.js'), 'process.exit(0);\nmodule.exports = { ci: { collect: { url: ["http://127.0.0.1:9/"] } } };\n');
    const exit = process.exit;
    const result = await inProcessOfItsOwn(['gate', ...noChrome], dir);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /\.lighthouserc\.js: the configuration called process\.exit\(0\) while it was loaded/);
    const { loadLhciConfig } = await import('../../lib/analysis/index.js');
    assert.throws(() => loadLhciConfig(join(dir, '.lighthouserc.js')), /called process\.exit\(0\)/);
    assert.equal(process.exit, exit, 'process.exit is restored after loading');
  });

  it('process.exit(0) from a timer the configuration set is exit 2, not a pass', async () => {
    await writeFile(
      join(dir, '.lighthouserc.js'),
      'setTimeout(() => process.exit(0), 1);\nmodule.exports = { ci: { collect: { url: ["http://127.0.0.1:9/"], numberOfRuns: 1 } } };\n',
    );
    const result = await inProcessOfItsOwn(['gate', '--engine', 'local'], dir);
    assert.notEqual(result.code, 0, `${result.stdout}\n${result.stderr}`);
    if (result.code === 2) assert.match(result.stderr, /ended \(process\.exit\) before it had finished/);
  });
});

describe("exit codes in the gate's help and docs agree with the table (class: docs that disagree)", () => {
  it('a 4xx answer of the API (a bad key: 400) is 1; 5xx or no answer after retries is 3', async () => {
    const help = await gantry('gate', '--help');
    assert.match(help.stdout, /1 a check failed, or the API answered 4xx \(a bad API key: 400\)/);
    assert.match(help.stdout, /3 the engine failed after retries \(page unreachable, Chromium, API 5xx\/429 or no answer\)/);
    assert.doesNotMatch(help.stdout, /3 the engine failed \(page unreachable, API error\)/);
    const docs = await readFile(new URL('../../docs/gates.md', import.meta.url), 'utf8');
    assert.match(docs, /page-analysis API answered 4xx — a bad or missing API key \(400 `API key not\nvalid`\)/);
    assert.doesNotMatch(docs, /the API failed after its retries or refused the\s+request/);
  });
});
