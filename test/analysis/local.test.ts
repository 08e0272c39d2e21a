// The local engine for real: Lighthouse 12 driving Debian's Chromium against pages served on 127.0.0.1.
// A run takes 7–14 s and about 1 GB, so each page is analysed once (runs: 1) in a before() hook and several tests
// read the same outcome; aggregation over N runs is covered in gate-evaluation.test.ts and remote.test.ts.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BrowserLaunchError,
  createLocalEngine,
  LocalEngineError,
  liveBrowserCount,
  parsePageanalysisResponse,
  runGate,
  type GateResult,
} from '../../lib/analysis/index.js';
import { offlineChromeFlags } from '../../lib/browser/index.js';
import { startTestSite, type TestSite } from './site.js';
import { gantry, startGantry, type GantryRun } from './gantry.js';
import { commandLinesMentioning, descendsFrom, processesMentioning } from '../browser/processes.js';

function chromeProfiles(): Set<string> {
  return new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('gantry-chrome-')));
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A credential in the heavy page's URL, which no report may carry. */
const HEAVY_TOKEN = 'heavy-page-token-4417c';

describe('analysis: the local engine (Lighthouse in Chromium) against pages on 127.0.0.1', function () {
  this.timeout(240_000);
  let site: TestSite;
  let reportDir: string;
  let heavyReportDir: string;
  let profilesBefore: Set<string>;
  let light: GantryRun;
  let heavy: GantryRun;
  let notFound: GateResult;
  let unreachable: GantryRun;

  before(async function () {
    this.timeout(600_000);
    profilesBefore = chromeProfiles();
    site = await startTestSite();
    reportDir = await mkdtemp(join(tmpdir(), 'gantry-gate-report-'));
    heavyReportDir = await mkdtemp(join(tmpdir(), 'gantry-gate-report-'));
    // One run each, one at a time: the machine is shared. The light page runs the desktop preset (no CPU
    // slowdown, so a busy shared machine cannot push it under 90); the heavy page fails under either preset and
    // runs the mobile one.
    light = await gantry([
      'gate',
      `${site.url}/`,
      '--runs',
      '1',
      '--min',
      'performance=0.9,accessibility=90,seo=0.9',
      '--audit',
      'largest-contentful-paint<=2500',
      '--report',
      reportDir,
    ]);
    heavy = await gantry([
      'gate',
      `${site.url}/heavy?token=${HEAVY_TOKEN}`,
      '--runs',
      '1',
      '--strategy',
      'mobile',
      '--min',
      'performance=0.9',
      '--audit',
      'total-blocking-time<=200',
      '--json',
      '--report',
      heavyReportDir,
    ]);
    notFound = await runGate({
      urls: [`${site.url}/missing`],
      runs: 3,
      engine: createLocalEngine(),
      thresholds: [{ kind: 'category', category: 'performance', min: 0 }],
    });
    unreachable = await gantry(['gate', `http://127.0.0.1:${await closedPort()}/`, '--runs', '3', '--min', 'performance=0']);
  });

  after(async () => {
    await site?.stop();
    for (const dir of [reportDir, heavyReportDir]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a light page passes: exit 0 and a table with every check PASS', () => {
    assert.equal(light.code, 0, light.stderr);
    assert.match(light.stdout, /^Page analysis gate PASSED \(local engine, desktop, 1 run, median-run\)$/m);
    for (const name of ['performance score', 'accessibility score', 'seo score', 'largest-contentful-paint']) {
      assert.match(light.stdout, new RegExp(`^${name}\\s+\\d+\\s+(>=|<=) \\d+\\s+PASS`, 'm'));
    }
  });

  it('PAG-BR-CONFIG-SETTINGS / PAG-RESP-ANALYSIS-UTC-TIMESTAMP: the run is saved as a v5 response with the preset asked (desktop, mobile), and Lighthouse HTML beside it', () => {
    const summary = JSON.parse(readFileSync(join(reportDir, 'gate.json'), 'utf8'));
    assert.equal(summary.status, 'pass');
    assert.equal(summary.engine, 'local');
    const files: string[] = summary.urls[0].reportFiles;
    const reportJson = files.find((f) => f.endsWith('/report.json'));
    const reportHtml = files.find((f) => f.endsWith('/report.html'));
    assert.ok(reportJson && reportHtml, files.join(', '));
    const response = parsePageanalysisResponse(JSON.parse(readFileSync(reportJson, 'utf8')));
    assert.equal(response.kind, 'pageanalysis#result');
    assert.equal(response.id, `${site.url}/`);
    assert.ok(!Number.isNaN(Date.parse(response.analysisUTCTimestamp ?? '')));
    assert.equal(response.beaconResult?.configSettings?.formFactor, 'desktop');
    assert.deepEqual(response.beaconResult?.configSettings?.onlyCategories, ['performance', 'accessibility', 'seo']);
    assert.match(response.beaconResult?.beaconVersion ?? '', /^12\./);
    assert.deepEqual(response.beaconResult?.runWarnings, []);
    assert.equal(response.loadingExperience, undefined);
    const html = readFileSync(reportHtml, 'utf8');
    assert.match(html, /<!doctype html>/i);
    assert.match(html, /<title>Lighthouse Report<\/title>/);
    const heavySummary = JSON.parse(readFileSync(join(heavyReportDir, 'gate.json'), 'utf8'));
    const heavyReport = JSON.parse(
      readFileSync(
        heavySummary.urls[0].reportFiles.find((f: string) => f.endsWith('/report.json')),
        'utf8',
      ),
    );
    assert.equal(heavyReport.beaconResult.configSettings.formFactor, 'mobile');
    assert.equal(heavyReport.beaconResult.configSettings.screenEmulation.mobile, true);
  });

  it('a page URL with a credential: the page is analysed, and no report (JSON or Lighthouse HTML) nor the output carries it', () => {
    assert.ok(site.hits.includes('/heavy'), 'the page was analysed');
    const summary = JSON.parse(heavy.stdout);
    assert.equal(summary.urls[0].url, `${site.url}/heavy?token=[REDACTED]`);
    assert.ok(!heavy.stdout.includes(HEAVY_TOKEN) && !heavy.stderr.includes(HEAVY_TOKEN));
    const files = readdirSync(heavyReportDir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    assert.deepEqual(files.map((f) => f.name).sort(), ['gate.json', 'report.html', 'report.json', 'run-1.html', 'run-1.json']);
    for (const file of files) {
      const text = readFileSync(join(file.parentPath, file.name), 'utf8');
      assert.ok(!text.includes(HEAVY_TOKEN), `${file.name} carries the page URL's token`);
    }
    const report = JSON.parse(readFileSync(join(files.find((f) => f.name === 'report.json')!.parentPath, 'report.json'), 'utf8'));
    assert.equal(report.beaconResult.finalDisplayedUrl, `${site.url}/heavy?token=[REDACTED]`);
  });

  it('a heavy page fails: exit 1, performance below 0.9 and total blocking time above 200 ms, with reasons', () => {
    assert.equal(heavy.code, 1, heavy.stderr);
    const summary = JSON.parse(heavy.stdout);
    assert.equal(summary.status, 'fail');
    assert.equal(summary.strategy, 'MOBILE');
    const [score, tbt] = summary.checks;
    assert.equal(score.name, 'performance');
    assert.equal(score.verdict, 'fail');
    assert.ok(score.value < 0.9, `performance ${score.value}`);
    assert.equal(tbt.name, 'total-blocking-time');
    assert.equal(tbt.verdict, 'fail');
    assert.ok(tbt.value > 200, `TBT ${tbt.value}`);
    assert.match(heavy.stderr, /error: the gate failed: performance below 90, total-blocking-time above 200/);
  });

  it('PAG-BR-RUNTIME-ERROR: a 404 page gives ERRORED_DOCUMENT_REQUEST, every score null, and the gate errors after one run', () => {
    assert.equal(notFound.status, 'error');
    assert.equal(notFound.urls[0].responses.length, 1);
    const response = notFound.urls[0].responses[0];
    assert.equal(response.beaconResult?.runtimeError?.code, 'ERRORED_DOCUMENT_REQUEST');
    assert.match(response.beaconResult?.runtimeError?.message ?? '', /Status code: 404/);
    assert.equal(response.beaconResult?.categories?.performance?.score, null);
    assert.equal(notFound.checks[0].verdict, 'error');
    assert.match(notFound.checks[0].reason ?? '', /ERRORED_DOCUMENT_REQUEST/);
  });

  it('a port where nothing listens is an engine error (exit 3), never a pass', () => {
    assert.equal(unreachable.code, 3, unreachable.stderr);
    assert.match(unreachable.stdout, /Page analysis gate ERROR/);
    assert.match(unreachable.stderr, /error: the page could not be analysed: run 1: the engine reported CHROME_INTERSTITIAL_ERROR/);
  });

  it('every browser was shut down and every temporary profile removed', () => {
    assert.equal(liveBrowserCount(), 0);
    const leaked = [...chromeProfiles()].filter((name) => !profilesBefore.has(name));
    assert.deepEqual(leaked, []);
    // Chromium's processes, not node ones: test/browser/kill-by-profile.test.ts runs node stand-ins for a browser, with
    // gantry-chrome- profiles, perhaps in another worker at this moment.
    assert.deepEqual(
      commandLinesMentioning('gantry-chrome-')
        .filter(({ pid, line }) => pid !== process.pid && !line.startsWith(process.execPath))
        .map(({ line }) => line),
      [],
    );
  });

  it('a Lighthouse failure is a LocalEngineError, and the browser is closed all the same', async () => {
    const before = chromeProfiles();
    await assert.rejects(createLocalEngine().analyze({ url: 'notaurl', categories: ['performance'], strategy: 'DESKTOP' }), (error: unknown) => {
      assert.ok(error instanceof LocalEngineError);
      assert.match(error.message, /Lighthouse failed on notaurl: INVALID_URL/);
      return true;
    });
    assert.equal(liveBrowserCount(), 0);
    assert.deepEqual(
      [...chromeProfiles()].filter((name) => !before.has(name)),
      [],
    );
  });

  it('a browser that cannot start is a clear error naming the path, and leaves no profile behind', async () => {
    const before = chromeProfiles();
    await assert.rejects(
      createLocalEngine({ chromePath: '/nonexistent/chromium' }).analyze({ url: `${site.url}/`, categories: ['performance'], strategy: 'DESKTOP' }),
      (error: unknown) => {
        assert.ok(error instanceof BrowserLaunchError);
        assert.match(error.message, /the browser \/nonexistent\/chromium \(--chrome-path, gantry:chromePath\) does not exist/);
        return true;
      },
    );
    await assert.rejects(
      createLocalEngine({ chromePath: '/bin/false' }).analyze({ url: `${site.url}/`, categories: ['performance'], strategy: 'DESKTOP' }),
      /exited before it was ready/,
    );
    assert.deepEqual(
      [...chromeProfiles()].filter((name) => !before.has(name)),
      [],
    );
    assert.equal(liveBrowserCount(), 0);
  });

  it('Chromium runs with the offline flags on loopback; Ctrl-C during a run shuts it down and removes its profile', async () => {
    const before = chromeProfiles();
    const { child, done } = startGantry(['gate', `${site.url}/heavy`, '--runs', '1']);
    let profile: string | undefined;
    const deadline = Date.now() + 120_000;
    // The new profile whose Chromium is this gate's (a descendant of the child): in a full run another test's
    // browser may be starting or going away beside it, with a profile of its own.
    while (!profile && Date.now() < deadline) {
      profile = [...chromeProfiles()]
        .filter((name) => !before.has(name))
        .find((name) => processesMentioning(name).some((pid) => descendsFrom(pid, child.pid!)));
      if (!profile) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(profile, 'the gate started a browser');
    // Wait for the browser process itself (the one DevTools listens in), however slowly it starts under load; a
    // process may end between listing and reading its command line.
    const browserArgs = () =>
      processesMentioning(profile!)
        .map((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          } catch {
            return [];
          }
        })
        .find((args) => args.some((arg) => arg.startsWith('--remote-debugging-port')));
    let browserCommand = browserArgs();
    while (!browserCommand && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      browserCommand = browserArgs();
    }
    assert.ok(browserCommand, 'Chromium runs with the profile (its browser process is found)');
    for (const flag of offlineChromeFlags) assert.ok(browserCommand.includes(flag), `Chromium runs with ${flag}`);
    assert.ok(browserCommand.includes('--remote-debugging-address=127.0.0.1'), 'DevTools listens on loopback only');
    child.kill('SIGINT');
    const result = await done;
    assert.ok(result.signal === 'SIGINT' || result.code === 130, `ended by the interrupt: ${result.signal ?? result.code}`);
    assert.equal(existsSync(join(tmpdir(), profile)), false, 'the profile is removed');
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(processesMentioning(profile), [], 'no Chromium process is left');
  });
});
