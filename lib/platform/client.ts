/**
 * `PlatformClient`: the platform's REST API (GitHub's, renamed) through the one HTTP core, behind a limiter that
 * keeps every limit it knows and recovers as the platform asks from those it meets (docs/platform.md).
 *
 * There is one retry loop, the core's: the limiter is hooks on it (throttle.ts), so each attempt — first, retried or
 * resent — waits in the limiter's queue for its budgets. Rate-limit answers (403/429) are handled there and nowhere
 * else: a primary limit holds the resource until `x-ratelimit-reset`, a secondary one holds the endpoint for
 * `retry-after`, the reset, or a minute and then exponentially longer, and the request is resent; a 401 is never
 * retried (renewed once, for a token source); a 5xx or a network failure is retried by the core, under
 * `platformRetryPolicy`, for idempotent methods only, waiting on the client's clock.
 */
import { expectFunction, expectObject, expectOptions, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { sensitiveHeaders } from '../redact.js';
import { parseServiceUrl } from '../service-url.js';
import { optionKeys, refuseUnknownOptions, settingsReader } from '../settings.js';
import { platformSettings, sharedPlatformOptionKeys } from './settings.js';
import {
  bearerAuth,
  createHttpClient,
  type Credentials,
  definePolicy,
  HttpError,
  joinHooks,
  ServiceError,
  paginate,
  ProtocolError,
  redactUrl,
  registerSecret,
  type HttpClient,
  type HttpResponse,
  type RequestOptions,
  type ProxySettings,
  type RetryPolicy,
  type Timeouts,
  type TlsOptions,
  waitLimits,
} from '../http/index.js';
import { getLogger, type Logger } from '../log.js';
import { processBudgetStore, type BudgetSnapshot, type BudgetStore, type Reservation } from './budget.js';
import { systemClock, type Clock } from './clock.js';
import { PlatformApiError, PlatformCredentialsError } from './errors.js';
import { header, throttle } from './throttle.js';
import { AnswerCache, cacheKey, hasConditionalHeaders, maxCachedBodyBytes, resolveCache } from './etags.js';
import { resolveIdentity, type Identity, type IdentityKind, type IdentityOptions } from './identity.js';
import { endpointOf, isCreation, isRateLimitStatus, pointsOf, resolveLimits, resourceOf, type PlatformLimits } from './limits.js';
import { limiterFor, type Limiter } from './limiter.js';
import { budgetStoreFor } from './redis-store.js';
export { readRateLimitHeaders } from './throttle.js';
import { createCommitStatus, listCommitStatuses, type CommitStatus, type CommitStatusInput } from './statuses.js';

/** 5xx and network failures, idempotent methods only: a POST that failed may have been applied. Never 403 or 429. */
export const platformRetryPolicy: RetryPolicy = definePolicy({
  retries: 2,
  statuses: [500, 502, 503, 504],
  methods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'],
  backoff: { initialMs: 1_000, maxMs: 16_000, factor: 2, jitter: 0.5 },
  retryAfterMaxMs: 60_000,
  budgetMs: 120_000,
});

export interface PlatformClientOptions {
  /** The REST API's base URL; else `PLATFORM_API_URL`. */
  baseUrl?: string;
  /** Else `GANTRY_PLATFORM_TOKEN`, else `PLATFORM_TOKEN` (the workflow token). None: unauthenticated (60 per hour). */
  token?: string;
  /**
   * Where tokens come from when they change (an app's installation tokens, its JWTs: `PlatformApp` builds these):
   * asked before every attempt, told when the platform refused one. Instead of `token`.
   */
  auth?: PlatformTokenSource;
  /** An OAuth app's client id and secret as basic credentials, for public data (server side only). */
  clientId?: string;
  clientSecret?: string;
  /** Allow the client secret on this machine: it is refused where it could be a user's device (see docs). */
  serverSide?: boolean;
  identity?: IdentityOptions;
  /**
   * Headers sent with every request, e.g. the platform's own media type and API version (`accept`,
   * `x-github-api-version` on GitHub); a request's `headers` win. Never credentials: they come from `token`, `auth` or
   * the client credentials, which the budgets are keyed by.
   */
  headers?: Record<string, string>;
  /** The limits, or the address of a shared store for them (`'redis://…'`, the same as `limitsUrl`). */
  limits?: Partial<PlatformLimits> | string;
  /** Where the budgets are shared: `redis://…` (else `GANTRY_PLATFORM_LIMITS_URL`); see docs/platform.md "Sharing budgets through Redis". */
  limitsUrl?: string;
  /** Where the budgets live; by default `limitsUrl`'s Redis store if any, else this process's, shared by every client in it. */
  store?: BudgetStore;
  clock?: Clock;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  timeouts?: Partial<Timeouts>;
  tls?: TlsOptions;
  proxy?: ProxySettings;
  /**
   * Keep the ETag / Last-Modified and body of GET answers in memory and ask `If-None-Match` when the same GET comes
   * again; a 304 gives the kept body and spends no primary budget. Default on (500 answers, 16 MiB); false turns it off.
   */
  cache?: boolean | { maxEntries?: number; maxBytes?: number };
}

const platformClientOptionKeys = optionKeys<PlatformClientOptions>({
  ...sharedPlatformOptionKeys,
  token: true,
  auth: true,
  clientId: true,
  clientSecret: true,
  serverSide: true,
  identity: true,
});

/** Headers the `headers` option may not set: the credential is the token's (or the app's), and the budgets follow it. */
/**
 * Tokens that change over time (the core's `Credentials`), and who they are to the platform (for the budgets). A
 * 401 to one of them renews it once (`renew`, lib/http's `bearerAuth`), and the request waits in the limiter again.
 */
export interface PlatformTokenSource extends Credentials {
  /** The identity's kind, for its primary budget: `installation` or `app`. */
  kind: IdentityKind;
  /** A stable key for the budgets this identity shares (an app's id, an installation's), never a token. */
  key: string;
  /** How messages name the credentials, e.g. "app 1's installation 7". */
  describe: string;
  /** Said with a 401: what to check. */
  renewHint: string;
  /** A token good for one request; registered with the redactor by the source. */
  token(signal?: AbortSignal): Promise<string>;
  /**
   * The platform refused this token (401): forget it, so the next `token()` gets a new one.
   * @deprecated give `renew` (Credentials); `refused` is still taken when `renew` is absent.
   */
  refused?(token: string): void;
}

export type QueryValue = string | number | boolean | undefined;

export interface PlatformRequestOptions {
  query?: Record<string, QueryValue> | undefined;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string | undefined> | undefined;
  /** Values for `{name}` placeholders in the path; the template is then the endpoint the points are counted on. */
  params?: Record<string, string | number> | undefined;
  /** Whether the request creates content (RATE-SEC-CONTENT-CREATION); by default every POST but a few. */
  creates?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

export interface PlatformResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  /**
   * The platform answered 304 to this client's `If-None-Match`: `status` and `body` are the kept answer's, the
   * headers the 304's over it (docs/platform.md "Conditional requests").
   */
  notModified?: true;
}

export interface PlatformBudgets {
  identity: Identity;
  limits: PlatformLimits;
  /** What this process is keeping: in flight, points per endpoint, creations, CPU estimate, holds, and each resource as the headers last said. */
  kept: BudgetSnapshot;
  /** Requests waiting in the queue. */
  waiting: number;
}

const methods = new Set(['GET', 'HEAD', 'OPTIONS', 'POST', 'PATCH', 'PUT', 'DELETE']);
function substitute(where: string, path: string, params: Record<string, string | number> | undefined): string {
  return path.replace(/\{([^}]+)\}/g, (_all, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === '') throw new UsageError(`${where}: the path ${path} needs params.${name}`, { code: 'INVALID_ARGUMENT' });
    return encodeURIComponent(String(value)).replace(/%2F/gi, '/');
  });
}

