// bench/secrets: kv v2 write and read throughput against the embedded kv server (in its own process), anchored on what
// users would use instead. Three clients do the same calls (same mount, paths, JSON bodies, status checked, kv v2 data
// shapes checked) at the same concurrency, in the same run, in rotating rounds:
//   gantry    — SecretsClient.kv('secret', { kvVersion: 2 }).write/read (lib/secrets on lib/http)
//   nodeVault — node-vault (the most used client of this kind of service on npm) with its write/read on
//               `secret/data/...`, sending the renamed token header through its requestOptions.headers
//   nodeHttp  — raw node:http with a keep-alive Agent: the floor, no client library at all
// Figures are medians over rounds; each ratio is the median of the per-round ratios of ops/s.
// Prints ONE JSON object. Target: ratioToNodeVault (gantry ops/s ÷ node-vault ops/s) >= 1.0, for writes and for reads.
//   BENCH_SECRETS_OPS (3000), BENCH_SECRETS_CONCURRENCY (16), BENCH_SECRETS_ROUNDS (6)
import http from 'node:http';
import net from 'node:net';
import { cpus, loadavg } from 'node:os';
import { createRequire } from 'node:module';
import NodeVault from 'node-vault';
import { SecretsClient } from '../../lib/secrets/index.js';
import { silentLogger } from '../../lib/log.js';
import { medianRatio, mediansBySide, quantile, rotatingOrders, round, roundRatios } from '../lib/figures.js';
import { startSecretsProcess } from '../lib/secrets-process.js';

const OPS = Number(process.env.BENCH_SECRETS_OPS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_SECRETS_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_SECRETS_ROUNDS ?? 6);
const KEYS = 200;
const WIRE_OPS = 50;

// Every client goes straight to the loopback server: no proxy (gantry's core and axios both read these variables) and
// no stray token or namespace header from the environment (node-vault reads VAULT_TOKEN and VAULT_NAMESPACE).
for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY', 'VAULT_TOKEN', 'VAULT_NAMESPACE'])
  delete process.env[name];

type Side = 'gantry' | 'nodeVault' | 'nodeHttp';
const SIDES: Side[] = ['gantry', 'nodeVault', 'nodeHttp'];
/** One operation: resolves with the HTTP status it got (anything but 200 fails the run), throws on a wrong body. */
type Op = (i: number) => Promise<number>;
interface Client {
  write: Op;
  read: Op;
  close(): void;
}

interface Figures {
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerOp: number;
}

const statuses: Record<Side, Record<string, number>> = { gantry: {}, nodeVault: {}, nodeHttp: {} };

async function measure(side: Side, op: Op): Promise<Figures> {
  const latencies: number[] = [];
  const seen = new Map<number, number>();
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < OPS) {
        const i = next++;
        const t = performance.now();
        const status = await op(i);
        latencies.push(performance.now() - t);
        seen.set(status, (seen.get(status) ?? 0) + 1);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  for (const [status, count] of seen) statuses[side][status] = (statuses[side][status] ?? 0) + count;
  // A baseline that gets 403s (or anything else) is not doing the work: stop rather than print a meaningless ratio.
  if (seen.size !== 1 || !seen.has(200)) throw new Error(`${side}: statuses ${JSON.stringify(Object.fromEntries(seen))}, expected only 200`);
  latencies.sort((a, b) => a - b);
  // Client CPU per operation: this process only (the server has its own), so it holds up better under load than ops/s.
  return {
    opsPerSec: Math.round(OPS / elapsed),
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    cpuUsPerOp: Math.round((used.user + used.system) / OPS),
  };
}

function summary(figures: Record<Side, Figures[]>) {
  const perRound = (base: Side) => roundRatios(figures.gantry, figures[base], (f) => f.opsPerSec);
  const rounds = { toNodeVault: perRound('nodeVault'), toNodeHttp: perRound('nodeHttp') };
  return { ...mediansBySide(figures), ratioToNodeVault: medianRatio(rounds.toNodeVault), ratioToNodeHttp: medianRatio(rounds.toNodeHttp), rounds };
}

