// Gate reports published to the storage API: publishReportsToStorage against the embedded storage server (its own
// folder, real sockets), with gate results from the remote engine against the embedded v5 API serving a recorded real
// run, and Lighthouse's own HTML report rendered from that run (what the local engine writes).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateReport } from 'lighthouse';
import { ExitCode, UsageError } from '../../lib/errors.js';
import {
  archiveKeyPrefix,
  createRemoteEngine,
  publishReportsToStorage,
  responseToLighthouseResult,
  runGate,
  storageTitlePrefix,
  urlSlug,
  writeLocalReports,
  type GateResult,
} from '../../lib/analysis/index.js';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { createStorageClient, type File, type StorageClient } from '../../lib/storage/index.js';
import { harness, TOKEN, type Harness } from '../devserver/storage/helpers.js';
import { recordedLighthouseResult } from './fixture.js';

const FOLDER_MIME = 'application/vnd.google-apps.folder';

/** Lighthouse's HTML report of each run, as the local engine attaches it (rendered when asked for). */
function withHtml(result: GateResult, padding = ''): GateResult {
  return {
    ...result,
    urls: result.urls.map((url) => ({
      ...url,
      html: url.responses.map((response) => () => `${generateReport(responseToLighthouseResult(response) as never, 'html')}${padding}`),
    })),
  };
}

