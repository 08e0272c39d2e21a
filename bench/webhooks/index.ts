// bench/webhooks: webhook deliveries verified, parsed and acknowledged per second by `gantry hooks serve` against the
// same deliveries through @octokit/webhooks' Node middleware (what a user would pick instead), in the same run; and
// the receiver's peak RSS while 20 deliveries of 25 MB arrive at once. Prints ONE JSON object as its last stdout line
// (both sides' figures and their ratio); progress goes to stderr.
//
//   npm run bench -- webhooks       (or: npm run build && node --import tsx bench/webhooks/index.ts)
//   BENCH_WEBHOOKS_CONCURRENCY (32)  deliveries in flight, each on its own keep-alive connection
//   BENCH_WEBHOOKS_SECONDS (5)       length of one measured round per side
//   BENCH_WEBHOOKS_ROUNDS (4)        rounds, alternating which side goes first (G O | O G | G O | O G)
//   BENCH_WEBHOOKS_LARGE (20)        large deliveries sent at once in the memory part
//   BENCH_WEBHOOKS_LARGE_MB (25)     their size in MiB (the body stays 16 KiB under Gantry's 25 MiB cap)
//   BENCH_WEBHOOKS_PARTS (throughput,memory)  run only some parts
//   BENCH_WEBHOOKS_GANTRY            another build's dist/lib/cli/main.js to measure (e.g. a patched copy)
//   BENCH_WEBHOOKS_KEEP=1            keep the receivers' stdout files (their paths in the output)
//   BENCH_WEBHOOKS_NODE_FLAGS        node flags for both receivers, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p" or "--trace-gc"
//                                    (what they print goes to their stdout files; the address line is found among it)
//
// The two receivers, each in a child process of its own (so neither's memory or CPU mixes with the other's or with
// the load generator's), both plain node without a TypeScript loader:
//   gantry  — the built command, `node dist/lib/cli/main.js hooks serve --port 0 --json`, as a user runs it (not the
//             WebhookReceiver from dist: the command adds what users get — its request timeout, the 404 for other
//             paths, one log line per delivery), with GANTRY_WEBHOOK_SECRET, in an empty folder (no gantry.hooks.json
//             and no app: no handler matches these events; only deployment_protection_rule.requested has one), stdout
//             to a file (its line per delivery is written as it would be to a log). Per delivery it: checks the
//             method, X-Platform-Event, -Delivery, -Hook-ID and the Platform-Hookshot/ user agent, Content-Type, the
//             declared length and the signature header's form — before reading the body; waits for its one slot
//             when the body is over 1 MiB; reads the body counting it against the 25 MiB cap, with the sha256 HMAC
//             over the raw bytes as they come; checks the body is UTF-8 and JSON (JSON.parse under 256 KiB; over it,
//             since no handler here reads these events, a scan of the bytes that parses only the root object's
//             members); the payload against the event catalogue (required top-level properties and their types);
//             records the GUID as done (a redelivery is not run twice; no handler matches, so no job is queued);
//             answers 200 {"status":"done"} (a delivery with a handler: 202 if it takes longer than the
//             acknowledgement budget); writes the delivery's line (64 lines a write, or what 10 ms gathered).
//   octokit — bench/webhooks/octokit-server.mjs: @octokit/webhooks 14 `createNodeMiddleware(webhooks, { path })` on
//             node:http as its README shows, with `webhooks.onAny(noop)`. Per delivery it: checks the path, method,
//             Content-Type and three headers; buffers the whole body (no cap); decodes it to a string; the sha256
//             HMAC over that string; JSON.parse; runs the handler (the no-op); answers 200 "ok" once it is done.
// So both verify, parse and run their handlers before answering 200; Gantry also checks the payload against the
// catalogue, de-duplicates by GUID and logs a line, octokit runs one (empty) function. Neither does work beyond that.
//
// The deliveries: every example payload of @octokit/webhooks-examples (api.github.com) — GitHub's real ones, 1 to
// 27 KB — but the three whose event the specification requires a property they lack (Gantry answers those 400; see
// test/webhooks/examples.test.ts), each body signed once with the same secret (X-Hub-Signature-256 and
// X-Hub-Signature, as the platform sends both). Gantry gets the platform's header names (X-Platform-*,
// Platform-Hookshot/, the two events the spec renames under their new names), octokit GitHub's (X-GitHub-*,
// GitHub-Hookshot/); the bodies are the same bytes. Every delivery has a fresh GUID. One load generator (this
// process, node:http with a keep-alive agent) keeps CONCURRENCY deliveries in flight for SECONDS per round, after an
// unmeasured warm-up of each side; every answer is checked (status 2xx and the body each side answers a handled
// delivery with) and failures are counted, not hidden. Figures per side: deliveries/s (median over rounds), p50/p99
// latency (all measured deliveries), the receiver process's CPU per delivery (from /proc/<pid>/stat: steadier than
// deliveries/s on a loaded machine), its RSS after the rounds. ratio = gantry ÷ octokit deliveries/s, the median of
// the per-round ratios (goal ≥ 1.0).
//
// Memory: a fresh receiver process per side gets one small delivery (code loaded), then its RSS is the baseline; then
// LARGE deliveries of LARGE_MB each, all at once, each on its own connection: a valid push payload whose `commits`
// array holds ~25,000 commits of the examples' shape (file lists, authors), the same body with a fresh GUID each.
// The receiver's VmRSS is sampled from /proc/<pid>/status every 20 ms until every delivery is answered and 1 s
// after; the peak is the larger of the sampled maximum and the kernel's VmHWM (the high-water mark, which a sample
// can miss). Every answer is counted by status, and how many came within the platform's 10 s. Gantry's goal: peak
// under 256 MB, every delivery handled (200), and flat: a fresh Gantry given only 5 at once (more than its one
// large-body slot) should peak as high as with 20 (`growth`, the ratio of the two peaks above baseline, ≈ 1).
// Octokit (which buffers everything, and answers 202 for what its handlers have not finished in 9 s) is measured
// the same way for comparison.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);