// The same secret for every client: kv v2 `{ data: {...} }` on write, `data.data` on read.
const payload = (i: number) => ({ username: `user-${i}`, password: `pw-${i}-${'x'.repeat(32)}` });
// Each client has its own keys (same length), so a read returns what that client wrote.
const key = (prefix: string, i: number) => `bench/${prefix}${i % KEYS}`;

function checkRead(data: unknown, what: string): void {
  const username = (data as { username?: unknown } | null | undefined)?.username;
  if (typeof username !== 'string' || !username.startsWith('user-')) throw new Error(`${what}: read returned ${JSON.stringify(data)}`);
}
function checkVersion(version: unknown, what: string): void {
  if (typeof version !== 'number' || version < 1) throw new Error(`${what}: write returned version ${JSON.stringify(version)}`);
}

function gantryClient(url: string, token: string): Client {
  const client = new SecretsClient({ address: url, token, logger: silentLogger, sources: { env: {}, pulumi: undefined } });
  const kv = client.kv('secret', { kvVersion: 2 });
  const statusOf = (error: unknown) => {
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number') return status;
    throw error;
  };
  return {
    async write(i) {
      try {
        const r = await kv.write(key('g', i), payload(i));
        checkVersion(r.metadata?.version, 'gantry');
        return 200;
      } catch (error) {
        return statusOf(error);
      }
    },
    async read(i) {
      try {
        const r = await kv.read(key('g', i));
        if (r.state !== 'current') throw new Error(`gantry: read ${r.state}`);
        checkRead(r.data, 'gantry');
        return 200;
      } catch (error) {
        return statusOf(error);
      }
    },
    close: () => client.close(),
  };
}

function nodeVaultClient(url: string, token: string): Client {
  // node-vault sends its token as X-Vault-Token; the embedded server reads X-Secrets-Token (or Authorization: Bearer).
  // So no `token` option: the renamed header goes in requestOptions.headers, which node-vault merges into every call,
  // with X-Secrets-Request as gantry sends it. Its own keep-alive agent, as many sockets as requests in flight (axios
  // would otherwise use Node's global agent, also keep-alive since Node 19, with no socket limit).
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const vault = NodeVault({
    apiVersion: 'v1',
    endpoint: url,
    requestOptions: { headers: { 'X-Secrets-Token': token, 'X-Secrets-Request': 'true' }, httpAgent: agent },
  });
  // node-vault resolves with the body on 200 and 204 and rejects with `response.statusCode` on anything else.
  const statusOf = (error: unknown) => {
    const status = (error as { response?: { statusCode?: unknown } }).response?.statusCode;
    if (typeof status === 'number') return status;
    throw error;
  };
  return {
    async write(i) {
      try {
        const body = (await vault.write(`secret/data/${key('v', i)}`, { data: payload(i) })) as { data?: { version?: unknown } } | undefined;
        checkVersion(body?.data?.version, 'node-vault');
        return 200;
      } catch (error) {
        return statusOf(error);
      }
    },
    async read(i) {
      try {
        const body = (await vault.read(`secret/data/${key('v', i)}`)) as { data?: { data?: unknown } } | undefined;
        checkRead(body?.data?.data, 'node-vault');
        return 200;
      } catch (error) {
        return statusOf(error);
      }
    },
    close: () => agent.destroy(),
  };
}

