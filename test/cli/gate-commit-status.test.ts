// `gantry gate … --commit-status <owner/repo>@<sha>` against the embedded v5 API (the gate) and the embedded platform
// API (the statuses): pending while the gate runs, then success, failure or error, read back from the platform; the
// flags are checked before the gate runs.
import assert from 'node:assert/strict';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { recordedLighthouseResult } from '../analysis/fixture.js';
import { gantry } from '../analysis/gantry.js';

const KEY = 'gate-status-key-81c2';

describe('gantry gate --commit-status (against the embedded v5 API and platform API)', function () {
  this.timeout(240_000);
  let api: PageanalysisServer;
  let platform: PlatformServer;
  let token: string;
  const env = () => ({ PAGEANALYSIS_BASE_URL: api.url, PAGEANALYSIS_API_KEY: KEY, PLATFORM_API_URL: platform.url, GANTRY_PLATFORM_TOKEN: token });
  const statuses = async (sha: string) => {
    const answer = await fetch(`${platform.url}/repos/gantry/demo/commits/${sha}/statuses`, { headers: { authorization: `Bearer ${token}` } });
    return ((await answer.json()) as Array<{ state: string; context: string; description: string; target_url: string | null }>).map((s) => ({
      state: s.state,
      context: s.context,
      description: s.description,
      targetUrl: s.target_url,
    }));
  };

  before(async () => {
    api = await startPageanalysisServer({ apiKeys: [KEY], analyser: recordedAnalyser(() => recordedLighthouseResult()) });
    platform = await startPlatformServer();
    token = platform.issueToken({ kind: 'personal', login: 'gate' });
  });
  after(async () => {
    await api?.stop();
    await platform?.stop();
  });

  it("a passing gate: pending while it runs, then success with context gantry/gate, the verdict's scores and the target URL", async () => {
    const sha = '1'.repeat(40);
    const run = await gantry(
      [
        'gate',
        'http://127.0.0.1:8080/',
        '--runs',
        '1',
        '--min',
        'performance=0.9',
        '--commit-status',
        `gantry/demo@${sha}`,
        '--status-target-url',
        'https://ci.example/runs/7',
      ],
      env(),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /commit status success set on gantry\/demo@1{40}: passed on 1 page: performance 1\.00/);
    const seen = await statuses(sha);
    assert.deepEqual(
      seen.map((s) => [s.state, s.context, s.targetUrl]),
      [
        ['success', 'gantry/gate', 'https://ci.example/runs/7'],
        ['pending', 'gantry/gate', 'https://ci.example/runs/7'],
      ],
      'newest first',
    );
    assert.match(seen[0]!.description, /^passed on 1 page: performance 1\.00/);
    assert.equal(seen[1]!.description, 'the gate is running');
  });

  it('a failing gate is failure (exit 1) with the failed checks, at most 140 characters, under --status-context', async () => {
    const sha = '2'.repeat(40);
    const audits = [
      'first-contentful-paint<=10',
      'largest-contentful-paint<=10',
      'speed-index<=10',
      'total-blocking-time<=0',
      'interactive<=10',
      'server-response-time<=0',
    ];
    const run = await gantry(
      [
        'gate',
        'http://127.0.0.1:8080/',
        '--runs',
        '1',
        '--min',
        'best-practices=1',
        ...audits.flatMap((a) => ['--audit', a]),
        '--commit-status',
        `gantry/demo@${sha}`,
        '--status-context',
        'perf/home',
      ],
      env(),
    );
    assert.equal(run.code, 1, run.stderr);
    const seen = await statuses(sha);
    assert.deepEqual(
      seen.map((s) => [s.state, s.context]),
      [
        ['failure', 'perf/home'],
        ['pending', 'perf/home'],
      ],
    );
    assert.match(seen[0]!.description, /^failed on 1 page: best-practices below 100, first-contentful-paint above 10/);
    assert.ok([...seen[0]!.description].length <= 140, seen[0]!.description);
  });

  it('an engine that fails posts error, and the gate keeps its own exit code', async () => {
    const sha = '3'.repeat(40);
    api.injectFault({ status: 400, message: 'API key expired. Please renew the API key.' });
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--runs', '1', '--commit-status', `gantry/demo@${sha}`], env());
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /API key expired/);
    const seen = await statuses(sha);
    assert.deepEqual(
      seen.map((s) => s.state),
      ['error', 'pending'],
    );
    assert.match(seen[0]!.description, /^could not analyse: page analysis API: answered 400: API key expired/);
    assert.ok(!seen[0]!.description.includes(KEY));
  });

  it('the flags are checked before the gate runs: exit 2, nothing analysed, nothing posted', async () => {
    const before = { analysed: api.requests.length, platform: platform.stats().requests };
    const sha = '4'.repeat(40);
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--commit-status', 'gantry/demo'], {}, /--commit-status: "gantry\/demo" is not <owner\/repo>@<sha>/],
      [['--commit-status', `gantry@${sha}`], {}, /is not <owner\/repo>@<sha>/],
      [['--commit-status', 'gantry/demo@main'], {}, /is not <owner\/repo>@<sha>/],
      [
        ['--commit-status', `gantry/demo@${sha}`, '--status-target-url', 'javascript:alert(1)'],
        {},
        /--status-target-url: "javascript:alert\(1\)" is not an http\(s\) URL/,
      ],
      [['--commit-status', `gantry/demo@${sha}`, '--status-context', ' '], {}, /--status-context is empty/],
      [['--status-context', 'x'], {}, /--status-context is for the commit status, and --commit-status is not given/],
      [['--commit-status', `gantry/demo@${sha}`], { PLATFORM_API_URL: '' }, /no platform API address/],
    ];
    const runs = await Promise.all(cases.map(([flags, extra]) => gantry(['gate', 'http://127.0.0.1:8080/', '--runs', '1', ...flags], { ...env(), ...extra })));
    runs.forEach((run, i) => {
      assert.equal(run.code, 2, `${cases[i]![0].join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, cases[i]![2]);
    });
    assert.equal(api.requests.length, before.analysed, 'nothing analysed');
    assert.equal(platform.stats().requests, before.platform, 'nothing posted');
  });
});
