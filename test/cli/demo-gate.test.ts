// The demo's gate step (what `npm start` shows): examples/site served on 127.0.0.1 and gated with Lighthouse in
// Chromium, one real run. And the demo site server refuses paths outside examples/site.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gateStep } from '../../lib/cli/commands/demo/gate.js';
import { SharedBrowser } from '../../lib/cli/commands/demo/shared-browser.js';
import { serveDemoSite } from '../../lib/cli/commands/demo/site.js';
import type { Output } from '../../lib/cli/output.js';
import { examplesDir } from '../../lib/paths.js';

function capture(): Output & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    line: (text = '') => void lines.push(text),
    json: (value) => void lines.push(JSON.stringify(value)),
    table: () => undefined,
    note: (text) => void lines.push(text),
    progress: () => ({ update() {}, done() {} }),
  };
}

function rawGet(url: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    // http.get would normalise `..` away; a raw request path reaches the server as written.
    const request = http.request(url, { path, method: 'GET' }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('demo: the gate step', function () {
  this.timeout(180_000);

  it('serves the demo site and gates it with Lighthouse: every check passes and the table is shown', async () => {
    const workDir = await mkdtemp(join(tmpdir(), 'gantry-demo-test-'));
    const out = capture();
    try {
      const result = await gateStep.run({ servers: new Map(), out, workDir, examplesDir: examplesDir(), json: false, browser: new SharedBrowser() });
      assert.equal(result.status, 'pass');
      const text = out.lines.join('\n');
      assert.match(text, /Page analysis gate PASSED \(local engine, desktop, 1 run, median-run\)/);
      for (const name of ['performance score', 'accessibility score', 'best-practices score', 'seo score', 'largest-contentful-paint']) {
        assert.match(text, new RegExp(`^ {2}${name}\\s+\\d+\\s+(>=|<=) \\d+\\s+PASS`, 'm'));
      }
      assert.ok(existsSync(join(workDir, 'gate-report', 'gate.json')));
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });

  it('the demo site serves examples/site and nothing outside it', async () => {
    const site = await serveDemoSite(examplesDir());
    try {
      assert.equal(await rawGet(site.url, '/'), 200);
      assert.equal(await rawGet(site.url, '/about.html'), 200);
      assert.equal(await rawGet(site.url, '/missing.html'), 404);
      // `..`, `%2e%2e` and encoded slashes are all folded at the site's root: each looks for
      // examples/site/package.json, which is not there.
      for (const path of ['/../../package.json', '/%2e%2e/%2e%2e/package.json', '/..%2f..%2fpackage.json']) {
        assert.equal(await rawGet(site.url, path), 404, path);
      }
    } finally {
      await site.stop();
    }
  });
});
