import type http from 'node:http';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EventEmitter, once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, type Dispatcher } from './undici.js';
import { userAgent as defaultUserAgent } from '../version.js';
import { getLogger, type Logger } from '../log.js';
import { HttpError, NetworkError, ProtocolError } from './errors.js';
import { redactUrl, registerSecret, sensitiveHeaders } from './redact.js';
import { decideRetry, defaultRetryPolicy, definePolicy, type RetryPolicy } from './retry.js';
import { loadTlsOptions, type TlsOptions } from './tls.js';

export interface Timeouts {
  /** Until the TCP (and TLS) connection is up, in ms. A client setting: connections are shared by its requests. */
  connect: number;
  /**
   * Until the response headers arrive, and then the longest pause between two pieces of the body, in ms. The pause
   * is kept by undici's connection timers, which are precise to about a second.
   */
  response: number;
  /** The whole request including the body, in ms. Unset for downloads unless given. */
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

export interface HttpClient {
  readonly baseUrl: string | undefined;
  request<T = unknown>(options: RequestOptions): Promise<HttpResponse<T>>;
  /** Opens a response body as a stream once a final, accepted status is in; retries happen before that. */
  stream(options: StreamOptions): Promise<StreamResponse>;
  /** Streams a body into `path`, written under a temporary name and renamed into place when complete. */
  download(options: StreamOptions & { path: string }): Promise<DownloadResult>;
  /** Releases the keep-alive sockets. */
  close(): void;
}

const defaultTimeouts: Timeouts = { connect: 10_000, response: 60_000 };
const defaultMaxBodyBytes = 64 * 1024 * 1024;
const errorBodyLimit = 64 * 1024;
/** A streamed request body is gone once sent: such a request gets no second attempt. */
const noRetries = definePolicy({ retries: 0 });

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

/** undici's own codes for what Node's network codes already name, so retry policies and hints speak one language. */
const undiciCodes: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_HEADERS_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_BODY_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CLOSED: 'ECONNRESET',
};

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/** The response of one attempt, after redirects and with its body decoded. */
interface Answer {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  url: string;
  redirectUrls: string[];
  body: Readable;
}

/**
 * Ends one request, body included, at its total deadline, when the response headers are late, or when the caller's
 * signal fires. An EventEmitter, which undici accepts as a signal: an AbortSignal costs ~10 µs per request in
 * listeners alone (AbortSignal.timeout ~25 µs), a third of what a whole secrets read costs. Plain timers, too, because
 * undici's own header timeout ticks in half-seconds: a 200 ms timeout would fire after a second.
 */
class Cutoff extends EventEmitter {
  reason: unknown = undefined;
  #total: NodeJS.Timeout | undefined;
  #headers: NodeJS.Timeout | undefined;
  #detach: (() => void) | undefined;