/** The `headers` option: names and string values, no credentials (a UsageError naming the header, its value never shown). */
function clientHeaders(where: string, headers: unknown): Record<string, string> {
  if (headers === undefined) return {};
  expectObject(where, 'headers', headers, 'an object of header names and values, e.g. { accept: "application/vnd.github+json" }');
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (sensitiveHeaders.has(name.toLowerCase()))
      throw new UsageError(`${where}: headers.${name} is not taken: the credentials come from token, auth or clientId/clientSecret`, {
        code: 'INVALID_ARGUMENT',
        hint: 'pass the token as the token option (or GANTRY_PLATFORM_TOKEN); it is sent as Authorization: Bearer',
      });
    if (typeof value !== 'string') throw new UsageError(`${where}: headers.${name} must be a string`, { code: 'INVALID_ARGUMENT' });
    result[name.toLowerCase()] = value;
  }
  return result;
}

/** The URL with the request's query, as the core sends it (the cache's key). */
function withQuery(url: URL, query: Record<string, QueryValue> | undefined): URL {
  if (!query) return url;
  const full = new URL(url);
  for (const [name, value] of Object.entries(query)) if (value !== undefined) full.searchParams.append(name, String(value));
  return full;
}

/** A header the caller gave, whatever its case. */
function givenHeader(headers: Record<string, string | undefined> | undefined, name: string): string | undefined {
  return Object.entries(headers ?? {}).find(([given]) => given.toLowerCase() === name)?.[1];
}

