// The ops module in process: readiness states through the handler on a real socket, the details it shows, two
// servers' registries side by side, and the JSON log lines (redacted as text lines are).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../lib/log.js';
import { Health, ServerMetrics, defaultOpsPaths, opsHandler } from '../../lib/ops/index.js';
import { registerSecret } from '../../lib/redact.js';

async function serveOps(health: Health, metrics: ServerMetrics): Promise<{ url: string; server: Server }> {
  const handle = opsHandler({ health, metrics, paths: { ...defaultOpsPaths } });
  const server = createServer((request, response) => {
    if (!handle(request, response)) response.writeHead(418).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('ops module (in process)', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((server) => server.close()));

  it('OPS-HEALTH: /readyz is 200 while every check passes, 503 naming the failing one, 503 draining after drain(); /healthz stays 200; other paths pass on', async () => {
    let redisUp = true;
    const health = new Health(200)
      .check('configuration', () => {})
      .check('queue-redis', () => {
        if (!redisUp) throw new Error('the webhook queue redis://gantry:s3cr3t-pw@10.0.0.5:6379/0 is unavailable');
      })
      .check('slow', () => (redisUp ? undefined : new Promise((resolve) => setTimeout(resolve, 5_000).unref())));
    const { url, server } = await serveOps(health, new ServerMetrics('hooks-serve'));
    servers.push(server);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    redisUp = false;
    const down = await fetch(`${url}/readyz`);
    const text = await down.text();
    assert.equal(down.status, 503);
    assert.ok(!text.includes('s3cr3t-pw') && !text.includes('gantry:'), text);
    const report = JSON.parse(text) as { status: string; checks: Array<{ name: string; state: string; detail?: string }> };
    assert.equal(report.status, 'not-ready');
    assert.deepEqual(
      report.checks.map((check) => [check.name, check.state]),
      [
        ['configuration', 'ok'],
        ['queue-redis', 'failing'],
        ['slow', 'failing'],
      ],
    );
    assert.match(report.checks[1]!.detail!, /redis:\/\/10\.0\.0\.5:6379\/0 is unavailable/);
    assert.match(report.checks[2]!.detail!, /no answer within 200 ms/);
    redisUp = true;
    health.drain();
    const draining = await fetch(`${url}/readyz`);
    assert.equal(draining.status, 503);
    assert.equal(((await draining.json()) as { status: string }).status, 'draining');
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    assert.equal((await fetch(`${url}/hooks`)).status, 418, 'not an ops path: left to the server');
    assert.equal((await fetch(`${url}/metrics`, { method: 'POST' })).status, 405);
  });

  it('OPS-METRICS: two servers in one process keep their own registries (no clash, no shared counts)', async () => {
    const one = new ServerMetrics('hooks-serve');
    const two = new ServerMetrics('hooks-serve');
    one.delivery({ event: 'push', action: undefined, status: 200, outcome: 'done', ms: 3 });
    one.delivery({ event: 'push', action: undefined, status: 401, outcome: 'signature-mismatch', ms: 1 });
    const first = await one.text();
    const second = await two.text();
    assert.match(first, /gantry_webhook_deliveries_total\{event="push",action="-",verdict="done"\} 1/);
    assert.match(first, /gantry_webhook_signature_refusals_total\{reason="signature-mismatch"\} 1/);
    assert.doesNotMatch(second, /gantry_webhook_deliveries_total\{/);
  });

  it('OPS-METRICS: a label from outside carries no prose or URL: cut to 64 characters of [A-Za-z0-9_.:-]', async () => {
    const metrics = new ServerMetrics('hooks-serve');
    metrics.delivery({ event: 'push https://x.example/?token=abc', action: 'a'.repeat(100), status: 200, outcome: 'done', ms: 1 });
    const text = await metrics.text();
    assert.match(text, /event="push_https:__x.example__token_abc"/);
    assert.match(text, new RegExp(`action="${'a'.repeat(64)}"`));
  });

  it('OPS-LOGS: a JSON logger writes one object a line (time, level, msg, fields), every string redacted; the text format ignores the fields', () => {
    registerSecret('ops-log-secret-value-123');
    const lines: string[] = [];
    const json = createLogger({ format: 'json', level: 'info', write: (line) => lines.push(line) });
    json.debug('not at info');
    json.warn('token ops-log-secret-value-123 used\nsecond line', { delivery: 'abc-123', note: 'ops-log-secret-value-123', attempt: 2 });
    assert.equal(lines.length, 1);
    assert.ok(!lines[0]!.includes('ops-log-secret-value-123'), lines[0]);
    assert.ok(!lines[0]!.includes('\n'));
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(line), ['time', 'level', 'msg', 'delivery', 'note', 'attempt']);
    assert.equal(line.level, 'warn');
    assert.equal(line.delivery, 'abc-123');
    assert.equal(line.attempt, 2);
    const text: string[] = [];
    createLogger({ level: 'info', write: (l) => text.push(l) }).warn('plain', { delivery: 'abc-123' });
    assert.deepEqual(text, ['warn: plain']);
  });
});
