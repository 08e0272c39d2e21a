/**
 * The configured endpoints, reachable or not: one probe each, through the area's own client (so the address, TLS
 * settings and plain-http rules are the ones the real commands use), without retries, within a short timeout. A probe
 * never sends a credential anywhere the real command would not: the kv server's health and the page-analysis API are
 * asked without any, and discovery sends a registry's own token to that registry only (as every modules command does).
 */
import { GantryError } from '../errors.js';
import { createHttpClient, NetworkError, noRetry, redact, redactUrl, type HttpClient, type HttpClientOptions } from '../http/index.js';
import type { Logger } from '../log.js';
import { parseServiceUrl } from '../service-url.js';
import type { DoctorCheck } from './types.js';

export interface EndpointProbeOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  logger?: Logger | undefined;
  /** `--registry-host`: check this registry's discovery even when GANTRY_REGISTRY_HOST is unset. */
  registryHost?: string | undefined;
}

type Probe = Pick<DoctorCheck, 'status' | 'detail'> & { fix?: string };

interface Endpoint {
  check: string;
  /** The variable (or flag) that configures it, shown when it is not configured. */
  setting: string;
  /** The setting that gave the target, when a flag can stand in for the variable (`--registry-host`). */
  settingUsed?: (options: EndpointProbeOptions) => string;
  neededFor: string;
  /** The detail of a "not configured" row, when more than "<setting> is not set" helps. */
  unset?: string;
  /** The configured target, or undefined when nothing configures it; default the variable `setting` names. */
  target?(options: EndpointProbeOptions): string | undefined;
  probe(target: string, options: EndpointProbeOptions): Promise<Probe>;
}

const timeouts = (ms: number) => ({ connect: ms, response: ms, total: ms });

/** What a failed probe says: unreachable for a connection that failed, error for an answer that is not the service. */
function failed(error: unknown, where: string): Probe {
  const message = redact(error instanceof Error ? error.message : String(error));
  const network = error instanceof NetworkError || (error instanceof GantryError && error.cause instanceof NetworkError);
  return { status: network ? 'unreachable' : 'error', detail: message.includes(where) ? message : `${where}: ${message}` };
}

/**
 * A probe through a client it opens (the area's, or a bare HTTP client): what `ask` finds, else `onError`'s reading
 * of the failure or `failed` naming where it was; the client closed either way. `where` is named until the client
 * says where it is (`whereOf`).
 */
async function probeThrough<C extends { close(): unknown }>(
  where: string,
  open: () => C,
  ask: (client: C, where: string) => Promise<Probe>,
  { whereOf, onError }: { whereOf?: (client: C) => string; onError?: (error: unknown, where: string) => Probe | undefined | Promise<Probe | undefined> } = {},
): Promise<Probe> {
  let client: C | undefined;
  try {
    client = open();
    if (whereOf) where = whereOf(client);
    return await ask(client, where);
  } catch (error) {
    return (await onError?.(error, where)) ?? failed(error, where);
  } finally {
    client?.close();
  }
}

/** A probe over a bare HTTP client of its own, without retries, within the timeout (probeThrough). */
function overHttp(
  { timeoutMs, logger }: EndpointProbeOptions,
  client: Pick<HttpClientOptions, 'baseUrl' | 'maxRedirects'>,
  where: string,
  ask: (http: HttpClient) => Promise<Probe>,
  onError?: (error: unknown) => Promise<Probe | undefined>,
): Promise<Probe> {
  const open = () => createHttpClient({ ...client, timeouts: timeouts(timeoutMs), retry: noRetry, ...(logger ? { logger } : {}) });
  return probeThrough(where, open, ask, onError ? { onError } : {});
}

