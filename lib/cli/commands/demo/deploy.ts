import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { silentLogger } from '../../../log.js';
import { serverOps } from '../../serving.js';
import { serveDemoSite } from './site.js';
import { runningServer, type DemoStep } from './step.js';

const REPOSITORY = 'gantry/demo';
const ENVIRONMENT = 'production';

/**
 * A deployment to a protected environment, decided by a gate: the embedded platform's `production` on gantry/demo is
 * protected by the dev app; a WebhookReceiver (as `gantry hooks serve` runs it) takes the app's
 * `deployment_protection_rule` delivery, gates the demo site and answers through the app's installation; the
 * platform then marks the deployment a success or a failure.
 */
export const deployStep: DemoStep = {
  name: 'protected-deploy',
  description: "deploy to a protected environment: the platform asks Gantry's webhook receiver, which gates the site and approves",
  async run({ servers, out, examplesDir, json }) {
    const platform = runningServer(servers, 'platform', 'the embedded platform API');
    const { appId, installationId, appPrivateKeyFile, webhookSecret, token } = platform.credentials;
    const { PlatformApp, PlatformClient } = await import('../../../platform/index.js');
    const { WebhookReceiver, loadDeploymentGates } = await import('../../../webhooks/index.js');
    const { deploymentProtection, parseHooksConfig } = await loadDeploymentGates();
    const site = await serveDemoSite(examplesDir);
    const app = new PlatformApp({ baseUrl: platform.url, appId: appId!, privateKeyFile: appPrivateKeyFile!, env: {}, proxy: {}, logger: silentLogger });
    const deployer = new PlatformClient({ baseUrl: platform.url, token: token!, env: {}, proxy: {}, logger: silentLogger });
    const config = parseHooksConfig(
      {
        environments: {
          [ENVIRONMENT]: {
            urls: [site.url],
            min: { performance: 0.9, accessibility: 0.9 },
            audits: { 'largest-contentful-paint': 2500 },
            runs: 1,
            engine: 'local',
            strategy: 'desktop',
          },
        },
      },
      "the demo's gantry.hooks.json",
    );
    const decisions: Array<{ state: string; comment: string }> = [];
    const receiver = new WebhookReceiver({ secrets: [webhookSecret!], logger: silentLogger });
    receiver.on(
      'deployment_protection_rule.requested',
      deploymentProtection({ config, app, logger: silentLogger }, (decision) => decisions.push({ state: decision.state, comment: decision.comment })),
    );
    const deliveries: string[] = [];
    receiver.onDelivery((record) => deliveries.push(`${record.event ?? '-'}${record.action ? `.${record.action}` : ''} ${record.status}`));
    // Its health and metrics on the same port, as `gantry hooks serve` serves them (docs/operations.md).
    const { defaultOpsPaths, opsHandler } = await import('../../../ops/index.js');
    const ops = await serverOps('hooks-serve', defaultOpsPaths);
    ops.health.check('configuration', () => {});
    receiver.onDelivery((record) => ops.metrics.delivery(record));
    const opsHandle = opsHandler(ops);
    const handle = receiver.handler();
    const hooks = createServer((request, response) => {
      if (!opsHandle(request, response)) handle(request, response);
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
    try {
      // What the app's settings page does on the platform: point the app's webhook at the receiver.
      await app.appClient.request('PATCH', '/app/hook/config', { body: { url: hooksUrl, content_type: 'json' } });
      if (!json) out.line(`  receiver on ${hooksUrl} (as gantry hooks serve), app ${appId} installation ${installationId}; gating ${site.url}`);
      const ref = '0123456789abcdef0123456789abcdef01234567';
      const created = await deployer.request<{ id: number }>('POST', '/repos/{owner}/{repo}/deployments', {
        params: { owner: 'gantry', repo: 'demo' },
        body: { ref, environment: ENVIRONMENT, required_contexts: [], auto_merge: false },
      });
      const id = created.body.id;
      if (!json) out.line(`  deployment ${id} of ${REPOSITORY} to ${ENVIRONMENT} created; the platform waits for the app's protection rule`);
      let state: string | undefined;
      const deadline = Date.now() + 240_000;
      while (Date.now() < deadline) {
        const statuses = (
          await deployer.request<Array<{ state: string }>>('GET', '/repos/{owner}/{repo}/deployments/{id}/statuses', {
            params: { owner: 'gantry', repo: 'demo', id },
          })
        ).body;
        state = statuses[0]?.state;
        if (state === 'success' || state === 'failure' || state === 'error') break;
        await delay(500);
      }
      const decision = decisions.at(-1);
      const origin = new URL(hooksUrl).origin;
      // A late deployment_status delivery may still come in: the metrics are read after this count, never before.
      const delivered = deliveries.length;
      const readiness = (await fetch(`${origin}${defaultOpsPaths.ready}`)).status === 200 ? 'ready' : 'not ready';
      const counted = countSamples(await (await fetch(`${origin}${defaultOpsPaths.metrics}`)).text(), 'gantry_webhook_deliveries_total');
      if (!json) {
        out.line(`  deliveries: ${deliveries.join(', ') || 'none'}`);
        out.line(
          `  the receiver's ${defaultOpsPaths.ready}: ${readiness}; its ${defaultOpsPaths.metrics} counts ${counted} deliveries (as Prometheus scrapes gantry hooks serve)`,
        );
        if (decision) out.line(`  the app ${decision.state} it; the comment the platform shows begins: ${decision.comment.split('\n')[0]}`);
        out.line(`  the deployment's state is now ${state ?? 'unknown'}`);
        out.line('  try: gantry hooks events (the catalogue), gantry hooks serve --help; docs/webhooks.md runs the receiver for a real platform app');
        out.line("       (gantry dev exports GANTRY_WEBHOOK_SECRET and the app's GANTRY_APP_* for a receiver against its platform API)");
      }
      if (readiness !== 'ready' || counted < delivered)
        throw new Error(`the receiver's readiness is ${readiness} and its metrics count ${counted} deliveries of ${delivered}`);
      if (state !== 'success') throw new Error(`the deployment ended ${state ?? 'without a decision in 240 s'}${decision ? ` (${decision.state})` : ''}`);
      return {
        repository: REPOSITORY,
        environment: ENVIRONMENT,
        deployment: id,
        decision: decision?.state,
        state,
        deliveries,
        readiness,
        deliveriesCounted: counted,
      };
    } finally {
      await new Promise<void>((resolve) => hooks.close(() => resolve()));
      await receiver.close(5_000);
      ops.stop();
      app.close();
      deployer.close();
      await site.stop();
    }
  },
};

/** The sum of a counter's samples in the Prometheus text format. */
function countSamples(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
