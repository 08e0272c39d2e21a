/**
 * Gantry's tools, as data: name, the scope a token needs to call it, its input, and what it does. Each reaches its
 * service with Gantry's own credentials from the environment (registry tokens, SECRETS_TOKEN, PLATFORM_TOKEN, the page
 * analysis key) — never with the token the caller presented (CTX-AUTH-NO-TOKEN-PASSTHROUGH): a handler is not given it.
 */
import { z } from 'zod';
import type { Logger } from '../../log.js';
import type { PlatformClient } from '../../platform/client.js';
import type { RegistryClient } from '../../registry/client.js';
import type { SecretsClient } from '../../secrets/client.js';

export const MCP_SCOPES = {
  modulesRead: 'modules:read',
  gatesRun: 'gates:run',
  secretsList: 'secrets:list',
  platformRead: 'platform:read',
} as const;

export interface ToolContext {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The server's clients, one each, made on first use: discovery, mount detection and connections serve every call. */
  clients: ToolClients;
  signal: AbortSignal;
  /** Reports progress to the caller when it asked for it (a progressToken); otherwise does nothing. */
  progress(done: number, total: number, message: string): Promise<void>;
}

export interface ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  scope: string;
  input: Shape;
  readOnly: boolean;
  /** When a result is a definite "no" (a gate that failed), what to say: the call is then a tool error carrying it. */
  verdict?(result: never): string | undefined;
  run(args: z.objectOutputType<Shape, z.ZodTypeAny>, context: ToolContext): Promise<unknown>;
}

const define = <Shape extends z.ZodRawShape>(tool: ToolDefinition<Shape>) => tool as unknown as ToolDefinition;

const moduleSource = z.string().min(1).max(500).describe('a module source address, e.g. "hashicorp/consul/aws" or "registry.example.com/team/net/aws"');
/** What the secrets tools share: one path of the kv engine, read with the list scope (names and metadata, never values). */
const secretsRead = {
  scope: MCP_SCOPES.secretsList,
  readOnly: true,
  input: { path: z.string().min(1).max(1000).describe('<mount>/<path>, e.g. "secret/app"') },
};

