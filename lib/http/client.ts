import { terminalText } from '../terminal-text.js';
import { expectOptions } from '../arguments.js';
import type http from 'node:http';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import * as zlib from 'node:zlib';
import got, { parseLinkHeader, type Got, type Method, type PlainResponse, type Progress, type Request as GotRequest } from 'got';
import { GantryError, UsageError } from '../errors.js';
import { userAgent as defaultUserAgent } from '../version.js';
import { getLogger, type Logger } from '../log.js';
import { HttpError, NetworkError, ProtocolError } from './errors.js';
import { createProxyAgents, describeProxy, proxySettingsFromEnv, type ProxySettings } from './proxy.js';
import { redact, redactUrl, registerSecret, sensitiveHeaders } from '../redact.js';
import { decideRetry, defaultRetryPolicy, definePolicy, errorReasons, type RetryPolicy } from './retry.js';
import { loadTlsOptions, type TlsOptions } from './tls.js';
import { announceWait, answerNoticeMs, waitLimits } from './waits.js';

export interface Timeouts {
  /** Until the TCP (and TLS) connection is up, in ms (got's `connect` and `secureConnect`). */
  connect: number;
  /**
   * Until the response headers arrive (got's `response`), and then the longest pause between two pieces of the body
   * (got's `socket`, the socket's idle timer), in ms.
   */
  response: number;
  /** The whole request including the body, in ms (got's `request`). Unset for downloads unless given. */
  total?: number;
}

export interface HttpClientOptions {
  baseUrl?: string;
  headers?: Record<string, string | undefined>;
  timeouts?: Partial<Timeouts>;
  tls?: TlsOptions;
  retry?: RetryPolicy;
  logger?: Logger;
  /** Redirects followed at most (default 10). */
  maxRedirects?: number;
  /** Largest buffered response body (default 64 MiB); downloads are streamed and use their own limit. */
  maxBodyBytes?: number;
  userAgent?: string;
  /** Outgoing proxies; by default HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment. `{}` goes direct. */
  proxy?: ProxySettings;
  /** Told of each retry before its wait (a command can say once that it is retrying; the log has every one at debug). */
  onRetry?: (retry: RetryNotice) => void;
}

export interface RetryNotice {
  method: string;
  /** Redacted. */
  url: string;
  /** Why: the status or network error, and the reason the body gave. */
  reason: string;
  delayMs: number;
  /** The attempt that failed, from 1. */
  attempt: number;
}

export type SearchParams = Record<string, string | number | boolean | undefined | ReadonlyArray<string | number>> | URLSearchParams;

export interface RequestOptions {
  method?: string;
  /** Relative to the client's base URL, or absolute. */
  url: string | URL;
  searchParams?: SearchParams;
  headers?: Record<string, string | undefined>;
  json?: unknown;
  /**
   * A stream is sent as it is read (for bodies too large to hold); it can be sent only once, so a request with a
   * streamed body is never retried and a redirect that would send it again (307, 308) is handed back.
   */
  body?: string | Buffer | Readable;
  /** How the body is read (default json; an empty body reads as undefined). */
  responseType?: 'json' | 'text' | 'buffer';
  /** Statuses that are not errors (default 200–299). */
  accept?: readonly number[] | ((status: number) => boolean);
  followRedirects?: boolean;
  maxRedirects?: number;
  maxBodyBytes?: number;
  retry?: RetryPolicy;
  timeouts?: Partial<Omit<Timeouts, 'connect'>>;
  signal?: AbortSignal;
}

export interface HttpResponse<T = unknown> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
  /** The final URL, after redirects. */
  url: string;
  redirectUrls: string[];
  attempts: number;
}

export interface DownloadProgress {
  transferred: number;
  /** From Content-Length, when the server sent one. */
  total: number | undefined;
}

export interface StreamOptions extends Omit<RequestOptions, 'responseType' | 'maxBodyBytes'> {
  /** Fed by got's `downloadProgress` events. */
  onProgress?: (progress: DownloadProgress) => void;
  /** Refuse bodies larger than this many bytes (default unlimited). */
  maxBytes?: number;
}

