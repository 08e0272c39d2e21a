// Draining on the public port, process by process: the built `gantry hooks serve` and `gantry mcp serve` get SIGTERM
// and, for their --drain-delay, keep taking requests while /readyz answers 503 draining (so a load balancer moves
// on), then close the port, finish what they hold and exit 0. Real sockets only: a delivery sent during the delay
// runs, one still uploading when the port closes is answered, a new connection is refused.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { sign } from '@octokit/webhooks-methods';
import { exited, runBuiltGantry } from '../cli/gantry-process.js';
import { startRedis, type RedisPeer } from '../peers/redis.js';
import { pushPayload } from '../webhooks/helpers/examples.js';

const SECRET = 'drain-test-secret';
const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

interface Served {
  child: ChildProcess;
  /** The server's own URL (the webhook path, or the MCP endpoint). */
  url: string;
  /** /readyz and /metrics as its start note names them. */
  readiness: string;
  metrics: string;
  stdout: () => string;
  stderr: () => string;
}

/** The built `gantry <args>` until its start line and its note naming readiness and metrics. */
function serve(args: string[], started: RegExp): Promise<Served> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, GANTRY_LOG: 'warn', GANTRY_WEBHOOK_SECRET: SECRET },
  });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    const check = () => {
      const url = started.exec(stdout)?.[1];
      const note = /^readiness on (\S+), metrics on (\S+)$/m.exec(stderr);
      if (url && note) resolve({ child, url, readiness: note[1]!, metrics: note[2]!, stdout: () => stdout, stderr: () => stderr });
    };
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      check();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      check();
    });
    child.once('close', (code) => reject(new Error(`gantry ${args.join(' ')} exited with ${code} before it served: ${stderr}`)));
  });
}

interface Answer {
  status: number;
  connection: string | undefined;
  body: string;
}

/** One request on a new keep-alive connection (as a load balancer's or a platform's client asks), closed after. */
function request(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const agent = new http.Agent({ keepAlive: true });
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  }).finally(() => agent.destroy());
}

/** Resolves true when a TCP connection to the URL's port is refused, false when it is accepted. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? resolve(true) : reject(error)));
  });
}

/** Polls until `probe` holds, failing after `ms`. */
async function until(what: string, ms: number, probe: () => Promise<boolean>): Promise<number> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe()) return Date.now();
    await delay(25);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

const body = JSON.stringify(pushPayload);
const deliveryHeaders = async (id: string) => ({
  'content-type': 'application/json',
  'content-length': String(Buffer.byteLength(body)),
  'user-agent': 'Platform-Hookshot/drain',
  'x-platform-event': 'push',
  'x-platform-delivery': id,
  'x-platform-hook-id': '29',
  'x-hub-signature-256': await sign(SECRET, body),
});

const ready = async (url: string) => {
  const answer = await request(url);
  return { status: answer.status, state: (JSON.parse(answer.body) as { status: string }).status, connection: answer.connection };
};

