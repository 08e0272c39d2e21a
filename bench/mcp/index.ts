// bench/mcp: tool calls per second through Gantry's context server (startContextServer) with authorization on vs the
// same server with authorization off (`auth: false`), in the same run (issue 16). Goal: ratioAuthOnToOff >= 0.9 —
// validation is cached (lib/mcp/server/tokens.ts), not a round trip to the authorization server per call.
//
// Three sides, each a set of MCP SDK clients (Client + StreamableHTTPClientTransport, the token in
// requestInit.headers.authorization), one per concurrent caller, each with its own token:
//   off       — the server started with `auth: false`; no Authorization header
//   on        — the server with authorization, JWT access tokens (RFC 9068) checked against the issuer's JWKS
//   onOpaque  — the same server, opaque tokens checked by RFC 7662 introspection (cached 30 s)
// Tokens come from oidc-provider (test/peers/oidc-resource.ts, client credentials with a resource indicator).
// Two operations: tools/call `modules_versions` against the embedded registry (its own process) and tools/list (no
// upstream at all: isolates the authorization cost). The two context servers run in one child process (default;
// BENCH_MCP_SERVER=inprocess puts them in this one), so the clients' CPU is not the servers'.
// Figures are medians over rounds in rotating order; each ratio is the median of the per-round ratios of calls/s.
// Prints ONE JSON object.
//   BENCH_MCP_CALLS (1000), BENCH_MCP_CONCURRENCY (8), BENCH_MCP_ROUNDS (6), BENCH_MCP_SERVER (child | inprocess),
//   BENCH_MCP_CPU_PROF (a folder: the server process writes a V8 CPU profile there)
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startOidcResourcePeer } from '../../test/peers/oidc-resource.js';
import { median, medianRatio, mediansBySide, quantile, rotatingOrders, round, roundRatios } from '../lib/figures.js';
import { startRegistryProcess } from '../lib/registry-process.js';
import { startContextServers } from './server-process.js';

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_MCP_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 6);
const PLACEMENT = process.env.BENCH_MCP_SERVER === 'inprocess' ? 'inprocess' : 'child';
const CPU_PROF = process.env.BENCH_MCP_CPU_PROF;
const GOAL = 0.9;
const SCOPE = 'modules:read';

// Every client and the tool's registry client go straight to loopback: no proxy from the environment.
for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY']) delete process.env[name];

type Side = 'off' | 'on' | 'onOpaque';
const SIDES: Side[] = ['off', 'on', 'onOpaque'];
type Operation = 'call' | 'list';
interface Figures {
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuUsPerCall: number | undefined;
  clientCpuUsPerCall: number;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const registry = await startRegistryProcess(path.join(root, 'examples/modules'), 0);
const peer = await startOidcResourcePeer();
peer.setTtl(4 * 3600); // outlives any run: an expiring token would turn into 401s mid-round
const servers = await startContextServers(
  { issuer: peer.issuer, introspection: peer.introspection },
  PLACEMENT,
  CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : [],
);
const clients: Record<Side, Client[]> = { off: [], on: [], onOpaque: [] };
try {
  const source = `${registry.host}/gantry/network/aws`;
  const tokens: Record<Side, Array<string | undefined>> = { off: Array.from({ length: CONCURRENCY }, () => undefined), on: [], onOpaque: [] };
  for (let i = 0; i < CONCURRENCY; i++) tokens.on.push(await peer.token(servers.on.resource, SCOPE));
  peer.setFormat('opaque');
  for (let i = 0; i < CONCURRENCY; i++) tokens.onOpaque.push(await peer.token(servers.on.resource, SCOPE));
  if (tokens.on.some((t) => t!.split('.').length !== 3) || tokens.onOpaque.some((t) => t!.split('.').length === 3))
    throw new Error('oidc-provider did not give the token formats asked for');

  // The authorization really is on for one server and off for the other.
  const bare = async (url: string) =>
    (
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
    ).status;
  const [onBare, offBare] = [await bare(servers.on.url), await bare(servers.off.url)];
  if (onBare !== 401 || offBare !== 200)
    throw new Error(`without a token the servers answered ${onBare} (auth on) and ${offBare} (auth off); expected 401 and 200`);

  for (const side of SIDES) {
    for (const token of tokens[side]) {
      const client = new Client({ name: `bench-${side}`, version: '1' });
      const url = new URL(side === 'off' ? servers.off.url : servers.on.url);
      await client.connect(new StreamableHTTPClientTransport(url, token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}));
      clients[side].push(client);
    }
  }