export interface StreamResponse extends Omit<HttpResponse, 'body'> {
  body: Readable;
}

export interface DownloadResult extends Omit<HttpResponse, 'body'> {
  path: string;
  bytes: number;
}

/** One page's place in a paged list, as got's `pagination.paginate` sees it. */
export interface PageContext<T> {
  response: HttpResponse<unknown>;
  /** The items `transform` took from this page. */
  currentItems: T[];
  /** The request that fetched this page. */
  request: RequestOptions;
}

/** A paged list, in the terms of got's `pagination` options; each page is one `request` of the core. */
export interface PaginateOptions<T> extends Omit<RequestOptions, 'responseType'> {
  /** The items of one page (got's `pagination.transform`). */
  transform: (response: HttpResponse<unknown>) => T[];
  /**
   * The next page's request, merged over the current one, or false after the last page (got's
   * `pagination.paginate`). By default the `Link` header's rel="next" (RFC 8288), as got's default.
   */
  paginate?: (context: PageContext<T>) => Partial<RequestOptions> | false;
  /** Items yielded at most (got's `countLimit`; default all). */
  countLimit?: number;
  /** Pages fetched at most (got's `requestLimit`, default 10 000); a server still paging then is a ProtocolError. */
  requestLimit?: number;
}

export interface HttpClient {
  readonly baseUrl: string | undefined;
  request<T = unknown>(options: RequestOptions): Promise<HttpResponse<T>>;
  /** Opens a response body as a stream once a final, accepted status is in; retries happen before that. */
  stream(options: StreamOptions): Promise<StreamResponse>;
  /** Streams a body into `path`, written under a temporary name and renamed into place when complete. */
  download(options: StreamOptions & { path: string }): Promise<DownloadResult>;
  /** The items of a paged list, page after page (each page a `request`, with its retries and errors). */
  paginate<T>(options: PaginateOptions<T>): AsyncGenerator<T>;
  /** Releases the keep-alive sockets. */
  close(): void;
}

/** got's default paging: the `Link` header's rel="next", resolved against the page's URL; false without one. */
export function nextLink({ response }: { response: HttpResponse<unknown> }): Partial<RequestOptions> | false {
  const header = response.headers.link;
  if (!header) return false;
  const next = parseLinkHeader(Array.isArray(header) ? header.join(', ') : header).find((link) => link.parameters.rel?.replace(/"/g, '').split(/\s+/).includes('next'));
  return next ? { url: new URL(next.reference, response.url), searchParams: undefined } : false;
}

const defaultTimeouts: Timeouts = { connect: 10_000, response: 60_000 };
const defaultMaxBodyBytes = 64 * 1024 * 1024;
const defaultRequestLimit = 10_000;
const errorBodyLimit = 64 * 1024;
/** A streamed request body is gone once sent: such a request gets no second attempt. */
const noRetries = definePolicy({ retries: 0 });
/** Methods got ends by itself when they carry no body; any other gets an empty body, sent with Content-Length: 0. */
const bodilessMethods = new Set(['GET', 'HEAD']);
/** Methods a server must treat as idempotent (RFC 9110 §9.2.2): a second copy of one changes nothing more. */
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
/** How a reused connection that the server ended before answering fails (Node says ECONNRESET for "socket hang up"). */
const endedConnectionCodes = new Set(['ECONNRESET', 'EPIPE']);
/** Failures of attempts sent on a connection taken from the pool (`ClientRequest.reusedSocket`), as got reports it. */
const failedOnReusedConnection = new WeakSet<object>();
/** What got's `decompress` decodes (decompress-response: zstd where Node has it). */
const decodedEncodings = new Set(['gzip', 'deflate', 'br', ...('createZstdDecompress' in zlib ? ['zstd'] : [])]);

function isAccepted(accept: RequestOptions['accept'], status: number): boolean {
  if (!accept) return status >= 200 && status < 300;
  return typeof accept === 'function' ? accept(status) : accept.includes(status);
}

function toSearchParams(params: SearchParams | undefined): URLSearchParams | undefined {
  if (!params) return undefined;
  if (params instanceof URLSearchParams) return params;
  const out = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) out.append(name, String(item));
    else out.append(name, String(value));
  }
  return out;
}

