// WebhookReceiver on a real socket: deliveries signed by an independent signer (@octokit/webhooks-methods), the
// handlers run on the in-process queue, the answer inside the acknowledgement budget, redeliveries by GUID, handler
// errors after the acknowledgement logged and passed on, and nothing refused ever reaching a handler.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { createLogger } from '../../lib/log.js';
import { MemoryQueue, WebhookReceiver, type ReceiverOptions, type WebhookContext } from '../../lib/webhooks/index.js';
import { pushPayload } from './helpers/examples.js';

const SECRET = "It's a Secret to Everybody";

interface Posted {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

describe('WebhookReceiver: verify, queue, acknowledge, de-duplicate', function () {
  this.timeout(30_000);
  let server: Server | undefined;
  let receiver: WebhookReceiver | undefined;
  let url = '';
  const logged: string[] = [];
  const start = async (options: ReceiverOptions = {}) => {
    logged.length = 0;
    receiver = new WebhookReceiver({ secrets: [SECRET], logger: createLogger({ level: 'debug', write: (line) => logged.push(line) }), ...options });
    const middleware = receiver.middleware({ path: '/hooks' });
    server = createServer((request, response) =>
      middleware(request, response, () => {
        response.writeHead(404);
        response.end();
      }),
    );
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    return receiver;
  };
  afterEach(async () => {
    await receiver?.close(1_000);
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
    receiver = undefined;
  });

  async function deliver(
    event: string,
    payload: unknown,
    options: { id?: string; signature?: string; headers?: Record<string, string> } = {},
  ): Promise<Posted> {
    const body = JSON.stringify(payload);
    const started = Date.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Platform-Hookshot/abc123',
        'x-platform-event': event,
        'x-platform-delivery': options.id ?? randomUUID(),
        'x-platform-hook-id': '42',
        'x-hub-signature-256': options.signature ?? (await octokitSign(SECRET, body)),
        ...options.headers,
      },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, ms: Date.now() - started };
  }

  it('HOOK-OVERVIEW-POST, HOOK-AUTH-HMAC: a signed push runs the push handlers (event and event.action and *) once, and is answered 200 when they are done', async () => {
    const seen: string[] = [];
    (await start())
      .on('push', (c) => void seen.push(`push ${c.payload.ref as string}`))
      .on('*', (c) => void seen.push(`any ${c.event}`))
      .on('status', () => void seen.push('status'));
    const answer = await deliver('push', pushPayload);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(seen, ['push refs/heads/main', 'any push']);
  });

  it('HOOK-AUTH-HMAC: a signature by another secret is 401 and no handler runs; a delivery with a missing required property (HOOK-REQ-DEFAULT) is 400 naming it', async () => {
    let ran = 0;
    (await start()).on('*', () => void (ran += 1));
    const forged = await deliver('push', pushPayload, { signature: await octokitSign('another secret', JSON.stringify(pushPayload)) });
    assert.equal(forged.status, 401);
    const { pusher: _pusher, ...withoutPusher } = pushPayload;
    const invalid = await deliver('push', withoutPusher);
    assert.equal(invalid.status, 400);
    assert.match(String(invalid.body.message), /pusher/);
    assert.equal(ran, 0, 'nothing refused reaches a handler');
  });