const secrets: Endpoint = {
  check: 'secrets service',
  setting: 'SECRETS_ADDR',
  neededFor: 'gantry secrets and KvSecret resources',
  async probe(_target, { env, timeoutMs, logger }) {
    const { SecretsClient, SecretsError } = await import('../secrets/index.js');
    // sys/health needs no token and lives in the root namespace: the client gets neither, so it cannot send them.
    const { SECRETS_TOKEN: _token, SECRETS_NAMESPACE: _namespace, ...rest } = env;
    return probeThrough(
      redactUrl(env.SECRETS_ADDR ?? ''),
      () => new SecretsClient({ maxRetries: 0, timeoutMs, ...(logger ? { logger } : {}), sources: { env: rest, pulumi: undefined } }),
      async (client, where) => {
        const result = await client.call({ method: 'GET', path: 'sys/health', authenticated: false });
        const health = (result.body ?? {}) as { version?: unknown };
        return { status: 'ok', detail: `${where} answers${typeof health.version === 'string' ? ` (version ${health.version})` : ''}` };
      },
      {
        whereOf: (client) => client.config.address,
        // The health endpoint's own codes: 429, 472 and 473 are standbys (serving), 501 not initialised, 503 sealed.
        onError: (error, where) => {
          if (error instanceof SecretsError && [429, 472, 473].includes(error.status))
            return { status: 'ok', detail: `${where} answers (a standby, ${error.status})` };
          if (error instanceof SecretsError && error.status === 503) return { status: 'error', detail: `${where} answers but is sealed (503)` };
          return undefined;
        },
      },
    );
  },
};

const registry: Endpoint = {
  check: 'module registry',
  setting: 'GANTRY_REGISTRY_HOST',
  neededFor: 'gantry modules and RegistryModule resources without a host in the address',
  unset: 'GANTRY_REGISTRY_HOST is not set (addresses without a host use registry.terraform.io; --registry-host <host> checks one)',
  target: ({ env, registryHost }) => registryHost || env.GANTRY_REGISTRY_HOST || undefined,
  settingUsed: ({ registryHost }) => (registryHost ? '--registry-host' : 'GANTRY_REGISTRY_HOST'),
  async probe(host, options) {
    const { RegistryClient } = await import('../registry/index.js');
    const { env, logger } = options;
    return overHttp(options, { maxRedirects: 10 }, host, async (http) => {
      const client = new RegistryClient({ env, http, retry: noRetry, ...(logger ? { logger } : {}) });
      const services = await client.services(host);
      return { status: 'ok', detail: `${services.host}: modules.v1 at ${redactUrl(services.modulesV1)}` };
    });
  },
};

const pageAnalysis: Endpoint = {
  check: 'page analysis API',
  setting: 'PAGEANALYSIS_BASE_URL',
  neededFor: 'gates with the api engine',
  async probe(target, options) {
    const { RUN_PATH } = await import('../analysis/remote.js');
    let base: URL;
    try {
      base = parseServiceUrl(target, { name: 'PAGEANALYSIS_BASE_URL', showValue: false, plainHttp: 'anywhere', userinfo: true, query: true });
    } catch (error) {
      return { status: 'error', detail: (error as Error).message };
    }
    const where = redactUrl(base);
    // runPageanalysis without a page and without the key or token: the API says 400 (or 401/403), nothing is analysed.
    return overHttp(options, { baseUrl: base.toString() }, where, async (http) => {
      const response = await http.request({
        method: 'GET',
        url: RUN_PATH,
        responseType: 'text',
        accept: () => true,
        followRedirects: false,
        maxBodyBytes: 256 * 1024,
      });
      if (response.status === 404) return { status: 'error', detail: `${where} answers, but has no page analysis API (404 for ${RUN_PATH})` };
      if (response.status >= 500) return { status: 'error', detail: `${where} answers ${response.status}` };
      return { status: 'ok', detail: `${where} answers (${response.status} without a page)` };
    });
  },
};