const CONCURRENCY = Number(process.env.BENCH_WEBHOOKS_CONCURRENCY ?? 32);
const SECONDS = Number(process.env.BENCH_WEBHOOKS_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_WEBHOOKS_ROUNDS ?? 4);
const WARMUP_SECONDS = 2;
const LARGE = Number(process.env.BENCH_WEBHOOKS_LARGE ?? 20);
/** The flatness check's count: a few more than the receiver's one large-body slot. */
const FEW = 5;
const LARGE_BYTES = Math.round(Number(process.env.BENCH_WEBHOOKS_LARGE_MB ?? 25) * 1024 * 1024) - 16 * 1024;
const SAMPLE_MS = 20;
const RSS_GOAL_MB = 256;

// The receivers run on loopback: no proxy, and no queue or extra secrets from the environment.
for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'GANTRY_HOOKS_QUEUE_URL', 'GANTRY_WEBHOOK_SECRETS', 'GANTRY_LOG'])
  delete process.env[name];

const PARTS = new Set((process.env.BENCH_WEBHOOKS_PARTS ?? 'throughput,memory').split(','));
const NODE_FLAGS = (process.env.BENCH_WEBHOOKS_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
const gantryMain = process.env.BENCH_WEBHOOKS_GANTRY ?? join(root, 'dist', 'lib', 'cli', 'main.js');
if (!existsSync(gantryMain)) {
  console.error('bench/webhooks runs the built command: run `npm run build` first (`npm run bench` does)');
  process.exit(2);
}

type Side = 'gantry' | 'octokit';
const SIDES: readonly Side[] = ['gantry', 'octokit'];
const secret = randomBytes(32).toString('hex');
const work = mkdtempSync(join(tmpdir(), 'gantry-bench-webhooks-'));

// ---- the deliveries -----------------------------------------------------------------------------------------------
interface Delivery {
  /** `<event>#<n>`: the example's place in the package. */
  name: string;
  /** GitHub's event name (octokit's X-GitHub-Event) and the specification's (Gantry's X-Platform-Event). */
  githubEvent: string;
  platformEvent: string;
  body: Buffer;
  sha256: string;
  sha1: string;
}

/** The two events the specification renames (test/webhooks/helpers/examples.ts). */
const renamed: Record<string, string> = { github_app_authorization: 'platform_app_authorization', dependabot_alert: 'dependency_alert' };
/** Examples lacking a property the specification requires for their event: Gantry refuses them (400), by design. */
const refusedExamples = new Set(['deployment#0', 'projects_v2_item#0', 'projects_v2_item#3']);

function signed(name: string, githubEvent: string, body: Buffer): Delivery {
  return {
    name,
    githubEvent,
    platformEvent: renamed[githubEvent] ?? githubEvent,
    body,
    sha256: `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    sha1: `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
  };
}

interface Definition {
  name: string;
  examples: Array<Record<string, unknown>>;
}
const examplesFile = require.resolve('@octokit/webhooks-examples/api.github.com/index.json');
const examplesVersion = (require('@octokit/webhooks-examples/package.json') as { version: string }).version;
const octokitVersion = (JSON.parse(readFileSync(join(root, 'node_modules', '@octokit', 'webhooks', 'package.json'), 'utf8')) as { version: string }).version;
const definitions = JSON.parse(readFileSync(examplesFile, 'utf8')) as Definition[];

function exampleDeliveries(): Delivery[] {
  const list = definitions
    .flatMap((definition) => definition.examples.map((payload, index) => ({ definition, payload, name: `${definition.name}#${index}` })))
    .filter(({ name }) => !refusedExamples.has(name))
    .map(({ definition, payload, name }) => signed(name, definition.name, Buffer.from(JSON.stringify(payload))));
  // A fixed shuffle, so consecutive deliveries are of different events and sizes, the same order for both sides.
  const key = (d: Delivery) => createHash('sha256').update(d.name).digest('hex');
  return list.sort((a, b) => (key(a) < key(b) ? -1 : 1));
}

/** A push whose `commits` array fills the body to about `bytes`: many small objects, as a real large payload has. */
function largePush(bytes: number): Delivery {
  const push = definitions.find((d) => d.name === 'push')!.examples.find((e) => Array.isArray(e.commits) && e.commits.length > 0)!;
  const author = { name: 'Octo Cat', email: '21031067+octocat@users.noreply.github.com', username: 'octocat' };
  const hex = (n: number) => createHash('sha1').update(String(n)).digest('hex');
  const commit = (i: number) =>
    JSON.stringify({
      id: hex(i),
      tree_id: hex(-i - 1),
      distinct: true,
      message: `bench: change ${i} of a very large push\n\nMoves module ${i} and updates its documentation.`,
      timestamp: '2026-11-26T10:00:00Z',
      url: `https://platform.example/octo-org/octo-repo/commit/${hex(i)}`,
      author,
      committer: author,
      added: [`src/modules/module-${i}/index.ts`, `src/modules/module-${i}/index.test.ts`],
      removed: [`lib/old/module-${i}.js`],
      modified: [`docs/modules/module-${i}.md`, 'package.json'],
    });
  const text = JSON.stringify({ ...push, commits: [] });
  const at = text.indexOf('"commits":[]') + '"commits":['.length;
  const parts: string[] = [];
  let size = Buffer.byteLength(text);
  for (let i = 0; ; i += 1) {
    const next = commit(i);
    if (size + next.length + 1 > bytes) break;
    parts.push(next);
    size += next.length + (i > 0 ? 1 : 0);
  }
  const body = Buffer.from(`${text.slice(0, at)}${parts.join(',')}${text.slice(at)}`);
  return signed(`push with ${parts.length} commits`, 'push', body);
}

function headersFor(side: Side, delivery: Delivery, guid: string): http.OutgoingHttpHeaders {
  const common = {
    'content-type': 'application/json',
    'content-length': delivery.body.length,
    'x-hub-signature-256': delivery.sha256,
    'x-hub-signature': delivery.sha1,
  };
  return side === 'gantry'
    ? {
        ...common,
        'user-agent': 'Platform-Hookshot/7a5e2f1',
        'x-platform-event': delivery.platformEvent,
        'x-platform-delivery': guid,
        'x-platform-hook-id': '424242',
        'x-platform-hook-installation-target-type': 'repository',
        'x-platform-hook-installation-target-id': '186853002',
      }
    : {
        ...common,
        'user-agent': 'GitHub-Hookshot/7a5e2f1',
        'x-github-event': delivery.githubEvent,
        'x-github-delivery': guid,
        'x-github-hook-id': '424242',
        'x-github-hook-installation-target-type': 'repository',
        'x-github-hook-installation-target-id': '186853002',
      };
}

/** The body each side answers a delivery it verified, parsed and handled with. */
const handledBody: Record<Side, string> = { gantry: '{"status":"done"}\n', octokit: 'ok\n' };

// ---- the receiver processes ---------------------------------------------------------------------------------------
interface Receiver {
  side: Side;
  pid: number;
  url: URL;
  stdoutFile: string;
  stop(): Promise<void>;
}

let started = 0;
async function startReceiver(side: Side): Promise<Receiver> {
  started += 1;
  const folder = join(work, `${side}-${started}`);
  spawnSync('mkdir', ['-p', folder]);
  const stdoutFile = join(folder, 'stdout');
  const out = openSync(stdoutFile, 'w');
  const args =
    side === 'gantry' ? [gantryMain, 'hooks', 'serve', '--port', '0', '--host', '127.0.0.1', '--path', '/hooks', '--json'] : [join(here, 'octokit-server.mjs')];
  const env = side === 'gantry' ? { ...process.env, GANTRY_WEBHOOK_SECRET: secret } : { ...process.env, BENCH_WEBHOOKS_SECRET: secret };
  // Gantry runs in an empty folder so that no gantry.hooks.json is picked up; octokit resolves its package from here.
  const child: ChildProcess = spawn(process.execPath, [...NODE_FLAGS, ...args], {
    cwd: side === 'gantry' ? folder : root,
    env,
    stdio: ['ignore', out, 'inherit'],
  });
  closeSync(out);
  let exited: string | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = `exited with ${code ?? signal}`;
      resolve();
    }),
  );
  const deadline = Date.now() + 30_000;
  let url: URL | undefined;
  while (!url) {
    if (exited) throw new Error(`the ${side} receiver ${exited} before listening`);
    if (Date.now() > deadline) throw new Error(`the ${side} receiver printed no address within 30 s`);
    const first = readFileSync(stdoutFile, 'utf8')
      .split('\n')
      .find((line) => line.startsWith('{"listening"'));
    if (first?.endsWith('}')) url = new URL((JSON.parse(first) as { listening: string }).listening);
    else await delay(50);
  }
  return {
    side,
    pid: child.pid!,
    url,
    stdoutFile,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(killer);
    },
  };
}

