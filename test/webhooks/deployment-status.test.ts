// deployment_status → gate → commit status: a successful deployment status with an environment_url, delivered by the
// embedded platform to the app's webhook, is gated in Chromium and its verdict posted as a commit status on the
// deployment's sha through the delivery's installation (pending first).
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { silentLogger } from '../../lib/log.js';
import { PlatformApp } from '../../lib/platform/index.js';
import { WebhookReceiver } from '../../lib/webhooks/index.js';
import { parseHooksConfig } from '../../lib/webhooks/config.js';
import { deploymentStatusGate } from '../../lib/webhooks/protection.js';

const SECRET = 'deployment status secret';
const SHA = 'abcdef0123456789abcdef0123456789abcdef01';

describe('deployment_status gated into a commit status (against the embedded platform)', function () {
  this.timeout(240_000);
  const servers: Server[] = [];
  let platform: PlatformServer | undefined;
  let receiver: WebhookReceiver | undefined;
  let app: PlatformApp | undefined;
  after(async () => {
    await receiver?.close(5_000);
    app?.close();
    for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
    await platform?.stop();
  });

  it('HOOK-EV-DEPLOYMENT-STATUS: a success with an environment_url is gated and posted as gantry/gate on the sha — pending, then success', async () => {
    const site = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="description" content="Staging"><title>Staging</title></head><body><h1>Staging</h1></body></html>',
      );
    });
    const hooks = createServer();
    servers.push(site, hooks);
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    platform = await startPlatformServer({
      apps: [
        {
          id: 5,
          publicKey,
          installations: [{ id: 6, account: 'gantry' }],
          webhook: { url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`, secret: SECRET },
        },
      ],
    });
    app = new PlatformApp({
      baseUrl: platform.url,
      appId: 5,
      privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      env: {},
      proxy: {},
      logger: silentLogger,
    });
    const config = parseHooksConfig({
      deploymentStatus: { gate: true },
      environments: { staging: { urls: [siteUrl], min: { performance: 0.5 }, runs: 1, engine: 'local', strategy: 'desktop' } },
    });
    receiver = new WebhookReceiver({ secrets: [SECRET], logger: silentLogger });
    receiver.on('deployment_status', deploymentStatusGate({ config, app, logger: silentLogger }));
    hooks.on('request', receiver.handler());

    const token = platform.issueToken({ kind: 'personal', login: 'deployer' });
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${platform!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
      return (await response.json()) as Record<string, unknown>;
    };
    const deployment = await call('POST', '/repos/gantry/demo/deployments', { ref: SHA, environment: 'staging', required_contexts: [] });
    await call('POST', `/repos/gantry/demo/deployments/${deployment.id as number}/statuses`, { state: 'success', environment_url: siteUrl });
    const deadline = Date.now() + 200_000;
    let states: string[] = [];
    while (Date.now() < deadline) {
      const statuses = (await (
        await fetch(`${platform.url}/repos/gantry/demo/commits/${SHA}/statuses`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as Array<{ state: string; context: string; creator?: { login: string } }>;
      states = statuses
        .filter((s) => s.context === 'gantry/gate')
        .map((s) => s.state)
        .reverse();
      if (states.includes('success') || states.includes('failure') || states.includes('error')) break;
      await delay(500);
    }
    assert.deepEqual(states, ['pending', 'success']);
  });
});
