// The embedded page analysis API in its default mode: it runs the Lighthouse command line itself (its own Chromium,
// launched and removed by chrome-launcher) and answers a v5 document. One real run, against a page on 127.0.0.1.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createPageanalysisClient, parsePageanalysisResponse } from '../../../lib/analysis/index.js';
import { startDevPageanalysis, startPageanalysisServer, type PageanalysisServer } from '../../../devserver/pageanalysis/index.js';
import { startTestSite, type TestSite } from '../../analysis/site.js';
import { commandLinesMentioning, descendsFrom, disabledFeaturesOf } from '../../browser/processes.js';

function launcherProfiles(): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith('lighthouse.'));
}

describe('devserver/pageanalysis: the embedded v5 API running Lighthouse', function () {
  this.timeout(180_000);
  let site: TestSite;
  let server: PageanalysisServer;

  before(async () => {
    site = await startTestSite();
    server = await startPageanalysisServer({ apiKeys: ['dev-key-1234'] });
  });
  after(async () => {
    await server?.stop();
    await site?.stop();
  });

  it('PAG-EP-RUN / PAG-RESP-BEACON-RESULT / PAG-BR-FINAL-URL / PAG-BR-REQUESTED-URL / PAG-BR-FETCH-TIME: analyses a live page and answers a valid v5 response', async () => {
    const before = launcherProfiles();
    const client = createPageanalysisClient({ baseUrl: server.url, apiKey: 'dev-key-1234' });
    // This run's Chromium (a descendant of this process, with a chrome-launcher profile), watched while it runs.
    const seen = new Map<number, string>();
    const watch = setInterval(() => {
      for (const { pid, line } of commandLinesMentioning(`--user-data-dir=${tmpdir()}/lighthouse.`)) if (descendsFrom(pid, process.pid)) seen.set(pid, line);
    }, 200);
    const response = await client.run({ url: `${site.url}/`, category: ['PERFORMANCE', 'SEO'], strategy: 'DESKTOP' }).finally(() => clearInterval(watch));
    client.close();
    const browser = [...seen.values()].find((line) => !line.includes(' --type='));
    assert.ok(browser, `the run's Chromium was seen: ${seen.size} processes`);
    // chrome-launcher's features stay off beside the omnibox's WebUI popups (a renderer of their own, half a launch's CPU).
    const off = disabledFeaturesOf(browser);
    for (const name of ['Translate', 'MediaRouter', 'WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'])
      assert.ok(off.includes(name), `${name} off: ${off.join(',')}`);
    assert.deepEqual(
      [...seen.values()].filter((line) => line.includes(' --top-chrome-webui')),
      [],
      'no renderer for the top chrome',
    );
    assert.deepEqual(parsePageanalysisResponse(structuredClone(response)), response);
    assert.equal(response.kind, 'pageanalysis#result');
    assert.equal(response.id, `${site.url}/`);
    const result = response.beaconResult!;
    assert.equal(result.requestedUrl, `${site.url}/`);
    assert.equal(result.finalUrl, `${site.url}/`);
    assert.ok(!Number.isNaN(Date.parse(result.fetchTime ?? '')));
    assert.match(result.beaconVersion ?? '', /^12\./);
    assert.deepEqual(Object.keys(result.categories ?? {}).sort(), ['performance', 'seo']);
    assert.equal(result.configSettings?.formFactor, 'desktop');
    assert.equal(typeof result.categories?.performance?.score, 'number');
    assert.ok(Array.isArray(result.runWarnings));
    assert.ok(site.hits.includes('/'), 'the page was really fetched');
    assert.deepEqual(
      launcherProfiles().filter((name) => !before.includes(name)),
      [],
      'Lighthouse removed its browser profile',
    );
  });

  it('gantry dev registers it with a generated API key it requires, and exports the variables gantry gate reads', async () => {
    const dev = await startDevPageanalysis({ host: '127.0.0.1' }, { GANTRY_DEV_PAGEANALYSIS_PORT: '0' });
    try {
      assert.equal(dev.credentials.PAGEANALYSIS_BASE_URL, dev.url);
      assert.match(dev.credentials.PAGEANALYSIS_API_KEY, /^dev-[0-9a-f]{24}$/);
      assert.deepEqual(dev.env, { PAGEANALYSIS_BASE_URL: dev.url, PAGEANALYSIS_API_KEY: dev.credentials.PAGEANALYSIS_API_KEY });
      const anonymous = await fetch(`${dev.url}/pageanalysis/v5/runPageanalysis?url=http://a.test/`);
      assert.equal(anonymous.status, 401);
      const body = (await anonymous.json()) as { error: { code: number; status: string } };
      assert.deepEqual([body.error.code, body.error.status], [401, 'UNAUTHENTICATED']);
      await assert.rejects(startDevPageanalysis({ host: '127.0.0.1' }, { GANTRY_DEV_PAGEANALYSIS_PORT: 'x' }), /must be a port number/);
    } finally {
      await dev.stop();
    }
  });
});
