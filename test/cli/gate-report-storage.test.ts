/* eslint-disable @typescript-eslint/no-explicit-any -- tests read the --json summary freely */
// `gantry gate --report-storage <folderId>` as a pipeline runs it (a separate process from source): the api engine
// against the embedded v5 API serving a recorded real run, the reports published to the embedded storage server with
// STORAGE_TOKEN or with a `gantry auth` device login (accepted by the storage server through the authorization server's
// tokeninfo); bad settings refused before any analysis; beside --report-s3 (s3rver).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deviceLogin, openTokenStore, resolveScopes, saveLogin } from '../../lib/auth/index.js';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { createStorageClient, type StorageClient } from '../../lib/storage/index.js';
import { harness, TOKEN, type Harness } from '../devserver/storage/helpers.js';
import { recordedLighthouseResult } from '../analysis/fixture.js';
import { gantry } from '../analysis/gantry.js';
import { startS3Peer, type S3Peer } from '../peers/s3.js';

const FOLDER_MIME = 'application/vnd.google-apps.folder';

describe('gantry gate --report-storage (embedded v5 API and storage server)', function () {
  this.timeout(240_000);
  let api: PageanalysisServer;
  let oauth: OAuthServer;
  let storage: Harness;
  let client: StorageClient;
  let folderId: string;
  let configDir: string;
  let oauthClient: { id: string; secret: string | null };

  /** No storage, auth, kv or keyring settings from the machine running the tests: each test says what it gives. */
  const base = (): NodeJS.ProcessEnv => ({
    PAGEANALYSIS_BASE_URL: api.url,
    STORAGE_BASE_URL: storage.server.url,
    STORAGE_TOKEN: undefined,
    GANTRY_CONFIG_DIR: configDir,
    GANTRY_AUTH_URL: undefined,
    GANTRY_OAUTH_CLIENT_ID: undefined,
    GANTRY_OAUTH_CLIENT_SECRET: undefined,
    GANTRY_AUTH_PROFILE: undefined,
    SECRETS_ADDR: undefined,
    DBUS_SESSION_BUS_ADDRESS: undefined,
  });
  const withToken = (more: NodeJS.ProcessEnv = {}) => ({ ...base(), STORAGE_TOKEN: TOKEN, ...more });

  before(async () => {
    api = await startPageanalysisServer({ analyser: recordedAnalyser(() => recordedLighthouseResult()) });
    oauth = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1 });
    oauthClient = oauth.registerClient({ name: 'gate report test' });
    storage = await harness({ tokenInfoUrl: `${oauth.url}/tokeninfo` });
    client = createStorageClient({ baseUrl: storage.server.url, token: TOKEN });
    folderId = (await client.files.insert({ requestBody: { title: 'gate-reports', mimeType: FOLDER_MIME } })).id!;
    configDir = await mkdtemp(join(tmpdir(), 'gantry-gate-storage-'));
  });
  after(async () => {
    client?.close();
    await storage?.close();
    await oauth?.stop();
    await api?.stop();
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });

  async function titlesIn(folder: string): Promise<string[]> {
    const titles: string[] = [];
    for await (const file of client.files.list.all({ q: `'${folder}' in parents and trashed = false` })) titles.push(String(file.title));
    return titles.sort();
  }

  it("STO-FILES-INSERT: --json carries the storage links (per URL and at the top); reportUrl is report.json's link; the files are in the folder", async () => {
    const folder = (await client.files.insert({ requestBody: { title: 'json', mimeType: FOLDER_MIME, parents: [{ id: folderId }] } })).id!;
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--engine', 'api', '--runs', '1', '--report-storage', folder, '--json'], withToken());
    assert.equal(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout) as any;
    assert.equal(summary.storage.folderId, folder);
    assert.deepEqual(
      summary.storage.files.map((f: any) => f.name),
      ['run-1.json', 'report.json', 'gate.json'],
    );
    const reportJson = summary.storage.files.find((f: any) => f.name === 'report.json');
    assert.match(reportJson.link, new RegExp(`^${storage.server.url}/file/d/${reportJson.id}/view$`));
    assert.equal(summary.reportUrl, reportJson.link);
    assert.equal(summary.storage.reportUrl, reportJson.link);
    assert.deepEqual(
      summary.urls[0].storage.files.map((f: any) => f.id),
      summary.storage.files.slice(0, 2).map((f: any) => f.id),
    );
    assert.deepEqual(await titlesIn(folder), summary.storage.files.map((f: any) => f.title).sort());
    assert.match(run.stderr, /^reports published: http:\/\/127\.0\.0\.1:\d+\/file\/d\/\S+\/view$/m);
    assert.ok(!(run.stdout + run.stderr).includes(TOKEN), 'the token is printed nowhere');
  });

  it('human output: the table, "Report: <link>" on stdout and "reports published: <link>" on stderr; a failed gate still publishes and exits 1', async () => {
    const folder = (await client.files.insert({ requestBody: { title: 'human', mimeType: FOLDER_MIME } })).id!;
    const run = await gantry(
      ['gate', 'http://127.0.0.1:8080/', '--engine', 'api', '--runs', '1', '--min', 'best-practices=1', '--report-storage', folder],
      withToken(),
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^Page analysis gate FAILED/m);
    const link = /^reports published: (\S+)$/m.exec(run.stderr)?.[1];
    assert.ok(link, run.stderr);
    assert.match(run.stdout, new RegExp(`^Report: ${link.replace(/[.?]/g, '\\$&')}$`, 'm'));
    assert.equal((await titlesIn(folder)).length, 3);
  });

  it('bad settings are refused before any analysis request: no STORAGE_BASE_URL or a bad one, a bad folder id exit 2; a folder that does not exist exit 1 naming it', async () => {
    const before = api.requests.length;
    const args = (folder: string) => ['gate', 'http://127.0.0.1:8080/', '--engine', 'api', '--runs', '1', '--report-storage', folder];
    const missing = await gantry(args(folderId), withToken({ STORAGE_BASE_URL: undefined }));
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /^error: --report-storage needs the storage service: STORAGE_BASE_URL is not set$/m);
    const plainHttp = await gantry(args(folderId), withToken({ STORAGE_BASE_URL: 'http://storage.example.com' }));
    assert.equal(plainHttp.code, 2, plainHttp.stderr);
    assert.match(plainHttp.stderr, /^error: STORAGE_BASE_URL: the storage base URL must be https/m);
    const notUrl = await gantry(args(folderId), withToken({ STORAGE_BASE_URL: 'not a url' }));
    assert.equal(notUrl.code, 2, notUrl.stderr);
    assert.match(notUrl.stderr, /STORAGE_BASE_URL/);
    const badId = await gantry(args('../etc'), withToken());
    assert.equal(badId.code, 2, badId.stderr);
    assert.match(badId.stderr, /^error: --report-storage: "\.\.\/etc" is not a storage folder id/m);
    const gone = await gantry(args('noSuchFolder42'), withToken());
    assert.equal(gone.code, 1, gone.stderr);
    assert.match(gone.stderr, /^error: the report folder noSuchFolder42 was not found in the storage service at http:\/\/127\.0\.0\.1:\d+$/m);
    const noLogin = await gantry(args(folderId), base());
    assert.notEqual(noLogin.code, 0);
    assert.match(noLogin.stderr, /not logged in/);
    assert.match(noLogin.stderr, /STORAGE_TOKEN/, 'the hint names both ways in');
    assert.equal(api.requests.length, before, 'nothing was analysed');
  });

  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: without STORAGE_TOKEN the `gantry auth` login of GANTRY_AUTH_PROFILE publishes (a storage.file scope, checked by the storage server through tokeninfo); its token is printed nowhere', async () => {
    const login = await deviceLogin({
      authUrl: oauth.url,
      clientId: oauthClient.id,
      clientSecret: oauthClient.secret ?? undefined,
      scopes: resolveScopes(['openid', 'email', 'storage.file']),
      onCode: (code) => setTimeout(() => oauth.approve(code.userCode), 50).unref(),
    });
    const { store } = await openTokenStore('file', { configDir, profile: 'ci', insecureStorage: true });
    await saveLogin(store, { authUrl: oauth.url, clientId: oauthClient.id, profile: 'ci', tokens: login.tokens }, { configDir });
    const folder = (await client.files.insert({ requestBody: { title: 'login', mimeType: FOLDER_MIME } })).id!;
    const env = { ...base(), GANTRY_AUTH_PROFILE: 'ci', GANTRY_OAUTH_CLIENT_SECRET: oauthClient.secret ?? undefined, GANTRY_LOG: 'debug' };
    const run = await gantry(['gate', 'http://127.0.0.1:8080/', '--engine', 'api', '--runs', '1', '--report-storage', folder, '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout) as any;
    assert.equal(summary.storage.files.length, 3);
    assert.deepEqual(await titlesIn(folder), summary.storage.files.map((f: any) => f.title).sort());
    for (const secret of [login.tokens.accessToken, login.tokens.refreshToken, oauthClient.secret].filter((s): s is string => !!s)) {
      assert.ok(!(run.stdout + run.stderr).includes(secret), 'no token or client secret in the output, even at debug level');
    }

    // A login without a storage scope is refused by the service (403), after nothing was analysed.
    const videoOnly = await deviceLogin({
      authUrl: oauth.url,
      clientId: oauthClient.id,
      clientSecret: oauthClient.secret ?? undefined,
      scopes: resolveScopes(['openid', 'video.readonly']),
      onCode: (code) => setTimeout(() => oauth.approve(code.userCode), 50).unref(),
    });
    const other = await openTokenStore('file', { configDir, profile: 'video', insecureStorage: true });
    await saveLogin(other.store, { authUrl: oauth.url, clientId: oauthClient.id, profile: 'video', tokens: videoOnly.tokens }, { configDir });
    const before = api.requests.length;
    const refused = await gantry(['gate', 'http://127.0.0.1:8080/', '--engine', 'api', '--runs', '1', '--report-storage', folder], {
      ...env,
      GANTRY_AUTH_PROFILE: 'video',
      GANTRY_LOG: 'warn',
    });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /403/);
    assert.equal(api.requests.length, before);
  });

  describe('beside --report-s3', () => {
    let s3: S3Peer;
    before(async () => {
      s3 = await startS3Peer();
      await s3.createBucket('gate-reports');
    });
    after(async () => {
      await s3?.stop();
    });

    it('both: reportUrl stays the S3 object URL, each URL carries its object URL and its storage files', async () => {
      const folder = (await client.files.insert({ requestBody: { title: 's3-too', mimeType: FOLDER_MIME } })).id!;
      const run = await gantry(
        ['gate', 'http://127.0.0.1:8080/', '--engine', 'api', '--runs', '1', '--report-s3', 's3://gate-reports/both', '--report-storage', folder, '--json'],
        withToken({
          AWS_ENDPOINT_URL_S3: s3.endpoint,
          AWS_REGION: s3.region,
          AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
        }),
      );
      assert.equal(run.code, 0, run.stderr);
      const summary = JSON.parse(run.stdout) as any;
      assert.match(summary.reportUrl, new RegExp(`^${s3.endpoint}/gate-reports/both/.*/report\\.json$`));
      assert.equal(summary.urls[0].reportUrl, summary.reportUrl);
      assert.equal(summary.urls[0].storage.files.length, 2);
      assert.equal(summary.storage.reportUrl, summary.storage.files.find((f: any) => f.name === 'report.json').link);
      assert.match(run.stderr, /^reports archived: /m);
      assert.match(run.stderr, /^reports published: /m);
      assert.equal((await titlesIn(folder)).length, 3);
    });
  });
});