export const TOOLS: ToolDefinition[] = [
  define({
    name: 'modules_resolve',
    title: 'Resolve a module version',
    description: 'Pick the newest version of a registry module allowed by a version constraint, and where its source is.',
    scope: MCP_SCOPES.modulesRead,
    readOnly: true,
    input: { source: moduleSource, version: z.string().max(200).optional().describe('a version constraint such as "~> 1.2" (default: the newest release)') },
    async run({ source, version }, { env, clients }) {
      const { resolveAddress, formatModuleAddress } = await import('../../registry/index.js');
      const client = await clients.registry();
      const resolution = await resolveAddress(client, source, version, env);
      return {
        source: formatModuleAddress(resolution.address),
        constraint: version ?? '',
        version: resolution.version,
        location: resolution.locationText,
        skipped: resolution.skipped,
      };
    },
  }),
  define({
    name: 'modules_versions',
    title: 'List module versions',
    description: 'The versions of a registry module, newest first, each marked release, pre-release or unparseable.',
    scope: MCP_SCOPES.modulesRead,
    readOnly: true,
    input: { source: moduleSource },
    async run({ source }, { env, clients }) {
      const { parseModuleAddress, parseVersion } = await import('../../registry/index.js');
      const semver = (await import('semver')).default;
      const listed = await (await clients.registry()).versions(parseModuleAddress(source, env));
      const parsed = listed.map((version) => ({ version, parsed: parseVersion(version) }));
      parsed.sort((a, b) => (a.parsed && b.parsed ? semver.rcompare(a.parsed.semver, b.parsed.semver) : a.parsed ? -1 : b.parsed ? 1 : 0));
      return { source, versions: parsed.map(({ version, parsed: p }) => ({ version, kind: p ? (p.prerelease ? 'pre-release' : 'release') : 'unparseable' })) };
    },
  }),
  define({
    name: 'gate_run',
    title: 'Run a page-analysis gate',
    description:
      'Analyse pages (the page analysis API when PAGEANALYSIS_BASE_URL is set, else Lighthouse in Chromium) and check category scores; long-running, with progress notifications. The result says pass, fail or error with every check.',
    scope: MCP_SCOPES.gatesRun,
    readOnly: true,
    input: {
      urls: z.array(z.string().url()).min(1).max(10).describe('the pages to analyse'),
      runs: z.number().int().min(1).max(5).optional().describe('runs per page (default 1); the median run decides'),
      categories: z.record(z.number()).optional().describe('minimum category scores, e.g. {"performance": 0.9, "accessibility": 90} (default performance 0.9)'),
    },
    async run({ urls, runs, categories }, { env, logger, signal, progress }) {
      const analysis = await import('../../analysis/index.js');
      const thresholds = categories ? analysis.categoryThresholdsFromRecord(categories) : [];
      const count = runs ?? 1;
      analysis.checkGateOptions({ urls, runs: count });
      const engine = analysis.createEngine({ env, logger });
      const total = urls.length * count;
      let done = 0;
      const result = await analysis.runGate({
        urls,
        thresholds,
        runs: count,
        engine,
        signal,
        onProgress: ({ url, run, runs: of }) => {
          void progress(done, total, `run ${run} of ${of}: ${url}`);
          done += 1;
        },
      });
      await progress(total, total, `gate ${result.status}`);
      return analysis.summarize(result);
    },
    verdict: (summary: { status: string }) =>
      summary.status === 'pass'
        ? undefined
        : summary.status === 'fail'
          ? 'the gate failed: a check said no (see checks)'
          : 'the gate could not analyse a page (see checks): no verdict',
  }),
  define({
    name: 'secrets_list',
    title: 'List secret keys',
    description: 'The keys under a directory of the kv engine (folders end in /). Names only: never values.',
    ...secretsRead,
    async run({ path }, { clients }) {
      const { kv, name } = await (await clients.secrets()).kvAt(path.endsWith('/') ? path : `${path}/`);
      return { path, mount: kv.mount, keys: await kv.list(name) };
    },
  }),
  define({
    name: 'secrets_metadata',
    title: "Show a secret's metadata",
    description: 'The kv v2 metadata of a key: versions with their times, max versions, check-and-set, custom metadata. Never the values.',
    ...secretsRead,
    async run({ path }, { clients }) {
      const { kv, name } = await (await clients.secrets()).kvAt(path);
      const metadata = name === '' ? undefined : await kv.readMetadata(name);
      if (!metadata) throw new ToolRefusal(`no metadata at ${path}${name === '' ? ' (it names a mount, not a key)' : ''}`);
      return { path, mount: kv.mount, ...metadata };
    },
  }),
  define({
    name: 'platform_rate_limit',
    title: 'Platform rate limits',
    description: "Each REST resource's limit, used, remaining and reset time (GET /rate_limit, which spends no budget), for Gantry's own platform token.",
    scope: MCP_SCOPES.platformRead,
    readOnly: true,
    input: {},
    async run(_args, { clients }) {
      const answer = (await (await clients.platform()).rateLimit()) as
        { resources?: Record<string, { limit?: number; used?: number; remaining?: number; reset?: number }> } | undefined;
      return {
        resources: Object.entries(answer?.resources ?? {}).map(([resource, r]) => ({
          resource,
          limit: r.limit,
          used: r.used,
          remaining: r.remaining,
          reset: r.reset === undefined ? undefined : new Date(r.reset * 1000).toISOString(),
        })),
      };
    },
  }),
];

/** A definite "no" from a tool (not found, not configured): the caller sees it as the tool's error result. */
export class ToolRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolRefusal';
  }
}

export interface ToolClients {
  registry(): Promise<RegistryClient>;
  secrets(): Promise<SecretsClient>;
  platform(): Promise<PlatformClient>;
}

/** The clients the tools of one server share for its lifetime, from its environment; `close` at stop. */
export function createToolClients(env: NodeJS.ProcessEnv, logger: Logger): ToolClients & { close(): void } {
  let registry: Promise<RegistryClient> | undefined;
  let secrets: Promise<SecretsClient> | undefined;
  let platform: Promise<PlatformClient> | undefined;
  return {
    registry: () => (registry ??= import('../../registry/index.js').then(({ RegistryClient }) => new RegistryClient({ env, logger }))),
    secrets: () => (secrets ??= import('../../secrets/index.js').then(({ SecretsClient }) => new SecretsClient({ sources: { env }, logger }))),
    platform: () =>
      (platform ??= (async () => {
        if (!env.PLATFORM_API_URL) throw new ToolRefusal('the server has no platform API address (PLATFORM_API_URL)');
        const { PlatformClient } = await import('../../platform/index.js');
        return new PlatformClient({ baseUrl: env.PLATFORM_API_URL, env, logger });
      })()),
    close() {
      for (const made of [registry, secrets, platform])
        made?.then(
          (client) => client.close(),
          () => undefined,
        );
    },
  };
}
