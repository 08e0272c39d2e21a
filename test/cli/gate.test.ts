/* eslint-disable @typescript-eslint/no-explicit-any -- tests read the --json summary freely */
// `gantry gate` as a person or a pipeline runs it (a separate process from source), against the embedded v5 API
// serving a recorded real run; the local engine's command runs are in test/analysis/local.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { recordedLighthouseResult } from '../analysis/fixture.js';
import { gantry, gantryBin, gantryIntoClosedPipe, repoRoot, type GantryRun } from '../analysis/gantry.js';

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
    const run = await gantry(
      ['gate', 'http://127.0.0.1:8080/', '--runs', '1', '--min', 'best-practices=1', '--audit', 'first-contentful-paint<=10', '--strategy', 'mobile'],
      env(),
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^best-practices score\s+96\s+>= 100\s+FAIL/m);
    assert.match(run.stdout, /^first-contentful-paint\s+\d+\s+<= 10\s+FAIL/m);
    assert.match(run.stderr, /^error: the gate failed: best-practices below 100, first-contentful-paint above 10$/m);
    assert.equal(new Map(api.requests.at(-1)!.query).get('strategy'), 'MOBILE');
  });

  it('exit 1 when the API refuses (a definite no: its 400 error shown), with the key masked', async () => {
    api.injectFault({ status: 400, message: 'API key expired. Please renew the API key.' });
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--runs', '1'], env());
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^error: page analysis API: GET http:\/\/127\.0\.0\.1:\d+\/pageanalysis\/v5\/runPageanalysis\?url=\S+&key=\[REDACTED\] answered 400: API key expired\. Please renew the API key\. \(badRequest\)$/m,
    );
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
    assert.deepEqual(summary.checks[0], {
      url: 'http://127.0.0.1:8080/',
      kind: 'category',
      name: 'performance',
      level: 'error',
      aggregation: 'pessimistic',
      operator: '>=',
      threshold: 0.9,
      value: 1,
      values: [1, 1],
      verdict: 'pass',
    });
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
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(gantryBin)} gate 'http://127.0.0.1:8080/?token=progress-token-5521' --runs 2`;
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: repoRoot, env: { ...process.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number];
    const result = { status: code, stdout };
    assert.equal(result.status, 0, result.stdout);
    assert.match(result.stdout, /gate \[[#.]+\] \d+% run 1 of 2 http:\/\/127\.0\.0\.1:8080\/\?token=\[RED/, 'the bar is cut at the terminal width');
    assert.ok(!result.stdout.includes('progress-token-5521'), result.stdout);
    // Updates closer than 80 ms apart are dropped (the API answers in milliseconds here); the last one always shows.
    assert.match(result.stdout, /gate \[#{24}\] 100%/);
  });

  it('usage errors exit 2 before any analysis (thresholds, runs, method, strategy, engine, URL, S3 location); a missing browser exits 3', async () => {
    const before = api.requests.length;
    const cases: Array<[string[], RegExp]> = [
      [['--min', 'speed=0.9'], /unknown category "speed"/],
      [['--min', 'performance=150'], /a fraction from 0 to 1 or a whole percentage from 2 to 100, not 150/],
      [
        ['--min', 'seo=1.01'],
        /--min seo=1\.01: a minimum score is a fraction from 0 to 1 or a whole percentage from 2 to 100, not 1\.01\nhint: write 90 % as seo=0\.9 or seo=90/,
      ],
      [['--audit', 'lcp=2500'], /not an audit threshold/],
      [['--runs', '0'], /runs must be a whole number from 1 to 25/],
      [['--runs', 'three'], /--runs: "three" is not a whole number/],
      [['--aggregate', 'mean'], /unknown method "mean"/],
      [['--strategy', 'tablet'], /neither mobile nor desktop/],
      [['--engine', 'cloud'], /unknown engine "cloud"/],
      [['--report-s3', 'bucket/prefix'], /is not an S3 location/],
      [['--min', 'performance=abc'], /"abc" is not a number\nhint: a score is 0–1 or a whole percentage: performance=0\.9 or performance=90/],
      [
        ['--audit', 'total-blocking-time<=fast'],
        /"fast" is not a number\nhint: the limit is a number in the audit's unit \(milliseconds for timings\): total-blocking-time<=2500/,
      ],
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
    assert.match(
      noBrowser.stderr,
      /error: the browser \/nonexistent\/chrome \(--chrome-path, gantry:chromePath\) does not exist\nhint: run `npm run setup` \(or `(sudo )?apt-get install -y chromium`\), or set CHROME_PATH .*; `gantry doctor` shows what else is missing\n/,
    );
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
    for (const flag of ['--min', '--audit', '--runs', '--aggregate', '--strategy', '--engine', '--locale', '--chrome-path', '--report', '--report-s3'])
      assert.match(run.stdout, new RegExp(`${flag}\\b`));
    assert.match(run.stdout, /Exit codes: 0 every check passed; 1 a check failed, or the API answered 4xx \(a bad API key: 400\); 2 usage error/);
  });

  it('unknown audits and categories are refused before running: exit 2 naming close matches and where the list is; a failing maximum is "above"', async () => {
    const before = api.requests.length;
    const cases: Array<[string[], RegExp]> = [
      [['--audit', 'lcp<=2500'], /^error: --audit lcp<=2500: unknown audit "lcp"; did you mean largest-contentful-paint\?\nhint: .*gantry gate --list-audits/m],
      [['--audit', 'largest-contentfull-paint<=2500'], /unknown audit "largest-contentfull-paint"; did you mean largest-contentful-paint/],
      [['--audit', 'interaction-to-next-paint<=200'], /measured only over user interactions/],
      [['--min', 'perfomance=0.9'], /unknown category "perfomance"; did you mean performance\?/],
    ];
    for (const [flags, message] of cases) {
      const run = await gantry(['gate', 'http://127.0.0.1:8080/', ...flags], env());
      assert.equal(run.code, 2, `${flags.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stdout, '');
    }
    assert.equal(api.requests.length, before, 'nothing was analysed');
    const list = await gantry(['gate', '--list-audits']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^largest-contentful-paint\s+performance\s+millisecond$/m);
    assert.match(list.stdout, /^document-title\s+accessibility, seo\s*$/m);
    // The direction of the words follows the threshold's: a maximum failing is above it, a minimum below.
    const run = await gantry(
      [
        'gate',
        'http://127.0.0.1:8080/',
        '--runs',
        '1',
        '--audit',
        'largest-contentful-paint<=100',
        '--audit',
        'cumulative-layout-shift>0',
        '--min',
        'best-practices=100',
      ],
      env(),
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /^error: the gate failed: best-practices below 100, largest-contentful-paint above 100, cumulative-layout-shift at or below 0$/m);
  });

  describe("Lighthouse CI configuration (--config lighthouserc.json, LHCI's documented examples)", () => {
    const fixture = (path: string) => `test/analysis/fixtures/lhci/${path}`;
    const gantryIn = (dir: string, args: string[]) =>
      new Promise<GantryRun>((resolve) => {
        const child = spawn(process.execPath, [gantryBin, ...args], {
          cwd: `${repoRoot}${fixture(dir)}`,
          env: { ...process.env, GANTRY_LOG: 'warn', ...env() },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
      });

    it("categories with levels: URL and runs from ci.collect, mobile as Lighthouse's default; a failing warn is shown and does not fail the gate", async () => {
      const before = api.requests.length;
      const run = await gantry(['gate', '--config', fixture('categories/lighthouserc.json'), '--json'], env());
      assert.equal(run.code, 0, run.stderr);
      const summary = JSON.parse(run.stdout);
      assert.equal(api.requests.length - before, 2, 'numberOfRuns: 2');
      assert.equal(new Map(api.requests.at(-1)!.query).get('strategy'), 'MOBILE');
      assert.equal(summary.status, 'pass');
      assert.deepEqual(
        summary.checks.map((c: any) => [c.name, c.level, c.aggregation, c.verdict]),
        [
          ['performance', 'warn', 'optimistic', 'pass'],
          ['accessibility', 'error', 'optimistic', 'pass'],
          ['best-practices', 'warn', 'optimistic', 'warn'],
        ],
      );
      assert.match(run.stderr, /^warning: below a warn-level threshold \(the gate does not fail on these\): best-practices below 100$/m);
      const table = await gantry(['gate', '--config', fixture('categories/lighthouserc.json')], env());
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /^Page analysis gate PASSED with warnings \(api engine, mobile, 2 runs, optimistic\)$/m);
      assert.match(table.stdout, /^best-practices score\s+96\s+>= 100\s+WARN/m);
    });

    it('command-line flags override the file: URL, --runs, --strategy, --aggregate, and a threshold on the same category', async () => {
      const before = api.requests.length;
      const run = await gantry(
        [
          'gate',
          'http://127.0.0.1:8080/other',
          '--config',
          fixture('categories/lighthouserc.json'),
          '--runs',
          '1',
          '--strategy',
          'desktop',
          '--aggregate',
          'pessimistic',
          '--min',
          'best-practices=0.9',
          '--json',
        ],
        env(),
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(api.requests.length - before, 1);
      const query = new Map(api.requests.at(-1)!.query);
      assert.equal(query.get('url'), 'http://127.0.0.1:8080/other');
      assert.equal(query.get('strategy'), 'DESKTOP');
      const summary = JSON.parse(run.stdout);
      assert.deepEqual(
        summary.checks.map((c: any) => [c.name, c.level, c.aggregation, c.threshold, c.verdict]),
        [
          ['performance', 'warn', 'pessimistic', 0.9, 'pass'],
          ['accessibility', 'error', 'pessimistic', 1, 'pass'],
          ['best-practices', 'error', 'pessimistic', 0.9, 'pass'],
        ],
      );
    });

    it("the lighthouse:no-pwa preset with the docs' overrides: every audit asserted, off skipped (also unknown ids), errors fail the gate and warnings do not", async () => {
      const run = await gantry(['gate', '--config', fixture('no-pwa/lighthouserc.json'), '--json'], env());
      assert.equal(run.code, 1, run.stderr);
      const summary = JSON.parse(run.stdout);
      const byName = new Map(summary.checks.map((c: any) => [c.name, c]));
      assert.ok(summary.checks.length > 100, `${summary.checks.length} checks`);
      assert.deepEqual(
        [...byName.keys()].filter((name) => /^(offscreen-images|color-contrast|is-on-https|viewport|uses-http2|tap-targets)(\.|$)/.test(String(name))),
        [],
      );
      assert.deepEqual(
        summary.checks
          .filter((c: any) => c.verdict === 'fail')
          .map((c: any) => c.name)
          .sort(),
        ['bf-cache.score', 'errors-in-console.score'],
      );
      assert.deepEqual(
        summary.checks.filter((c: any) => c.name === 'dom-size').map((c: any) => [c.level, c.operator, c.threshold, c.verdict]),
        [['error', '<=', 3000, 'pass']],
      );
      assert.equal((byName.get('unused-javascript.length') as any)?.verdict, 'pass');
      assert.equal((byName.get('first-contentful-paint.score') as any)?.level, 'warn');
      assert.deepEqual(summary.categories, ['performance', 'accessibility', 'best-practices', 'seo']);
      assert.match(
        run.stderr,
        /^error: the gate failed: (bf-cache\.score below 0\.9, errors-in-console\.score below 0\.9|errors-in-console\.score below 0\.9, bf-cache\.score below 0\.9)$/m,
      );
    });

    it('properties and aggregation methods: maxNumericValue, minScore, maxLength, per-assertion aggregationMethod, onlyCategories; .lighthouserc.json found without a URL', async () => {
      const before = api.requests.length;
      const run = await gantryIn('properties', ['gate', '--json']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(api.requests.length - before, 6, 'two URLs, three runs each');
      const categories = api.requests.slice(before).map((r) => new Map(r.query).get('category'));
      assert.ok(
        categories.every((c) => c === 'PERFORMANCE' || c === 'SEO'),
        String(categories),
      );
      const summary = JSON.parse(run.stdout);
      assert.deepEqual(
        summary.checks.slice(0, 5).map((c: any) => [c.name, c.level, c.aggregation, c.operator, c.threshold]),
        [
          ['first-contentful-paint', 'warn', 'median-run', '<=', 4000],
          ['largest-contentful-paint', 'error', 'pessimistic', '<=', 2500],
          ['meta-description.score', 'error', 'median-run', '>=', 0.9],
          ['uses-responsive-images.length', 'error', 'median-run', '<=', 0],
          ['speed-index.score', 'error', 'median', '>=', 0.8],
        ],
      );
    });

    it('.lighthouserc.js as an ES module and lighthouserc.cjs as CommonJS are loaded; desktop from settings.preset', async () => {
      const esm = await gantryIn('js-esm', ['gate', '--json']);
      assert.equal(esm.code, 0, esm.stderr);
      assert.equal(new Map(api.requests.at(-1)!.query).get('strategy'), 'DESKTOP');
      assert.deepEqual(
        JSON.parse(esm.stdout).checks.map((c: any) => c.name),
        ['performance', 'total-blocking-time'],
      );
      const cjs = await gantryIn('cjs', ['gate']);
      assert.equal(cjs.code, 1, cjs.stderr);
      assert.match(cjs.stderr, /^error: the gate failed: first-contentful-paint above 10$/m);
    });

    it('unknown keys warn and do not fail; malformed JSON, YAML, unsupported assertions and an unknown audit are usage errors (exit 2) naming the file', async () => {
      const unknown = await gantry(['gate', '--config', fixture('unknown-keys/lighthouserc.json')], env());
      assert.equal(unknown.code, 0, unknown.stderr);
      for (const key of [
        'extra',
        'ci.collect.colect',
        'ci.collect.startServerCommand',
        'ci.collect.settings.skipAudits',
        'ci.collect.settings.throttlingMethod',
        'ci.upload',
        'minScroe',
      ]) {
        assert.match(unknown.stderr, new RegExp(`^warning: .*lighthouserc\\.json: .*${key.replaceAll('.', '\\.')}`, 'm'), key);
      }
      const before = api.requests.length;
      const malformed = await gantry(['gate', '--config', fixture('malformed/lighthouserc.json')], env());
      assert.equal(malformed.code, 2, malformed.stderr);
      assert.match(
        malformed.stderr,
        /^error: test\/analysis\/fixtures\/lhci\/malformed\/lighthouserc\.json:12:1: not valid JSON: Expected ',' or '}' after property value$/m,
      );
      const comma = await gantry(['gate', '--config', fixture('malformed/trailing-comma.json')], env());
      assert.equal(comma.code, 2, comma.stderr);
      assert.match(comma.stderr, /trailing-comma\.json:6:5: not valid JSON/);
      const yaml = await gantry(['gate', '--config', fixture('yaml/lighthouserc.yml')], env());
      assert.equal(yaml.code, 2, yaml.stderr);
      assert.match(yaml.stderr, /YAML configuration is not supported/);
      const missing = await gantry(['gate', '--config', fixture('nowhere/lighthouserc.json')], env());
      assert.equal(missing.code, 2, missing.stderr);
      assert.equal(api.requests.length, before, 'nothing was analysed');
    });

    it('closed pipe: `gantry gate … | head -1` ends quietly with its own exit code', async () => {
      const run = await gantryIntoClosedPipe(['gate', 'http://127.0.0.1:8080/', '--runs', '1', '--json'], env());
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stderr, /EPIPE|^\s+at /m);
      const failing = await gantryIntoClosedPipe(['gate', 'http://127.0.0.1:8080/', '--runs', '1', '--min', 'best-practices=1'], env());
      assert.equal(failing.code, 1, failing.stderr);
      assert.match(failing.stderr, /^error: the gate failed: best-practices below 100$/m);
      assert.doesNotMatch(failing.stderr, /EPIPE|^\s+at /m);
    });
  });
});
