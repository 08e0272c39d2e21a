// The ops endpoints of the three servers, each started as a user starts it (`gantry …` in a process of its own):
// /healthz, /readyz with its checks, /metrics in the Prometheus text format, JSON logs; and a real Prometheus
// scraping `gantry hooks serve` and `gantry mcp serve`, asked through its HTTP API what it counted.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { startGantry, stopGantry, runGantry } from '../cli/gantry-process.js';
import { startPrometheus } from '../peers/prometheus.js';
import { startRedis, type RedisPeer } from '../peers/redis.js';
import { setTimeout as delay } from 'node:timers/promises';
import { postPush } from '../webhooks/helpers/examples.js';

const SECRET = 'ops-test-secret';

async function deliver(url: string, options: { secret?: string; id?: string } = {}): Promise<number> {
  const response = await postPush(url, { secret: options.secret ?? SECRET, ...(options.id ? { id: options.id } : {}) });
  await response.arrayBuffer();
  return response.status;
}

/** The value of one sample of the metrics text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_:]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = match[2] ?? '';
    if (Object.entries(labels).every(([key, value]) => have.includes(`${key}="${value}"`))) return Number(match[3]);
  }
  return undefined;
}

interface Served {
  child: ChildProcess;
  line: Record<string, unknown>;
  stderr: () => string;
}

async function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const started = await startGantry(
    [...args, '--json'],
    (stdout) => {
      const first = stdout.split('\n').find((line) => line.startsWith('{'));
      return first ? (JSON.parse(first) as Record<string, unknown>) : undefined;
    },
    env,
  );
  let stderr = '';
  started.child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return { child: started.child, line: started.value, stderr: () => stderr };
}

const base = (metricsUrl: unknown) => String(metricsUrl).replace(/\/[^/]*$/, '');

describe('ops: health, readiness, metrics and logs of the servers', function () {
  this.timeout(120_000);
  const children: ChildProcess[] = [];
  let redis: RedisPeer | undefined;
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => stopGantry(child)));
  });
  after(async () => {
    await redis?.stop();
  });

  it('OPS-HEALTH: hooks serve answers /healthz and /readyz (configuration ok) on its own port, off the webhook path; the paths are flags and may not take the webhook path', async () => {
    const server = await serve(['hooks', 'serve', '--port', '0', '--ready-path', '/ready'], { GANTRY_WEBHOOK_SECRET: SECRET });
    children.push(server.child);
    const origin = new URL(String(server.line.listening)).origin;
    const alive = await fetch(`${origin}/healthz`);
    assert.equal(alive.status, 200);
    assert.deepEqual(await alive.json(), { status: 'alive' });
    const ready = await fetch(`${origin}/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: [{ name: 'configuration', state: 'ok' }] });
    assert.equal((await fetch(`${origin}/readyz`)).status, 404, 'the default path is gone once another is given');
    const clash = await runGantry(['hooks', 'serve', '--port', '0', '--metrics-path', '/hooks'], { GANTRY_WEBHOOK_SECRET: SECRET });
    assert.equal(clash.code, 2, clash.stderr);
    assert.match(clash.stderr, /--metrics-path \/hooks is a path the server already answers/);
  });

  it('OPS-HEALTH: with a Redis queue, /readyz names its check; Redis down is 503 with the check failing, and no password shows in the answer', async () => {
    redis = await startRedis({ password: 'p4ss-w0rd-ops' });
    const server = await serve(['hooks', 'serve', '--port', '0', '--metrics-port', '0'], {
      GANTRY_WEBHOOK_SECRET: SECRET,
      GANTRY_HOOKS_QUEUE_URL: `${redis.url}/0`,
    });
    children.push(server.child);
    const ops = base(server.line.metrics);
    assert.notEqual(new URL(ops).port, new URL(String(server.line.listening)).port, '--metrics-port moves them off the public port');
    assert.equal((await fetch(`${new URL(String(server.line.listening)).origin}/metrics`)).status, 404, 'and the public port no longer shows them');
    const ready = await fetch(`${ops}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(((await ready.json()) as { checks: unknown[] }).checks, [
      { name: 'configuration', state: 'ok' },
      { name: 'queue-redis', state: 'ok' },
    ]);
    await redis.stop();
    redis = undefined;
    const down = await fetch(`${ops}/readyz`);
    const text = await down.text();
    assert.equal(down.status, 503, text);
    const report = JSON.parse(text) as { status: string; checks: Array<{ name: string; state: string }> };
    assert.equal(report.status, 'not-ready');
    assert.equal(report.checks.find((check) => check.name === 'queue-redis')?.state, 'failing');
    assert.ok(!text.includes('p4ss-w0rd-ops'), text);
    assert.ok(!(await (await fetch(`${ops}/metrics`)).text()).includes('p4ss-w0rd-ops'));
  });

  it('OPS-METRICS: hooks serve counts deliveries by event, action and verdict, signature refusals by reason, with the process metrics, in its own registry', async () => {
    const server = await serve(['hooks', 'serve', '--port', '0'], { GANTRY_WEBHOOK_SECRET: SECRET });
    children.push(server.child);
    const hooks = String(server.line.listening);
    const id = randomUUID();
    assert.equal(await deliver(hooks, { id }), 200);
    assert.equal(await deliver(hooks), 200);
    assert.equal(await deliver(hooks, { id }), 200, 'a redelivery');
    assert.equal(await deliver(hooks, { secret: 'wrong' }), 401);
    const response = await fetch(String(server.line.metrics));
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    assert.equal(sample(text, 'gantry_webhook_deliveries_total', { event: 'push', action: '-', verdict: 'done' }), 2);
    assert.equal(sample(text, 'gantry_webhook_deliveries_total', { event: 'push', verdict: 'duplicate' }), 1);
    assert.equal(
      sample(text, 'gantry_webhook_deliveries_total', { event: '-', verdict: 'signature-mismatch' }),
      1,
      'a refusal keeps no unsigned header as a label',
    );
    assert.equal(sample(text, 'gantry_webhook_signature_refusals_total', { reason: 'signature-mismatch' }), 1);
    assert.equal(sample(text, 'gantry_webhook_delivery_duration_seconds_count', { verdict: 'done' }), 2);
    assert.equal(sample(text, 'gantry_webhook_queue_jobs', { state: 'waiting' }), 0);
    assert.equal(sample(text, 'gantry_platform_refusals_total', { limit: 'primary' }), 0);
    assert.equal(sample(text, 'gantry_up', { server: 'hooks-serve' }), 1);
    assert.ok((sample(text, 'gantry_process_cpu_user_seconds_total') ?? -1) >= 0, 'the default process metrics');
    assert.ok(!text.includes(SECRET));
  });

  it("OPS-METRICS: hooks worker has no public port: --metrics-port serves its health and metrics (the whole queue's depth)", async () => {
    redis ??= await startRedis();
    const env = { GANTRY_HOOKS_QUEUE_URL: `${redis.url}/1` };
    const worker = await serve(['hooks', 'worker', '--metrics-port', '0'], env);
    children.push(worker.child);
    const ops = base(worker.line.metrics);
    assert.equal((await fetch(`${ops}/healthz`)).status, 200);
    const ready = (await (await fetch(`${ops}/readyz`)).json()) as { status: string; checks: Array<{ name: string }> };
    assert.equal(ready.status, 'ready');
    assert.deepEqual(
      ready.checks.map((check) => check.name),
      ['configuration', 'queue-redis'],
    );
    const text = await (await fetch(`${ops}/metrics`)).text();
    assert.equal(sample(text, 'gantry_webhook_queue_jobs', { state: 'waiting' }), 0);
    assert.equal(sample(text, 'gantry_up', { server: 'hooks-worker' }), 1);
    const without = await serve(['hooks', 'worker'], env);
    children.push(without.child);
    assert.equal(without.line.metrics, undefined, 'without --metrics-port the worker serves nothing');
  });

  it('OPS-METRICS: mcp serve counts its requests by method or tool and outcome (a made-up method as other-method), and answers /readyz', async () => {
    const server = await serve(['mcp', 'serve', '--no-auth', '--port', '0']);
    children.push(server.child);
    const answer = await fetch(String(server.line.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await answer.arrayBuffer();
    assert.equal(answer.status, 200);
    // Made-up method names share one label value: a caller cannot start a series per name.
    for (const method of ['made/upone', 'made/uptwo']) {
      const other = await fetch(String(server.line.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method }),
      });
      await other.arrayBuffer();
    }
    const ops = base(server.line.metrics);
    assert.equal((await fetch(`${ops}/readyz`)).status, 200);
    let text = '';
    for (let i = 0; i < 20 && sample(text, 'gantry_mcp_requests_total', { tool: 'tools/list' }) === undefined; i += 1) {
      text = await (await fetch(`${ops}/metrics`)).text();
      await delay(50);
    }
    assert.equal(sample(text, 'gantry_mcp_requests_total', { tool: 'tools/list', outcome: 'ok' }), 1);
    const others = text.split('\n').filter((line) => line.startsWith('gantry_mcp_requests_total{') && line.includes('tool="other-method"'));
    assert.equal(
      others.map((line) => Number(line.split(' ').at(-1))).reduce((a, b) => a + b, 0),
      2,
      text,
    );
    assert.ok(!text.includes('made/up'), 'no made-up method name is a label value');
    assert.equal(sample(text, 'gantry_up', { server: 'mcp-serve' }), 1);
  });

  it('OPS-LOGS: a server whose stdout is no terminal logs JSON lines (time, level, msg) at --log-level; --log-format text keeps the text lines', async () => {
    // Stopped the instant its start line is read: the signal handlers are installed before the line is written.
    const server = await serve(['hooks', 'serve', '--port', '0', '--log-level', 'info', '--drain-delay', '0'], { GANTRY_WEBHOOK_SECRET: SECRET });
    await stopGantry(server.child);
    const lines = server
      .stderr()
      .split('\n')
      .filter((line) => line !== '');
    const stopping = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => String(line.msg).startsWith('stopping:'));
    assert.ok(stopping, `no stopping line in: ${server.stderr()}`);
    assert.equal(stopping.level, 'info');
    assert.ok(!Number.isNaN(Date.parse(String(stopping.time))));
    const text = await serve(['hooks', 'serve', '--port', '0', '--log-level', 'info', '--log-format', 'text', '--drain-delay', '0'], {
      GANTRY_WEBHOOK_SECRET: SECRET,
    });
    await stopGantry(text.child);
    assert.match(text.stderr(), /^stopping: no new deliveries/m);
    const bad = await runGantry(['hooks', 'serve', '--port', '0', '--log-format', 'xml'], { GANTRY_WEBHOOK_SECRET: SECRET });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--log-format must be json or text/);
  });

  it('OPS-METRICS: a real Prometheus scrapes hooks serve and mcp serve; its query API returns the number of deliveries sent', async () => {
    const hooks = await serve(['hooks', 'serve', '--port', '0'], { GANTRY_WEBHOOK_SECRET: SECRET });
    children.push(hooks.child);
    const mcp = await serve(['mcp', 'serve', '--no-auth', '--port', '0']);
    children.push(mcp.child);
    const prometheus = await startPrometheus([
      { job: 'gantry-hooks', address: new URL(String(hooks.line.metrics)).host },
      { job: 'gantry-mcp', address: new URL(String(mcp.line.metrics)).host },
    ]);
    try {
      const sent = 25;
      for (let i = 0; i < sent; i += 1) assert.equal(await deliver(String(hooks.line.listening)), 200);
      const deadline = Date.now() + 30_000;
      let counted: number | undefined;
      let mcpUp: number | undefined;
      while (Date.now() < deadline) {
        counted = await prometheus.query('sum(gantry_webhook_deliveries_total{job="gantry-hooks",verdict="done"})');
        mcpUp = await prometheus.query('up{job="gantry-mcp"}');
        if (counted === sent && mcpUp === 1) break;
        await delay(500);
      }
      assert.equal(counted, sent);
      assert.equal(mcpUp, 1, 'the context server is scraped too');
      assert.equal(await prometheus.query('gantry_up{job="gantry-mcp",server="mcp-serve"}'), 1);
    } finally {
      await prometheus.stop();
    }
  });
});
