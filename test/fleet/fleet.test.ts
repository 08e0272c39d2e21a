// Issue 29 item 4: a fleet on one Redis loses nothing. Debian's redis-server (test/peers/redis.ts, with an append-only
// file, as docs/webhooks.md says a queue must be kept for its jobs to survive a restart), 4 × `gantry hooks serve
// --no-work --queue redis://…` behind a round-robin proxy of the test's own, and 4 × `gantry hooks worker` — the built
// CLI (dist/, as `npm test` builds it first), each in its own process — take GANTRY_FLEET_DELIVERIES (5,000) signed
// push deliveries, duplicates sent at once to two receivers and redeliveries mixed in, while two workers are killed
// with SIGKILL and Redis is restarted, at moments drawn from GANTRY_FLEET_SEED (random unless given; a failure names it).
//
// A job's run is what a worker prints when it ends: `<time> push <GUID> attempt <n> done <ms>ms` (docs/webhooks.md:
// one line per job; a push has no handler here, so the job is the queue's round trip and nothing else). stdout to a
// pipe is written synchronously on Linux, so a line printed before a SIGKILL is never lost.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createClient } from 'redis';
import { startRedis, type RedisPeer } from '../peers/redis.js';
import { stopProcess, type Started } from '../webhooks/helpers/queue-processes.js';
import { FLEET_SECRET, postPush, runsOf, startReceiver, startWorker, type Answer, type Run } from './fleet-processes.js';
import { startRoundRobinProxy, type RoundRobinProxy } from './round-robin-proxy.js';

