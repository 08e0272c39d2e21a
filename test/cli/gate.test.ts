// `gantry gate` as a person or a pipeline runs it (a separate process from source), against the embedded v5 API
// serving a recorded real run; the local engine's command runs are in test/analysis/local.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../lib/devserver/pageanalysis/index.js';
import { recordedLighthouseResult } from '../analysis/fixture.js';
import { gantry, repoRoot } from '../analysis/gantry.js';

const KEY = 'cli-key-4d2a9c7e51';

describe('gantry gate (api engine against the embedded v5 API)', function () {
  // Each case starts the command from source (about 1.5 s idle, several times that on a loaded machine).
  this.timeout(240_000);
  let api: PageanalysisServer;
  const env = () => ({ PAGEANALYSIS_BASE_URL: api.url, PAGEANALYSIS_API_KEY: KEY });

  before(async () => {
    api = await startPageanalysisServer({ apiKeys: [KEY], analyser: recordedAnalyser(() => recordedLighthouseResult()) });
  });
  after(async () => {
    await api?.stop();
  });

  it('passes: exit 0, the table on stdout, 3 runs by default, the api engine chosen by PAGEANALYSIS_BASE_URL', async () => {
    const before = api.requests.length;
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--min', 'performance=0.9,seo=90', '--audit', 'cumulative-layout-shift<0.1'], env());
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Page analysis gate PASSED \(api engine, desktop, 3 runs, median-run\)$/m);
    assert.match(run.stdout, /^performance score\s+100\s+>= 90\s+PASS\s+100 100 100$/m);
    assert.match(run.stdout, /^seo score\s+100\s+>= 90\s+PASS/m);
    assert.match(run.stdout, /^cumulative-layout-shift\s+0\s+< 0\.1\s+PASS/m);
    assert.equal(api.requests.length - before, 3);
    assert.equal(run.stderr, '', 'no progress bar when stderr is not a terminal');
  });

  it('fails: exit 1 with the failing checks named on stderr, the table still on stdout', async () => {
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--runs', '1', '--min', 'best-practices=1', '--audit', 'first-contentful-paint<=10', '--strategy', 'mobile'], env());
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^best-practices score\s+96\s+>= 100\s+FAIL/m);
    assert.match(run.stdout, /^first-contentful-paint\s+\d+\s+<= 10\s+FAIL/m);
    assert.match(run.stderr, /^error: the gate failed: best-practices, first-contentful-paint below threshold$/m);
    assert.equal(new Map(api.requests.at(-1)!.query).get('strategy'), 'MOBILE');
  });

  it("exit 3 when the API refuses (its 400 error shown), with the key masked", async () => {
    api.injectFault({ status: 400, message: 'API key expired. Please renew the API key.' });
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--runs', '1'], env());
    assert.equal(run.code, 3);
    assert.match(run.stderr, /^error: page analysis API: GET http:\/\/127\.0\.0\.1:\d+\/pageanalysis\/v5\/runPageanalysis\?url=\S+&key=\[REDACTED\] answered 400: API key expired\. Please renew the API key\. \(badRequest\)$/m);
    assert.match(run.stderr, /^hint: the API rejected the request/m);
    assert.doesNotMatch(run.stdout + run.stderr, new RegExp(KEY));
  });

  it('--json prints the summary with scores, checks and runs, and no per-run documents', async () => {
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--runs', '2', '--aggregate', 'pessimistic', '--json'], env());
    assert.equal(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.status, 'pass');
    assert.equal(summary.aggregation, 'pessimistic');
    assert.deepEqual(summary.categories, ['performance']);
    assert.equal(summary.urls[0].runs.length, 2);
    assert.deepEqual(summary.urls[0].scores, { performance: 1 });
    assert.equal(summary.urls[0].responses, undefined);
    assert.deepEqual(summary.checks[0], { url: 'http://127.0.0.1:8080/', kind: 'category', name: 'performance', operator: '>=', threshold: 0.9, value: 1, values: [1, 1], verdict: 'pass' });
  });

  it('--json shows the page URL with its credentials masked, as browser check does; the API got it whole', async () => {
    const url = 'http://127.0.0.1:8080/account?token=cli-url-token-93ae&tab=orders';
    const run = await gantry(['gate', url, '--runs', '1', '--json'], env());
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stdout.includes('cli-url-token-93ae'), run.stdout);
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.urls[0].url, 'http://127.0.0.1:8080/account?token=[REDACTED]&tab=orders');
    assert.equal(summary.urls[0].finalUrl, summary.urls[0].url);
    assert.equal(summary.checks[0].url, summary.urls[0].url);
    assert.equal(new Map(api.requests.at(-1)!.query).get('url'), url);
  });

  it('shows progress "run k of n" on a terminal', async () => {
    // `script` gives the command a pseudo-terminal, as a person at a shell would have. Asynchronous: the API
    // server answering it lives in this process.
    // The page URL carries a credential: the bar shows it masked, as the logs do.
    const command = `${JSON.stringify(process.execPath)} --import tsx lib/cli/main.ts gate 'http://127.0.0.1:8080/?token=progress-token-5521' --runs 2`;
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: repoRoot, env: { ...process.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number];
    const result = { status: code, stdout };
    assert.equal(result.status, 0, result.stdout);
    assert.match(result.stdout, /gate \[[#.]+\] \d+% run 1 of 2 http:\/\/127\.0\.0\.1:8080\/\?token=\[RED/, "the bar is cut at the terminal width");
    assert.ok(!result.stdout.includes('progress-token-5521'), result.stdout);
    // Updates closer than 80 ms apart are dropped (the API answers in milliseconds here); the last one always shows.
    assert.match(result.stdout, /gate \[#{24}\] 100%/);
  });

  it('usage errors exit 2 before any analysis (thresholds, runs, method, strategy, engine, URL, S3 location); a missing browser exits 3', async () => {
    const before = api.requests.length;
    const cases: Array<[string[], RegExp]> = [
      [['--min', 'speed=0.9'], /unknown category "speed"/],
      [['--min', 'performance=150'], /a fraction from 0 to 1 or a whole percentage from 2 to 100, not 150/],
      [['--min', 'seo=1.01'], /--min seo=1\.01: a minimum score is a fraction from 0 to 1 or a whole percentage from 2 to 100, not 1\.01\nhint: write 90 % as seo=0\.9 or seo=90/],
      [['--audit', 'lcp=2500'], /not an audit threshold/],
      [['--runs', '0'], /runs must be a whole number from 1 to 25/],
      [['--runs', 'three'], /--runs: "three" is not a whole number/],
      [['--aggregate', 'mean'], /unknown method "mean"/],
      [['--strategy', 'tablet'], /neither mobile nor desktop/],
      [['--engine', 'cloud'], /unknown engine "cloud"/],
      [['--report-s3', 'bucket/prefix'], /is not an S3 location/],
      [['--min', 'performance=abc'], /"abc" is not a number\nhint: a score is 0–1 or a whole percentage: performance=0\.9 or performance=90/],
      [['--audit', 'total-blocking-time<=fast'], /"fast" is not a number\nhint: the limit is a number in the audit's unit \(milliseconds for timings\): total-blocking-time<=2500/],
    ];
    const hints: Record<string, RegExp> = {
      '--aggregate': /hint: use one of median-run, median, optimistic, pessimistic/,
      '--strategy': /hint: use --strategy desktop \(the default\) or --strategy mobile/,
      '--engine': /hint: use --engine local \(Lighthouse here\) or --engine api/,
      '--runs': /hint: \S/,
    };
    for (const [flags, message] of cases) {
      const run = await gantry(['gate', 'http://127.0.0.1:8080/', ...flags], env());
      assert.equal(run.code, 2, `${flags.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.match(run.stderr, hints[flags[0]] ?? /\nhint: \S/, `every usage error says what would be accepted: ${run.stderr}`);
      assert.equal(run.stdout, '');
    }
    const notUrl = await gantry(['gate', 'example.com'], env());
    assert.equal(notUrl.code, 2);
    assert.match(notUrl.stderr, /"example.com" is not a URL/);
    const noBrowser = await gantry(['gate', 'http://127.0.0.1:8080/', '--engine', 'local', '--chrome-path', '/nonexistent/chrome']);
    assert.equal(noBrowser.code, 2);
    assert.match(noBrowser.stderr, /error: the browser \/nonexistent\/chrome \(--chrome-path, gantry:chromePath\) does not exist\nhint: run `npm run setup` \(or `(sudo )?apt-get install -y chromium`\), or set CHROME_PATH .*; `gantry doctor` shows what else is missing\n/);
    const badEnv = await gantry(['gate', 'http://127.0.0.1:8080/', '--engine', 'local'], { CHROME_PATH: '/nonexistent/env-chrome' });
    assert.equal(badEnv.code, 2);
    assert.match(badEnv.stderr, /error: CHROME_PATH points at \/nonexistent\/env-chrome, which does not exist/);
    const noBase = await gantry(['gate', 'http://127.0.0.1:8080/', '--engine', 'api'], { PAGEANALYSIS_BASE_URL: '' });
    assert.equal(noBase.code, 2);
    assert.match(noBase.stderr, /needs the page analysis base URL/);
    assert.equal(api.requests.length, before);
  });

  it('--help documents the flags and the exit codes', async () => {
    const run = await gantry(['gate', '--help']);
    assert.equal(run.code, 0);
    for (const flag of ['--min', '--audit', '--runs', '--aggregate', '--strategy', '--engine', '--locale', '--chrome-path', '--report', '--report-s3']) assert.match(run.stdout, new RegExp(`${flag}\\b`));
    assert.match(run.stdout, /Exit codes: 0 every check passed, 1 a check failed, 2 usage error, 3 the engine failed/);
  });
});