  const operations: Record<Operation, (client: Client) => Promise<void>> = {
    async call(client) {
      const result = await client.callTool({ name: 'modules_versions', arguments: { source } });
      const versions = (result.structuredContent as { versions?: unknown[] } | undefined)?.versions;
      if (result.isError || !Array.isArray(versions) || versions.length === 0)
        throw new Error(`modules_versions failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    },
    async list(client) {
      const { tools } = await client.listTools();
      if (tools.length !== 6) throw new Error(`tools/list gave ${tools.length} tools`);
    },
  };

  const measure = async (side: Side, operation: Operation, calls = CALLS): Promise<Figures> => {
    const latencies: number[] = [];
    let next = 0;
    const serverCpu = await servers.cpuMicros();
    const clientCpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      clients[side].map(async (client) => {
        while (next < calls) {
          next += 1;
          const t = performance.now();
          await operations[operation](client);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const clientUsed = process.cpuUsage(clientCpu);
    const serverUsed = serverCpu === undefined ? undefined : (await servers.cpuMicros())! - serverCpu;
    latencies.sort((a, b) => a - b);
    return {
      callsPerSec: Math.round(calls / elapsed),
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      serverCpuUsPerCall: serverUsed === undefined ? undefined : Math.round(serverUsed / calls),
      clientCpuUsPerCall: Math.round((clientUsed.user + clientUsed.system) / calls),
    };
  };

  // Warm-up, unmeasured: JWKS fetched, opaque tokens introspected, the JIT through every path of both servers.
  for (const operation of ['call', 'list'] as const) for (const side of SIDES) await measure(side, operation, Math.min(CALLS, 400));

  // What the authorization server is asked during the measured rounds (JWKS, introspection): the cache at work.
  const askedBefore = peer.paths.length;
  const orders = rotatingOrders<Side>(['off', 'on', 'onOpaque']);
  const results: Record<Operation, Record<Side, Figures[]>> = { call: { off: [], on: [], onOpaque: [] }, list: { off: [], on: [], onOpaque: [] } };
  const runStarted = performance.now();
  for (let r = 0; r < ROUNDS; r++) {
    const order = orders[r % orders.length]!;
    for (const side of order) results.call[side].push(await measure(side, 'call'));
    for (const side of [...order].reverse()) results.list[side].push(await measure(side, 'list'));
  }
  const measuredSeconds = (performance.now() - runStarted) / 1000;
  const asked: Record<string, number> = {};
  for (const p of peer.paths.slice(askedBefore)) asked[p] = (asked[p] ?? 0) + 1;

  const summary = (figures: Record<Side, Figures[]>) => {
    const perRound = (side: Side) => roundRatios(figures[side], figures.off, (f) => f.callsPerSec);
    const cpuRatio = (side: Side) =>
      figures.off[0]!.serverCpuUsPerCall === undefined
        ? undefined
        : round(median(figures[side].map((f) => f.serverCpuUsPerCall!)) / median(figures.off.map((f) => f.serverCpuUsPerCall!)));
    const rounds = { on: perRound('on'), onOpaque: perRound('onOpaque') };
    return {
      ...mediansBySide(figures),
      ratioAuthOnToOff: medianRatio(rounds.on),
      ratioOpaqueToOff: medianRatio(rounds.onOpaque),
      serverCpuRatioOnToOff: cpuRatio('on'),
      serverCpuRatioOpaqueToOff: cpuRatio('onOpaque'),
      rounds,
    };
  };
  const call = summary(results.call);
  const list = summary(results.list);
  const sdkVersion = (createRequire(import.meta.url)(path.join(root, 'node_modules/@modelcontextprotocol/sdk/package.json')) as { version: string }).version;

  process.stdout.write(
    `${JSON.stringify({
      bench: 'mcp',
      what: 'MCP tool calls through startContextServer with authorization on (oidc-provider JWT access tokens; opaque introspected tokens as a second figure) vs the same server with auth: false; the MCP SDK client, one client and token per concurrent caller; medians of rotating rounds',
      operations: {
        call: `tools/call modules_versions {source: "<registry>/gantry/network/aws"} (embedded registry, own process)`,
        list: 'tools/list (no upstream)',
      },
      calls: CALLS,
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      serverPlacement: servers.placement,
      call,
      list,
      goal: {
        ratioAuthOnToOff: GOAL,
        met: call.ratioAuthOnToOff >= GOAL && list.ratioAuthOnToOff >= GOAL,
        metOpaque: call.ratioOpaqueToOff >= GOAL && list.ratioOpaqueToOff >= GOAL,
      },
      authorizationServerRequestsDuringRounds: asked,
      measuredSeconds: round(measuredSeconds),
      loadAverage: loadavg().map(round),
      cpus: cpus().length,
      node: process.version,
      sdk: sdkVersion,
    })}\n`,
  );
} finally {
  for (const side of SIDES) for (const client of clients[side]) await client.close().catch(() => undefined);
  await servers.stop();
  await peer.stop();
  await registry.stop();
}
