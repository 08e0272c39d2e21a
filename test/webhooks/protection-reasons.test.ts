// A deployment is never left waiting: deploymentProtection rejects, with the reason as the comment, an environment
// without configuration, a gate whose engine cannot run, and a gate that runs longer than its timeoutSeconds — against
// the embedded platform's protected environments, with the receiver in this process and real engines (the page
// analysis API at a closed port; Lighthouse on a page that never finishes loading).
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { silentLogger } from '../../lib/log.js';
import { PlatformApp } from '../../lib/platform/index.js';
import { WebhookReceiver, type HooksConfig } from '../../lib/webhooks/index.js';
import { parseHooksConfig } from '../../lib/webhooks/config.js';
import { deploymentProtection } from '../../lib/webhooks/protection.js';
import { waitingTogether } from '../waiting-together.js';

const SECRET = 'protection reasons secret';
const APP_ID = 12;

interface Protected {
  state: string;
  decision?: { state: string; comment?: string } | null;
  reports: Array<{ comment: string }>;
}

describe('deployment protection: rejected with the reason, never left waiting', function () {
  this.timeout(180_000);
  const servers: Server[] = [];
  let platform: PlatformServer;
  let receiver: WebhookReceiver;
  let app: PlatformApp;
  let closedPort: number;
  let stalledUrl: string;
  const together = waitingTogether();

  before(async () => {
    // A page whose response never ends: Lighthouse waits for its load until the gate's timeout.
    const stalled = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.write('<!doctype html><html><head><title>never done</title></head><body>');
    });
    const probe = createServer();
    const hooks = createServer();
    servers.push(stalled, hooks);
    for (const server of [stalled, probe, hooks]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    stalledUrl = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/`;
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    platform = await startPlatformServer({
      apps: [
        {
          id: APP_ID,
          publicKey,
          installations: [{ id: 3, account: 'gantry' }],
          webhook: { url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`, secret: SECRET },
        },
      ],
      environments: ['unconfigured', 'broken', 'slow'].map((name) => ({ repository: 'gantry/demo', name, protectionRules: [{ appId: APP_ID }] })),
    });
    app = new PlatformApp({
      baseUrl: platform.url,
      appId: APP_ID,
      privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      env: {},
      proxy: {},
      logger: silentLogger,
    });
    const config: HooksConfig = parseHooksConfig(
      {
        environments: {
          broken: { urls: ['https://www.example.com/'], engine: 'api', runs: 1 },
          slow: { urls: [stalledUrl], engine: 'local', runs: 1, timeoutSeconds: 10 },
        },
      },
      "the test's gantry.hooks.json",
    );
    receiver = new WebhookReceiver({ secrets: [SECRET], logger: silentLogger });
    receiver.on('deployment_protection_rule.requested', deploymentProtection({ config, app, logger: silentLogger }));
    hooks.on('request', receiver.handler());
    // The api engine's address: a port nothing listens on (read by createEngine from the environment).
    process.env.PAGEANALYSIS_BASE_URL = `http://127.0.0.1:${closedPort}`;
    // Each deployment waits on its own environment (the api engine's retries, the slow gate's timeout): all three
    // are made at once, and each test awaits its own decision.
    together.startAll();
  });

  after(async () => {
    delete process.env.PAGEANALYSIS_BASE_URL;
    await receiver?.close(5_000);
    app?.close();
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await platform?.stop();
  });

  async function deploy(environment: string): Promise<Protected> {
    const token = platform.issueToken({ kind: 'personal', login: 'deployer' });
    const created = await fetch(`${platform.url}/repos/gantry/demo/deployments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ref: '0123456789abcdef0123456789abcdef01234567', environment, required_contexts: [] }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { id } = (await created.json()) as { id: number };
    const deadline = Date.now() + 150_000;
    for (;;) {
      const protection = (await (await fetch(`${platform.url}/_gantry/deployments/${id}`)).json()) as Protected;
      if (protection.state !== 'waiting') return protection;
      if (Date.now() > deadline) throw new Error(`no decision on ${environment}`);
      await delay(250);
    }
  }

  const unconfigured = together.add(() => deploy('unconfigured'));
  const broken = together.add(() => deploy('broken'));
  const slow = together.add(async () => {
    const started = Date.now();
    return { result: await deploy('slow'), ms: Date.now() - started };
  });

  it('HOOK-EV-DEPLOYMENT-PROTECTION-RULE: an environment the configuration does not name is rejected, the comment naming it and the file', async () => {
    const result = await unconfigured();
    assert.equal(result.state, 'rejected');
    assert.match(result.decision?.comment ?? '', /no gate for the environment `unconfigured` in the test's gantry\.hooks\.json/);
    assert.deepEqual(result.reports, [], 'no status report for a gate that does not run');
  });

  it("HOOK-EV-DEPLOYMENT-PROTECTION-RULE: a gate whose engine cannot reach the page analysis API is rejected with the engine's error", async () => {
    const result = await broken();
    assert.equal(result.state, 'rejected');
    assert.match(result.decision?.comment ?? '', /Gantry rejected the deployment|could not decide/);
    assert.match(result.reports[0]?.comment ?? '', /Gantry is gating 1 page of `broken`/);
  });

  it('HOOK-EV-DEPLOYMENT-PROTECTION-RULE: a gate that runs longer than timeoutSeconds is rejected saying so', async () => {
    const { result, ms } = await slow();
    assert.equal(result.state, 'rejected');
    assert.match(result.decision?.comment ?? '', /ran longer than 10 s \(timeoutSeconds\)|could not decide/);
    assert.ok(ms < 120_000);
  });
});
