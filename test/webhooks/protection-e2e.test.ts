// End to end, as a platform team runs it: the embedded platform API protects two environments with an app; a
// deployment to each sends the app `deployment_protection_rule`; `gantry hooks serve` (a process of its own, with the
// app's id and key and the webhook secret in its environment) gates each environment's page with Lighthouse in
// Chromium and answers through the app's installation. A light page is approved and the deployment succeeds; a heavy
// one (a 6 MB render-blocking script) is rejected with its failing checks in the comment, and the deployment fails.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { exited, spawnGantry } from '../cli/gantry-process.js';

const APP_ID = 9;
const INSTALLATION = 4;
const SECRET = 'e2e webhook secret';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A light page, and a heavy one whose 6 MB script blocks rendering. */
async function serveSite(): Promise<{ server: Server; url: string }> {
  const heavyScript = `window.payload = "${'x'.repeat(6 * 1024 * 1024)}";`;
  const page = (title: string, head = '') =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="description" content="${title} page"><title>${title}</title>${head}</head><body><main><h1>${title}</h1><p>A page for the deployment gate.</p></main></body></html>`;
  const server = createServer((request, response) => {
    if (request.url === '/heavy.js') {
      response.writeHead(200, { 'content-type': 'text/javascript' });
      response.end(heavyScript);
    } else if (request.url === '/heavy') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page('Heavy', '<script src="/heavy.js"></script>'));
    } else if (request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page('Light'));
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface ProtectedDeployment {
  state: string;
  decision?: { state: string; comment?: string } | null;
  reports: Array<{ comment: string }>;
  statuses?: Array<{ state: string }>;
}

describe('deployment protection end to end: gantry hooks serve against the embedded platform', function () {
  this.timeout(400_000);
  let platform: PlatformServer;
  let site: { server: Server; url: string };
  let serve: ChildProcess | undefined;
  let folder: string;
  let stdout = '';
  let stderr = '';

  before(async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    folder = await mkdtemp(path.join(tmpdir(), 'gantry-hooks-e2e-'));
    const keyFile = path.join(folder, 'app.pem');
    await writeFile(keyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
    site = await serveSite();
    const port = await freePort();
    const hooksUrl = `http://127.0.0.1:${port}/hooks`;
    platform = await startPlatformServer({
      apps: [
        { id: APP_ID, publicKey, installations: [{ id: INSTALLATION, account: 'gantry' }], webhook: { url: hooksUrl, secret: SECRET, contentType: 'json' } },
      ],
      environments: [
        { repository: 'gantry/demo', name: 'production', protectionRules: [{ appId: APP_ID }] },
        { repository: 'gantry/demo', name: 'heavy', protectionRules: [{ appId: APP_ID }] },
      ],
    });
    const gate = { min: { performance: 0.9 }, audits: { 'largest-contentful-paint': 2500 }, runs: 1, engine: 'local', strategy: 'desktop' };
    const configFile = path.join(folder, 'gantry.hooks.json');
    await writeFile(
      configFile,
      JSON.stringify({ environments: { production: { urls: [`${site.url}/`], ...gate }, heavy: { urls: [`${site.url}/heavy`], ...gate } } }),
    );
    serve = spawnGantry(['hooks', 'serve', '--port', String(port), '--config', configFile], {
      GANTRY_WEBHOOK_SECRET: SECRET,
      GANTRY_APP_ID: String(APP_ID),
      GANTRY_APP_PRIVATE_KEY_FILE: keyFile,
      PLATFORM_API_URL: platform.url,
      GANTRY_LOG: 'info',
    });
    serve.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    serve.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (serve.exitCode !== null) throw new Error(`gantry hooks serve ended (${serve.exitCode}): ${stderr}`);
      const answer = await fetch(`http://127.0.0.1:${port}/other`).then(
        (r) => r.status,
        () => 0,
      );
      if (answer === 404) break;
      if (Date.now() > deadline) throw new Error(`gantry hooks serve did not listen in 90 s: ${stderr}`);
      await delay(250);
    }
  });

  after(async () => {
    if (serve && serve.exitCode === null) {
      serve.kill('SIGTERM');
      await exited(serve);
    }
    await platform?.stop();
    await new Promise<void>((resolve) => (site ? site.server.close(() => resolve()) : resolve()));
    await rm(folder, { recursive: true, force: true });
  });

  async function deploy(environment: string): Promise<{ id: number; protection: ProtectedDeployment }> {
    const token = platform.issueToken({ kind: 'personal', login: 'deployer' });
    const created = await fetch(`${platform.url}/repos/gantry/demo/deployments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ref: '0123456789abcdef0123456789abcdef01234567', environment, required_contexts: [] }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { id } = (await created.json()) as { id: number };
    const deadline = Date.now() + 300_000;
    for (;;) {
      const protection = (await (await fetch(`${platform.url}/_gantry/deployments/${id}`)).json()) as ProtectedDeployment;
      if (protection.state !== 'waiting') return { id, protection };
      if (Date.now() > deadline) throw new Error(`no decision on ${environment} in 300 s; hooks serve said:\n${stdout}\n${stderr}`);
      await delay(500);
    }
  }

  it('HOOK-EV-DEPLOYMENT-PROTECTION-RULE, HOOK-AUTH-HMAC: a light page is approved — a status report first, the table of checks as the comment — and the deployment succeeds', async () => {
    const { protection } = await deploy('production');
    assert.equal(protection.state, 'approved', JSON.stringify(protection));
    assert.ok(
      protection.reports.some((r) => /Gantry is gating 1 page of `production`/.test(r.comment)),
      JSON.stringify(protection.reports),
    );
    assert.match(protection.decision?.comment ?? '', /^\*\*Page analysis gate passed\*\*/);
    assert.match(protection.decision?.comment ?? '', /\| largest-contentful-paint \|/);
    assert.match(stdout, /deployment_protection_rule\.requested [0-9a-f-]{36} 20[02] /, stdout);
  });

  it('HOOK-EV-DEPLOYMENT-PROTECTION-RULE: a heavy page is rejected with its failing checks in a comment of at most 1,024 characters, and the deployment fails', async () => {
    const { protection } = await deploy('heavy');
    assert.equal(protection.state, 'rejected', JSON.stringify(protection));
    const comment = protection.decision?.comment ?? '';
    assert.match(comment, /^\*\*Page analysis gate failed\*\*/);
    assert.match(comment, /\*\*fail\*\*/);
    assert.ok(comment.length <= 1024);
    await delay(500);
    const statuses = (await (await fetch(`${platform.url}/_gantry/deployments/${await deployId('heavy')}`)).json()) as ProtectedDeployment;
    assert.ok(
      statuses.statuses?.some((s) => s.state === 'failure'),
      JSON.stringify(statuses.statuses),
    );
  });

  async function deployId(environment: string): Promise<number> {
    const all = (await (await fetch(`${platform.url}/_gantry/protection`)).json()) as { deployments: Array<{ deployment_id: number; environment: string }> };
    return all.deployments.filter((d) => d.environment === environment).at(-1)!.deployment_id;
  }
});
