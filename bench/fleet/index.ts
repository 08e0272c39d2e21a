// A fleet on one Redis (issue 29 item 4): deliveries per second through 4 × `gantry hooks serve --no-work` behind a
// round-robin proxy with 1, 2 and 4 × `gantry hooks worker` on one Redis queue, and the time to drain after a worker is
// killed with SIGKILL mid-load. The peer compared with is what a user would run instead of a fleet: one `gantry hooks
// serve --queue …` that receives and works in one process, on the same Redis (the same job per delivery — a
// MemoryQueue with no handler would record a push without any job, which is no comparison). Each delivery is a signed
// push (no handler: the job is the queue's round trip), answered once its job is done; 32 in flight.
//
// BENCH_FLEET_DELIVERIES (1,000 per figure). The built CLI (`npm run bench` builds it). Last line: one JSON object.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { postPush, runsOf, startReceiver, startWorker } from '../../test/fleet/fleet-processes.js';
import { startRoundRobinProxy } from '../../test/fleet/round-robin-proxy.js';
import { startRedis } from '../../test/peers/redis.js';
import { stopProcess, type Started } from '../../test/webhooks/helpers/queue-processes.js';
import { round } from '../lib/figures.js';

const DELIVERIES = Number(process.env.BENCH_FLEET_DELIVERIES ?? 1_000);
const IN_FLIGHT = 32;

/** Sends `count` fresh deliveries to `url`, `IN_FLIGHT` at a time; every answer must be 200 done or 202 accepted. */
async function send(url: string, count: number): Promise<{ ids: string[]; perSecond: number }> {
  const ids = Array.from({ length: count }, () => randomUUID() as string);
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < ids.length) {
        const answer = await postPush(url, ids[next++]!);
        if (!((answer.status === 200 && answer.outcome === 'done') || (answer.status === 202 && answer.outcome === 'accepted')))
          throw new Error(`delivery ${answer.id}: ${answer.status} ${answer.outcome}`);
      }
    }),
  );
  return { ids, perSecond: round((count / (Date.now() - started)) * 1000) };
}

/** Resolves once every id has a done line in the workers' output; the ms it took. */
async function drained(workers: Started[], ids: string[], timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const done = new Set(workers.flatMap((worker, index) => runsOf(index, worker.stdout()).map((run) => run.id)));
    if (ids.every((id) => done.has(id))) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${ids.filter((id) => !done.has(id)).length} deliveries not done after ${timeoutMs} ms`);
    await delay(100);
  }
}

const folder = mkdtempSync(join(tmpdir(), 'gantry-bench-fleet-'));
const redis = await startRedis();
const processes: Started[] = [];
try {
  const load = [loadavg()[0]!];
  const queue = `redis://127.0.0.1:${redis.port}/0`;

  // The peer: one process that receives and works.
  const single = await startReceiver(['--queue', queue, '--concurrency', '4'], folder, 'the single receiver+worker');
  processes.push(single);
  await send(single.value, Math.min(200, DELIVERIES)); // warm-up
  const alone = await send(single.value, DELIVERIES);
  await stopProcess(single);
  console.error(`single receiver+worker: ${alone.perSecond}/s`);

  // The fleet: 4 receivers behind the proxy, workers added 1 → 2 → 4.
  const receivers = await Promise.all([0, 1, 2, 3].map((n) => startReceiver(['--no-work', '--queue', queue], folder, `receiver ${n}`)));
  processes.push(...receivers);
  const proxy = await startRoundRobinProxy(receivers.map((r) => r.value));
  const target = `${proxy.url}/hooks`;
  const workers: Started[] = [];
  const perWorkers: Record<string, number> = {};
  for (const count of [1, 2, 4]) {
    const added = await Promise.all(
      Array.from({ length: count - workers.length }, (_, i) => startWorker(['--queue', queue, '--concurrency', '4'], folder, `worker ${workers.length + i}`)),
    );
    workers.push(...added);
    processes.push(...added);
    if (count === 1) await send(target, Math.min(200, DELIVERIES)); // warm-up
    perWorkers[count] = (await send(target, DELIVERIES)).perSecond;
    console.error(`fleet, ${count} worker(s): ${perWorkers[count]}/s`);
    load.push(loadavg()[0]!);
  }

  // A worker killed mid-load: its jobs in hand wait for their lease (30 s) and a backoff (1 s), then run elsewhere.
  const sending = send(target, DELIVERIES);
  await delay(2_000);
  const killedAt = Date.now();
  workers[0]!.child.kill('SIGKILL');
  const { ids } = await sending;
  const sentAfterKill = Date.now() - killedAt;
  await drained(workers, ids);
  const drainAfterKillMs = Date.now() - killedAt;
  console.error(`killed one of 4 workers: all done ${drainAfterKillMs} ms after the kill (sending ended ${sentAfterKill} ms after it)`);
  await proxy.close();

  console.log(
    JSON.stringify({
      benchmark: 'fleet',
      deliveries: DELIVERIES,
      inFlight: IN_FLIGHT,
      deliveriesPerSecond: { workers1: perWorkers[1], workers2: perWorkers[2], workers4: perWorkers[4] },
      comparison: {
        fleet4x4PerSecond: perWorkers[4],
        singleReceiverWorkerPerSecond: alone.perSecond,
        ratio: round(perWorkers[4]! / alone.perSecond),
      },
      drainAfterKillMs,
      sendingEndedAfterKillMs: sentAfterKill,
      loadAverage: load.map(round),
    }),
  );
} finally {
  await Promise.all(processes.map((p) => stopProcess(p, 'SIGKILL')));
  await redis.stop();
  rmSync(folder, { recursive: true, force: true });
}