const platform: Endpoint = {
  check: 'platform API',
  setting: 'PLATFORM_API_URL',
  neededFor: 'the platform client (commit statuses)',
  async probe(target, { env, timeoutMs, logger }) {
    const { PlatformClient, PlatformCredentialsError } = await import('../platform/index.js');
    // GET /rate_limit, with the token the platform commands send to this platform: it costs no primary budget
    // (RATE-EP-STATUS). No retries, no waiting on a limit.
    const open = () =>
      new PlatformClient({
        env,
        timeouts: timeouts(timeoutMs),
        limits: { serverErrorRetries: 0, rateLimitRetries: 0, maxWaitMs: 0 },
        ...(logger ? { logger } : {}),
      });
    return probeThrough(
      redactUrl(target),
      open,
      async (client, where) => {
        const body = (await client.rateLimit()) as { resources?: { core?: { limit?: unknown; remaining?: unknown } } } | undefined;
        const core = body?.resources?.core;
        const budget = core && typeof core.remaining === 'number' ? `, core ${core.remaining}/${String(core.limit)} left` : '';
        return { status: 'ok', detail: `${where} answers as ${client.identity.kind}${budget}` };
      },
      {
        whereOf: (client) => redactUrl(client.baseUrl),
        onError: (error, where) =>
          error instanceof PlatformCredentialsError ? { status: 'error', detail: `${where} refuses the token (401): renew it` } : undefined,
      },
    );
  },
};

const authorization: Endpoint = {
  check: 'authorization server',
  setting: 'GANTRY_AUTH_URL',
  neededFor: 'gantry auth (device login)',
  async probe(target, options) {
    const { checkAuthUrl, discoverEndpoints } = await import('../auth/index.js');
    let base: string;
    try {
      base = checkAuthUrl(target, 'GANTRY_AUTH_URL');
    } catch (error) {
      return { status: 'error', detail: (error as Error).message };
    }
    // The metadata only: no client id, no secret, no code requested.
    return overHttp(options, { maxRedirects: 0 }, redactUrl(base), async (http) => {
      const found = await discoverEndpoints(http, base);
      const from = found.source === 'defaults' ? "no metadata; the spec's paths" : `from ${found.source}`;
      return { status: 'ok', detail: `${base}: device endpoint ${redactUrl(found.deviceAuthorization)} (${from})` };
    });
  },
};

const contextAuthorization: Endpoint = {
  check: 'context server authorization',
  setting: 'GANTRY_MCP_AUTHORIZATION_SERVER',
  neededFor: 'gantry mcp serve (the tokens it accepts)',
  async probe(target, options) {
    const { discoverAuthorizationServer } = await import('../mcp/client/discovery.js');
    // What `gantry mcp serve` reads at start: the RFC 8414 metadata, its issuer checked, and whether tokens can be checked.
    return overHttp(options, { maxRedirects: 0 }, redactUrl(target), async (http) => {
      const { metadata } = await discoverAuthorizationServer(target, { http });
      const how = [metadata.jwks_uri ? 'JWTs by its JWKS' : undefined, metadata.introspection_endpoint ? 'others by introspection' : undefined]
        .filter(Boolean)
        .join(', ');
      if (!how)
        return {
          status: 'error',
          detail: `${redactUrl(target)} publishes neither jwks_uri nor introspection_endpoint: no token could be checked`,
          fix: 'point GANTRY_MCP_AUTHORIZATION_SERVER at the issuer of the tokens',
        };
      return {
        status: 'ok',
        detail: `${redactUrl(target)}: issuer matches; tokens checked as ${how}${metadata.code_challenge_methods_supported?.includes('S256') ? '' : '; no S256 advertised: clients will refuse to sign in'}`,
      };
    });
  },
};