function nodeHttpClient(url: string, token: string): Client {
  const { hostname, port } = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const send = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; json: unknown }>((resolve, reject) => {
      const headers: Record<string, string | number> = { 'x-secrets-token': token, 'x-secrets-request': 'true' };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const req = http.request({ agent, hostname, port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch (error) {
            reject(error as Error);
          }
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  return {
    async write(i) {
      const r = await send('POST', `/v1/secret/data/${key('h', i)}`, JSON.stringify({ data: payload(i) }));
      if (r.status === 200) checkVersion((r.json as { data?: { version?: unknown } }).data?.version, 'node:http');
      return r.status;
    },
    async read(i) {
      const r = await send('GET', `/v1/secret/data/${key('h', i)}`);
      if (r.status === 200) checkRead((r.json as { data?: { data?: unknown } }).data?.data, 'node:http');
      return r.status;
    },
    close: () => agent.destroy(),
  };
}

const makers: Record<Side, (url: string, token: string) => Client> = { gantry: gantryClient, nodeVault: nodeVaultClient, nodeHttp: nodeHttpClient };

/**
 * Bytes on the wire per operation, each client through its own counting TCP relay (before the measured rounds, not
 * during them): shows that the three send the same bodies and make one request per operation; the rest of the
 * difference is request headers (axios adds Accept, User-Agent, Accept-Encoding).
 */
async function wireBytes(side: Side, target: URL, token: string) {
  let up = 0;
  let down = 0;
  const relay = net.createServer((inbound) => {
    const outbound = net.connect(Number(target.port), target.hostname);
    inbound.on('data', (chunk: Buffer) => {
      up += chunk.length;
    });
    outbound.on('data', (chunk: Buffer) => {
      down += chunk.length;
    });
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const client = makers[side](`http://127.0.0.1:${(relay.address() as net.AddressInfo).port}`, token);
  const perOp = async (op: Op) => {
    const [u, d] = [up, down];
    for (let i = 0; i < WIRE_OPS; i++) {
      const status = await op(i);
      if (status !== 200) throw new Error(`${side}: status ${status} through the relay`);
    }
    return { requestBytes: Math.round((up - u) / WIRE_OPS), responseBytes: Math.round((down - d) / WIRE_OPS) };
  };
  const write = await perOp(client.write);
  const read = await perOp(client.read);
  client.close();
  relay.close();
  return { write, read };
}

const nodeVaultVersion = (createRequire(import.meta.url)('node-vault/package.json') as { version: string }).version;

const server = await startSecretsProcess();
try {
  const target = new URL(server.url);
  const wire = {} as Record<Side, Awaited<ReturnType<typeof wireBytes>>>;
  for (const side of SIDES) wire[side] = await wireBytes(side, target, server.token);

  const clients = Object.fromEntries(SIDES.map((side) => [side, makers[side](server.url, server.token)])) as Record<Side, Client>;
  // Warm up all three (connections, JIT, the server's keys): every key written once, then one unmeasured round of
  // each operation, so the first measured round is not the one that pays for compilation.
  for (let i = 0; i < KEYS; i++) for (const side of SIDES) await clients[side].write(i);
  for (const kind of ['write', 'read'] as const) for (const side of SIDES) await measure(side, clients[side][kind]);
  for (const side of SIDES) statuses[side] = {};

  // Reads run in the reverse order of the round's writes.
  const orders = rotatingOrders<Side>(['gantry', 'nodeVault', 'nodeHttp']);
  const results = { write: { gantry: [], nodeVault: [], nodeHttp: [] }, read: { gantry: [], nodeVault: [], nodeHttp: [] } } as Record<
    'write' | 'read',
    Record<Side, Figures[]>
  >;
  for (let r = 0; r < ROUNDS; r++) {
    const order = orders[r % orders.length]!;
    for (const side of order) results.write[side].push(await measure(side, clients[side].write));
    for (const side of [...order].reverse()) results.read[side].push(await measure(side, clients[side].read));
  }
  for (const side of SIDES) clients[side].close();

  process.stdout.write(
    `${JSON.stringify({
      bench: 'secrets',
      what: 'kv v2 writes and reads against the embedded kv server (own process): gantry SecretsClient vs node-vault (the anchor) and raw node:http (the floor); medians of rotating rounds',
      ops: OPS,
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      write: summary(results.write),
      read: summary(results.read),
      target: { ratioToNodeVault: 1.0 },
      statuses,
      wire,
      anchor: { client: 'node-vault', version: nodeVaultVersion, tokenHeader: 'X-Secrets-Token via requestOptions.headers' },
      loadAverage: round(loadavg()[0]!),
      cpus: cpus().length,
      node: process.version,
    })}\n`,
  );
} finally {
  await server.stop();
}