/** A JSON body when it is JSON; the text otherwise (a proxy's HTML 502), undefined when empty. */
function parseBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export class PlatformClient {
  readonly baseUrl: string;
  readonly identity: Identity;
  readonly limits: PlatformLimits;
  /** Where the longest wait for a rate limit came from, as an error names it. */
  private readonly maxWaitFrom: string;
  /** Where the token came from (`token option`, `GANTRY_PLATFORM_TOKEN`, `PLATFORM_TOKEN`), never the token. */
  readonly tokenSource: string | undefined;
  private readonly http: HttpClient;
  /** `platformRetryPolicy` with this client's retries, and room for every rate-limit resend and a renewal. */
  private readonly retry: RetryPolicy;
  private readonly limiter: Limiter;
  /** GET answers kept for conditional requests; undefined with `cache: false`. */
  private readonly cache: AnswerCache | undefined;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly basePath: string;
  private readonly origin: string;
  private readonly auth: PlatformTokenSource | undefined;
  /** `auth` as the core's Credentials (an older source's `refused` as its `renew`). */
  private readonly credentials: Credentials | undefined;

  constructor(options: PlatformClientOptions = {}) {
    const where = 'PlatformClient';
    expectOptions(where, options);
    refuseUnknownOptions(where, options, platformClientOptionKeys);
    const env = options.env ?? process.env;
    const settings = settingsReader(platformSettings, { env });
    const baseUrl = settings.pick('baseUrl', options.baseUrl, 'baseUrl')?.value;
    if (baseUrl === undefined) {
      throw new UsageError(`${where}: no platform API address: pass baseUrl or set PLATFORM_API_URL`, {
        code: 'PLATFORM_NO_URL',
        hint: 'e.g. PLATFORM_API_URL=https://api.platform.example (gantry dev serves one locally)',
      });
    }
    expectString(where, 'baseUrl', baseUrl, 'the REST API address, e.g. https://api.platform.example');
    const base = parseServiceUrl(baseUrl, {
      name: `${where}: the platform API address`,
      plainHttp: 'anywhere',
      userinfo: true,
      query: true,
      code: 'INVALID_ARGUMENT',
      hint: 'check PLATFORM_API_URL or baseUrl',
    });
    this.baseUrl = base.toString().replace(/\/$/, '');
    this.basePath = base.pathname.replace(/\/$/, '');
    this.origin = base.origin;

    let token: string | undefined;
    let tokenSource: string | undefined;
    const { auth } = options;
    if (auth !== undefined) {
      expectObject(where, 'auth', auth, 'a token source: { kind, key, describe, renewHint, token(), renew() } (PlatformApp makes them)');
      expectFunction(where, 'auth.token', auth.token, 'a function giving a token');
      if (auth.renew === undefined) expectFunction(where, 'auth.renew', auth.refused, 'a function told of a refused token (or the older refused)');
      else expectFunction(where, 'auth.renew', auth.renew, 'a function told of a refused token');
      if (options.token !== undefined || options.clientId !== undefined || options.clientSecret !== undefined) {
        throw new UsageError(`${where}: give auth, a token or client credentials — one of them`, { code: 'INVALID_ARGUMENT' });
      }
      tokenSource = auth.describe;
    } else if (options.token !== undefined) {
      expectString(where, 'token', options.token, 'a token (or left out)');
      [token, tokenSource] = [options.token, 'the token option'];
    } else if (env.GANTRY_PLATFORM_TOKEN) {
      [token, tokenSource] = [env.GANTRY_PLATFORM_TOKEN, 'GANTRY_PLATFORM_TOKEN'];
    } else if (env.PLATFORM_TOKEN) {
      [token, tokenSource] = [env.PLATFORM_TOKEN, 'PLATFORM_TOKEN'];
    }
    if (token !== undefined) {
      token = token.trim();
      if (/\s/.test(token) || token === '')
        throw new UsageError(`${where}: the token from ${tokenSource} is empty or holds spaces`, {
          code: 'INVALID_ARGUMENT',
          hint: 'check that the variable holds the token alone',
        });
      registerSecret(token);
    }
    this.tokenSource = tokenSource;
    const { clientId, clientSecret } = options;
    if (clientSecret !== undefined || clientId !== undefined) {
      expectString(where, 'clientId', clientId, 'an OAuth app client id (with clientSecret)');
      expectString(where, 'clientSecret', clientSecret, 'an OAuth app client secret (with clientId)');
      registerSecret(clientSecret);
      // RATE-CLIENT-SECRET-PRIVATE: never on a user's device. A CI runner or a server says so (CI, or serverSide).
      if (options.serverSide !== true && !env.CI) {
        throw new UsageError(`${where}: an OAuth app's client secret must not be used on a user's machine (RATE-CLIENT-SECRET-PRIVATE)`, {
          code: 'PLATFORM_CLIENT_SECRET',
          hint: 'use a token here; on a server or CI runner pass serverSide: true (CI=true is taken as a runner)',
        });
      }
      if (token !== undefined) throw new UsageError(`${where}: give either a token or client credentials, not both`, { code: 'INVALID_ARGUMENT' });
    }
    const defaultHeaders = clientHeaders(where, options.headers);
    if (options.identity !== undefined) expectObject(where, 'identity', options.identity, 'an object: { kind?, enterprise?, repositories?, users? }');
    this.auth = auth;
    const { refused } = auth ?? {};
    this.credentials =
      auth === undefined
        ? undefined
        : auth.renew
          ? auth
          : {
              token: (signal) => auth.token(signal),
              renew: async (token) => {
                if (token !== undefined) refused?.call(auth, token);
              },
            };
    this.identity =
      auth !== undefined
        ? { ...resolveIdentity({ options: { ...options.identity, kind: auth.kind } }), inferredFrom: 'configured', key: auth.key }
        : resolveIdentity({
            token,
            tokenSource: tokenSource === 'PLATFORM_TOKEN' ? 'PLATFORM_TOKEN' : undefined,
            clientId,
            clientSecret,
            options: options.identity,
          });
    this.limits = resolveLimits(typeof options.limits === 'string' ? undefined : options.limits, where);
    // The longest wait for a rate limit: limits.maxWaitMs, else GANTRY_MAX_WAIT (or the command's --max-wait).
    const givenMaxWait = typeof options.limits === 'object' && options.limits !== null && (options.limits as { maxWaitMs?: unknown }).maxWaitMs !== undefined;
    const maxWait = givenMaxWait ? undefined : waitLimits(env).maxWaitMs;
    if (maxWait !== undefined) this.limits.maxWaitMs = maxWait;
    this.maxWaitFrom = maxWait !== undefined ? '--max-wait, GANTRY_MAX_WAIT' : 'limits.maxWaitMs';
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? getLogger();
    const limitsUrl = settings.pick('limitsUrl', options.limitsUrl ?? (typeof options.limits === 'string' ? options.limits : undefined))?.value;
    if (limitsUrl !== undefined) expectString(where, 'limitsUrl', limitsUrl, 'a redis:// address of the shared budgets');
    const store = options.store ?? (limitsUrl !== undefined ? budgetStoreFor(limitsUrl, { logger: this.logger }) : processBudgetStore);
    this.limiter = limiterFor(store, this.clock, this.logger);

    const authorization =
      token !== undefined
        ? `Bearer ${token}`
        : clientId !== undefined && clientSecret !== undefined
          ? `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`
          : undefined;
    this.cache = resolveCache(where, options.cache);
    this.retry = { ...platformRetryPolicy, retries: this.limits.serverErrorRetries, hookResends: this.limits.rateLimitRetries + 1 };
    this.http = createHttpClient({
      baseUrl: this.baseUrl,
      headers: { accept: 'application/json', ...defaultHeaders, authorization },
      retry: this.retry,
      sleep: (ms, signal) => this.clock.sleep(ms, signal),
      ...(options.timeouts ? { timeouts: options.timeouts } : {}),
      ...(options.tls ? { tls: options.tls } : {}),
      ...(options.proxy ? { proxy: options.proxy } : {}),
      logger: this.logger,
    });
  }

  /** A path under the base URL (`/repos/…`), or an absolute URL on the same origin (a Link header's next page). */
  private target(where: string, path: string, params: Record<string, string | number> | undefined): { url: URL; path: string; template: string } {
    if (/^[a-z][a-z0-9+.-]*:/i.test(path)) {
      let url: URL;
      try {
        url = new URL(path);
      } catch {
        throw new UsageError(`${where}: ${redactUrl(path)} is not a URL`, { code: 'INVALID_ARGUMENT' });
      }
      if (url.origin !== this.origin) {
        // The token goes to the platform only.
        throw new UsageError(`${where}: ${redactUrl(url)} is not on the platform API (${this.origin}); the token is not sent there`, {
          code: 'INVALID_ARGUMENT',
        });
      }
      const relative = url.pathname.startsWith(this.basePath) ? url.pathname.slice(this.basePath.length) || '/' : url.pathname;
      return { url, path: relative, template: relative };
    }
    if (!path.startsWith('/'))
      throw new UsageError(`${where}: the path must start with / (e.g. /repos/octo-org/site), got "${path.slice(0, 80)}"`, { code: 'INVALID_ARGUMENT' });
    const [rawPath, rawQuery] = path.split('?', 2) as [string, string | undefined];
    const concrete = substitute(where, rawPath, params);
    const url = new URL(`${this.baseUrl}${concrete}${rawQuery !== undefined ? `?${rawQuery}` : ''}`);
    return { url, path: concrete, template: rawPath };
  }

  /**
   * One call to the REST API: waits for its budgets, sends, and on a rate-limit answer waits as the platform asks and
   * sends again. Any status below 400 is an answer (`{ status, headers, body }`); 4xx and 5xx are typed errors.
   */
  async request<T = unknown>(method: string, path: string, options: PlatformRequestOptions = {}): Promise<PlatformResponse<T>> {
    const where = 'PlatformClient.request';
    expectString(where, 'method', method, 'an HTTP method such as "GET"');
    expectString(where, 'path', path, 'a path such as "/repos/octo-org/site"');
    expectOptions(where, options);
    const verb = method.toUpperCase();
    if (!methods.has(verb))
      throw new UsageError(`${where}: ${JSON.stringify(method)} is not a method the REST API takes (${[...methods].join(', ')})`, { code: 'INVALID_ARGUMENT' });
    if (options.query !== undefined) expectObject(where, 'query', options.query, 'an object of query parameters');
    if (options.headers !== undefined) expectObject(where, 'headers', options.headers, 'an object of headers');
    if (options.params !== undefined) expectObject(where, 'params', options.params, 'an object of path parameters');
    const { url, path: concrete, template } = this.target(where, path, options.params);
    const reservation: Reservation = {
      identity: this.identity.key,
      endpoint: endpointOf(verb, template),
      resource: resourceOf(concrete),
      points: pointsOf(verb, this.limits),
      creation: options.creates ?? isCreation(verb, concrete),
      countsPrimary: !isRateLimitStatus(verb, concrete),
      limits: this.limits,
    };
    // A repeated GET asks whether what this client keeps is still current; a 304 gives the kept body (etags.ts).
    const key =
      verb === 'GET' && this.cache && !hasConditionalHeaders(options.headers)
        ? cacheKey(this.identity.key, withQuery(url, options.query), givenHeader(options.headers, 'accept'))
        : undefined;
    const kept = key ? this.cache!.get(key) : undefined;
    const validators = {
      ...(kept?.etag ? { 'if-none-match': kept.etag } : {}),
      ...(kept?.lastModified ? { 'if-modified-since': kept.lastModified } : {}),
    };
    const answer = await this.send(verb, url, reservation, kept ? { ...options, headers: { ...options.headers, ...validators } } : options);
    const headers = answer.headers as PlatformResponse['headers'];
    if (kept && answer.status === 304) {
      return {
        status: kept.status,
        headers: { ...kept.headers, ...headers },
        body: this.parse(verb, url, kept.status, kept.headers, kept.text) as T,
        notModified: true,
      };
    }
    const body = this.parse(verb, url, answer.status, headers, answer.body);
    if (key && answer.status === 200) {
      const etag = header(headers, 'etag');
      const lastModified = header(headers, 'last-modified');
      if ((etag || lastModified) && Buffer.byteLength(answer.body) <= maxCachedBodyBytes) {
        this.cache!.set(key, { etag, lastModified, status: answer.status, headers, text: answer.body });
      } else this.cache!.delete(key);
    }
    return { status: answer.status, headers, body: body as T };
  }

  /** A JSON body when it is JSON; the text otherwise (a proxy's HTML 502) — but not where the answer says JSON. */
  private parse(verb: string, url: URL, status: number, headers: PlatformResponse['headers'], text: string): unknown {
    const body = parseBody(text);
    if (typeof body === 'string' && /json/i.test(header(headers, 'content-type') ?? '')) {
      throw new ProtocolError(
        `${verb} ${redactUrl(url)} answered ${status} with a body that is not JSON`,
        'check that the address points at the platform API and not at a proxy or web page',
      );
    }
    return body;
  }

  private async send(verb: string, url: URL, reservation: Reservation, options: PlatformRequestOptions): Promise<HttpResponse<string>> {
    const { signal } = options;
    const shown = `${verb} ${redactUrl(url)}`;
    const limited = throttle({
      limiter: this.limiter,
      clock: this.clock,
      logger: this.logger,
      limits: this.limits,
      maxWaitFrom: this.maxWaitFrom,
      method: verb,
      url,
      reservation,
      signal,
    });
    const auth = this.auth;
    // A token that changes (an installation's) may have been revoked before it expired: one new token, once, and the
    // resend waits in the limiter like any attempt (the throttle's beforeRequest runs first).
    const hooks =
      this.credentials && auth
        ? joinHooks(
            limited.hooks,
            bearerAuth(this.credentials, { onRenew: () => this.logger.warn(`platform: ${shown} answered 401 to ${auth.describe}'s token; getting a new one`) }),
          )
        : limited.hooks;
    let answer: HttpResponse<string>;
    try {
      answer = await this.http.request<string>({
        method: verb,
        url,
        ...(options.headers ? { headers: options.headers } : {}),
        ...(options.query ? { searchParams: options.query } : {}),
        ...(options.body !== undefined ? { json: options.body } : {}),
        responseType: 'text',
        accept: (status) => status < 400,
        retry: this.retry,
        hooks,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      await limited.done(false);
      // The core's refusal of this request; a service's own error (an app token's, raised in a hook) stands as it is.
      if (!(error instanceof HttpError) || error instanceof ServiceError) throw error;
      const { body, rawBody } = limited.errorBody ?? {};
      if (error.status === 401) {
        throw new PlatformCredentialsError({
          method: verb,
          url: url.toString(),
          body,
          tokenSource: this.tokenSource,
          ...(auth ? { hint: auth.renewHint } : {}),
        });
      }
      throw new PlatformApiError({
        status: error.status,
        method: verb,
        url: url.toString(),
        body,
        rawBody,
        headers: error.headers,
        attempts: limited.attempts,
      });
    }
    await limited.done(true);
    return answer;
  }

  /**
   * The items of a list, page after page, following the Link header's rel="next" (lib/http's `paginate` and its
   * default, `nextLink`). A page is an array, or an object holding one (search's `items`, `statuses`, `repositories` …).
   */
  async *paginate<T = unknown>(path: string, options: Omit<PlatformRequestOptions, 'body'> & { limit?: number } = {}): AsyncGenerator<T> {
    const where = 'PlatformClient.paginate';
    expectString(where, 'path', path, 'a path such as "/repos/octo-org/site/issues"');
    expectOptions(where, options);
    const { limit = Number.POSITIVE_INFINITY, ...rest } = options;
    if (typeof limit !== 'number' || !(limit >= 0)) throw new UsageError(`${where}: limit must be a number ≥ 0`, { code: 'INVALID_ARGUMENT' });
    const firstUrl = this.target(where, path, rest.params).url;
    // The core's paginator over this client's request (its limiter and rate-limit recovery): the first page with the
    // query and params given, each next one the Link header's absolute URL.
    const page = async (request: RequestOptions): Promise<HttpResponse<unknown>> => {
      const first = typeof request.url === 'string';
      const response = await this.request<unknown>('GET', String(request.url), first ? rest : { headers: rest.headers, signal: rest.signal });
      return { ...response, url: first ? firstUrl.toString() : String(request.url), redirectUrls: [], attempts: 1 };
    };
    yield* paginate<T>(page, () => firstUrl, { url: path, countLimit: limit, transform: (response) => itemsOf(response.body) as T[] });
  }

  /** `GET /rate_limit` (not counted against the primary budget, RATE-EP-STATUS). */
  async rateLimit(): Promise<unknown> {
    return (await this.request('GET', '/rate_limit')).body;
  }

  /** What the client expects (identity, limits) beside what it keeps and what the headers last said. */
  async budgets(): Promise<PlatformBudgets> {
    return {
      identity: this.identity,
      limits: { ...this.limits },
      kept: await this.limiter.store.snapshot(this.identity.key, this.clock.now()),
      waiting: this.limiter.waiting,
    };
  }

  createCommitStatus(input: CommitStatusInput): Promise<CommitStatus> {
    return createCommitStatus(this, input);
  }

  listCommitStatuses(input: { repository: string; ref: string; limit?: number }): Promise<CommitStatus[]> {
    return listCommitStatuses(this, input);
  }

  /** Releases the keep-alive sockets. */
  close(): void {
    this.http.close();
  }
}

/**
 * A page's items: an array, or a wrapped list (`{total_count, repositories: […]}`, search's `items`). Any other
 * object is one item — `gantry platform api /repos/o/r --paginate` prints the repository, as `gh api` does — and
 * never the one array it happens to hold (a repository's `topics`).
 */
function itemsOf(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    if (Array.isArray(record.items)) return record.items;
    if (typeof record.total_count === 'number') {
      const arrays = Object.values(record).filter((value) => Array.isArray(value));
      if (arrays.length === 1) return arrays[0] as unknown[];
    }
    return [body];
  }
  return body === undefined ? [] : [body];
}
