// Reports: the terminal table, the local report folder, and the S3 archive against a real S3 peer (s3rver from
// test/peers/s3.ts). The gate results come from the remote engine against the embedded v5 API (recorded real run).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { CheckFailedError } from '../../lib/errors.js';
import {
  archiveKeyPrefix,
  archiveReportsToS3,
  createRemoteEngine,
  gateRunError,
  parsePageanalysisResponse,
  parseS3Url,
  renderGateTable,
  runGate,
  writeLocalReports,
  type GateResult,
} from '../../lib/analysis/index.js';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { startS3Peer, type S3Peer } from '../peers/s3.js';
import { recordedLighthouseResult } from './fixture.js';
import { gantry } from './gantry.js';

describe('analysis: reports (table, folder, S3 archive on a real S3 peer)', function () {
  this.timeout(120_000);
  let api: PageanalysisServer;
  let s3: S3Peer;
  let passed: GateResult;
  let failed: GateResult;

  before(async () => {
    api = await startPageanalysisServer({ analyser: recordedAnalyser(() => recordedLighthouseResult()) });
    s3 = await startS3Peer();
    await s3.createBucket('gate-reports');
    const engine = createRemoteEngine({ baseUrl: api.url });
    passed = await runGate({
      urls: ['http://127.0.0.1:8080/shop/cart'],
      engine,
      runs: 2,
      thresholds: [
        { kind: 'category', category: 'performance', min: 0.9 },
        { kind: 'audit', audit: 'largest-contentful-paint', operator: '<=', value: 2500 },
      ],
    });
    failed = await runGate({
      urls: ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080/about'],
      engine,
      runs: 1,
      thresholds: [{ kind: 'category', category: 'best-practices', min: 1 }],
    });
  });
  after(async () => {
    await api?.stop();
    await s3?.stop();
  });

  async function readObjectUrl(url: string): Promise<string> {
    const path = new URL(url).pathname.slice(1).split('/').map(decodeURIComponent);
    const [bucket, ...key] = path;
    const object = await s3.client().send(new GetObjectCommand({ Bucket: bucket, Key: key.join('/') }));
    return object.Body!.transformToString();
  }

  it('the table lists each check with value, threshold, verdict and per-run values; scores read 0–100', () => {
    const table = renderGateTable(passed);
    const lines = table.split('\n');
    assert.equal(lines[0], 'Page analysis gate PASSED (api engine, desktop, 2 runs, median-run)');
    assert.match(lines[1], /^CHECK\s+VALUE\s+THRESHOLD\s+RESULT\s+RUNS$/);
    assert.match(lines[2], /^performance score\s+100\s+>= 90\s+PASS\s+100 100$/);
    assert.match(lines[3], /^largest-contentful-paint\s+\d+(\.\d+)?\s+<= 2500\s+PASS\s+\S+ \S+$/);
    assert.equal(lines.length, 4);
  });

  it('a failing multi-URL table has a URL column and the reasons', () => {
    const table = renderGateTable(failed);
    assert.match(table, /^Page analysis gate FAILED/);
    assert.match(table, /^URL\s+CHECK/m);
    assert.match(table, /^http:\/\/127\.0\.0\.1:8080\/about\s+best-practices score\s+96\s+>= 100\s+FAIL/m);
    assert.match(table, /^Reasons:\n {2}best-practices: score 0\.96 is not >= 1/m);
  });

  it('gateRunError: a failed gate is a CheckFailedError naming the checks below threshold, an engine error GATE_ENGINE_ERROR; both mask the page URL', () => {
    const url = 'http://127.0.0.1:8080/?token=canary-gate-1';
    const failure = gateRunError(failed, url);
    assert.ok(failure instanceof CheckFailedError);
    assert.match(
      failure.message,
      /^page analysis gate for http:\/\/127\.0\.0\.1:8080\/\?token=\S+ failed: best-practices below \d+\nPage analysis gate FAILED/,
    );
    const engineError = gateRunError({ ...failed, status: 'error' }, url);
    assert.equal(engineError.code, 'GATE_ENGINE_ERROR');
    assert.match(engineError.message, /could not analyse the page\nPage analysis gate/);
    for (const error of [failure, engineError]) assert.ok(!error.message.includes('canary-gate-1'), error.message);
  });

  it('--report folder: gate.json, each run and the representative report, written whole (no temporary files left)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-report-'));
    try {
      const summary = await writeLocalReports(passed, dir);
      const gate = JSON.parse(readFileSync(join(dir, 'gate.json'), 'utf8'));
      assert.deepEqual(gate, JSON.parse(JSON.stringify(summary)));
      assert.equal(gate.urls[0].responses, undefined, 'the summary leaves the per-run documents to their own files');
      const folder = join(dir, '127.0.0.1_8080');
      const [slug] = readdirSync(folder);
      assert.match(slug, /^shop_cart-[0-9a-f]{8}$/);
      assert.deepEqual(readdirSync(join(folder, slug)).sort(), ['report.json', 'run-1.json', 'run-2.json']);
      const report = parsePageanalysisResponse(JSON.parse(readFileSync(join(folder, slug, 'report.json'), 'utf8')));
      assert.equal(report.id, 'http://127.0.0.1:8080/shop/cart');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('no credentials in reports: the summary, gate.json and every run file show the page URL with its credentials masked; the engine got it whole', async () => {
    const secret = 'gate-url-token-7f3b21';
    const url = `http://user:pa55word@127.0.0.1:8080/private?token=${secret}&page=2`;
    const before = api.requests.length;
    const result = await runGate({ urls: [url], engine: createRemoteEngine({ baseUrl: api.url }), runs: 2 });
    assert.equal(new Map(api.requests[before].query).get('url'), url, 'the engine analyses the URL as given');
    assert.equal(result.urls[0].url, url);
    const dir = await mkdtemp(join(tmpdir(), 'gantry-report-'));
    try {
      const summary = await writeLocalReports(result, dir);
      const shown = 'http://[REDACTED]@127.0.0.1:8080/private?token=[REDACTED]&page=2';
      assert.equal(summary.urls[0].url, shown);
      assert.equal(summary.urls[0].finalUrl, shown);
      assert.deepEqual(
        summary.urls[0].runs.map((run) => run.finalUrl),
        [shown, shown],
      );
      assert.equal(summary.checks[0].url, shown);
      const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
      assert.deepEqual(files.map((f) => f.name).sort(), ['gate.json', 'report.json', 'run-1.json', 'run-2.json']);
      for (const file of files) {
        const text = readFileSync(join(file.parentPath, file.name), 'utf8');
        assert.ok(!text.includes(secret) && !text.includes('pa55word'), `${file.name} carries the URL's credentials`);
      }
      const report = parsePageanalysisResponse(JSON.parse(readFileSync(join(files.find((f) => f.name === 'report.json')!.parentPath, 'report.json'), 'utf8')));
      assert.equal(report.id, shown);
      assert.equal(report.beaconResult?.requestedUrl, shown);
      assert.equal(report.beaconResult?.finalUrl, shown);
      assert.ok(!renderGateTable({ ...result, checks: [...result.checks, ...failed.checks] }).includes(secret));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('S3 keys are stable per URL and time, and distinct across URLs', () => {
    const location = parseS3Url('s3://gate-reports/team/web/');
    assert.deepEqual(location, { bucket: 'gate-reports', prefix: 'team/web' });
    const at = '2026-11-21T12:30:05.123Z';
    const key = archiveKeyPrefix(location, 'https://shop.example/cart?x=1', at);
    assert.match(key, /^team\/web\/shop\.example\/cart-[0-9a-f]{8}\/20261121T123005Z$/);
    assert.equal(archiveKeyPrefix(location, 'https://shop.example/cart?x=1', at), key);
    assert.notEqual(archiveKeyPrefix(location, 'https://shop.example/cart?x=2', at), key);
    assert.throws(() => parseS3Url('https://bucket/x'), /is not an S3 location/);
    assert.throws(() => parseS3Url('s3://bucket/a/../b'), /may not contain \. or \.\. segments/);
  });

  it('archives to S3: every run, the representative report and the summary; the result carries the object URL (bucket and key)', async () => {
    const summary = await archiveReportsToS3(passed, 's3://gate-reports/gates', { client: s3.client(), endpoint: s3.endpoint, region: s3.region });
    const prefix = archiveKeyPrefix(parseS3Url('s3://gate-reports/gates'), passed.urls[0].url, passed.analyzedAt);
    const listed = await s3.client().send(new ListObjectsV2Command({ Bucket: 'gate-reports', Prefix: 'gates/' }));
    assert.deepEqual(
      (listed.Contents ?? []).map((o) => o.Key).sort(),
      ['gate.json', 'report.json', 'run-1.json', 'run-2.json'].map((f) => `${prefix}/${f}`),
    );
    assert.equal(passed.reportUrl, `${s3.endpoint}/gate-reports/${prefix}/report.json`);
    assert.equal(summary.reportUrl, passed.reportUrl);
    assert.equal(summary.urls[0].reportUrl, passed.reportUrl);
    const object = await s3.client().send(new GetObjectCommand({ Bucket: 'gate-reports', Key: `${prefix}/gate.json` }));
    assert.equal(object.ContentType, 'application/json');
    const stored = JSON.parse(await object.Body!.transformToString());
    assert.equal(stored.status, 'pass');
    // The object URL names bucket and key (path style on this endpoint); read with credentials, as the bucket is private.
    const named = await readObjectUrl(passed.reportUrl!);
    assert.equal(parsePageanalysisResponse(JSON.parse(named)).id, 'http://127.0.0.1:8080/shop/cart');
  });

  it('the archive grants nothing: no upload carries an ACL or grant header, so access stays with the bucket policy', async () => {
    // s3rver 3.7.1 enforces no access control (an anonymous read is served), so privacy cannot be read off the peer;
    // what gantry controls is what it asks for, seen on the requests as they leave the SDK for the peer.
    const client = s3.client();
    const sent: Array<Record<string, string>> = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        sent.push({ ...(args.request as { headers: Record<string, string> }).headers });
        return next(args);
      },
      { step: 'finalizeRequest', name: 'recordHeaders' },
    );
    const result = structuredClone(passed);
    await archiveReportsToS3(result, 's3://gate-reports/private', { client, endpoint: s3.endpoint, region: s3.region });
    assert.equal(sent.length, 4, 'gate.json, report.json and two runs');
    for (const headers of sent) {
      const names = Object.keys(headers).map((name) => name.toLowerCase());
      assert.ok(names.includes('authorization'), 'each upload is signed');
      assert.deepEqual(
        names.filter((name) => name === 'x-amz-acl' || name.startsWith('x-amz-grant-')),
        [],
      );
    }
    assert.ok(result.reportUrl);
    assert.equal(
      parsePageanalysisResponse(JSON.parse(await readObjectUrl(result.reportUrl))).id,
      'http://127.0.0.1:8080/shop/cart',
      'readable with credentials',
    );
  });

  /** The command's environment: the v5 API and the S3 peer, configured the way a pipeline would. */
  const gateEnv = () => ({
    PAGEANALYSIS_BASE_URL: api.url,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
  });

  it('gantry gate --report and --report-s3 together: the printed summary carries both the local files and the object URL', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'gantry-both-reports-'));
    try {
      const run = await gantry(
        ['gate', 'http://127.0.0.1:8080/', '--engine', 'api', '--runs', '1', '--report', folder, '--report-s3', 's3://gate-reports/both', '--json'],
        gateEnv(),
      );
      assert.equal(run.code, 0, run.stderr);
      const summary = JSON.parse(run.stdout) as { reportUrl: string; urls: Array<{ reportUrl?: string; reportFiles?: string[] }> };
      assert.match(summary.urls[0]!.reportUrl ?? '', new RegExp(`^${s3.endpoint}/gate-reports/both/.*/report\\.json$`));
      assert.equal(summary.reportUrl, summary.urls[0]!.reportUrl);
      const files = summary.urls[0]!.reportFiles ?? [];
      assert.ok(files.length >= 2 && files.every((file) => file.startsWith(folder)), JSON.stringify(files));
      for (const file of files) assert.ok((await readFile(file)).length > 0, file);
      assert.ok((await readFile(join(folder, 'gate.json'))).length > 0);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('gantry gate --report-s3 archives and prints the object URL in --json (environment-configured S3)', async () => {
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--engine', 'api', '--runs', '1', '--report-s3', 's3://gate-reports/cli', '--json'], gateEnv());
    assert.equal(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout);
    assert.match(summary.reportUrl, new RegExp(`^${s3.endpoint}/gate-reports/cli/127\\.0\\.0\\.1_8080/root-[0-9a-f]{8}/\\d{8}T\\d{6}Z/report\\.json$`));
    assert.equal(parsePageanalysisResponse(JSON.parse(await readObjectUrl(summary.reportUrl))).id, 'http://127.0.0.1:8080/');
  });
});
