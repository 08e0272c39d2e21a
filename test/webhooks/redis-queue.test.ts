// RedisQueue (lib/webhooks/redis-queue.ts) against a real redis-server (test/peers/redis.ts): several queues — in
// this process and in worker processes of their own (helpers/queue-worker.ts) — share one queue; each delivery's GUID
// runs once; the contract is MemoryQueue's (a finished GUID is acknowledged, a failed one runs again when redelivered);
// a worker killed with SIGKILL mid-job has its job run again elsewhere; Redis down fails closed. Then issue 13's end to
// end: two receivers and two worker processes on one queue, 50 signed deliveries, one worker killed midway. And the
// command: gantry hooks serve --queue / --no-work and gantry hooks worker.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createClient } from 'redis';
import { ExitCode } from '../../lib/errors.js';
import { createLogger, type Logger } from '../../lib/log.js';
import {
  MemoryQueue,
  RedisQueue,
  WebhookQueueError,
  WebhookReceiver,
  webhookQueueFor,
  type JobQueue,
  type RedisQueueOptions,
  type WebhookJob,
} from '../../lib/webhooks/index.js';
import { startRedis, type RedisPeer } from '../peers/redis.js';
import { runGantryCommand, startGantryCommand, startQueueWorker, stopProcess, type Started } from './helpers/queue-processes.js';
import { postPush, pushPayload } from './helpers/examples.js';

const PASSWORD = 'queue-pass-7Hq2';
const SECRET = "It's a Secret to Everybody";

function job(id: string, event = 'push'): WebhookJob {
  return { id, event, action: undefined, hookId: '42', installationId: undefined, payload: { ...pushPayload }, receivedAt: new Date().toISOString() };
}

/** A line of a worker's record: "<worker> start|end <guid> <attempt> <ms>". */
interface Entry {
  worker: string;
  kind: 'start' | 'end';
  id: string;
  attempt: number;
  at: number;
}

function parseLog(lines: string[]): Entry[] {
  return lines.map((line) => {
    const [worker, kind, id, attempt, at] = line.split(' ');
    return { worker: worker!, kind: kind as Entry['kind'], id: id!, attempt: Number(attempt), at: Number(at) };
  });
}

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(everyMs);
  }
}