const DELIVERIES = Number(process.env.GANTRY_FLEET_DELIVERIES ?? 5_000);
const SEED = Number(process.env.GANTRY_FLEET_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SENDERS = 32;
const WORKER_CONCURRENCY = 4;
/** How long Redis stays down: long enough for every receiver to see it. */
const OUTAGE_MS = 1_500;

/** mulberry32: the kill moments and the mix of duplicates, reproducible from the seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('OPS-FLEET: 4 receivers behind a round-robin proxy and 4 workers on one Redis queue', function () {
  this.timeout(600_000);
  const processes: Started[] = [];
  let redis: RedisPeer | undefined;
  let proxy: RoundRobinProxy | undefined;
  let folder = '';

  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'gantry-fleet-'));
  });
  after(async function () {
    this.timeout(60_000);
    await Promise.all(processes.splice(0).map((p) => stopProcess(p, 'SIGKILL')));
    await proxy?.close();
    await redis?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it(`HOOK-HDR-DELIVERY, HOOK-AUTH-HMAC: ${DELIVERIES} signed deliveries (duplicates, redeliveries) while two workers are SIGKILLed and Redis restarts: each job runs to completion once, none lost, 503 only while Redis was down, the metrics add up`, async () => {
    const rand = random(SEED);
    const seeded = `(GANTRY_FLEET_SEED=${SEED} GANTRY_FLEET_DELIVERIES=${DELIVERIES})`;
    const data = join(folder, 'redis');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(data);
    redis = await startRedis({ persistIn: data });
    const usedMemory = async (): Promise<number> => {
      const client = createClient({ url: `redis://127.0.0.1:${redis!.port}/0` });
      await client.connect();
      try {
        return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
      } finally {
        await client.close();
      }
    };
    const emptyBytes = await usedMemory();
    const queue = `redis://127.0.0.1:${redis.port}/0`;
    const receivers = await Promise.all([0, 1, 2, 3].map((n) => startReceiver(['--no-work', '--queue', queue], folder, `receiver ${n}`)));
    processes.push(...receivers);
    const workers = await Promise.all(
      [0, 1, 2, 3].map((n) => startWorker(['--queue', queue, '--concurrency', String(WORKER_CONCURRENCY), '--metrics-port', '0'], folder, `worker ${n}`)),
    );
    processes.push(...workers);
    proxy = await startRoundRobinProxy(receivers.map((r) => r.value));
    const target = `${proxy.url}/hooks`;

    // What is sent: every GUID once; 5% twice at once (two receivers, one after the other in the proxy's turn), 5%
    // again once answered (the platform's redelivery). A 503 is sent again 250 ms later, as a redelivery would be.
    const ids: string[] = Array.from({ length: DELIVERIES }, () => randomUUID());
    const tasks: string[] = [];
    for (const id of ids) {
      tasks.push(id);
      if (rand() < 0.05) tasks.push(id);
    }
    const redeliver = new Set(ids.filter(() => rand() < 0.05));
    const answers: Answer[] = [];
    const post = async (id: string): Promise<Answer> => {
      const answer = await postPush(target, id);
      answers.push(answer);
      return answer;
    };
    let delivered = 0;
    // The proxy's own 502 (it lost the connection to a receiver: not the receiver's answer) is sent again too, as the
    // platform would redeliver it; they are counted apart.
    const deliver = async (id: string, first: boolean) => {
      for (;;) {
        const answer = await post(id);
        if (answer.status !== 503 && answer.status !== 502) break;
        await delay(250);
      }
      delivered += 1;
      if (first && redeliver.delete(id)) tasks.push(id);
    };

    // The chaos, at moments drawn from the seed: a worker killed at 15–35 % of the deliveries answered, Redis
    // restarted (SIGTERM, as systemctl does; started again on its append-only file) at 40–60 %, another worker killed
    // at 65–85 %.
    const killed = [Math.floor(rand() * 4)];
    killed.push((killed[0]! + 1 + Math.floor(rand() * 3)) % 4);
    const moments = [0.15 + rand() * 0.2, 0.4 + rand() * 0.2, 0.65 + rand() * 0.2].map((f) => Math.floor(f * DELIVERIES));
    let down: { from: number; to: number } | undefined;
    let sending = true;
    const chaos = (async () => {
      const until = async (count: number) => {
        while (sending && delivered < count) await delay(2);
      };
      await until(moments[0]!);
      workers[killed[0]!]!.child.kill('SIGKILL');
      await until(moments[1]!);
      const from = Date.now();
      await redis!.stop('SIGTERM');
      await delay(OUTAGE_MS);
      redis = await startRedis({ port: redis!.port, persistIn: data });
      down = { from, to: Date.now() };
      await until(moments[2]!);
      workers[killed[1]!]!.child.kill('SIGKILL');
    })();

    const started = Date.now();
    let next = 0;
    let busy = 0;
    const seen = new Set<string>();
    await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        for (;;) {
          if (next >= tasks.length) {
            if (busy === 0) return;
            await delay(5); // a redelivery may still be added by a send under way
            continue;
          }
          const id = tasks[next++]!;
          busy += 1;
          try {
            const first = !seen.has(id);
            seen.add(id);
            await deliver(id, first);
          } finally {
            busy -= 1;
          }
        }
      }),
    );
    const sentMs = Date.now() - started;
    sending = false;
    await chaos;
    assert.equal(await workers[killed[0]!]!.ended, 'SIGKILL', `worker ${killed[0]} was killed mid-run ${seeded}`);
    assert.equal(await workers[killed[1]!]!.ended, 'SIGKILL', `worker ${killed[1]} was killed mid-run ${seeded}`);
    assert.ok(down, `Redis was restarted ${seeded}`);

    // The answers: only what the contract allows; 503 only while Redis was down (and until each receiver's
    // connection came back, within its 2 s reconnect backoff).
    const allowed = new Set(['200 done', '200 duplicate', '202 accepted', '503 ']);
    const lostByProxy = answers.filter((a) => a.status === 502 && a.outcome.startsWith('upstream ')).length;
    const odd = answers.filter(
      (a) => !allowed.has(`${a.status} ${a.status === 503 ? '' : a.outcome}`) && !(a.status === 502 && a.outcome.startsWith('upstream ')),
    );
    assert.deepEqual(odd.slice(0, 5), [], `answers outside the contract ${seeded}`);
    const refused = answers.filter((a) => a.status === 503);
    assert.ok(refused.length > 0, `the receivers answered 503 while Redis was down ${seeded}`);
    const late = refused.filter((a) => a.at < down!.from || a.at > down!.to + 5_000);
    assert.deepEqual(
      late.map((a) => a.at - down!.from),
      [],
      `503 only while Redis was down (${down!.to - down!.from} ms from its stop) ${seeded}`,
    );

    // Every GUID's job ends somewhere: the killed workers' jobs after their 30 s lease and a 1 s backoff. Done means
    // both a worker's line and Redis's record: a worker killed between its line and the record leaves the job to run
    // again after the lease.
    const allRuns = () => workers.flatMap((worker, index) => runsOf(index, worker.stdout()));
    const inspector = createClient({ url: `redis://127.0.0.1:${redis.port}/0` });
    inspector.on('error', () => {});
    await inspector.connect();
    const notDone = async (): Promise<Array<[string, string]>> => {
      const ran = new Set(allRuns().map((run) => run.id));
      const states = await Promise.all(ids.map((id) => inspector.hGet(`gantry:webhooks:job:${id}`, 'state')));
      return ids.flatMap((id, i): Array<[string, string]> =>
        ran.has(id) && states[i] === 'done' ? [] : [[id, `${states[i]}, ${ran.has(id) ? 'ran' : 'never ran'}`]],
      );
    };
    const drainStarted = Date.now();
    try {
      for (;;) {
        const left = await notDone();
        if (left.length === 0) break;
        if (Date.now() - drainStarted > 120_000) assert.fail(`${left.length} deliveries not done, e.g. ${JSON.stringify(left.slice(0, 5))} ${seeded}`);
        await delay(500);
      }
    } finally {
      await inspector.close();
    }
    const drainMs = Date.now() - drainStarted;

    // Redeliveries of finished ones are acknowledged and not run again.
    const again = ids.slice(0, 20);
    for (const id of again) assert.deepEqual(await post(id).then((a) => [a.status, a.outcome]), [200, 'duplicate'], `redelivery of ${id}`);
    await delay(1_000); // a run that should not happen has time to show

    // Each job ran to completion once. A job whose worker was killed after its line and before Redis recorded the
    // end runs again (docs/webhooks.md: exactly once while workers reach Redis) — so a second run is allowed only
    // when the first was on a killed worker, at most the jobs it held (its concurrency) per kill.
    const runs = allRuns();
    assert.deepEqual(runs.filter((run) => run.outcome !== 'done').slice(0, 5), [], `no job failed ${seeded}`);
    const byId = new Map<string, Run[]>();
    for (const run of runs) byId.set(run.id, [...(byId.get(run.id) ?? []), run]);
    assert.deepEqual(
      [...byId.keys()].filter((id) => !ids.includes(id)),
      [],
      'only the GUIDs sent ran',
    );
    const twice = [...byId.values()].filter((list) => list.length > 1);
    for (const list of twice) {
      assert.equal(list.length, 2, `${list[0]!.id} ran ${list.length} times: ${JSON.stringify(list)} ${seeded}`);
      const [first, second] = [...list].sort((a, b) => a.attempt - b.attempt);
      assert.ok(killed.includes(first!.worker) && second!.attempt > first!.attempt, `${first!.id} ran twice: ${JSON.stringify(list)} ${seeded}`);
    }
    assert.ok(twice.length <= killed.length * WORKER_CONCURRENCY, `${twice.length} jobs ran twice ${seeded}`);

    // The load was spread.
    for (const index of [0, 1, 2, 3]) {
      assert.ok(
        runs.some((run) => run.worker === index),
        `worker ${index} ran jobs`,
      );
      assert.ok(
        [...proxy.answers.keys()].some((key) => key.startsWith(`${index} 2`)),
        `receiver ${index} answered deliveries`,
      );
    }
    // The metrics add up: each receiver counts every delivery it answered (503s as queue-error), each surviving worker
    // every job it ran (a killed worker's counts die with it). A delivery the proxy lost may or may not have reached
    // its receiver, so those bound the counts rather than fix them.
    const total = (text: string, name: string, label = '') =>
      text
        .split('\n')
        .filter((line) => line.startsWith(`${name}{`) && line.includes(label))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    const receiverTexts = await Promise.all(receivers.map(async (r) => (await fetch(`${new URL(r.value).origin}/metrics`)).text()));
    const counted = receiverTexts.reduce((sum, text) => sum + total(text, 'gantry_webhook_deliveries_total'), 0);
    const fromReceivers = answers.length - lostByProxy;
    assert.ok(
      counted >= fromReceivers && counted <= answers.length,
      `the receivers' metrics count ${counted} deliveries; they answered ${fromReceivers} (${lostByProxy} lost by the proxy) ${seeded}`,
    );
    const queueErrors = receiverTexts.reduce((sum, text) => sum + total(text, 'gantry_webhook_deliveries_total', 'verdict="queue-error"'), 0);
    assert.ok(
      queueErrors >= refused.length && queueErrors <= refused.length + lostByProxy,
      `the receivers' metrics count ${queueErrors} queue errors; ${refused.length} deliveries were answered 503 ${seeded}`,
    );
    for (const index of [0, 1, 2, 3].filter((n) => !killed.includes(n))) {
      const url = /metrics on (http:\/\/\S+)/.exec(workers[index]!.stderr())?.[1];
      assert.ok(url, `worker ${index} says where its metrics are`);
      const jobsDone = total(await (await fetch(url)).text(), 'gantry_webhook_jobs_total', 'outcome="done"');
      assert.equal(jobsDone, runs.filter((run) => run.worker === index && run.outcome === 'done').length, `worker ${index}'s metrics count its jobs ${seeded}`);
    }

    // Redis's memory per finished delivery (for docs/operations.md's sizing): the server restarted on its append-only
    // file, so it holds the queue's keys and little else.
    const perDelivery = Math.round(((await usedMemory()) - emptyBytes) / DELIVERIES);
    const survivors = [0, 1, 2, 3].filter((index) => !killed.includes(index));
    const codes = await Promise.all([...receivers, ...survivors.map((index) => workers[index]!)].map((p) => stopProcess(p)));
    assert.deepEqual(codes, [0, 0, 0, 0, 0, 0], 'SIGTERM ends the others cleanly');
    const stderr = [...receivers, ...workers].map((p) => p.stderr()).join('\n');
    assert.ok(!stderr.includes(FLEET_SECRET), 'no secret in any log');
    console.log(
      `      fleet: ${DELIVERIES} deliveries (${tasks.length} sends, ${refused.length} answered 503, ${lostByProxy} 502 by the proxy) in ${sentMs} ms, ${Math.round((DELIVERIES / sentMs) * 1000)}/s; drained ${drainMs} ms after; ${twice.length} run twice after a kill; Redis ${perDelivery} B per finished delivery; seed ${SEED}`,
    );
  });
});