/**
 * got's own codes wrap a cause that has the real one; hpagent says only "Bad response: 407" or "Proxy timeout". A 407
 * is ERR_PROXY_AUTH, as the proxy's 407 to a request sent to it in absolute form is (`proxyRefusal`); any other
 * refused CONNECT is ERR_PROXY_TUNNEL.
 */
function errorCodeOf(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && !code.startsWith('ERR_GOT_')) return code;
    if (name === 'TimeoutError' || message === 'Proxy timeout') return 'ETIMEDOUT';
    if (typeof message === 'string' && /^Bad response: \d{3}$/.test(message)) return message.endsWith(' 407') ? 'ERR_PROXY_AUTH' : 'ERR_PROXY_TUNNEL';
    current = (current as { cause?: unknown }).cause;
  }
  return 'ERR_NETWORK';
}

/** The proxy's 407 to a request sent to it in absolute form: no response from the target, as a refused CONNECT. */
function proxyRefusal(response: PlainResponse): Error {
  const reason = response.statusMessage ? ` ${response.statusMessage}` : '';
  return Object.assign(new Error(`the proxy answered 407${reason}`), { code: 'ERR_PROXY_AUTH' });
}

/**
 * What a typed error keeps as its cause: the error below got's wrapper. A got RequestError carries the request's
 * options, headers and credentials included, and would print them with --verbose or util.inspect.
 */
function causeOf(error: unknown): unknown {
  if (error instanceof Error && 'options' in error) {
    const { cause } = error as Error & { cause?: unknown };
    return cause instanceof Error && !('options' in cause) ? cause : new Error(redact(error.message));
  }
  return error;
}

/** A Gantry error raised inside got (by a hook), found under got's wrapper. */
function gantryErrorIn(error: unknown): GantryError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth += 1) {
    if (current instanceof GantryError) return current;
    current = (current as Error & { cause?: unknown }).cause;
  }
  return undefined;
}

/** Reads a whole body, refusing it past `limit` bytes; `what` is only built when the limit is hit. */
function readLimited(stream: Readable, limit: number, what: () => string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stream.destroy();
        reject(new ProtocolError(`${what()} is larger than ${limit} bytes`, 'raise the limit if this response is expected to be this large'));
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

function parseErrorBody(raw: Buffer): { body?: unknown; rawBody?: string } {
  const text = raw.toString('utf8');
  if (text.trim() === '') return {};
  try {
    return { body: JSON.parse(text) };
  } catch {
    return { rawBody: text };
  }
}

/** The final response of one attempt (got followed the redirects), its body not read yet. */
interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  url: string;
  redirectUrls: string[];
  /** got's request stream: the body, decoded. */
  body: GotRequest;
  /** Content-Length no longer describes the body: got decoded it. */
  decoded: boolean;
  /** The request is over: let the caller's signal go and release the request. */
  finish(): void;
}

/** The one HTTP client factory every Gantry service client is built on: got, with our policies on top. */
/**
 * A header value Node would refuse to send (a line break, a control character) is bad input found before sending —
 * typically a token or name read from a file, an env file or an HCL heredoc with its final newline — never a
 * network error. The value is not shown: headers carry credentials.
 */
