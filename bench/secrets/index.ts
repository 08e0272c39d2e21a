// bench/secrets: kv v2 read and write throughput and p99 latency against the embedded kv server (in its own
// process), Gantry's client (lib/secrets on lib/http, itself on undici) vs raw undici requests doing the same calls
// (same paths, headers and bodies, status checked, JSON parsed), in the same run, in interleaved ABBA rounds;
// figures are medians over rounds, the ratio the median of the per-round ratios.
// Prints ONE JSON object. Target: ratio (gantry ops/s ÷ undici ops/s) >= 0.8.
import { Pool } from 'undici';
import { SecretsClient } from '../../lib/secrets/index.js';
import { silentLogger } from '../../lib/log.js';
import { startSecretsProcess } from '../lib/secrets-process.js';

const OPS = Number(process.env.BENCH_SECRETS_OPS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_SECRETS_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_SECRETS_ROUNDS ?? 4);
const KEYS = 200;

interface Figures { opsPerSec: number; p50Ms: number; p99Ms: number; cpuUsPerOp: number }

async function measure(op: (i: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < OPS) {
      const i = next++;
      const t = performance.now();
      await op(i);
      latencies.push(performance.now() - t);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  // Client CPU per operation: this process only (the server has its own), so it holds up better under load than ops/s.
  return { opsPerSec: Math.round(OPS / elapsed), p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), cpuUsPerOp: Math.round((used.user + used.system) / OPS) };
}

const round = (n: number) => Math.round(n * 100) / 100;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function summary(gantry: Figures[], undici: Figures[]) {
  const pick = (list: Figures[]) => ({
    opsPerSec: Math.round(median(list.map((f) => f.opsPerSec))),
    p50Ms: round(median(list.map((f) => f.p50Ms))),
    p99Ms: round(median(list.map((f) => f.p99Ms))),
    cpuUsPerOp: Math.round(median(list.map((f) => f.cpuUsPerOp))),
  });
  return { gantry: pick(gantry), undici: pick(undici), ratio: round(median(gantry.map((g, i) => g.opsPerSec / undici[i]!.opsPerSec))), rounds: gantry.map((g, i) => round(g.opsPerSec / undici[i]!.opsPerSec)) };
}

const server = await startSecretsProcess();
try {
  const client = new SecretsClient({ address: server.url, token: server.token, logger: silentLogger, sources: { env: {}, pulumi: undefined } });
  const kv = client.kv('secret', { kvVersion: 2 });
  const pool = new Pool(server.url, { connections: CONCURRENCY });
  const headers = { 'x-secrets-token': server.token, 'x-secrets-request': 'true', 'content-type': 'application/json' };
  const payload = (i: number) => ({ username: `user-${i}`, password: `pw-${i}-${'x'.repeat(32)}` });

  const gantryWrite = async (i: number) => { await kv.write(`bench/g${i % KEYS}`, payload(i)); };
  const gantryRead = async (i: number) => {
    const r = await kv.read(`bench/g${i % KEYS}`);
    if (r.state !== 'current') throw new Error('missing');
  };
  const undiciWrite = async (i: number) => {
    const r = await pool.request({ method: 'POST', path: `/v1/secret/data/bench/u${i % KEYS}`, headers, body: JSON.stringify({ data: payload(i) }) });
    if (r.statusCode !== 200) throw new Error(`status ${r.statusCode}`);
    await r.body.json();
  };
  const undiciRead = async (i: number) => {
    const r = await pool.request({ method: 'GET', path: `/v1/secret/data/bench/u${i % KEYS}`, headers: { 'x-secrets-token': server.token, 'x-secrets-request': 'true' } });
    if (r.statusCode !== 200) throw new Error(`status ${r.statusCode}`);
    const body = (await r.body.json()) as { data?: { data?: unknown } };
    if (!body.data?.data) throw new Error('missing');
  };

  // Warm up both (connections, JIT, the server's keys): every key written once, then one unmeasured round of each
  // operation, so the first measured round is not the one that pays for compilation.
  for (let i = 0; i < KEYS; i++) { await gantryWrite(i); await undiciWrite(i); }
  for (const op of [gantryWrite, undiciWrite, gantryRead, undiciRead]) await measure(op);
  const results = { gantryWrite: [] as Figures[], undiciWrite: [] as Figures[], gantryRead: [] as Figures[], undiciRead: [] as Figures[] };
  for (let round = 0; round < ROUNDS; round++) {
    // ABBA: the side that goes first alternates, so warm-up and drift in the machine's load fall on both.
    const pairs: Array<[keyof typeof results, (i: number) => Promise<void>]> = round % 2 === 0
      ? [['gantryWrite', gantryWrite], ['undiciWrite', undiciWrite], ['undiciRead', undiciRead], ['gantryRead', gantryRead]]
      : [['undiciWrite', undiciWrite], ['gantryWrite', gantryWrite], ['gantryRead', gantryRead], ['undiciRead', undiciRead]];
    for (const [name, op] of pairs) results[name].push(await measure(op));
  }
  client.close();
  await pool.close();
  const write = summary(results.gantryWrite, results.undiciWrite);
  const read = summary(results.gantryRead, results.undiciRead);
  const load = (await import('node:os')).loadavg()[0]!;
  process.stdout.write(`${JSON.stringify({
    bench: 'secrets',
    what: 'kv v2 writes and reads against the embedded kv server (own process), gantry client vs raw undici; medians of ABBA rounds',
    ops: OPS,
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    write,
    read,
    target: 0.8,
    loadAverage: round(load),
    cpus: (await import('node:os')).cpus().length,
    node: process.version,
  })}\n`);
} finally {
  await server.stop();
}
