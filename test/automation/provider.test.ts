// BrowserCheck through the engine harness: the real @pulumi/pulumi dynamic-provider plugin in consumer projects,
// driving Debian's chromedriver and Chromium against a page served on 127.0.0.1.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectDeploymentFailure, Harness, type Stack } from '../harness/index.js';
import { startHttpPeer, type HttpPeer } from '../peers/http.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'browser-check.cjs'), esm: path.join(programs, 'browser-check.mjs') };
const PROVIDER_LIMIT_BYTES = 16 * 1024;

describe('BrowserCheck (Pulumi dynamic resource) through the engine harness', function () {
  this.timeout(240_000);
  let site: HttpPeer;
  let siteTitle = 'Gantry demo v1';
  let stack: Stack | undefined;

  before(async () => {
    site = await startHttpPeer((request, response) => {
      const found = request.url.split('?')[0] === '/';
      response.writeHead(found ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><title>${found ? siteTitle : 'Not found'}</title>`);
    });
  });
  afterEach(async () => {
    await stack?.dispose();
    stack = undefined;
  });
  after(async () => {
    await site?.close();
  });

  it('cjs consumer: create checks the page; no change runs nothing; a trigger re-checks; a failing check fails the update and keeps the last pass; bad inputs fail Check', async () => {
    stack = await Harness.consumer({ kind: 'cjs' });
    siteTitle = 'Gantry demo v1';
    const args = { url: `${site.url}/`, title: 'Gantry demo', triggers: { version: '1' } };

    const created = await stack.up(program, args);
    assert.deepEqual(created.plan, { site: 'create' });
    assert.equal(created.outputs.passed, true);
    assert.equal(created.outputs.pageTitle, 'Gantry demo v1');
    assert.equal(created.outputs.httpStatus, 200);
    assert.equal(created.outputs.statusFrom, 'browser');
    assert.equal(created.outputs.finalUrl, `${site.url}/`);
    const provider = created.resources.site!.provider ?? '';
    assert.ok(provider.length > 0);
    assert.ok(Buffer.byteLength(provider) <= PROVIDER_LIMIT_BYTES, `__provider is ${Buffer.byteLength(provider)} bytes`);
    assert.match(created.resources.site!.id ?? '', /^browsercheck-/);

    const pageLoads = () => site.requests.filter((r) => r.url === '/').length;
    const loadsBefore = pageLoads();
    const same = await stack.up(program, args);
    assert.deepEqual(same.plan, { site: 'same' });
    assert.equal(same.outputs.checkedAt, created.outputs.checkedAt);
    assert.equal(pageLoads(), loadsBefore, 'an unchanged check does not open the page');

    siteTitle = 'Gantry demo v2';
    const rechecked = await stack.up(program, { ...args, triggers: { version: '2' } });
    assert.deepEqual(rechecked.plan, { site: 'update' });
    assert.equal(rechecked.outputs.pageTitle, 'Gantry demo v2');
    assert.notEqual(rechecked.outputs.checkedAt, created.outputs.checkedAt);

    siteTitle = 'Broken deploy';
    const failed = await expectDeploymentFailure(stack.up(program, { ...args, triggers: { version: '3' } }));
    assert.match(failed.message, /browser check of .* failed: title: expected contains "Gantry demo", got "Broken deploy"/);
    assert.match(failed.message, /title\s+contains "Gantry demo"\s+"Broken deploy"\s+FAIL/, 'the table is in the deployment error');
    assert.equal(failed.result.resources.site!.outputs.pageTitle, 'Gantry demo v2', 'the state keeps the last passing result');

    const refused = await expectDeploymentFailure(stack.up(program, { url: 'file:///etc/passwd', status: 42 }));
    assert.match(refused.message, /url/);
    assert.match(refused.message, /only opens http and https pages/);
    assert.match(refused.message, /status/);

    const loadsBeforeRefresh = pageLoads();
    const refreshed = await stack.refresh();
    assert.deepEqual(refreshed.plan, { site: 'same' });
    assert.equal(pageLoads(), loadsBeforeRefresh, 'refresh keeps the recorded result without opening the page');

    const destroyed = await stack.destroy();
    assert.deepEqual(destroyed.plan, { site: 'delete' });
  });

  it('esm consumer: a 404 page fails create with the reason; a URL given as a secret stays out of the state, the provider and the log', async () => {
    stack = await Harness.consumer({ kind: 'esm' });
    siteTitle = 'Gantry demo v1';
    const failed = await expectDeploymentFailure(stack.up(program, { url: `${site.url}/missing`, title: 'Gantry' }));
    assert.match(failed.message, /status: expected 2xx, got 404/);
    assert.equal(failed.result.resources.site, undefined, 'nothing recorded for a check that never passed');

    const canary = `canary${Date.now()}`;
    const created = await stack.up(program, { url: `${site.url}/?token=${canary}`, secretUrl: true, title: 'Gantry demo', status: 200 });
    assert.equal(created.outputs.passed, true);
    assert.ok(created.resources.site!.secretOutputs.includes('url'), 'the url output is secret like its input');
    assert.doesNotMatch(String(created.outputs.finalUrl), new RegExp(canary), 'the final URL output is redacted');
    const provider = created.resources.site!.provider ?? '';
    assert.ok(Buffer.byteLength(provider) <= PROVIDER_LIMIT_BYTES);
    assert.ok(!provider.includes(canary));
    assert.ok(!(await readFile(stack.statePath, 'utf8')).includes(canary), 'the state file has no plain-text canary');
    assert.ok(!stack.log.includes(canary), 'the log has no canary');
  });
});