const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The process's user + system CPU time so far, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name: state is field 3, utime 14 and stime 15 (1-based over the whole line).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** VmRSS and VmHWM (the peak the kernel saw) of the process, in MB. */
function memory(pid: number): { rssMb: number; hwmMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

// ---- sending ------------------------------------------------------------------------------------------------------
interface Answer {
  status: number;
  body: string;
  error?: string;
}

function post(agent: http.Agent, url: URL, headers: http.OutgoingHttpHeaders, body: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const request = http.request({ agent, hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      response.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: '', error: error.code ?? error.message }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: '', error: error.code ?? error.message }));
    request.end(body);
  });
}

/** What went wrong with an answer, or undefined when it is the 2xx a handled delivery gets. */
function failureOf(side: Side, answer: Answer): string | undefined {
  if (answer.error) return answer.error;
  if (answer.status < 200 || answer.status > 299) return String(answer.status);
  if (answer.body !== handledBody[side]) return `${answer.status} ${answer.body.trim().slice(0, 60)}`;
  return undefined;
}

interface Round {
  deliveries: number;
  perSecond: number;
  latenciesMs: number[];
  failures: Record<string, number>;
  statuses: Record<string, number>;
  serverCpuMs: number;
}

async function load(receiver: Receiver, agent: http.Agent, deliveries: Delivery[], seconds: number): Promise<Round> {
  const latenciesMs: number[] = [];
  const failures: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  let next = 0;
  const cpuBefore = cpuMs(receiver.pid);
  const startedAt = performance.now();
  const deadline = startedAt + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const delivery = deliveries[next % deliveries.length]!;
        next += 1;
        const sent = performance.now();
        const answer = await post(agent, receiver.url, headersFor(receiver.side, delivery, randomUUID()), delivery.body);
        latenciesMs.push(performance.now() - sent);
        const key = answer.error ?? String(answer.status);
        statuses[key] = (statuses[key] ?? 0) + 1;
        const failure = failureOf(receiver.side, answer);
        if (failure) failures[failure] = (failures[failure] ?? 0) + 1;
      }
    }),
  );
  const elapsed = (performance.now() - startedAt) / 1000;
  return {
    deliveries: latenciesMs.length,
    perSecond: latenciesMs.length / elapsed,
    latenciesMs,
    failures,
    statuses,
    serverCpuMs: cpuMs(receiver.pid) - cpuBefore,
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const round3 = (n: number) => Math.round(n * 1000) / 1000;
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [key, count] of Object.entries(from)) into[key] = (into[key] ?? 0) + count;
}
/** Delivery lines the receiver wrote on stdout: Gantry's one per delivery. */
function loggedLines(receiver: Receiver): number {
  return readFileSync(receiver.stdoutFile, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{"at"')).length;
}

async function throughput(deliveries: Delivery[]) {
  const receivers = {} as Record<Side, Receiver>;
  const agents = {} as Record<Side, http.Agent>;
  for (const side of SIDES) {
    receivers[side] = await startReceiver(side);
    agents[side] = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  }
  try {
    const baseline = Object.fromEntries(SIDES.map((side) => [side, round1(memory(receivers[side].pid).rssMb)])) as Record<Side, number>;
    for (const side of SIDES) {
      const warm = await load(receivers[side], agents[side], deliveries, WARMUP_SECONDS);
      console.error(`webhooks: warm-up ${side}: ${Math.round(warm.perSecond)} deliveries/s, failures ${JSON.stringify(warm.failures)}`);
    }
    const rounds: Record<Side, Round[]> = { gantry: [], octokit: [] };
    for (let r = 0; r < ROUNDS; r += 1) {
      const order: Side[] = r % 2 === 0 ? ['gantry', 'octokit'] : ['octokit', 'gantry'];
      for (const side of order) {
        const result = await load(receivers[side], agents[side], deliveries, SECONDS);
        rounds[side].push(result);
        console.error(
          `webhooks: round ${r + 1}/${ROUNDS} ${side}: ${Math.round(result.perSecond)} deliveries/s, receiver CPU ${Math.round((result.serverCpuMs * 1000) / result.deliveries)} µs each, failures ${JSON.stringify(result.failures)}`,
        );
      }
    }
    const figures = (side: Side) => {
      const list = rounds[side];
      const latencies = list.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
      const failures: Record<string, number> = {};
      const statuses: Record<string, number> = {};
      for (const r of list) {
        add(failures, r.failures);
        add(statuses, r.statuses);
      }
      const total = list.reduce((sum, r) => sum + r.deliveries, 0);
      const end = memory(receivers[side].pid);
      return {
        deliveriesPerSecond: Math.round(median(list.map((r) => r.perSecond))),
        perRound: list.map((r) => Math.round(r.perSecond)),
        p50Ms: round1(percentile(latencies, 0.5)),
        p99Ms: round1(percentile(latencies, 0.99)),
        receiverCpuUsPerDelivery: Math.round((list.reduce((sum, r) => sum + r.serverCpuMs, 0) * 1000) / total),
        measured: total,
        failures: Object.values(failures).reduce((a, b) => a + b, 0),
        failuresBy: failures,
        statuses,
        rssMb: { start: baseline[side], end: round1(end.rssMb), peak: round1(end.hwmMb) },
      };
    };
    const gantry = { ...figures('gantry'), loggedLines: loggedLines(receivers.gantry) };
    const octokit = figures('octokit');
    const perRoundRatios = rounds.gantry.map((g, i) => g.perSecond / rounds.octokit[i]!.perSecond);
    return { gantry, octokit, ratio: round3(median(perRoundRatios)), perRoundRatios: perRoundRatios.map(round3) };
  } finally {
    for (const side of SIDES) {
      agents[side].destroy();
      await receivers[side].stop();
    }
  }
}

async function largeAtOnce(side: Side, large: Delivery, count: number) {
  const receiver = await startReceiver(side);
  const agent = new http.Agent({ keepAlive: false, maxSockets: count });
  try {
    // One small delivery first, so that the baseline has the code paths loaded, as any running receiver has.
    const small = exampleDeliveries()[0]!;
    const warm = await post(agent, receiver.url, headersFor(side, small, randomUUID()), small.body);
    if (failureOf(side, warm)) throw new Error(`${side}: the warm-up delivery got ${failureOf(side, warm)}`);
    await delay(500);
    const baseline = memory(receiver.pid);
    let sampled = baseline.rssMb;
    const sampler = setInterval(() => {
      sampled = Math.max(sampled, memory(receiver.pid).rssMb);
    }, SAMPLE_MS);
    const statuses: Record<string, number> = {};
    const failures: Record<string, number> = {};
    const startedAt = performance.now();
    const answeredMs: number[] = [];
    try {
      await Promise.all(
        Array.from({ length: count }, async () => {
          const answer = await post(agent, receiver.url, headersFor(side, large, randomUUID()), large.body);
          answeredMs.push(performance.now() - startedAt);
          const key = answer.error ?? String(answer.status);
          statuses[key] = (statuses[key] ?? 0) + 1;
          const failure = failureOf(side, answer);
          if (failure) failures[failure] = (failures[failure] ?? 0) + 1;
        }),
      );
      await delay(1000);
    } finally {
      clearInterval(sampler);
    }
    const after = memory(receiver.pid);
    const peak = Math.max(sampled, after.hwmMb);
    answeredMs.sort((a, b) => a - b);
    const result = {
      deliveries: count,
      // Verified, parsed and handled: the answer a handled delivery gets (Gantry 200 done, octokit 200 ok).
      handled: count - Object.values(failures).reduce((a, b) => a + b, 0),
      statuses,
      notHandled: failures,
      // The platform waits 10 s for an answer (GitHub too): a later one counts as a failed delivery there.
      answeredWithin10s: answeredMs.filter((ms) => ms <= 10_000).length,
      baselineRssMb: round1(baseline.rssMb),
      peakRssMb: round1(peak),
      sampledPeakRssMb: round1(sampled),
      afterRssMb: round1(after.rssMb),
      firstAnsweredMs: Math.round(answeredMs[0]!),
      lastAnsweredMs: Math.round(answeredMs.at(-1)!),
      ...(side === 'gantry' ? { loggedLines: loggedLines(receiver) - 1 } : {}),
      ...(process.env.BENCH_WEBHOOKS_KEEP ? { stdoutFile: receiver.stdoutFile } : {}),
    };
    console.error(
      `webhooks: ${count} × ${round1(large.body.length / 1024 / 1024)} MiB at once to ${side}: peak RSS ${result.peakRssMb} MB (baseline ${result.baselineRssMb}), ${result.handled}/${count} handled, statuses ${JSON.stringify(statuses)}, ${result.answeredWithin10s} answered within 10 s, the last after ${result.lastAnsweredMs} ms`,
    );
    return result;
  } finally {
    agent.destroy();
    await receiver.stop();
  }
}

try {
  const deliveries = exampleDeliveries();
  const sizes = deliveries.map((d) => d.body.length).sort((a, b) => a - b);
  let throughputPart;
  if (PARTS.has('throughput')) {
    console.error(
      `webhooks: ${deliveries.length} example deliveries (${sizes[0]} to ${sizes.at(-1)} bytes, median ${median(sizes)}), ${CONCURRENCY} in flight, ${ROUNDS} rounds of ${SECONDS} s per side`,
    );
    const small = await throughput(deliveries);
    // A side whose answers are not the handled ones is not doing the work: no ratio from that.
    for (const side of SIDES) {
      if (small[side].failures > 0) throw new Error(`${side}: ${small[side].failures} deliveries not handled: ${JSON.stringify(small[side].failuresBy)}`);
    }
    throughputPart = {
      deliveries: {
        count: deliveries.length,
        source: `@octokit/webhooks-examples ${examplesVersion}`,
        minBytes: sizes[0],
        medianBytes: median(sizes),
        maxBytes: sizes.at(-1),
      },
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      secondsPerRound: SECONDS,
      gantry: small.gantry,
      octokit: small.octokit,
      ratio: small.ratio,
      perRoundRatios: small.perRoundRatios,
      goal: 'ratio (gantry ÷ octokit deliveries/s) >= 1.0',
      goalMet: small.ratio >= 1,
    };
  }
  let memoryPart;
  if (PARTS.has('memory')) {
    const large = largePush(LARGE_BYTES);
    console.error(`webhooks: large delivery: ${large.name}, ${large.body.length} bytes`);
    const gantry = await largeAtOnce('gantry', large, LARGE);
    // Flat: the same receiver given only FEW at once (more than its one large-body slot) should peak as high,
    // since the slots bound what is read at once; a peak that grows with the count is memory kept per delivery.
    const gantryFew = await largeAtOnce('gantry', large, FEW);
    const octokit = await largeAtOnce('octokit', large, LARGE);
    memoryPart = {
      delivery: { kind: large.name, bytes: large.body.length },
      gantry,
      gantryFew: { deliveries: FEW, peakRssMb: gantryFew.peakRssMb, baselineRssMb: gantryFew.baselineRssMb, handled: gantryFew.handled },
      // Peak above baseline with LARGE at once ÷ with FEW at once: 1 is flat.
      growth: round3((gantry.peakRssMb - gantry.baselineRssMb) / (gantryFew.peakRssMb - gantryFew.baselineRssMb)),
      octokit,
      goal: `gantry peak RSS < ${RSS_GOAL_MB} MB with ${LARGE} at once, every one handled; flat (growth ≈ 1)`,
      goalMet: gantry.peakRssMb < RSS_GOAL_MB && gantry.handled === LARGE,
    };
  }

  process.stdout.write(
    `${JSON.stringify({
      bench: 'webhooks',
      what: `deliveries verified, parsed and acknowledged per second by gantry hooks serve vs @octokit/webhooks createNodeMiddleware (each receiver its own process, one load generator, same signed payloads); peak RSS with ${LARGE} large deliveries at once`,
      throughput: throughputPart,
      memory: memoryPart,
      octokitWebhooks: octokitVersion,
      gantry: gantryMain === join(root, 'dist', 'lib', 'cli', 'main.js') ? 'dist' : gantryMain,
      loadAverage: round1(loadavg()[0]!),
      cpus: cpus().length,
      node: process.version,
    })}\n`,
  );
} finally {
  if (!process.env.BENCH_WEBHOOKS_KEEP) rmSync(work, { recursive: true, force: true });
}
