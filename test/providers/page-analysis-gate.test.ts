// PageAnalysisGate through the engine harness (consumer mode: the packed gantry in a Pulumi project, the real
// dynamic-provider plugin). The cjs consumer gates through the api engine against the embedded v5 API serving a
// recorded real run (fast, and the API key is a canary searched for everywhere). The local engine's test, which needs
// the machine to itself for Lighthouse's score, is page-analysis-gate-local.test.ts.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { fileURLToPath } from 'node:url';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { expectDeploymentFailure, Harness, type Stack } from '../harness/index.js';
import { recordedLighthouseResult } from '../analysis/fixture.js';
import { startS3Peer } from '../peers/s3.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'page-analysis-gate.cjs'), esm: path.join(programs, 'page-analysis-gate.mjs') };
const PROVIDER_LIMIT_BYTES = 16 * 1024;

describe('PageAnalysisGate (Pulumi dynamic resource) through the engine harness', function () {
  this.timeout(300_000);
  const apiKey = `canary-pa-key-${Math.random().toString(36).slice(2)}`;
  let api: PageanalysisServer;
  let stack: Stack | undefined;

  before(async () => {
    api = await startPageanalysisServer({ apiKeys: [apiKey], analyser: recordedAnalyser(() => recordedLighthouseResult()) });
  });
  afterEach(async () => {
    await stack?.dispose();
    stack = undefined;
  });
  after(async () => {
    await api?.stop();
  });

  it('cjs consumer, api engine: create gates and records scores; no change analyses nothing; a trigger or a threshold change gates again; below a threshold the update fails with the table and the state keeps the last pass; bad inputs fail Check; the API key and a secret URL leak nowhere', async () => {
    stack = await Harness.consumer({ kind: 'cjs', env: { PAGEANALYSIS_BASE_URL: api.url, PAGEANALYSIS_API_KEY: apiKey } });
    const args = {
      url: 'http://127.0.0.1:8080/',
      thresholds: { performance: 0.9, seo: 90 },
      audits: { 'largest-contentful-paint': 2500 },
      runs: 2,
      triggers: { version: '1' },
    };

    const created = await stack.up(program, args);
    assert.deepEqual(created.plan, { gate: 'create' });
    assert.equal(created.outputs.passed, true);
    assert.deepEqual(created.outputs.scores, { performance: 1, seo: 1 });
    const checks = created.outputs.checks as Array<Record<string, unknown>>;
    assert.deepEqual(
      checks.map((c) => [c.name, c.operator, c.threshold, c.verdict]),
      [
        ['performance', '>=', 0.9, 'pass'],
        ['seo', '>=', 0.9, 'pass'],
        ['largest-contentful-paint', '<=', 2500, 'pass'],
      ],
    );
    assert.equal(created.outputs.reportUrl, null);
    assert.equal(created.outputs.engineUsed, 'api');
    assert.match(String(created.outputs.engineVersion), /^12\./);
    assert.ok(!Number.isNaN(Date.parse(String(created.outputs.analyzedAt))));
    assert.equal(api.requests.length, 2, 'two runs');
    const provider = created.resources.gate!.provider ?? '';
    assert.ok(provider.length > 0);
    assert.ok(Buffer.byteLength(provider) <= PROVIDER_LIMIT_BYTES, `__provider is ${Buffer.byteLength(provider)} bytes`);
    assert.match(created.resources.gate!.id ?? '', /^pageanalysisgate-/);

    const same = await stack.up(program, args);
    assert.deepEqual(same.plan, { gate: 'same' });
    assert.equal(same.outputs.analyzedAt, created.outputs.analyzedAt);
    assert.equal(api.requests.length, 2, 'an unchanged gate does not analyse');

    const retriggered = await stack.up(program, { ...args, triggers: { version: '2' } });
    assert.deepEqual(retriggered.plan, { gate: 'update' });
    assert.notEqual(retriggered.outputs.analyzedAt, created.outputs.analyzedAt);
    assert.equal(api.requests.length, 4);

    const stricter = await expectDeploymentFailure(
      stack.up(program, { ...args, triggers: { version: '2' }, thresholds: { performance: 0.9, 'best-practices': 1 } }),
    );
    assert.match(stricter.message, /page analysis gate for http:\/\/127\.0\.0\.1:8080\/ failed: best-practices below \d+/);
    assert.match(stricter.message, /best-practices score\s+96\s+>= 100\s+FAIL/, 'the table is in the deployment error');
    assert.equal(stricter.result.resources.gate!.outputs.analyzedAt, retriggered.outputs.analyzedAt, 'the state keeps the last passing result');
    assert.deepEqual(stricter.result.resources.gate!.outputs.scores, { performance: 1, seo: 1 });

    const refused = await expectDeploymentFailure(stack.up(program, { url: 'ftp://example.com/', thresholds: { speed: 0.9 }, runs: 0, strategy: 'tablet' }));
    for (const property of ['url', 'thresholds', 'runs', 'strategy']) assert.match(refused.message, new RegExp(property));
    assert.match(refused.message, /unknown category "speed"/);

    // A URL that carries a token, given as a Pulumi secret: secret in state, masked in the failure message.
    const urlToken = `canary-url-token-${Math.random().toString(36).slice(2)}`;
    const secretArgs = { ...args, url: `http://127.0.0.1:8080/?token=${urlToken}`, secretUrl: true, triggers: { version: '3' } };
    const secretCreated = await stack.up(program, secretArgs);
    assert.equal(secretCreated.outputs.passed, true);
    assert.ok(secretCreated.resources.gate!.secretOutputs.includes('url'), 'the url output is secret like its input');
    const secretFailed = await expectDeploymentFailure(stack.up(program, { ...secretArgs, triggers: { version: '4' }, thresholds: { 'best-practices': 1 } }));
    assert.match(secretFailed.message, /page analysis gate for http:\/\/127\.0\.0\.1:8080\/\?token=\[REDACTED\] failed/);

    const state = await readFile(stack.statePath, 'utf8');
    assert.ok(!state.includes(apiKey), 'the API key is not in the state');
    assert.ok(!provider.includes(apiKey), 'the API key is not in __provider');
    assert.ok(!stack.log.includes(apiKey), 'the API key is not in the log');
    assert.ok(!state.includes(urlToken), 'the secret URL is not in the state in plain text');
    assert.ok(!stack.log.includes(urlToken) && !secretFailed.message.includes(urlToken), 'the secret URL is not in the log or the error');

    const destroyed = await stack.destroy();
    assert.deepEqual(destroyed.plan, { gate: 'delete' });
  });

  it('cjs consumer, api engine, reportS3: a pass archives the reports to S3 and records the object URL as reportUrl (S3 credentials from the environment, nowhere in state)', async () => {
    const s3 = await startS3Peer();
    try {
      await s3.createBucket('gate-archive');
      stack = await Harness.consumer({
        kind: 'cjs',
        env: {
          PAGEANALYSIS_BASE_URL: api.url,
          PAGEANALYSIS_API_KEY: apiKey,
          AWS_ENDPOINT_URL_S3: s3.endpoint,
          AWS_REGION: s3.region,
          AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
        },
      });
      const created = await stack.up(program, {
        url: 'http://127.0.0.1:8080/shop',
        thresholds: { performance: 0.9 },
        runs: 1,
        reportS3: 's3://gate-archive/deploys',
      });
      assert.deepEqual(created.plan, { gate: 'create' });
      const reportUrl = String(created.outputs.reportUrl);
      assert.match(reportUrl, new RegExp(`^${s3.endpoint}/gate-archive/deploys/127\\.0\\.0\\.1_8080/.+/report\\.json$`));
      const key = decodeURIComponent(new URL(reportUrl).pathname.split('/').slice(2).join('/'));
      const object = await s3.client().send(new GetObjectCommand({ Bucket: 'gate-archive', Key: key }));
      assert.equal(JSON.parse(await object.Body!.transformToString()).id, 'http://127.0.0.1:8080/shop');
      const state = await readFile(stack.statePath, 'utf8');
      assert.ok(!state.includes(apiKey) && !stack.log.includes(apiKey), 'the API key leaks nowhere');
      assert.ok(!(created.resources.gate!.provider ?? '').includes(s3.endpoint), 'S3 settings are read at run time, not captured');
    } finally {
      await stack?.dispose();
      stack = undefined;
      await s3.stop();
    }
  });
});