describe('analysis: gate reports published to the storage API (embedded storage server)', function () {
  this.timeout(120_000);
  let api: PageanalysisServer;
  let h: Harness;
  let client: StorageClient;
  let passed: GateResult;
  let twoUrls: GateResult;

  before(async () => {
    api = await startPageanalysisServer({ analyser: recordedAnalyser(() => recordedLighthouseResult()) });
    h = await harness();
    client = createStorageClient({ baseUrl: h.server.url, token: TOKEN });
    const engine = createRemoteEngine({ baseUrl: api.url });
    passed = await runGate({
      urls: ['http://127.0.0.1:8080/shop/cart?token=s3cr3t-page-token'],
      engine,
      runs: 2,
      thresholds: [{ kind: 'category', category: 'performance', min: 0.9 }],
    });
    twoUrls = await runGate({
      urls: ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080/about'],
      engine,
      runs: 1,
      thresholds: [{ kind: 'category', category: 'performance', min: 0.9 }],
    });
  });
  after(async () => {
    client?.close();
    await api?.stop();
    await h?.close();
  });

  async function folder(title: string): Promise<string> {
    return (await client.files.insert({ requestBody: { title, mimeType: FOLDER_MIME } })).id!;
  }

  async function children(folderId: string): Promise<File[]> {
    const out: File[] = [];
    for await (const file of client.files.list.all({ q: `'${folderId}' in parents and trashed = false` })) out.push(file);
    return out.sort((a, b) => String(a.title).localeCompare(String(b.title)));
  }

  async function bytesOf(id: string): Promise<Buffer> {
    const res = await h.raw('GET', `/storage/v2/files/${id}?alt=media`);
    assert.equal(res.status, 200);
    return Buffer.from(await res.arrayBuffer());
  }

  it('STO-FILES-INSERT STO-FILES-GET: every run, the representative report and gate.json land in the folder under stable titles, with their media types and the bytes --report writes', async () => {
    const result = withHtml(passed);
    const folderId = await folder('gate-reports');
    const summary = await publishReportsToStorage(result, folderId, { client });

    // The S3 archive's key scheme, flattened: <host>-<path>-<hash8>-<YYYYMMDDTHHMMSSZ>-<name>.
    const stem = storageTitlePrefix(result.urls[0]!.url, result.analyzedAt);
    assert.equal(stem, archiveKeyPrefix({ bucket: 'b', prefix: '' }, result.urls[0]!.url, result.analyzedAt).replaceAll('/', '-'));
    assert.match(stem, /^127\.0\.0\.1_8080-shop_cart-[0-9a-f]{8}-\d{8}T\d{6}Z$/);
    const names = ['gate.json', 'report.html', 'report.json', 'run-1.html', 'run-1.json', 'run-2.html', 'run-2.json'];
    const files = await children(folderId);
    assert.deepEqual(
      files.map((f) => f.title),
      names.map((name) => `${stem}-${name}`),
    );
    for (const file of files) assert.equal(file.mimeType, file.title!.endsWith('.html') ? 'text/html' : 'application/json', file.title);

    // Byte for byte what --report writes for the same result (masked the same way: the page's token is nowhere).
    const local = await mkdtemp(join(tmpdir(), 'gantry-storage-report-'));
    try {
      await writeLocalReports(result, local);
      for (const file of files.filter((f) => !f.title!.endsWith('-gate.json'))) {
        const name = file.title!.slice(stem.length + 1);
        const expected = await readFile(join(local, urlSlug(result.urls[0]!.url), name));
        const stored = await bytesOf(file.id!);
        assert.ok(stored.equals(expected), `${name}: the stored bytes are the report's`);
        assert.equal(file.md5Checksum, createHash('md5').update(expected).digest('hex'));
        assert.ok(!stored.includes('s3cr3t-page-token'), `${name} shows the page's token masked`);
      }
    } finally {
      await rm(local, { recursive: true, force: true });
    }
    const gate = JSON.parse((await bytesOf(files[0]!.id!)).toString('utf8'));
    assert.equal(gate.status, 'pass');
    assert.equal(gate.urls[0].url, 'http://127.0.0.1:8080/shop/cart?token=[REDACTED]');
    assert.equal(gate.urls[0].storage.files.length, 6, 'gate.json names the six reports uploaded before it');

    // The result and the summary carry the links the service gave; the representative link is report.html's.
    const byTitle = new Map(files.map((f) => [f.title, f]));
    const html = byTitle.get(`${stem}-report.html`)!;
    assert.equal(result.reportUrl, html.alternateLink);
    assert.equal(summary.reportUrl, html.alternateLink);
    assert.equal(summary.storage.folderId, folderId);
    assert.equal(summary.storage.reportUrl, html.alternateLink);
    assert.deepEqual(summary.storage.files.map((f) => f.name).sort(), names);
    for (const stored of summary.storage.files) {
      const file = byTitle.get(stored.title)!;
      assert.equal(stored.id, file.id);
      assert.equal(stored.link, file.alternateLink);
      assert.equal(stored.mimeType, file.mimeType);
    }
    assert.deepEqual(
      summary.urls[0]!.storage!.files.map((f) => f.name),
      ['run-1.json', 'run-1.html', 'run-2.json', 'run-2.html', 'report.json', 'report.html'],
    );
    assert.equal(summary.urls[0]!.url, 'http://127.0.0.1:8080/shop/cart?token=[REDACTED]');
  });

  it("STO-FILES-INSERT: two URLs get their own stems (gate.json beside the first); an S3 link already set stays the result's; publishing again adds files and deletes nothing", async () => {
    const folderId = await folder('two-urls');
    const result = structuredClone(twoUrls);
    result.reportUrl = 'http://s3.example/gate-reports/x/report.json';
    const summary = await publishReportsToStorage(result, folderId, { client });
    assert.equal(result.reportUrl, 'http://s3.example/gate-reports/x/report.json', "the S3 archive's link is kept");
    assert.equal(summary.reportUrl, result.reportUrl);
    const [first, second] = result.urls.map((url) => storageTitlePrefix(url.url, result.analyzedAt));
    assert.notEqual(first, second);
    const titles = (await children(folderId)).map((f) => f.title);
    assert.deepEqual(titles, [`${first}-gate.json`, `${first}-report.json`, `${first}-run-1.json`, `${second}-report.json`, `${second}-run-1.json`].sort());
    // The api engine gives no HTML: the representative link is report.json's.
    assert.equal(summary.storage.reportUrl, summary.storage.files.find((f) => f.title === `${first}-report.json`)!.link);
    assert.equal(summary.urls[1]!.storage!.reportUrl, summary.storage.files.find((f) => f.title === `${second}-report.json`)!.link);

    await publishReportsToStorage(structuredClone(twoUrls), folderId, { client });
    const again = await children(folderId);
    assert.equal(again.length, 10, 'a second publication adds its files beside the first, which stay');
  });

  it('STO-FILES-INSERT: a report above 5 MiB is sent resumable, in chunks, and arrives whole', async () => {
    const folderId = await folder('large');
    const result = withHtml(twoUrls, `<!-- ${'x'.repeat(6 * 1024 * 1024)} -->`);
    const sessionsBefore = Object.keys((await h.admin('GET', 'stats')).sessions).length;
    const summary = await publishReportsToStorage({ ...result, urls: [result.urls[0]!] }, folderId, { client });
    const html = summary.storage.files.find((f) => f.name === 'report.html')!;
    const stored = await bytesOf(html.id);
    assert.ok(stored.length > 6 * 1024 * 1024);
    assert.ok(stored.equals(Buffer.from(result.urls[0]!.html![0]!(), 'utf8')));
    const sessions = Object.keys((await h.admin('GET', 'stats')).sessions).length;
    assert.equal(sessions - sessionsBefore, 2, 'run-1.html and report.html went through resumable sessions');
  });

  it('a folder that does not exist is exit 1 naming it, before any upload; not a folder, or in the trash, likewise', async () => {
    const count = async () => {
      let n = 0;
      for await (const _file of client.files.list.all({})) n += 1;
      return n;
    };
    const filesBefore = await count();
    await assert.rejects(
      publishReportsToStorage(structuredClone(twoUrls), 'noSuchFolder123', { client }),
      (error: Error & { exitCode?: number; code?: string; hint?: string }) => {
        assert.equal(error.exitCode, ExitCode.checkFailed);
        assert.equal(error.code, 'STORAGE_REPORT_FOLDER_NOT_FOUND');
        assert.match(error.message, /^the report folder noSuchFolder123 was not found in the storage service at http:\/\/127\.0\.0\.1:\d+$/);
        assert.match(error.hint ?? '', /gantry storage/);
        return true;
      },
    );
    assert.equal(await count(), filesBefore, 'nothing was uploaded');

    const plain = await client.files.insert({ requestBody: { title: 'not-a-folder.txt', mimeType: 'text/plain' } });
    await assert.rejects(publishReportsToStorage(structuredClone(twoUrls), plain.id!, { client }), (error: Error & { exitCode?: number }) => {
      assert.equal(error.exitCode, ExitCode.checkFailed);
      assert.match(error.message, new RegExp(`the report folder ${plain.id} is not a folder \\(its type is text/plain\\)`));
      return true;
    });
    const trashed = await folder('trashed');
    await client.files.trash({ fileId: trashed });
    await assert.rejects(publishReportsToStorage(structuredClone(twoUrls), trashed, { client }), /is in the trash/);
  });

  it('a folder id that cannot be one is exit 2 before anything is sent', async () => {
    const requests = (await h.admin('GET', 'stats')).requests as number;
    for (const bad of ['', '../x', 'a b', 'x/y', 'a'.repeat(300)]) {
      await assert.rejects(
        publishReportsToStorage(structuredClone(twoUrls), bad, { client }),
        (error: unknown) => error instanceof UsageError && /is not a storage folder id/.test(error.message),
        bad,
      );
    }
    assert.equal((await h.admin('GET', 'stats')).requests, requests);
  });

  it('the token is in no message: a refused token and a missing folder say what happened without it', async () => {
    const wrong = 'ya29.wrong-token-canary-8d1f3e';
    const refused = createStorageClient({ baseUrl: h.server.url, token: wrong });
    try {
      const error = await publishReportsToStorage(structuredClone(twoUrls), 'someFolder', { client: refused }).then(
        () => assert.fail('expected a refusal'),
        (e: unknown) => e as Error & { hint?: string },
      );
      const said = [error.message, error.hint ?? '', error.stack ?? '', JSON.stringify(error)].join('\n');
      assert.match(error.message, /401|authError|Invalid Credentials/i);
      assert.ok(!said.includes(wrong), said);
    } finally {
      refused.close();
    }
    const missing = await publishReportsToStorage(structuredClone(twoUrls), 'goneFolder', { client }).then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e as Error & { hint?: string },
    );
    const said = [missing.message, missing.hint ?? '', missing.stack ?? '', JSON.stringify(missing)].join('\n');
    assert.ok(!said.includes(TOKEN), said);
  });
});
