// PageAnalysisGate's reportStorage, called as the dynamic-provider plugin calls the operations (Check, Create) with
// the plugin's environment: the api engine against the embedded v5 API (a recorded real run) and the embedded storage
// server. The full Pulumi round trip of the resource is pageAnalysisGate.test.ts (the engine harness).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pageAnalysisGateOperations } from '../../providers/page-analysis-gate-operations.js';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { createStorageClient, type StorageClient } from '../../lib/storage/index.js';
import { ExitCode } from '../../lib/errors.js';
import { harness, TOKEN, type Harness } from '../devserver/storage/helpers.js';
import { recordedLighthouseResult } from '../analysis/fixture.js';

const FOLDER_MIME = 'application/vnd.google-apps.folder';
const variables = [
  'PAGEANALYSIS_BASE_URL',
  'PAGEANALYSIS_API_KEY',
  'STORAGE_BASE_URL',
  'STORAGE_TOKEN',
  'GANTRY_CONFIG_DIR',
  'GANTRY_AUTH_URL',
  'GANTRY_OAUTH_CLIENT_ID',
  'GANTRY_AUTH_PROFILE',
] as const;

describe("PageAnalysisGate: reportStorage (the operations, with the plugin's environment)", function () {
  this.timeout(60_000);
  let api: PageanalysisServer;
  let storage: Harness;
  let client: StorageClient;
  let folderId: string;
  const saved: Partial<Record<(typeof variables)[number], string>> = {};

  let emptyConfig: string;

  before(async () => {
    for (const name of variables) saved[name] = process.env[name];
    emptyConfig = await mkdtemp(join(tmpdir(), 'gantry-no-login-'));
    api = await startPageanalysisServer({ analyser: recordedAnalyser(() => recordedLighthouseResult()) });
    storage = await harness();
    client = createStorageClient({ baseUrl: storage.server.url, token: TOKEN });
    folderId = (await client.files.insert({ requestBody: { title: 'deploy-gates', mimeType: FOLDER_MIME } })).id!;
  });
  beforeEach(() => {
    process.env.PAGEANALYSIS_BASE_URL = api.url;
    delete process.env.PAGEANALYSIS_API_KEY;
    process.env.STORAGE_BASE_URL = storage.server.url;
    process.env.STORAGE_TOKEN = TOKEN;
    // Without STORAGE_TOKEN the plugin falls back to a `gantry auth` login: none here, whatever the machine has.
    process.env.GANTRY_CONFIG_DIR = emptyConfig;
    for (const name of ['GANTRY_AUTH_URL', 'GANTRY_OAUTH_CLIENT_ID', 'GANTRY_AUTH_PROFILE'] as const) delete process.env[name];
  });
  after(async () => {
    await rm(emptyConfig, { recursive: true, force: true });
    for (const name of variables) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    client?.close();
    await storage?.close();
    await api?.stop();
  });

  const inputs = (more: Record<string, unknown> = {}) => ({
    url: 'http://127.0.0.1:8080/shop',
    thresholds: { performance: 0.9 },
    runs: 1,
    engine: 'api',
    ...more,
  });

  it('Check refuses a reportStorage that is no folder id, by property', async () => {
    const { failures } = await pageAnalysisGateOperations.check({}, inputs({ reportStorage: '../x' }));
    assert.deepEqual(
      failures.map((f) => f.property),
      ['reportStorage'],
    );
    assert.match(failures[0]!.reason, /is not a storage folder id/);
    assert.deepEqual((await pageAnalysisGateOperations.check({}, inputs({ reportStorage: folderId }))).failures, []);
  });

  it("STO-FILES-INSERT: a pass publishes the reports; storageReports lists them with their links, reportUrl is report.json's link; no token in the outputs", async () => {
    const { outs } = await pageAnalysisGateOperations.create(undefined, inputs({ reportStorage: folderId }));
    assert.equal(outs.reportStorage, folderId);
    assert.equal(outs.storageReports?.folderId, folderId);
    assert.deepEqual(
      outs.storageReports?.files.map((f) => f.name),
      ['run-1.json', 'report.json', 'gate.json'],
    );
    const report = outs.storageReports!.files.find((f) => f.name === 'report.json')!;
    assert.equal(outs.reportUrl, report.link);
    const stored = await client.files.get({ fileId: report.id });
    assert.equal(stored.alternateLink, report.link);
    assert.deepEqual(
      stored.parents?.map((p) => p.id),
      [folderId],
    );
    assert.ok(!JSON.stringify(outs).includes(TOKEN), 'the token is in no output (so in no state)');
  });

  it('the address from the stack configuration (gantry:storageBaseUrl) when STORAGE_BASE_URL is not set', async () => {
    delete process.env.STORAGE_BASE_URL;
    const { outs } = await pageAnalysisGateOperations.create({ storageBaseUrl: storage.server.url }, inputs({ reportStorage: folderId }));
    assert.equal(outs.storageReports?.files.length, 3);
  });

  it('no STORAGE_TOKEN, no address, or a folder that does not exist fail the create before any analysis', async () => {
    const before = api.requests.length;
    delete process.env.STORAGE_TOKEN;
    await assert.rejects(pageAnalysisGateOperations.create(undefined, inputs({ reportStorage: folderId })), (error: Error & { exitCode?: number }) => {
      assert.equal(error.exitCode, ExitCode.usage);
      assert.match(error.message, /STORAGE_TOKEN is not set/);
      return true;
    });
    process.env.STORAGE_TOKEN = TOKEN;
    delete process.env.STORAGE_BASE_URL;
    await assert.rejects(pageAnalysisGateOperations.create(undefined, inputs({ reportStorage: folderId })), /no storage API address/);
    process.env.STORAGE_BASE_URL = storage.server.url;
    await assert.rejects(pageAnalysisGateOperations.create(undefined, inputs({ reportStorage: 'goneFolder1' })), (error: Error & { exitCode?: number }) => {
      assert.equal(error.exitCode, ExitCode.checkFailed);
      assert.match(error.message, /the report folder goneFolder1 was not found/);
      assert.ok(!error.message.includes(TOKEN));
      return true;
    });
    assert.equal(api.requests.length, before, 'nothing was analysed');
  });
});