  constructor(totalMs: number | undefined, signal: AbortSignal | undefined) {
    super();
    if (signal?.aborted) {
      this.reason = signal.reason;
      return;
    }
    if (totalMs) this.#total = this.#timer(totalMs, `the request took longer than ${totalMs} ms`);
    if (signal) {
      const onAbort = () => this.#abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#detach = () => signal.removeEventListener('abort', onAbort);
    }
  }

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  /** Starts the wait for one response's headers (again for each redirect). */
  awaitHeaders(ms: number): void {
    clearTimeout(this.#headers);
    this.#headers = this.#timer(ms, `no response within ${ms} ms`);
  }

  headersArrived(): void {
    clearTimeout(this.#headers);
  }

  /** The request is over: stop the timers and stop listening to the caller's signal. */
  clear(): void {
    clearTimeout(this.#total);
    clearTimeout(this.#headers);
    this.#detach?.();
  }

  #timer(ms: number, message: string): NodeJS.Timeout {
    const timer = setTimeout(() => this.#abort(new DOMException(message, 'TimeoutError')), ms);
    timer.unref();
    return timer;
  }

  #abort(reason: unknown): void {
    if (this.aborted) return;
    this.reason = reason;
    this.clear();
    this.emit('abort');
  }
}

/**
 * The body as sent, decoded. By hand rather than with undici's decompress interceptor, which in undici 7 is
 * experimental and prints a warning on every run of the command.
 */
function decoded(response: Dispatcher.ResponseData, method: string): { body: Readable; decoded: boolean } {
  const encoding = String(response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const empty = method === 'HEAD' || response.statusCode === 204 || response.statusCode === 304;
  const decoder = empty ? undefined
    : encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip()
    : encoding === 'deflate' ? createInflate()
    : encoding === 'br' ? createBrotliDecompress()
    : undefined;
  if (!decoder) return { body: response.body, decoded: false };
  response.body.on('error', (error) => decoder.destroy(error));
  return { body: response.body.pipe(decoder), decoded: true };
}

function errorCodeOf(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const { code, name } = current as { code?: unknown; name?: unknown };
    if (typeof code === 'string') return undiciCodes[code] ?? code;
    if (name === 'TimeoutError') return 'ETIMEDOUT';
    current = (current as { cause?: unknown }).cause;
  }
  return 'ERR_NETWORK';
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

/** The one HTTP client factory every Gantry service client is built on. */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const logger = options.logger ?? getLogger();
  const tls = loadTlsOptions(options.tls);
  if (options.tls?.skipVerify) {
    logger.warn(`TLS certificate verification is disabled for ${options.baseUrl ?? 'this client'}: anyone on the path can read and change the traffic`);
  }
  const baseHeaders: Record<string, string> = { 'user-agent': options.userAgent ?? defaultUserAgent };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) continue;
    baseHeaders[name.toLowerCase()] = value;
    if (sensitiveHeaders.has(name.toLowerCase())) registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ''));
  }
  const baseRetry = options.retry ?? defaultRetryPolicy;
  const baseTimeouts = { ...defaultTimeouts, ...options.timeouts };
  const baseMaxRedirects = options.maxRedirects ?? 10;
  // One keep-alive pool per origin, owned by this client; undici rather than got for the ~4x less CPU per request
  // (docs/performance.md), which is what lets a secrets client keep up with raw requests.
  const dispatcher = new Agent({ connect: { ...tls, timeout: baseTimeouts.connect } });

  function resolveUrl(url: string | URL): URL {
    if (url instanceof URL) return url;
    if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return new URL(url);
    if (!options.baseUrl) throw new ProtocolError(`a relative URL (${url}) needs a base URL`);
    const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
    return new URL(url.replace(/^\//, ''), base);
  }

  /** One attempt, following redirects: resolves once the final response's headers are in. */
  async function open(request: RequestOptions, url: URL, timeouts: Timeouts): Promise<Answer> {
    const headers: Record<string, string> = { ...baseHeaders };
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (value === undefined) continue;
      headers[name.toLowerCase()] = value;
      if (sensitiveHeaders.has(name.toLowerCase())) registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ''));
    }
    let body: string | Buffer | Readable | undefined = request.body;
    if (request.json !== undefined) {
      body = JSON.stringify(request.json);
      headers['content-type'] ??= 'application/json';
    }
    if (!headers.accept && (request.responseType ?? 'json') === 'json') headers.accept = 'application/json';
    headers['accept-encoding'] ??= 'gzip, deflate, br';
    if (url.username || url.password) {
      // Userinfo never goes on the wire as part of the address: it becomes Basic credentials for that origin only.
      const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
      registerSecret(basic);
      if (url.password) registerSecret(decodeURIComponent(url.password));
      headers.authorization ??= `Basic ${basic}`;
    }
    let method = (request.method ?? 'GET').toUpperCase();
    const maxRedirects = request.followRedirects === false ? 0 : request.maxRedirects ?? baseMaxRedirects;
    const cutoff = new Cutoff(timeouts.total, request.signal);
    const redirectUrls: string[] = [];
    let current = url;
    for (;;) {
      let response: Dispatcher.ResponseData;
      cutoff.awaitHeaders(timeouts.response);
      try {
        response = await dispatcher.request({
          origin: current.origin,
          path: `${current.pathname}${current.search}`,
          method,
          headers,
          body,
          headersTimeout: 0,
          bodyTimeout: timeouts.response,
          signal: cutoff,
        });
      } catch (error) {
        cutoff.clear();
        throw error;
      }
      cutoff.headersArrived();
      const location = response.headers.location;
      const resends = response.statusCode !== 303 && body instanceof Readable;
      if (request.followRedirects === false || !redirectStatuses.has(response.statusCode) || typeof location !== 'string' || resends) {
        const { body: stream, decoded: wasDecoded } = decoded(response, method);
        const answerHeaders = response.headers as http.IncomingHttpHeaders;
        if (wasDecoded) {
          delete answerHeaders['content-length'];
          delete answerHeaders['content-encoding'];
        }
        stream.once('close', () => cutoff.clear());
        return { statusCode: response.statusCode, headers: answerHeaders, url: current.toString(), redirectUrls, body: stream };
      }
      response.body.resume();
      if (redirectUrls.length >= maxRedirects) {
        cutoff.clear();
        throw new ProtocolError(`${method} ${redactUrl(url)} was redirected more than ${maxRedirects} times`, 'check the address: the server may be redirecting in a loop');
      }
      const next = new URL(location, current);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        cutoff.clear();
        throw new ProtocolError(`${method} ${redactUrl(current)} redirected to ${redactUrl(next)}, which is not http(s)`);
      }
      // Credentials go to the origin they were meant for, never to a host a redirect points at. undici's own redirect
      // handler would drop only Authorization and Cookie, not X-Secrets-Token or the other headers we know are secret.
      if (next.origin !== current.origin) {
        for (const name of Object.keys(headers)) if (sensitiveHeaders.has(name)) delete headers[name];
      }
      if (response.statusCode === 303 && method !== 'GET' && method !== 'HEAD') {
        method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      redirectUrls.push(next.toString());
      current = next;
    }
  }

  /** Runs attempts under the retry policy until a final accepted response, or throws a typed error. */
  async function send(request: RequestOptions, defaultTotal: number | undefined): Promise<{ stream: Readable; response: Answer; attempts: number; url: URL }> {
    const url = resolveUrl(request.url);
    const params = toSearchParams(request.searchParams);
    if (params) for (const [name, value] of params) url.searchParams.append(name, value);
    const method = (request.method ?? 'GET').toUpperCase();
    const policy = request.body instanceof Readable ? noRetries : request.retry ?? baseRetry;
    const timeouts: Timeouts = { ...baseTimeouts, total: defaultTotal, ...request.timeouts };
    let waitedMs = 0;
    for (let attempt = 1; ; attempt += 1) {
      let response: Answer;
      try {
        response = await open(request, url, timeouts);
      } catch (error) {
        if (request.signal?.aborted || error instanceof ProtocolError) throw error;
        const errorCode = errorCodeOf(error);
        const decision = decideRetry({ policy, retryIndex: attempt - 1, method, errorCode, waitedMs });
        if (decision.retry) {
          logger.debug(`${method} ${redactUrl(url)}: ${decision.reason}; retrying in ${decision.delayMs} ms`);
          waitedMs += decision.delayMs;
          await sleep(decision.delayMs, undefined, request.signal ? { signal: request.signal } : undefined);
          continue;
        }
        throw new NetworkError({ method, url: url.toString(), errorCode, cause: error, attempts: attempt });
      }
      const stream = response.body;
      const status = response.statusCode;
      if (isAccepted(request.accept, status)) return { stream, response, attempts: attempt, url };

      const decision = decideRetry({ policy, retryIndex: attempt - 1, method, status, retryAfter: response.headers['retry-after'], waitedMs });
      let raw: Buffer;
      try {
        raw = await readLimited(stream, errorBodyLimit, () => 'the error body');
      } catch {
        raw = Buffer.alloc(0);
      }
      if (decision.retry) {
        logger.debug(`${method} ${redactUrl(url)}: ${decision.reason}; retrying in ${decision.delayMs} ms`);
        waitedMs += decision.delayMs;
        await sleep(decision.delayMs, undefined, request.signal ? { signal: request.signal } : undefined);
        continue;
      }
      throw new HttpError({
        status,
        method,
        url: response.url || url.toString(),
        headers: response.headers,
        attempts: attempt,
        ...parseErrorBody(raw),
      });
    }
  }

  function responseFields(response: Answer, attempts: number) {
    return {
      status: response.statusCode,
      headers: response.headers,
      url: response.url,
      redirectUrls: response.redirectUrls,
      attempts,
    };
  }

  function meter(total: number | undefined, onProgress: StreamOptions['onProgress'], maxBytes: number | undefined, url: URL): Transform {
    let transferred = 0;
    return new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        transferred += chunk.length;
        if (maxBytes !== undefined && transferred > maxBytes) {
          callback(new ProtocolError(`the body of ${redactUrl(url)} is larger than the ${maxBytes} bytes allowed`));
          return;
        }
        onProgress?.({ transferred, total });
        callback(null, chunk);
      },
    });
  }

  return {
    baseUrl: options.baseUrl,

    async request<T>(request: RequestOptions): Promise<HttpResponse<T>> {
      const { stream, response, attempts, url } = await send(request, baseTimeouts.total);
      const limit = request.maxBodyBytes ?? options.maxBodyBytes ?? defaultMaxBodyBytes;
      let raw: Buffer;
      try {
        raw = await readLimited(stream, limit, () => `the response from ${redactUrl(url)}`);
      } catch (error) {
        if (error instanceof ProtocolError || request.signal?.aborted) throw error;
        // The headers came, then the body broke off: a reset, the body-idle timeout or the total deadline.
        throw new NetworkError({ method: (request.method ?? 'GET').toUpperCase(), url: url.toString(), errorCode: errorCodeOf(error), cause: error, attempts });
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
          const contentType = response.headers['content-type'] ?? 'no content type';
          throw new ProtocolError(
            `${(request.method ?? 'GET').toUpperCase()} ${redactUrl(url)} answered ${response.statusCode} with a body that is not JSON (${contentType}): ${raw.toString('utf8').slice(0, 200)}`,
            'check that the address points at the service and not at a proxy or web page',
          );
        }
      }
      return { ...responseFields(response, attempts), body: body as T };
    },

    async stream(request: StreamOptions): Promise<StreamResponse> {
      const { stream, response, attempts, url } = await send(request, request.timeouts?.total);
      const length = Number(response.headers['content-length']);
      const total = Number.isFinite(length) ? length : undefined;
      if (request.maxBytes !== undefined && total !== undefined && total > request.maxBytes) {
        stream.destroy();
        throw new ProtocolError(`the body of ${redactUrl(url)} is ${total} bytes, more than the ${request.maxBytes} allowed`);
      }
      const body = stream.pipe(meter(total, request.onProgress, request.maxBytes, url));
      stream.on('error', (error) => body.destroy(error));
      return { ...responseFields(response, attempts), body };
    },

    async download(request: StreamOptions & { path: string }): Promise<DownloadResult> {
      await mkdir(dirname(request.path), { recursive: true });
      const temporary = join(dirname(request.path), `.${basename(request.path)}.${randomBytes(6).toString('hex')}.part`);
      let file: WriteStream | undefined;
      try {
        const opened = await this.stream(request);
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
        if (error instanceof Error && !(error instanceof HttpError) && !(error instanceof ProtocolError) && !(error instanceof NetworkError)) {
          throw new NetworkError({ method: request.method ?? 'GET', url: resolveUrl(request.url).toString(), errorCode: errorCodeOf(error), cause: error });
        }
        throw error;
      }
    },

    close() {
      void dispatcher.destroy();
    },
  };
}