const storage: Endpoint = {
  check: 'storage API',
  setting: 'STORAGE_BASE_URL',
  neededFor: 'gantry storage, Storage* resources and --report-storage',
  async probe(target, options) {
    const { env, timeoutMs, logger } = options;
    const [{ createStorageTransport, storageBaseUrl }, { StorageError }] = await Promise.all([
      import('../storage/transport.js'),
      import('../storage/errors.js'),
    ]);
    let base: string;
    try {
      base = storageBaseUrl(target);
    } catch (error) {
      return { status: 'error', detail: (error as Error).message };
    }
    const token = env.STORAGE_TOKEN || undefined;
    if (!token) {
      // No credential to send: the service's 401 in its own error shape shows it is there (the commands can use a
      // `gantry auth` login instead of STORAGE_TOKEN).
      return overHttp(
        options,
        { baseUrl: `${base}/`, maxRedirects: 0 },
        base,
        async (http) => {
          await http.request({ url: 'storage/v2/about', searchParams: { fields: 'kind' } });
          return { status: 'error', detail: `${base}/storage/v2/about answered without credentials: not a storage API` };
        },
        async (error) => {
          const reason = (error as { body?: { error?: { errors?: Array<{ reason?: unknown }> } } }).body?.error?.errors?.[0]?.reason;
          if ((error as { status?: unknown }).status === 401 && typeof reason === 'string') {
            // The commands would use a stored `gantry auth` login instead: say whether one is there (the index only,
            // no token is read).
            const profile = env.GANTRY_AUTH_PROFILE || 'default';
            const { listProfiles } = await import('../auth/store/index.js');
            const logins = await listProfiles({ env }).then(
              (all) => all.filter((entry) => entry.profile === profile),
              () => [],
            );
            if (logins.length > 0) {
              const who = logins.map((entry) => entry.account?.email ?? entry.authUrl).join(', ');
              return {
                status: 'ok',
                detail: `${base} answers; STORAGE_TOKEN is not set, the commands use the gantry auth login of profile ${profile} (${who})`,
              };
            }
            return {
              status: 'error',
              detail: `${base} answers, but STORAGE_TOKEN is not set and profile ${profile} has no gantry auth login`,
              fix: 'set STORAGE_TOKEN, or run gantry auth login --scope storage.file',
            };
          }
          return undefined;
        },
      );
    }
    return probeThrough(
      base,
      () => createStorageTransport({ baseUrl: base, token, retry: noRetry, timeouts: timeouts(timeoutMs), ...(logger ? { logger } : {}) }),
      async (transport) => {
        const { body } = await transport.request<{ user?: { emailAddress?: string } }>({
          path: '/storage/v2/about',
          searchParams: { fields: 'user(emailAddress)' },
        });
        return { status: 'ok', detail: `${base} answers as ${body?.user?.emailAddress ?? 'an unnamed user'}` };
      },
      {
        onError: (error) =>
          error instanceof StorageError && error.status === 401
            ? {
                status: 'error',
                detail: `${base} refuses STORAGE_TOKEN (401${error.reason ? ` ${error.reason}` : ''})`,
                fix: 'set a valid STORAGE_TOKEN (or unset it to use a gantry auth login)',
              }
            : undefined,
      },
    );
  },
};

/** Every endpoint doctor knows, in the order it lists them: a name, the setting, what needs it, and a probe through the area's client. */
const endpoints: readonly Endpoint[] = [secrets, registry, pageAnalysis, platform, authorization, storage, contextAuthorization];

/** One check per endpoint: probed in parallel when configured, "not configured" otherwise (which is no failure). */
export function checkEndpoints(options: EndpointProbeOptions): Promise<DoctorCheck>[] {
  return endpoints.map(async (endpoint): Promise<DoctorCheck> => {
    const common = { check: endpoint.check, kind: 'endpoint' as const, setting: endpoint.setting, neededFor: endpoint.neededFor };
    const target = endpoint.target ? endpoint.target(options) : options.env[endpoint.setting] || undefined;
    if (target === undefined) return { ...common, status: 'not configured', detail: endpoint.unset ?? `${endpoint.setting} is not set` };
    const result = await endpoint.probe(target, options);
    const setting = endpoint.settingUsed?.(options) ?? endpoint.setting;
    return { ...common, ...result, ...(result.status === 'ok' ? {} : { fix: result.fix ?? `check ${setting} and that the service runs` }) };
  });
}
