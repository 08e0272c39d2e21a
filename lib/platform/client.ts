/**
 * `PlatformClient`: the platform's REST API (GitHub's, renamed) through the one HTTP core, behind a limiter that
 * keeps every limit it knows and recovers as the platform asks from those it meets (docs/platform.md).
 *
 * There is one retry loop, this one: the core sends single attempts (`noRetry`) and hands every status back, and
 * each attempt — first or retried — waits in the limiter's queue for its budgets. Rate-limit answers (403/429) are
 * handled here and nowhere else: a primary limit holds the resource until `x-ratelimit-reset`, a secondary one holds
 * the endpoint for `retry-after`, the reset, or a minute and then exponentially longer; a 401 is never retried; a
 * 5xx or a network failure is retried, under `platformRetryPolicy`, for idempotent methods only.
 */
import { expectFunction, expectObject, expectOptions, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { parseServiceUrl } from '../service-url.js';
import { optionKeys, refuseUnknownOptions, settingsReader } from '../settings.js';
import { platformSettings, sharedPlatformOptionKeys } from './settings.js';
import {
  announceWait,
  createHttpClient,
  renewalFor,
  type Credentials,
  decideRetry,
  definePolicy,
  NetworkError,
  noRetry,
  paginate,
  parseRetryAfter,
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
import { processBudgetStore, type BudgetSnapshot, type BudgetStore, type PrimaryObservation, type Reservation } from './budget.js';
import { systemClock, type Clock } from './clock.js';
import { PlatformApiError, PlatformCredentialsError, PlatformRateLimitError, readErrorBody } from './errors.js';
import { resolveIdentity, type Identity, type IdentityKind, type IdentityOptions } from './identity.js';
import { endpointOf, isCreation, isRateLimitStatus, pointsOf, resolveLimits, resourceOf, type PlatformLimits } from './limits.js';
import { limiterFor, type Limiter } from './limiter.js';
import { budgetStoreFor } from './redis-store.js';
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
const credentialHeaders = new Set(['authorization', 'proxy-authorization', 'cookie']);

/**
 * Tokens that change over time (the core's `Credentials`), and who they are to the platform (for the budgets). A
 * 401 to one of them renews it once (`renew`, lib/http's `renewalFor`), and the request waits in the limiter again.
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
const secondaryMessage = /secondary rate limit|abuse detection/i;

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function numberHeader(headers: Record<string, string | string[] | undefined>, name: string): number | undefined {
  const value = header(headers, name);
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** RATE-HDR-LIMIT, -REMAINING, -USED, -RESET, -RESOURCE. */
export function readRateLimitHeaders(headers: Record<string, string | string[] | undefined>, fallbackResource = 'core'): PrimaryObservation | undefined {
  const limit = numberHeader(headers, 'x-ratelimit-limit');
  const remaining = numberHeader(headers, 'x-ratelimit-remaining');
  const reset = numberHeader(headers, 'x-ratelimit-reset');
  if (remaining === undefined || reset === undefined) return undefined;
  return {
    resource: header(headers, 'x-ratelimit-resource') ?? fallbackResource,
    limit: limit ?? remaining,
    remaining,
    used: numberHeader(headers, 'x-ratelimit-used'),
    reset,
  };
}

function duration(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.max(0, Math.round(ms / 1000))} s`;
}

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
    if (credentialHeaders.has(name.toLowerCase()))
      throw new UsageError(`${where}: headers.${name} is not taken: the credentials come from token, auth or clientId/clientSecret`, {
        code: 'INVALID_ARGUMENT',
        hint: 'pass the token as the token option (or GANTRY_PLATFORM_TOKEN); it is sent as Authorization: Bearer',
      });
    if (typeof value !== 'string') throw new UsageError(`${where}: headers.${name} must be a string`, { code: 'INVALID_ARGUMENT' });
    result[name.toLowerCase()] = value;
  }
  return result;
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
  private readonly limiter: Limiter;
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
    this.http = createHttpClient({
      baseUrl: this.baseUrl,
      headers: { accept: 'application/json', ...defaultHeaders, authorization },
      retry: noRetry,
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
    const response = await this.send(verb, url, reservation, options);
    return { status: response.status, headers: response.headers as PlatformResponse['headers'], body: response.body as T };
  }

  private async send(verb: string, url: URL, reservation: Reservation, options: PlatformRequestOptions): Promise<HttpResponse<unknown>> {
    const { signal } = options;
    const shown = `${verb} ${redactUrl(url)}`;
    let attempt = 0;
    let limitRetries = 0;
    let backoffs = 0;
    let waitedMs = 0;
    let serverRetries = 0;
    let serverWaitedMs = 0;
    const auth = this.auth;
    const renewal =
      this.credentials && auth
        ? renewalFor(this.credentials, { onRenew: () => this.logger.warn(`platform: ${shown} answered 401 to ${auth.describe}'s token; getting a new one`) })
        : undefined;
    for (;;) {
      attempt += 1;
      const queued = this.clock.now();
      await this.limiter.acquire(reservation, {
        first: attempt > 1,
        signal,
        maxWaitMs: this.limits.maxWaitMs,
        tooLong: (retryAt, reason) =>
          new PlatformRateLimitError({
            kind: reason.includes('resource:') || reason.includes('budget') ? 'primary' : 'secondary',
            method: verb,
            url: url.toString(),
            status: 0,
            waitedMs,
            attempts: attempt - 1,
            reason: `${reason}: a wait of ${duration(retryAt - this.clock.now())}, more than the ${duration(this.limits.maxWaitMs)} allowed (${this.maxWaitFrom})`,
            resumeAt: retryAt,
          }),
      });
      let token: string | undefined;
      try {
        token = this.auth ? await this.auth.token(signal) : undefined;
      } catch (error) {
        await this.limiter.store.release(reservation, { now: this.clock.now(), durationMs: 0, answered: false });
        throw error;
      }
      const started = this.clock.now();
      if (attempt > 1) waitedMs += started - queued;
      let answer: HttpResponse<string>;
      try {
        answer = await this.http.request<string>({
          method: verb,
          url,
          headers: token === undefined ? options.headers : { ...options.headers, authorization: `Bearer ${token}` },
          ...(options.query ? { searchParams: options.query } : {}),
          ...(options.body !== undefined ? { json: options.body } : {}),
          responseType: 'text',
          accept: () => true,
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        await this.limiter.store.release(reservation, { now: this.clock.now(), durationMs: this.clock.now() - started, answered: false });
        if (!(error instanceof NetworkError)) throw error;
        const decision = decideRetry({
          policy: { ...platformRetryPolicy, retries: this.limits.serverErrorRetries },
          retryIndex: serverRetries,
          method: verb,
          errorCode: error.errorCode,
          waitedMs: serverWaitedMs,
        });
        if (!decision.retry) throw error;
        this.logger.debug(`platform: ${shown}: ${decision.reason}; again in ${decision.delayMs} ms`);
        announceWait({
          kind: 'retry',
          host: url.host,
          reason: decision.reason,
          at: Date.now() + decision.delayMs,
          delayMs: decision.delayMs,
          attempt: serverRetries + 2,
          attempts: this.limits.serverErrorRetries + 1,
        });
        serverRetries += 1;
        serverWaitedMs += decision.delayMs;
        await this.clock.sleep(decision.delayMs, signal);
        continue;
      }
      const now = this.clock.now();
      const headers = answer.headers as Record<string, string | string[] | undefined>;
      const observation = readRateLimitHeaders(headers, reservation.resource);
      // The budget is given back only after a rate-limit answer has put its hold in place (the finally below), so
      // nothing queued behind this request is sent into an endpoint the platform has just closed.
      let released = false;
      const release = async () => {
        if (released) return;
        released = true;
        await this.limiter.store.release(reservation, { now, durationMs: now - started, observation, answered: true });
      };
      try {
        const body = parseBody(answer.body);
        const status = answer.status;
        this.logger.debug(
          `platform: ${shown} → ${status}${observation ? ` (${observation.resource} ${observation.remaining}/${observation.limit} left)` : ''}`,
        );
        if (status < 400) {
          if (typeof body === 'string' && /json/i.test(header(headers, 'content-type') ?? '')) {
            throw new ProtocolError(
              `${shown} answered ${status} with a body that is not JSON`,
              'check that the address points at the platform API and not at a proxy or web page',
            );
          }
          return { ...answer, body };
        }
        const rawBody = typeof body === 'string' ? body : undefined;
        const jsonBody = typeof body === 'string' ? undefined : body;
        if (status === 401) {
          // A token that changes (an installation's) may have been revoked before it expired: one new token, once.
          if (renewal && token !== undefined && (await renewal(token, { status, headers: answer.headers, url: answer.url, signal }))) continue;
          throw new PlatformCredentialsError({
            method: verb,
            url: url.toString(),
            body: jsonBody,
            tokenSource: this.tokenSource,
            ...(this.auth ? { hint: this.auth.renewHint } : {}),
          });
        }

        if (status === 403 || status === 429) {
          const message = readErrorBody(jsonBody).message ?? '';
          const retryAfter = header(headers, 'retry-after');
          const remainingZero = numberHeader(headers, 'x-ratelimit-remaining') === 0;
          const reset = numberHeader(headers, 'x-ratelimit-reset');
          const secondary = secondaryMessage.test(message) || (retryAfter !== undefined && !remainingZero) || (status === 429 && !remainingZero);
          if (secondary || remainingZero) {
            const kind = secondary ? 'secondary' : 'primary';
            let waitMs: number;
            let why: string;
            const resumeAt = reset !== undefined ? reset * 1000 + this.limits.resetSkewMs : undefined;
            const asked = parseRetryAfter(retryAfter, now);
            if (kind === 'secondary' && asked !== undefined) {
              waitMs = asked; // RATE-ERR-SECONDARY-RETRY-AFTER
              why = `retry-after: ${retryAfter}`;
            } else if (remainingZero && resumeAt !== undefined) {
              waitMs = Math.max(0, resumeAt - now); // RATE-ERR-PRIMARY, RATE-ERR-SECONDARY-RESET
              why = `until x-ratelimit-reset ${new Date(reset! * 1000).toISOString()}`;
            } else {
              // RATE-ERR-SECONDARY-BACKOFF: a minute at least, then exponentially longer (with up to 10 % more, so
              // that workers refused together do not come back together).
              waitMs = Math.round(this.limits.secondaryWaitMs * this.limits.backoffFactor ** backoffs * (1 + 0.1 * Math.random()));
              backoffs += 1;
              why = `backing off ${duration(waitMs)}`;
            }
            const give = (reason: string) =>
              new PlatformRateLimitError({
                kind,
                method: verb,
                url: url.toString(),
                status,
                waitedMs,
                attempts: attempt,
                body: jsonBody,
                reason,
                resumeAt: remainingZero ? resumeAt : now + waitMs,
              });
            if (limitRetries >= this.limits.rateLimitRetries) throw give(`${this.limits.rateLimitRetries} retries spent`);
            if (waitMs > this.limits.maxWaitMs)
              throw give(`the platform asks to wait ${duration(waitMs)}, more than the ${duration(this.limits.maxWaitMs)} allowed (${this.maxWaitFrom})`);
            limitRetries += 1;
            const until = now + waitMs;
            const store = this.limiter.store;
            // While this request waits, the whole queue of its endpoint (secondary) or resource (primary) waits.
            if (kind === 'secondary') {
              await store.hold(reservation.identity, `endpoint:${reservation.endpoint}`, until);
              if (reservation.creation) await store.hold(reservation.identity, 'creation', until);
            } else {
              await store.hold(reservation.identity, `resource:${reservation.resource}`, until);
              if (observation && observation.resource !== reservation.resource)
                await store.hold(reservation.identity, `resource:${observation.resource}`, until);
            }
            const said = announceWait({
              kind: 'rate-limit',
              what: kind === 'secondary' ? reservation.endpoint : `the ${reservation.resource} resource`,
              until,
            });
            // Said once: to whoever listens to the waits (the command), else in the log.
            const line = `platform: ${shown} hit the ${kind} rate limit (${status}); holding ${kind === 'secondary' ? reservation.endpoint : `the ${reservation.resource} resource`} for ${duration(waitMs)} (${why}), retry ${limitRetries} of ${this.limits.rateLimitRetries}`;
            if (said) this.logger.info(line);
            else this.logger.warn(line);
            continue;
          }
        }
        if (status >= 500) {
          const decision = decideRetry({
            policy: { ...platformRetryPolicy, retries: this.limits.serverErrorRetries },
            retryIndex: serverRetries,
            method: verb,
            status,
            retryAfter: header(headers, 'retry-after'),
            waitedMs: serverWaitedMs,
          });
          if (decision.retry) {
            this.logger.debug(`platform: ${shown}: ${decision.reason}; again in ${decision.delayMs} ms`);
            announceWait({
              kind: 'retry',
              host: url.host,
              reason: decision.reason,
              at: Date.now() + decision.delayMs,
              delayMs: decision.delayMs,
              attempt: serverRetries + 2,
              attempts: this.limits.serverErrorRetries + 1,
            });
            serverRetries += 1;
            serverWaitedMs += decision.delayMs;
            await release(); // the slot is not kept through the wait
            await this.clock.sleep(decision.delayMs, signal);
            continue;
          }
        }
        throw new PlatformApiError({ status, method: verb, url: url.toString(), body: jsonBody, rawBody, attempts: attempt });
      } finally {
        await release();
      }
    }
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