describe('OPS-DRAIN: SIGTERM drains the public port (the built command, real sockets)', function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  let redis: RedisPeer | undefined;
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  after(async () => {
    await redis?.stop();
  });

  it('OPS-DRAIN: hooks serve after SIGTERM answers /readyz 503 draining (/healthz 200) and still takes deliveries for --drain-delay, each answer Connection: close; then refuses connections, answers the delivery still uploading, exits 0', async () => {
    // The Redis queue, as in production: every delivery is a job (in process, one no handler wants is only recorded).
    redis = await startRedis();
    const server = await serve(
      ['hooks', 'serve', '--port', '0', '--queue', `${redis.url}/0`, '--drain-delay', '2', '--log-level', 'info'],
      /receiving webhooks on (\S+) /,
    );
    children.push(server.child);
    const origin = new URL(server.url).origin;
    assert.equal(new URL(server.readiness).origin, origin, 'the note names readiness on the public port');
    assert.deepEqual(await ready(server.readiness), { status: 200, state: 'ready', connection: 'keep-alive' });

    const ended = exited(server.child);
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await until('/readyz answering 503', 2_000, async () => (await request(server.readiness)).status === 503);
    assert.deepEqual(await ready(server.readiness), { status: 503, state: 'draining', connection: 'close' });
    const alive = await request(`${origin}/healthz`);
    assert.equal(alive.status, 200, 'liveness stays 200 while draining');

    // A delivery sent during the delay is taken and its job runs.
    const during = randomUUID();
    const answer = await request(server.url, { method: 'POST', headers: await deliveryHeaders(during), body });
    assert.equal(answer.status, 200, answer.body);
    assert.equal((JSON.parse(answer.body) as { status: string }).status, 'done');
    assert.equal(answer.connection, 'close', 'a keep-alive client is told to move on');
    const metrics = (await request(server.metrics)).body;
    assert.match(metrics, /^gantry_webhook_jobs_total\{event="push",outcome="done"\} 1$/m);
    assert.equal(server.child.exitCode, null, 'still serving during the delay');

    // One still uploading when the delay ends: headers and half its body now, the rest once the port is closed.
    const late = randomUUID();
    const uploading = http.request(server.url, { method: 'POST', headers: await deliveryHeaders(late), agent: new http.Agent({ keepAlive: true }) });
    const lateAnswer = new Promise<Answer>((resolve, reject) => {
      uploading.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: text }));
      });
      uploading.on('error', reject);
    });
    uploading.write(body.slice(0, body.length / 2));
    const closedAt = await until('the port refusing connections', 10_000, () => refused(server.url));
    assert.ok(closedAt - signalled >= 2_000, `the port closed ${closedAt - signalled} ms after SIGTERM, before the 2 s delay`);
    assert.equal(server.child.exitCode, null, 'the process waits for the delivery in hand');
    uploading.end(body.slice(body.length / 2));
    const finished = await lateAnswer;
    assert.equal(finished.status, 200, finished.body);
    assert.equal((JSON.parse(finished.body) as { status: string }).status, 'done');

    assert.equal(await ended, 0);
    for (const id of [during, late]) assert.match(server.stdout(), new RegExp(`^\\S+ push ${id} 200 done \\d+ms$`, 'm'));
    const logged = server
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => String((JSON.parse(line) as { msg: unknown }).msg));
    const draining = logged.findIndex((msg) => msg.startsWith('draining: /readyz answers 503; still serving for 2 s'));
    const stopping = logged.findIndex((msg) => msg.startsWith('stopping: no new deliveries'));
    assert.ok(draining >= 0 && stopping > draining, `draining, then stopping: ${logged.join(' | ')}`);
  });

  it('OPS-DRAIN: a second SIGTERM during the delay ends hooks serve at once with 143; Ctrl-C (SIGINT) skips the delay and exits 0', async () => {
    const server = await serve(['hooks', 'serve', '--port', '0', '--drain-delay', '60'], /receiving webhooks on (\S+) /);
    children.push(server.child);
    const ended = exited(server.child);
    server.child.kill('SIGTERM');
    await until('/readyz answering 503', 2_000, async () => (await request(server.readiness)).status === 503);
    const again = Date.now();
    server.child.kill('SIGTERM');
    assert.equal(await ended, 143);
    assert.ok(Date.now() - again < 2_000, `ended ${Date.now() - again} ms after the second signal`);

    const person = await serve(['hooks', 'serve', '--port', '0', '--drain-delay', '60'], /receiving webhooks on (\S+) /);
    children.push(person.child);
    const stopped = exited(person.child);
    const interrupted = Date.now();
    person.child.kill('SIGINT');
    assert.equal(await stopped, 0);
    assert.ok(Date.now() - interrupted < 5_000, `Ctrl-C took ${Date.now() - interrupted} ms: a person is not a load balancer`);
  });

  it('OPS-DRAIN: mcp serve after SIGTERM answers /readyz 503 draining (/healthz 200) and still serves requests for --drain-delay; then refuses connections and exits 0', async () => {
    const server = await serve(['mcp', 'serve', '--no-auth', '--port', '0', '--drain-delay', '1'], /context server on (\S+) /);
    children.push(server.child);
    assert.equal(new URL(server.readiness).pathname, '/readyz', "the note names readiness as hooks serve's does");
    const ended = exited(server.child);
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await until('/readyz answering 503', 2_000, async () => (await request(server.readiness)).status === 503);
    assert.equal((await ready(server.readiness)).state, 'draining');
    assert.equal((await request(`${new URL(server.url).origin}/healthz`)).status, 200);
    const listed = await request(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(listed.status, 200, listed.body);
    assert.match(listed.body, /modules_resolve/);
    assert.equal(listed.connection, 'close');
    const closedAt = await until('the port refusing connections', 10_000, () => refused(server.url));
    assert.ok(closedAt - signalled >= 1_000, `the port closed ${closedAt - signalled} ms after SIGTERM, before the 1 s delay`);
    assert.equal(await ended, 0);
  });

  it('OPS-DRAIN: --drain-delay takes seconds from 0 to 300: anything else is exit 2 with one line, before listening; the worker has no such flag', async () => {
    for (const value of ['banana', '-1', '301', '1e3']) {
      const run = await runBuiltGantry(['hooks', 'serve', '--port', '0', '--drain-delay', value], { GANTRY_WEBHOOK_SECRET: SECRET });
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stderr.trim(), `error: --drain-delay must be a number of seconds from 0 to 300, got "${value}"`);
    }
    const mcp = await runBuiltGantry(['mcp', 'serve', '--no-auth', '--port', '0', '--drain-delay', 'soon']);
    assert.equal(mcp.code, 2, mcp.stderr);
    assert.match(mcp.stderr, /--drain-delay must be a number of seconds from 0 to 300, got "soon"/);
    const worker = await runBuiltGantry(['hooks', 'worker', '--drain-delay', '5']);
    assert.equal(worker.code, 2);
    assert.match(worker.stderr, /unknown option '--drain-delay'/);
  });
});