async function post(url: string, id: string, options: { secret?: string } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await postPush(url, { id, secret: options.secret ?? SECRET });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function listen(receiver: WebhookReceiver): Promise<{ server: Server; url: string }> {
  const handler = receiver.handler();
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` };
}

describe('RedisQueue: webhook jobs shared by receivers and workers through Redis', function () {
  this.timeout(60_000);
  let peer: RedisPeer;
  let inspector: ReturnType<typeof createClient>;
  let counter = 0;
  let prefix = '';
  const queues: JobQueue[] = [];
  const processes: Started[] = [];
  const servers: Server[] = [];
  const logged: string[] = [];
  const logger: Logger = createLogger({ level: 'debug', write: (line) => logged.push(line) });

  const queue = (options: Partial<RedisQueueOptions> = {}): RedisQueue => {
    const q = new RedisQueue({ url: `${peer.url}/0`, prefix, leaseMs: 1_500, retryDelayMs: 200, pollMs: 200, logger, ...options });
    queues.push(q);
    return q;
  };
  const records = async (): Promise<Entry[]> => parseLog(await inspector.lRange(`${prefix}test:log`, 0, -1));

  before(async function () {
    this.timeout(30_000);
    peer = await startRedis({ password: PASSWORD });
    inspector = createClient({ url: peer.url });
    inspector.on('error', () => {});
    await inspector.connect();
  });
  after(async () => {
    await inspector?.close();
    await peer?.stop();
  });
  beforeEach(() => {
    counter += 1;
    prefix = `test:${process.pid}:${counter}:`;
    logged.length = 0;
  });
  afterEach(async function () {
    this.timeout(30_000);
    await Promise.all(processes.splice(0).map((p) => stopProcess(p, 'SIGKILL')));
    await Promise.all(
      servers.splice(0).map(
        (s) =>
          new Promise<void>((resolve) => {
            s.closeAllConnections();
            s.close(() => resolve());
          }),
      ),
    );
    await Promise.all(queues.splice(0).map((q) => q.close(1_000)));
  });

  it('HOOK-HDR-DELIVERY: 50 GUIDs, each added through two queues at once, run exactly once across two workers; one add per GUID is taken, the other told its state', async () => {
    const a = queue({ concurrency: 4 });
    const b = queue({ concurrency: 4 });
    const runs = new Map<string, string[]>();
    for (const [name, q] of [
      ['a', a],
      ['b', b],
    ] as const) {
      q.process(async (j, { attempt }) => {
        runs.set(j.id, [...(runs.get(j.id) ?? []), `${name}#${attempt}`]);
        await delay(5 + Math.floor(Math.random() * 25));
      });
    }
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const adds = await Promise.all(ids.map((id) => Promise.all([a.add(job(id)), b.add(job(id))])));
    for (const [index, pair] of adds.entries()) {
      assert.equal(pair.filter((r) => r.added).length, 1, `GUID ${index}: ${JSON.stringify(pair)}`);
      const other = pair.find((r) => !r.added);
      assert.ok(other && !other.added && ['waiting', 'running', 'done'].includes(other.state), JSON.stringify(pair));
    }
    const outcomes = await Promise.all(ids.map((id, i) => (i % 2 ? a : b).waitFor(id, 30_000)));
    assert.deepEqual(
      outcomes.filter((o) => o.state !== 'done'),
      [],
      'every job done',
    );
    assert.deepEqual(
      ids.filter((id) => runs.get(id)?.length !== 1).map((id) => runs.get(id)),
      [],
      'each GUID ran once',
    );
    assert.ok(outcomes.every((o) => o.attempts === 1));
    const byWorker = [...runs.values()].flat().reduce<Record<string, number>>((n, run) => ({ ...n, [run[0]!]: (n[run[0]!] ?? 0) + 1 }), {});
    assert.ok((byWorker.a ?? 0) > 0 && (byWorker.b ?? 0) > 0, `both workers took jobs: ${JSON.stringify(byWorker)}`);
  });

  it('HOOK-HDR-DELIVERY: a GUID waiting or running is not queued twice, a finished one redelivered is acknowledged and not run again', async () => {
    const receiverOnly = queue();
    const id = randomUUID();
    assert.deepEqual(await receiverOnly.add(job(id)), { added: true });
    assert.deepEqual(await receiverOnly.add(job(id)), { added: false, state: 'waiting' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    const worker = queue();
    worker.process(async () => {
      runs += 1;
      await gate;
    });
    assert.equal(await until('the job to run', async () => ((await receiverOnly.waitFor(id, 0)).state === 'running' ? true : undefined)), true);
    assert.deepEqual(await receiverOnly.add(job(id)), { added: false, state: 'running' });
    release();
    assert.deepEqual(await receiverOnly.waitFor(id, 10_000), { state: 'done', attempts: 1 });
    assert.deepEqual(await receiverOnly.add(job(id)), { added: false, state: 'done' });
    await delay(300);
    assert.equal(runs, 1);
  });

  it('a failed job runs again when its GUID is redelivered, finished ones are not, unknown ones are "no such job" — the same outcomes as MemoryQueue', async () => {
    const scenario = async (q: JobQueue) => {
      const seen: unknown[] = [];
      let calls = 0;
      q.process(async (_job, { attempt }) => {
        calls += 1;
        if (attempt === 1) throw new Error('the gate engine crashed on attempt 1');
      });
      const id = 'redelivered-guid';
      seen.push(await q.add(job(id)));
      seen.push(await q.waitFor(id, 10_000));
      seen.push(await q.add(job(id)));
      seen.push(await q.waitFor(id, 10_000));
      seen.push(await q.add(job(id)));
      seen.push(await q.waitFor('never-added', 100));
      seen.push(calls);
      return seen;
    };
    const memory = new MemoryQueue();
    queues.push(memory);
    const expected = await scenario(memory);
    assert.deepEqual(expected, [
      { added: true },
      { state: 'failed', attempts: 1, error: 'the gate engine crashed on attempt 1' },
      { added: true },
      { state: 'done', attempts: 2 },
      { added: false, state: 'done' },
      { state: 'failed', error: 'no such job', attempts: 0 },
      2,
    ]);
    assert.deepEqual(await scenario(queue()), expected);
  });

  it('remembers the last `remember` finished GUIDs: older ones are forgotten (and would run again), newer ones stay duplicates', async () => {
    const q = queue({ remember: 3 });
    q.process(async () => {});
    const ids = ['r1', 'r2', 'r3', 'r4', 'r5'];
    for (const id of ids) {
      await q.add(job(id));
      assert.equal((await q.waitFor(id, 10_000)).state, 'done');
      await delay(5); // finished in distinct milliseconds: the oldest is the first forgotten
    }
    assert.deepEqual(await q.waitFor('r1', 100), { state: 'failed', error: 'no such job', attempts: 0 });
    assert.deepEqual(await q.add(job('r5')), { added: false, state: 'done' });
    assert.deepEqual(await q.add(job('r3')), { added: false, state: 'done' });
    assert.deepEqual(await q.add(job('r2')), { added: true });
    assert.equal(await inspector.zCard(`${prefix}finished`), 3);
  });

  it('waitFor from a third queue learns the end of a job it neither added nor ran from the events channel, and the state so far when its time is up', async () => {
    const adder = queue();
    const worker = queue();
    const watcher = queue({ pollMs: 10_000 }); // its first look is at once, the next poll in 10 s: a quick answer came from the channel
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    worker.process(async () => gate);
    const id = randomUUID();
    await adder.add(job(id));
    await until('the job to run', async () => ((await adder.waitFor(id, 0)).state === 'running' ? true : undefined));
    assert.deepEqual(await watcher.waitFor(id, 300), { state: 'running', attempts: 1 });
    const waiting = watcher.waitFor(id, 20_000);
    await delay(300);
    const released = Date.now();
    release();
    assert.deepEqual(await waiting, { state: 'done', attempts: 1 });
    const ms = Date.now() - released;
    assert.ok(ms < 2_000, `learned the end ${ms} ms after it (a poll would have taken 10 s)`);
    assert.deepEqual(await watcher.waitFor('no-such-guid', 1_000), { state: 'failed', error: 'no such job', attempts: 0 });
  });

  it('a worker process killed mid-job (SIGKILL) has its job run again on another worker after its lease and a backoff: once to the end, attempt 2', async () => {
    const logKey = `${prefix}test:log`;
    const killed = await startQueueWorker({ name: 'w1', url: `${peer.url}/0`, prefix, logKey, handlerMs: 30_000, concurrency: 1, leaseMs: 1_500 });
    processes.push(killed);
    const adder = queue();
    const id = randomUUID();
    await adder.add(job(id));
    await until('w1 to start the job', async () => ((await records()).some((e) => e.worker === 'w1' && e.kind === 'start') ? true : undefined), 30_000);
    const survivor = queue({ leaseMs: 1_500, retryDelayMs: 600 });
    const ran: Array<{ attempt: number; at: number }> = [];
    survivor.process(async (_job, { attempt }) => void ran.push({ attempt, at: Date.now() }));
    const killedAt = Date.now();
    killed.child.kill('SIGKILL');
    assert.equal(await killed.ended, 'SIGKILL');
    assert.deepEqual(await adder.waitFor(id, 20_000), { state: 'done', attempts: 2 });
    assert.equal(ran.length, 1, JSON.stringify(ran));
    assert.equal(ran[0]!.attempt, 2);
    // The lease (1.5 s, renewed every 0.5 s) ran out at least 1 s after the kill, then the 0.6 s backoff.
    const after = ran[0]!.at - killedAt;
    assert.ok(after >= 1_500, `run again ${after} ms after the kill: not before the lease ran out and the backoff passed`);
    assert.deepEqual(
      (await records()).map((e) => `${e.worker} ${e.kind}`),
      ['w1 start'],
      'the killed worker never finished it',
    );
    assert.ok(
      logged.some((line) => line.includes(`webhook ${id}: the worker running it stopped`)),
      logged.join('\n'),
    );
  });

  it('a job whose worker keeps dying is failed after maxAttempts starts (not run round and round), and runs again when its GUID is redelivered', async () => {
    const logKey = `${prefix}test:log`;
    const killed = await startQueueWorker({ name: 'w1', url: `${peer.url}/0`, prefix, logKey, handlerMs: 30_000, concurrency: 1, leaseMs: 1_000 });
    processes.push(killed);
    const adder = queue();
    const id = randomUUID();
    await adder.add(job(id));
    await until('w1 to start the job', async () => ((await records()).some((e) => e.kind === 'start') ? true : undefined), 30_000);
    killed.child.kill('SIGKILL');
    await killed.ended;
    const survivor = queue({ leaseMs: 1_000, maxAttempts: 1 });
    const ran: number[] = [];
    survivor.process(async (_job, { attempt }) => void ran.push(attempt));
    const outcome = await adder.waitFor(id, 20_000);
    assert.equal(outcome.state, 'failed');
    assert.match(
      outcome.error ?? '',
      /its worker stopped mid-job 1 time \(killed, crashed or cut off from Redis\); it runs again when the delivery comes again/,
    );
    assert.deepEqual(ran, [], 'not run after the worker died');
    assert.deepEqual(await adder.add(job(id)), { added: true });
    assert.deepEqual(await adder.waitFor(id, 10_000), { state: 'done', attempts: 2 });
    assert.deepEqual(ran, [2]);
  });

  it('close(): running jobs finish first; one still running at the timeout is aborted and given back at once, and another worker runs it (no backoff)', async () => {
    const finishing = queue();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    finishing.process(async () => gate);
    const first = randomUUID();
    await finishing.add(job(first));
    await until('the first job to run', async () => (finishing.pending === 1 ? true : undefined));
    const closing = finishing.close(10_000);
    setTimeout(release, 300);
    await closing;
    const reader = queue();
    assert.deepEqual(await reader.waitFor(first, 1_000), { state: 'done', attempts: 1 });

    const stubborn = queue({ retryDelayMs: 10_000 });
    const aborted: string[] = [];
    stubborn.process(async (_job, { signal }) => {
      try {
        await delay(60_000, undefined, { signal });
      } catch {
        aborted.push(String((signal.reason as Error).message));
        throw signal.reason;
      }
    });
    const second = randomUUID();
    await reader.add(job(second));
    await until('the second job to run', async () => (stubborn.pending === 1 ? true : undefined));
    await stubborn.close(300);
    assert.deepEqual(aborted, ['the webhook queue closed']);
    const closedAt = Date.now();
    const other = queue({ retryDelayMs: 10_000 });
    other.process(async () => {});
    assert.deepEqual(await reader.waitFor(second, 10_000), { state: 'done', attempts: 2 });
    assert.ok(Date.now() - closedAt < 5_000, 'given back at once, not after the lease and a 10 s backoff');
    assert.ok(
      logged.some((line) => line.includes(`webhook ${second}: still running when the queue closed; given back to the queue`)),
      logged.join('\n'),
    );
  });

  it('DOCS-AGREE-SERVERS: after Redis was down, the queue says once, at the default level (warn), that Redis answers again', async () => {
    const warned: string[] = [];
    const own = await startRedis({ password: PASSWORD });
    let again: RedisPeer | undefined;
    try {
      const q = queue({ url: `${own.url}/0`, connectTimeoutMs: 1_000, logger: createLogger({ level: 'warn', write: (line) => warned.push(line) }) });
      const ran: string[] = [];
      q.process(async (work) => {
        ran.push(work.id);
        return undefined;
      });
      const first = randomUUID();
      assert.deepEqual(await q.add(job(first)), { added: true });
      for (let waited = 0; !ran.includes(first) && waited < 10_000; waited += 50) await delay(50);
      await own.stop();
      await assert.rejects(q.add(job(randomUUID())), WebhookQueueError);
      for (let waited = 0; warned.length < 2 && waited < 5_000; waited += 50) await delay(50);
      again = await startRedis({ password: PASSWORD, port: own.port });
      const line = `warn: the webhook queue redis://[REDACTED]@127.0.0.1:${own.port}/0 answers again`;
      for (let waited = 0; !warned.includes(line) && waited < 15_000; waited += 100) await delay(100);
      assert.ok(warned.includes(line), warned.join('\n'));
      const later = randomUUID();
      assert.deepEqual(await q.add(job(later)), { added: true }, "the commands' connection is back when the line is said");
      for (let waited = 0; !ran.includes(later) && waited < 10_000; waited += 50) await delay(50);
      assert.ok(ran.includes(later), 'the worker works again');
      assert.deepEqual(
        warned.filter((entry) => entry.endsWith('answers again')),
        [line],
        warned.join('\n'),
      );
      assert.ok(warned.indexOf(line) > 0, 'after the outage was said');
      assert.ok(warned.every((entry) => !entry.includes(PASSWORD)));
    } finally {
      await own.stop();
      await again?.stop();
    }
  });

  it('fails closed: with Redis down, add throws WebhookQueueError (exit 3) naming the address without its password, and a receiver answers 503', async () => {
    const own = await startRedis({ password: PASSWORD });
    let stopped = false;
    try {
      const q = queue({ url: `${own.url}/0`, connectTimeoutMs: 2_000 });
      assert.deepEqual(await q.add(job(randomUUID())), { added: true });
      own.process.kill('SIGKILL');
      await new Promise((resolve) => own.process.once('exit', resolve));
      stopped = true;
      await delay(100);
      const error = await q.add(job(randomUUID())).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof WebhookQueueError, String(error));
      assert.equal(error.exitCode, ExitCode.remote);
      assert.match(
        error.message,
        new RegExp(`^the webhook queue redis://\\[REDACTED\\]@127\\.0\\.0\\.1:${own.port}/0 is unavailable: .+; the delivery was not queued$`),
      );
      assert.match(error.hint ?? '', /GANTRY_HOOKS_QUEUE_URL/);
      assert.ok(!error.message.includes(PASSWORD) && !String(error.stack).includes(PASSWORD));

      // Never reachable: refused at once, not after a connect timeout.
      const nowhere = queue({ url: `redis://:${PASSWORD}@127.0.0.1:${own.port}/0`, connectTimeoutMs: 5_000 });
      const started = Date.now();
      const refused = await nowhere.add(job(randomUUID())).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(refused instanceof WebhookQueueError);
      assert.match(refused.message, /ECONNREFUSED/);
      assert.ok(Date.now() - started < 3_000, `${Date.now() - started} ms`);

      const receiver = new WebhookReceiver({ secrets: [SECRET], queue: nowhere, work: false, logger });
      const { server, url } = await listen(receiver);
      servers.push(server);
      const answer = await post(url, randomUUID());
      assert.equal(answer.status, 503, JSON.stringify(answer.body));
      assert.ok(
        logged.some((line) => /the queue refused it: the webhook queue redis:\/\/\[REDACTED\]@127\.0\.0\.1:\d+\/0 is unavailable/.test(line)),
        logged.join('\n'),
      );
      assert.ok(!logged.join('\n').includes(PASSWORD), 'no log line holds the password');
    } finally {
      if (!stopped) await own.stop();
      else await own.stop().catch(() => {});
    }
  });

  it('webhookQueueFor: a MemoryQueue without an address, a RedisQueue for redis:// and rediss://, anything else a usage error that hides the password', () => {
    assert.ok(webhookQueueFor(undefined) instanceof MemoryQueue);
    assert.ok(webhookQueueFor('') instanceof MemoryQueue);
    const redis = webhookQueueFor(`rediss://:${PASSWORD}@redis.example:6380/2`);
    assert.ok(redis instanceof RedisQueue);
    assert.equal(redis.shownUrl, 'rediss://[REDACTED]@redis.example:6380/2');
    assert.throws(
      () => webhookQueueFor(`http://:${PASSWORD}@redis.example/`),
      (e: Error) => /redis:\/\/ or rediss:\/\//.test(e.message) && !e.message.includes(PASSWORD),
    );
    assert.throws(() => new RedisQueue({ url: 'redis://127.0.0.1', leaseMs: 0 }), /leaseMs must be a whole number ≥ 30/);
  });

  it('HOOK-OVERVIEW-POST, HOOK-AUTH-HMAC, HOOK-HDR-DELIVERY: two receivers (work: false) on real sockets and two worker processes on one Redis queue handle 50 signed deliveries each exactly once, one worker killed midway', async () => {
    const logKey = `${prefix}test:log`;
    const handlerMs = 400;
    const url = `${peer.url}/0`;
    const [w1, w2] = await Promise.all([
      startQueueWorker({ name: 'w1', url, prefix, logKey, handlerMs, concurrency: 2, leaseMs: 1_500 }),
      startQueueWorker({ name: 'w2', url, prefix, logKey, handlerMs, concurrency: 2, leaseMs: 1_500 }),
    ]);
    processes.push(w1, w2);
    const receivers = [0, 1].map(() => new WebhookReceiver({ secrets: [SECRET], queue: queue(), work: false, logger }));
    const urls: string[] = [];
    for (const receiver of receivers) {
      const { server, url: at } = await listen(receiver);
      servers.push(server);
      urls.push(at);
    }

    // Kill w1 midway: after some jobs ended, at a moment when every job it holds began less than 250 ms ago (none
    // near its end, so none is half-recorded), and note those jobs.
    let victims: string[] | undefined;
    let endsAtKill = 0;
    const killer = (async () => {
      while (victims === undefined) {
        const entries = await records();
        const ends = entries.filter((e) => e.kind === 'end');
        const endedIds = new Set(ends.filter((e) => e.worker === 'w1').map((e) => e.id));
        const inFlight = entries.filter((e) => e.worker === 'w1' && e.kind === 'start' && !endedIds.has(e.id));
        if (ends.length >= 10 && inFlight.length > 0 && inFlight.every((e) => Date.now() - e.at < handlerMs - 150)) {
          w1.child.kill('SIGKILL');
          victims = inFlight.map((e) => e.id);
          endsAtKill = ends.length;
          break;
        }
        if (ends.length >= 45) throw new Error('w1 was not caught mid-job before the deliveries were nearly done');
        await delay(10);
      }
    })();
    const killerFailed = killer.then(
      () => undefined,
      (error: unknown) => error,
    );

    const ids = Array.from({ length: 50 }, () => randomUUID());
    const answers: Array<{ status: number; body: Record<string, unknown> }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < ids.length) {
          const index = next++;
          answers[index] = await post(urls[index % 2]!, ids[index]!);
        }
      }),
    );
    const failure = await killerFailed;
    if (failure) throw failure;
    assert.equal(await w1.ended, 'SIGKILL');
    assert.ok(victims && victims.length > 0 && endsAtKill < 50, `killed midway: ${endsAtKill} ended before, ${victims?.length} in its hands`);
    for (const [index, answer] of answers.entries()) {
      assert.ok(
        (answer.status === 200 && answer.body.status === 'done') || (answer.status === 202 && answer.body.status === 'accepted'),
        `delivery ${index}: ${answer.status} ${JSON.stringify(answer.body)}`,
      );
    }
    const outcomes = await Promise.all(ids.map((id) => receivers[0]!.queue.waitFor(id, 30_000)));
    assert.deepEqual(
      outcomes.filter((o) => o.state !== 'done'),
      [],
      'every delivery done',
    );

    // A redelivery of a finished one, to the other receiver, is acknowledged and not run again.
    for (const index of [0, 1, 2]) {
      const again = await post(urls[(index + 1) % 2]!, ids[index]!);
      assert.equal(again.status, 200);
      assert.equal(again.body.status, 'duplicate');
    }
    await delay(handlerMs + 200);

    const entries = await records();
    const ends = entries.filter((e) => e.kind === 'end');
    for (const id of ids) {
      const of = ends.filter((e) => e.id === id);
      assert.equal(of.length, 1, `delivery ${id} handled ${of.length} times: ${JSON.stringify(entries.filter((e) => e.id === id))}`);
    }
    assert.equal(ends.length, 50);
    for (const victim of victims!) {
      const end = ends.find((e) => e.id === victim)!;
      assert.equal(end.worker, 'w2', `${victim} finished by w2`);
      assert.equal(end.attempt, 2, `${victim} ran again as attempt 2`);
    }
    assert.ok(ends.some((e) => e.worker === 'w1') && ends.some((e) => e.worker === 'w2'), 'both workers handled deliveries');
    assert.ok(!logged.join('\n').includes(PASSWORD));
  });

  describe('the command: gantry hooks serve --queue, gantry hooks worker', () => {
    it('refuses a --queue holding a password (exit 2, pointing to GANTRY_HOOKS_QUEUE_URL, never echoing it); --no-work and worker without a queue are usage errors', async () => {
      const env = { GANTRY_WEBHOOK_SECRET: SECRET };
      const [withPassword, noWork, worker] = await Promise.all([
        runGantryCommand(['hooks', 'serve', '--port', '0', '--queue', `redis://:${PASSWORD}@127.0.0.1:6379/0`], env),
        runGantryCommand(['hooks', 'serve', '--port', '0', '--no-work'], env),
        runGantryCommand(['hooks', 'worker'], env),
      ]);
      assert.equal(withPassword.code, 2, withPassword.stderr);
      assert.match(withPassword.stderr, /--queue holds a password \(redis:\/\/\[REDACTED\]@127\.0\.0\.1:6379\/0\): a command line is visible to every user/);
      assert.match(withPassword.stderr, /GANTRY_HOOKS_QUEUE_URL/);
      assert.ok(!withPassword.stderr.includes(PASSWORD) && !withPassword.stdout.includes(PASSWORD));
      assert.equal(noWork.code, 2, noWork.stderr);
      assert.match(noWork.stderr, /--no-work only queues deliveries, so it needs a queue/);
      assert.equal(worker.code, 2, worker.stderr);
      assert.match(worker.stderr, /gantry hooks worker takes its jobs from the Redis queue .* none is set/);
    });

    it('gantry hooks worker exits 3 when the queue in GANTRY_HOOKS_QUEUE_URL cannot be reached, showing the address without its password', async () => {
      const own = await startRedis();
      const port = own.port;
      await own.stop(); // a port where nothing listens now
      const result = await runGantryCommand(['hooks', 'worker'], { GANTRY_HOOKS_QUEUE_URL: `redis://:${PASSWORD}@127.0.0.1:${port}/0` });
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, new RegExp(`the webhook queue redis://\\[REDACTED\\]@127\\.0\\.0\\.1:${port}/0 is unavailable: .*ECONNREFUSED`));
      assert.ok(!result.stderr.includes(PASSWORD));
    });

    it('HOOK-OVERVIEW-POST: gantry hooks serve --no-work queues a signed delivery that gantry hooks worker runs (the address in GANTRY_HOOKS_QUEUE_URL); SIGTERM ends both with 0', async () => {
      const env = { GANTRY_WEBHOOK_SECRET: SECRET, GANTRY_HOOKS_QUEUE_URL: `${peer.url}/3` };
      const [serve, worker] = await Promise.all([
        startGantryCommand(
          ['hooks', 'serve', '--port', '0', '--no-work'],
          env,
          ({ stdout }) => /receiving webhooks on (http:\/\/127\.0\.0\.1:\d+\/hooks)/.exec(stdout)?.[1],
        ),
        startGantryCommand(['hooks', 'worker', '--concurrency', '2'], env, ({ stdout }) => (/working webhook jobs from /.test(stdout) ? true : undefined)),
      ]);
      processes.push(serve, worker);
      assert.match(serve.stdout(), /queue redis:\/\/\[REDACTED\]@127\.0\.0\.1:\d+\/3, handlers run by workers/);
      assert.match(worker.stdout(), /working webhook jobs from redis:\/\/\[REDACTED\]@127\.0\.0\.1:\d+\/3 \(2 at once; no environments gated\)/);
      const id = randomUUID();
      const answer = await post(serve.value, id);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.status, 'done', 'the worker ran it: the receiver runs nothing');
      await until('the lines of both', () => (worker.stdout().includes(id) && serve.stdout().includes(id) ? true : undefined), 10_000);
      assert.match(worker.stdout(), new RegExp(`push ${id} attempt 1 done \\d+ms`));
      assert.match(serve.stdout(), new RegExp(`push ${id} 200 done \\d+ms`));
      assert.equal((await post(serve.value, id)).body.status, 'duplicate');
      const [serveCode, workerCode] = await Promise.all([stopProcess(serve), stopProcess(worker)]);
      assert.equal(serveCode, 0, serve.stderr());
      assert.equal(workerCode, 0, worker.stderr());
      assert.ok(![serve.stdout(), serve.stderr(), worker.stdout(), worker.stderr()].some((text) => text.includes(PASSWORD)));
    });
  });
});