function checkHeaderValue(name: string, value: string): void {
  const bad = /[^\t\x20-\x7e\x80-\xff]/.exec(value);
  if (!bad) return;
  const what = bad[0] === '\n' || bad[0] === '\r' ? 'a line break' : `the control character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  throw new UsageError(`the ${name.toLowerCase()} header's value contains ${what} at position ${bad.index + 1} of ${value.length}; nothing was sent`, {
    code: 'INVALID_HEADER_VALUE',
    hint: 'strip it from the token, name or setting this header carries: a value read from a file, an env file or an HCL heredoc often ends with a newline',
  });
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  expectOptions('createHttpClient', options);
  const logger = options.logger ?? getLogger();
  const tls = loadTlsOptions(options.tls);
  if (options.tls?.skipVerify) {
    logger.warn(`TLS certificate verification is disabled for ${options.baseUrl ?? 'this client'}: anyone on the path can read and change the traffic`);
  }
  const baseHeaders: Record<string, string> = { 'user-agent': options.userAgent ?? defaultUserAgent };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) continue;
    checkHeaderValue(name, value);
    baseHeaders[name.toLowerCase()] = value;
    if (sensitiveHeaders.has(name.toLowerCase())) registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ''));
  }
  const baseRetry = options.retry ?? defaultRetryPolicy;
  // GANTRY_TIMEOUT and GANTRY_MAX_WAIT (or the command's --timeout, --max-wait) where the client sets no bound of its own.
  const limits = waitLimits();
  const baseTimeouts = { ...defaultTimeouts, ...(limits.timeoutMs !== undefined ? { response: limits.timeoutMs } : {}), ...options.timeouts };
  const baseMaxRedirects = options.maxRedirects ?? 10;
  // One keep-alive pool per client for each scheme, its connections direct or through the proxy (proxy.ts).
  const proxySettings = options.proxy ?? proxySettingsFromEnv();
  const agents = createProxyAgents(proxySettings, { connectTimeoutMs: baseTimeouts.connect });
  // A streamed body can be sent only once, so it never goes on a pooled connection the server may be closing (the race
  // a resend covers for other bodies): a connection of its own, closed after. Made on the first such request.
  let freshAgents: ReturnType<typeof createProxyAgents> | undefined;
  const fresh = () => (freshAgents ??= createProxyAgents(proxySettings, { connectTimeoutMs: baseTimeouts.connect, keepAlive: false }));

  // got does one attempt: connection (agents, TLS), redirects, decompression and timeouts. The retries are ours (see
  // `send`), so got's are off; status errors are ours too, so got hands back every status.
  const client: Got = got.extend({
    agent: { http: agents.http, https: agents.https },
    https: {
      rejectUnauthorized: tls.rejectUnauthorized,
      ...(tls.ca ? { certificateAuthority: tls.ca } : {}),
      ...(tls.cert ? { certificate: tls.cert, key: tls.key } : {}),
      ...(tls.servername ? { serverName: tls.servername } : {}),
    },
    decompress: true,
    retry: { limit: 0 },
    throwHttpErrors: false,
    hooks: {
      beforeRedirect: [
        (next, response) => {
          const from = new URL(response.url);
          const to = next.url instanceof URL ? next.url : new URL(String(next.url));
          if (to.protocol !== 'http:' && to.protocol !== 'https:') {
            throw new ProtocolError(`${response.request.options.method} ${redactUrl(from)} redirected to ${redactUrl(to)}, which is not http(s)`);
          }
          // Credentials go to the origin they were meant for, never to a host a redirect points at. got drops
          // Authorization and Cookie when the host or port changes; every header we know is secret (X-Secrets-Token,
          // X-Api-Key, registry and platform tokens in Authorization, …) goes, and on a change of scheme too.
          if (to.origin !== from.origin) {
            for (const name of Object.keys(next.headers)) if (sensitiveHeaders.has(name.toLowerCase())) delete next.headers[name];
          }
          if (response.statusCode === 303) delete next.headers['content-type'];
        },
      ],
      // What escapes got unwrapped (a body stream's error) says no more than our own errors would.
      beforeError: [
        (error) => {
          error.message = redact(error.message);
          return error;
        },
      ],
    },
  });

  function resolveUrl(url: string | URL): URL {
    if (url instanceof URL) return new URL(url);
    if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return new URL(url);
    if (!options.baseUrl) throw new ProtocolError(`a relative URL (${url}) needs a base URL`);
    const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
    return new URL(url.replace(/^\//, ''), base);
  }

  /** A typed error for an attempt that got no response, or whose body broke off. */
  function failure(error: unknown, method: string, url: URL, attempts: number, maxRedirects: number): Error {
    const raised = gantryErrorIn(error);
    if (raised) return raised;
    if ((error as { code?: unknown }).code === 'ERR_TOO_MANY_REDIRECTS') {
      return new ProtocolError(`${method} ${redactUrl(url)} was redirected more than ${maxRedirects} times`, 'check the address: the server may be redirecting in a loop');
    }
    const proxy = agents.proxyFor(url);
    return new NetworkError({ method, url: url.toString(), errorCode: errorCodeOf(error), cause: causeOf(error), attempts, ...(proxy ? { proxy: describeProxy(proxy) } : {}) });
  }

  /** One attempt: resolves once got has the final response's headers (redirects followed), rejects without one. */
  function open(request: RequestOptions, url: URL, timeouts: Timeouts, attempt: { attempt: number; attempts: number }): Promise<Answer> {
    const headers: Record<string, string> = { ...baseHeaders };
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (value === undefined) continue;
      checkHeaderValue(name, value);
      headers[name.toLowerCase()] = value;
      if (sensitiveHeaders.has(name.toLowerCase())) registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ''));
    }
    let body: string | Buffer | Readable | undefined = request.body;
    if (request.json !== undefined) {
      body = JSON.stringify(request.json);
      headers['content-type'] ??= 'application/json';
    }
    if (!headers.accept && (request.responseType ?? 'json') === 'json') headers.accept = 'application/json';
    const target = new URL(url);
    if (target.username || target.password) {
      // Userinfo never goes on the wire as part of the address: it becomes Basic credentials for that origin only
      // (the beforeRedirect hook drops them on a change of origin).
      const basic = Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64');
      registerSecret(basic);
      if (target.password) registerSecret(decodeURIComponent(target.password));
      headers.authorization ??= `Basic ${basic}`;
      target.username = '';
      target.password = '';
    }
    const method = (request.method ?? 'GET').toUpperCase();
    const streamed = body instanceof Readable;
    const { signal } = request;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const stream = client.stream(target, {
        ...(streamed ? { agent: { http: fresh().http, https: fresh().https } } : {}),
        method: method as Method,
        headers,
        body: body ?? (bodilessMethods.has(method) ? undefined : ''),
        // A streamed body cannot be sent again: a 307 or 308 is handed back rather than followed.
        followRedirect: request.followRedirects === false ? false : (response: PlainResponse) => !(streamed && response.statusCode !== 303),
        maxRedirects: request.maxRedirects ?? baseMaxRedirects,
        timeout: {
          connect: timeouts.connect,
          secureConnect: timeouts.connect,
          response: timeouts.response,
          socket: timeouts.response,
          ...(timeouts.total ? { request: timeouts.total } : {}),
        },
      });
      const onAbort = () => stream.destroy(signal?.reason as Error);
      signal?.addEventListener('abort', onAbort, { once: true });
      const pending = noticeWhilePending(target, timeouts, attempt);
      const finish = () => {
        clearTimeout(pending);
        signal?.removeEventListener('abort', onAbort);
        if (!stream.destroyed) stream.destroy();
      };
      const onError = (error: unknown) => {
        if (stream.reusedSocket && error !== null && typeof error === 'object') failedOnReusedConnection.add(error);
        finish();
        reject(error);
      };
      stream.once('error', onError);
      stream.once('response', (response: PlainResponse) => {
        clearTimeout(pending);
        // A 407 counts as the proxy's only on a request that went to the proxy itself: through a tunnel or direct,
        // it is the server's answer like any other status.
        const sentWith = streamed ? fresh() : agents;
        if (response.statusCode === 407 && sentWith.forwarded((response as PlainResponse & { req?: http.ClientRequest }).req)) {
          onError(proxyRefusal(response));
          return;
        }
        stream.off('error', onError);
        // Until a reader takes the body, an error on it must not go unheard.
        stream.on('error', () => undefined);
        const finalMethod = response.request.options.method;
        const decoded = decodedEncodings.has(String(response.headers['content-encoding'] ?? '').toLowerCase())
          && finalMethod !== 'HEAD' && ![204, 205, 304].includes(response.statusCode) && response.statusCode >= 200;
        const answerHeaders = { ...response.headers };
        if (decoded) {
          delete answerHeaders['content-length'];
          delete answerHeaders['content-encoding'];
        }
        resolve({
          status: response.statusCode,
          headers: answerHeaders,
          url: response.url,
          redirectUrls: response.redirectUrls.map(String),
          body: stream,
          decoded,
          finish,
        });
      });
    });
  }

  /**
   * Runs attempts under the retry policy until a final accepted response, or throws a typed error.
   *
   * The loop is ours, not got's `retry`, because got's cannot express the policies: it retries a status only with
   * `throwHttpErrors`, by got's fixed idea of success (2xx, 304) rather than the caller's `accept` (204, 404, a 302
   * handed back, any status); it reads the whole error body into memory first (we keep 64 KiB); and in stream mode,
   * which every call here uses so that body limits hold while the body streams in, got does not resend by itself but
   * hands a new stream to a `retry` listener — a loop on the caller's side anyway. The decision is `decideRetry` on
   * the policy (data), with Retry-After, per-status schedules and the budget.
   */
  function retrying(method: string, url: URL, decision: { reason: string; delayMs: number }, attempt: number, policy: RetryPolicy): void {
    logger.debug(`${method} ${redactUrl(url)}: ${decision.reason}; retrying in ${decision.delayMs} ms`);
    options.onRetry?.({ method, url: redactUrl(url), reason: decision.reason, delayMs: decision.delayMs, attempt });
    if (!policy.quiet) announceWait({ kind: 'retry', host: url.host, reason: decision.reason, at: Date.now() + decision.delayMs, delayMs: decision.delayMs, attempt: attempt + 1, attempts: policy.retries + 1 });
  }

  /** An attempt still without an answer after `answerNoticeMs` is told (lib/http/waits.ts), with when it gives up. */
  function noticeWhilePending(url: URL, timeouts: Timeouts, attempt: { attempt: number; attempts: number }): NodeJS.Timeout | undefined {
    const limit = Math.min(timeouts.response, timeouts.total ?? Number.POSITIVE_INFINITY);
    if (limit <= answerNoticeMs) return undefined;
    const started = Date.now();
    const timer = setTimeout(() => announceWait({ kind: 'answer', host: url.host, afterMs: answerNoticeMs, givesUpAt: started + limit, ...attempt }), answerNoticeMs);
    timer.unref();
    return timer;
  }

  async function send(request: RequestOptions, defaultTotal: number | undefined): Promise<{ answer: Answer; attempts: number; url: URL }> {
    const url = resolveUrl(request.url);
    const params = toSearchParams(request.searchParams);
    if (params) for (const [name, value] of params) url.searchParams.append(name, value);
    const method = (request.method ?? 'GET').toUpperCase();
    const chosen = request.body instanceof Readable ? noRetries : request.retry ?? baseRetry;
    // A Retry-After longer than the longest wait allowed is not waited for (the error says what the server asked).
    const policy = limits.maxWaitMs !== undefined && chosen.retryAfterMaxMs > limits.maxWaitMs ? { ...chosen, retryAfterMaxMs: Math.max(1, limits.maxWaitMs) } : chosen;
    const timeouts: Timeouts = { ...baseTimeouts, total: defaultTotal, ...request.timeouts };
    const maxRedirects = request.maxRedirects ?? baseMaxRedirects;
    const wait = async (delayMs: number) => sleep(delayMs, undefined, request.signal ? { signal: request.signal } : undefined);
    // A reused connection the server ended before any answer is the pool's race (its idle timeout, a close it did not
    // announce), not the service failing: the request goes once more, at once and outside the policy's count — as Go's
    // net/http decides (shouldRetryRequest): whatever its method when the write itself failed (EPIPE: nothing reached
    // the server), else only when it may be repeated (an idempotent method, or an Idempotency-Key), since a server may
    // have acted on a POST before it dropped the connection — a second authorization-code exchange revokes the first
    // one's tokens (RFC 6749 §4.1.2). keep-alive.ts keeps a pooled connection whose close has arrived from being written
    // to, so what remains here is the narrow race. Never a streamed body: it is gone once read.
    const resendable = !(request.body instanceof Readable);
    const replayable = idempotentMethods.has(method) || Object.keys(request.headers ?? {}).some((name) => name.toLowerCase() === 'idempotency-key');
    let resent = false;
    let waitedMs = 0;
    for (let attempt = 1; ; attempt += 1) {
      let answer: Answer;
      try {
        answer = await open(request, url, timeouts, { attempt, attempts: policy.retries + 1 });
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        const typed = failure(error, method, url, attempt, maxRedirects);
        if (!(typed instanceof NetworkError)) throw typed;
        if (resendable && !resent && failedOnReusedConnection.has(error as object) && (typed.errorCode === 'EPIPE' || (replayable && endedConnectionCodes.has(typed.errorCode)))) {
          resent = true;
          logger.debug(`${method} ${redactUrl(url)}: the reused connection ended before an answer (${typed.errorCode}); sending again on a new one`);
          attempt -= 1;
          continue;
        }
        const decision = decideRetry({ policy, retryIndex: attempt - 1, method, errorCode: typed.errorCode, waitedMs });
        if (!decision.retry) throw typed;
        retrying(method, url, decision, attempt, policy);
        waitedMs += decision.delayMs;
        await wait(decision.delayMs);
        continue;
      }
      if (isAccepted(request.accept, answer.status)) return { answer, attempts: attempt, url };

      let raw: Buffer;
      try {
        raw = await readLimited(answer.body, errorBodyLimit, () => 'the error body');
      } catch {
        raw = Buffer.alloc(0);
      } finally {
        answer.finish();
      }
      const errorBody = parseErrorBody(raw);
      const reasons = policy.reasons?.[answer.status] ? errorReasons(errorBody.body) : undefined;
      const decision = decideRetry({ policy, retryIndex: attempt - 1, method, status: answer.status, retryAfter: answer.headers['retry-after'], reasons, waitedMs });
      if (decision.retry) {
        retrying(method, url, decision, attempt, policy);
        waitedMs += decision.delayMs;
        await wait(decision.delayMs);
        continue;
      }
      throw new HttpError({
        status: answer.status,
        method,
        url: answer.url || url.toString(),
        headers: answer.headers,
        attempts: attempt,
        ...errorBody,
      });
    }
  }

  function responseFields(answer: Answer, attempts: number) {
    return { status: answer.status, headers: answer.headers, url: answer.url, redirectUrls: answer.redirectUrls, attempts };
  }

  /** Passes the body on, refusing it past `maxBytes` (counted after decoding). */
  function limiter(maxBytes: number | undefined, url: URL): Transform {
    let transferred = 0;
    return new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        transferred += chunk.length;
        if (maxBytes !== undefined && transferred > maxBytes) {
          callback(new ProtocolError(`the body of ${redactUrl(url)} is larger than the ${maxBytes} bytes allowed`));
          return;
        }
        callback(null, chunk);
      },
    });
  }

  const httpClient: HttpClient = {
    baseUrl: options.baseUrl,

    async request<T>(request: RequestOptions): Promise<HttpResponse<T>> {
      const { answer, attempts, url } = await send(request, baseTimeouts.total);
      const method = (request.method ?? 'GET').toUpperCase();
      const limit = request.maxBodyBytes ?? options.maxBodyBytes ?? defaultMaxBodyBytes;
      let raw: Buffer;
      try {
        raw = await readLimited(answer.body, limit, () => `the response from ${redactUrl(url)}`);
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        if (request.signal?.aborted) throw request.signal.reason;
        // The headers came, then the body broke off: a reset, the idle timeout or the total deadline.
        throw failure(error, method, url, attempts, 0);
      } finally {
        answer.finish();
      }
      const type = request.responseType ?? 'json';
      let body: unknown;
      if (type === 'buffer') body = raw;
      else if (type === 'text') body = raw.toString('utf8');
      else if (raw.length === 0) body = undefined;
      else {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          const contentType = answer.headers['content-type'] ?? 'no content type';
          throw new ProtocolError(
            `${method} ${redactUrl(url)} answered ${answer.status} with a body that is not JSON (${terminalText(contentType)}): ${terminalText(raw.toString('utf8').slice(0, 200))}`,
            'check that the address points at the service and not at a proxy or web page',
          );
        }
      }
      return { ...responseFields(answer, attempts), body: body as T };
    },

    async stream(request: StreamOptions): Promise<StreamResponse> {
      const { answer, attempts, url } = await send(request, request.timeouts?.total);
      const length = Number(answer.headers['content-length']);
      const total = !answer.decoded && answer.headers['content-length'] !== undefined && Number.isFinite(length) ? length : undefined;
      if (request.maxBytes !== undefined && total !== undefined && total > request.maxBytes) {
        answer.finish();
        throw new ProtocolError(`the body of ${redactUrl(url)} is ${total} bytes, more than the ${request.maxBytes} allowed`);
      }
      const { onProgress, signal } = request;
      if (onProgress) answer.body.on('downloadProgress', (progress: Progress) => onProgress({ transferred: progress.transferred, total }));
      const body = answer.body.pipe(limiter(request.maxBytes, url));
      answer.body.on('error', (error) => {
        body.destroy(signal?.aborted ? signal.reason as Error : failure(error, (request.method ?? 'GET').toUpperCase(), url, attempts, 0));
      });
      body.once('close', answer.finish);
      return { ...responseFields(answer, attempts), body };
    },

    async download(request: StreamOptions & { path: string }): Promise<DownloadResult> {
      await mkdir(dirname(request.path), { recursive: true });
      const temporary = join(dirname(request.path), `.${basename(request.path)}.${randomBytes(6).toString('hex')}.part`);
      let file: WriteStream | undefined;
      try {
        const opened = await httpClient.stream(request);
        let bytes = 0;
        opened.body.on('data', (chunk: Buffer) => { bytes += chunk.length; });
        file = createWriteStream(temporary, { flags: 'wx' });
        await pipeline(opened.body, file);
        await rename(temporary, request.path);
        const { body: _body, ...fields } = opened;
        return { ...fields, path: request.path, bytes };
      } catch (error) {
        // The file may still be opening when the body fails; removing it before it closes would leave it behind.
        if (file && !file.closed) await once(file, 'close').catch(() => undefined);
        await rm(temporary, { force: true });
        if (error instanceof Error && !(error instanceof GantryError) && !request.signal?.aborted) {
          throw failure(error, (request.method ?? 'GET').toUpperCase(), resolveUrl(request.url), 1, 0);
        }
        throw error;
      }
    },

    async *paginate<T>(request: PaginateOptions<T>): AsyncGenerator<T> {
      const { transform, paginate = nextLink, countLimit = Number.POSITIVE_INFINITY, requestLimit = defaultRequestLimit, ...first } = request;
      let current: RequestOptions = first;
      let count = 0;
      for (let page = 0; page < requestLimit; page += 1) {
        const response = await httpClient.request<unknown>(current);
        const currentItems = transform(response);
        for (const item of currentItems) {
          if (count >= countLimit) return;
          count += 1;
          yield item;
        }
        if (count >= countLimit) return;
        const next = paginate({ response, currentItems, request: current });
        if (next === false) return;
        current = { ...current, ...next };
      }
      throw new ProtocolError(`${(first.method ?? 'GET').toUpperCase()} ${redactUrl(resolveUrl(first.url))}: more than ${requestLimit} pages; the server's paging never ends`);
    },

    close() {
      agents.destroy();
      freshAgents?.destroy();
    },
  };
  return httpClient;
}