  it('DOCS-AGREE-SERVERS HOOK-HDR-SIGNATURE-SHA256: two signature headers on the wire — both right, or a right one after another — are refused as malformed (401) and no handler runs', async () => {
    await start();
    let ran = 0;
    receiver!.on('push', () => {
      ran += 1;
    });
    const body = JSON.stringify(pushPayload);
    const good = await octokitSign(SECRET, body);
    const target = new URL(url);
    const send = (signatures: string[]) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(target.port), target.hostname, () => {
          socket.write(
            [
              `POST ${target.pathname} HTTP/1.1`,
              `Host: ${target.host}`,
              'Content-Type: application/json',
              'User-Agent: Platform-Hookshot/abc',
              'X-Platform-Event: push',
              `X-Platform-Delivery: ${randomUUID()}`,
              'X-Platform-Hook-ID: 42',
              ...signatures.map((value) => `X-Hub-Signature-256: ${value}`),
              `Content-Length: ${Buffer.byteLength(body)}`,
              'Connection: close',
              '',
              body,
            ].join('\r\n'),
          );
        });
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
        socket.on('error', reject);
        socket.on('close', () => resolve(answer));
      });
    for (const signatures of [
      [good, good],
      [`sha256=${'0'.repeat(64)}`, good],
      [good, `sha256=${'0'.repeat(64)}`],
    ]) {
      const answer = await send(signatures);
      assert.match(answer, /^HTTP\/1\.1 401 /, answer);
      assert.match(answer, /"reason":"signature-malformed"/);
    }
    assert.match(await send([good]), /^HTTP\/1\.1 200 /, 'one signature header is taken');
    assert.equal(ran, 1);
  });

  it('HOOK-DEL-REQUEST: a redelivery (the same GUID) of a finished delivery is acknowledged and not run again; a failed one runs again when redelivered', async () => {
    let runs = 0;
    let fail = true;
    (await start()).on('push', () => {
      runs += 1;
      if (fail) throw new Error('the deploy tool was down');
    });
    const id = randomUUID();
    const first = await deliver('push', pushPayload, { id });
    assert.equal(first.status, 500, 'a handler that failed within the budget makes the delivery fail, so it can be redelivered');
    assert.match(String(first.body.message), new RegExp(id));
    assert.ok(
      logged.some((line) => line.includes(id) && line.includes('the deploy tool was down')),
      'the error is logged with the GUID',
    );
    fail = false;
    const again = await deliver('push', pushPayload, { id });
    assert.equal(again.status, 200);
    const third = await deliver('push', pushPayload, { id });
    assert.equal(third.status, 200);
    assert.equal(third.body.status, 'duplicate');
    assert.equal(runs, 2, 'run for the first delivery and the redelivery after the failure, not for the duplicate');
  });

  it('HOOK-OVERVIEW-POST: a handler still running when the budget ends is answered 202 in time; its later error is logged with the GUID and passed to onError, never lost', async () => {
    const errors: Array<{ message: string; id: string }> = [];
    const r = await start({ ackWithinMs: 300 });
    r.on('push', async (context: WebhookContext) => {
      await delay(1_500, undefined, { signal: context.signal });
      throw new Error('the slow gate failed');
    }).onError((error, context) => errors.push({ message: error.message, id: context.id }));
    const id = randomUUID();
    const answer = await deliver('push', pushPayload, { id });
    assert.equal(answer.status, 202);
    assert.ok(answer.ms < 1_200, `answered in ${answer.ms} ms, before the handler ended`);
    await delay(2_000);
    assert.deepEqual(errors, [{ message: 'the slow gate failed', id }]);
    assert.ok(logged.some((line) => line.includes(id) && line.includes('the slow gate failed')));
  });

  it("HOOK-OVERVIEW-POST: with the default 5 s budget a handler that takes 12 s is answered 202 well inside the platform's 10 s, and its completion is logged with the GUID", async function () {
    this.timeout(40_000);
    let finished = false;
    (await start()).on('push', async (context: WebhookContext) => {
      await delay(12_000, undefined, { signal: context.signal });
      finished = true;
    });
    const id = randomUUID();
    const answer = await deliver('push', pushPayload, { id });
    assert.equal(answer.status, 202);
    assert.ok(answer.ms >= 4_500 && answer.ms < 8_000, `answered after ${answer.ms} ms: well inside 10 s, having waited for the handler`);
    assert.equal(finished, false);
    await delay(12_000 - answer.ms + 1_500);
    assert.ok(finished, 'the work went on after the answer');
    assert.ok(
      logged.some((line) => line.includes(id) && /done after/.test(line)),
      logged.join('\n'),
    );
  });

  it('unknown events are accepted as unknown, not crashed on; the ghost sender (HOOK-SENDER-GHOST) is surfaced, not treated as a person', async () => {
    const seen: string[] = [];
    (await start()).on('*', (c) => void seen.push(c.event));
    const unknown = await deliver('made_up_event', { action: 'done', whatever: 1 });
    assert.equal(unknown.status, 200);
    const ghost = await deliver('check_run', { action: 'completed', check_run: { id: 1 }, repository: { id: 1 }, sender: { login: 'ghost' } });
    assert.equal(ghost.status, 200);
    assert.deepEqual(seen, ['made_up_event', 'check_run']);
    assert.ok(logged.some((line) => /ghost placeholder/.test(line)));
  });

  it('the middleware passes other paths on; a body parser that ran first is named instead of every delivery failing its signature', async () => {
    const r = await start();
    const middleware = r.middleware({ path: '/hooks' });
    let passed = false;
    middleware({ url: '/health', headers: {} } as never, {} as never, () => (passed = true));
    assert.ok(passed);
    let error: unknown;
    middleware({ url: '/hooks', headers: {}, body: {}, readableEnded: true } as never, {} as never, (e?: unknown) => (error = e));
    assert.match(String((error as Error)?.message), /body parser read the request before the receiver/);
  });

  it('no secret at all is a usage error naming GANTRY_WEBHOOK_SECRET; GANTRY_WEBHOOK_SECRETS adds rotation secrets', async () => {
    assert.throws(() => new WebhookReceiver({ env: {}, queue: new MemoryQueue() }), /GANTRY_WEBHOOK_SECRET/);
    const rotating = await start({
      secrets: undefined,
      env: { GANTRY_WEBHOOK_SECRET: 'whsec-new-8e3b51c2', GANTRY_WEBHOOK_SECRETS: `whsec-old-27fa0d9e,${SECRET}` },
    });
    let ran = 0;
    rotating.on('push', () => void (ran += 1));
    assert.equal((await deliver('push', pushPayload)).status, 200, 'signed with the old secret, still accepted while rotating');
    assert.equal(ran, 1);
  });

  it('HOOK-DEL-REQUEST: the in-process queue remembers at least the last `remember` finished GUIDs (older ones are forgotten, a generation at a time) and never forgets a job still waiting or running', async () => {
    const queue = new MemoryQueue({ remember: 3, concurrency: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    queue.process(async (job) => {
      if (job.id === 'slow') await held;
    });
    const job = (id: string) => ({
      id,
      event: 'push',
      action: undefined,
      hookId: '1',
      installationId: undefined,
      payload: {},
      receivedAt: new Date().toISOString(),
    });
    assert.deepEqual(await queue.add(job('slow')), { added: true });
    const ids = Array.from({ length: 12 }, (_, i) => `g${i}`);
    for (const id of ids) assert.deepEqual(queue.record(id), { added: true });
    // The newest three are always known; the first ones were forgotten (and would be recorded again).
    for (const id of ids.slice(-3)) assert.deepEqual(queue.record(id), { added: false, state: 'done' });
    assert.deepEqual(queue.record('g0'), { added: true });
    // The running job outlived every generation: its GUID is still known as running, and it finishes.
    assert.deepEqual(await queue.add(job('slow')), { added: false, state: 'running' });
    release();
    assert.equal((await queue.waitFor('slow', 5000)).state, 'done');
    assert.deepEqual(await queue.add(job('slow')), { added: false, state: 'done' });
  });
});
