import http from 'node:http';
import https from 'node:https';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import got, { type Got, type Response as GotResponse, type Request as GotRequest } from 'got';
import { userAgent as defaultUserAgent } from '../version.js';
import { getLogger, type Logger } from '../log.js';
import { HttpError, NetworkError, ProtocolError } from './errors.js';
import { redactUrl, registerSecret, sensitiveHeaders } from './redact.js';
import { decideRetry, defaultRetryPolicy, type RetryPolicy } from './retry.js';
import { loadTlsOptions, type TlsOptions } from './tls.js';

export interface Timeouts {
  /** Until the TCP connection is up, in ms. */
  connect: number;
  /** Until the response headers arrive, in ms. */
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
  body?: string | Buffer;
  /** How the body is read (default json; an empty body reads as undefined). */
  responseType?: 'json' | 'text' | 'buffer';
  /** Statuses that are not errors (default 200–299). */
  accept?: readonly number[] | ((status: number) => boolean);
  followRedirects?: boolean;
  maxRedirects?: number;
  maxBodyBytes?: number;
  retry?: RetryPolicy;
  timeouts?: Partial<Timeouts>;
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

/** got's timeout options for ours; every key is set, so that merging over the instance's defaults replaces them all. */
function gotTimeout(timeouts: Timeouts): { connect: number; response: number; request: number | undefined } {
  return { connect: timeouts.connect, response: timeouts.response, request: timeouts.total || undefined };
}

function sameGotTimeout(timeouts: Timeouts, got: ReturnType<typeof gotTimeout>): boolean {
  return timeouts.connect === got.connect && timeouts.response === got.response && (timeouts.total || undefined) === got.request;
}

function errorCodeOf(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const { code, name } = current as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && code !== 'ERR_GOT_REQUEST_ERROR') return code;
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
  const agents = {
    http: new http.Agent({ keepAlive: true }),
    https: new https.Agent({ keepAlive: true, ...tls }),
  };
  const baseHeaders: Record<string, string> = { 'user-agent': options.userAgent ?? defaultUserAgent };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) continue;
    baseHeaders[name.toLowerCase()] = value;
    if (sensitiveHeaders.has(name.toLowerCase())) registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ''));
  }
  const baseRetry = options.retry ?? defaultRetryPolicy;
  const baseTimeouts = { ...defaultTimeouts, ...options.timeouts };
  const baseGotTimeout = gotTimeout(baseTimeouts);
  const instance: Got = got.extend({
    agent: agents,
    retry: { limit: 0 },
    throwHttpErrors: false,
    decompress: true,
    maxRedirects: options.maxRedirects ?? 10,
    // The client's own timeouts are the instance's defaults: a request that keeps them passes none, sparing got a
    // merge of its timeout options on every request.
    timeout: baseGotTimeout,
    followRedirect: true,
    hooks: {
      beforeRedirect: [
        (next, response) => {
          // Credentials go to the origin they were meant for, never to a host a redirect points at.
          const from = new URL(response.url);
          const to = next.url instanceof URL ? next.url : new URL(String(next.url));
          if (from.origin !== to.origin) {
            for (const name of Object.keys(next.headers)) {
              if (sensitiveHeaders.has(name.toLowerCase())) delete next.headers[name];
            }
          }
        },
      ],
    },
  });

  function resolveUrl(url: string | URL): URL {
    if (url instanceof URL) return url;
    if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return new URL(url);
    if (!options.baseUrl) throw new ProtocolError(`a relative URL (${url}) needs a base URL`);
    const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
    return new URL(url.replace(/^\//, ''), base);
  }

  /** One attempt: resolves once the response headers are in. */
  async function open(request: RequestOptions, url: URL, timeouts: Timeouts): Promise<{ stream: GotRequest; response: GotResponse }> {
    const headers: Record<string, string> = { ...baseHeaders };
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (value === undefined) continue;
      headers[name.toLowerCase()] = value;
      if (sensitiveHeaders.has(name.toLowerCase())) registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ''));
    }
    let body: string | Buffer | undefined = request.body;
    if (request.json !== undefined) {
      body = JSON.stringify(request.json);
      headers['content-type'] ??= 'application/json';
    }
    if (!headers.accept && (request.responseType ?? 'json') === 'json') headers.accept = 'application/json';
    const stream = instance.stream(url, {
      method: (request.method ?? 'GET') as 'GET',
      headers,
      body,
      ...(request.followRedirects === false ? { followRedirect: false } : {}),
      ...(request.maxRedirects !== undefined ? { maxRedirects: request.maxRedirects } : {}),
      ...(sameGotTimeout(timeouts, baseGotTimeout) ? {} : { timeout: gotTimeout(timeouts) }),
      ...(request.signal ? { signal: request.signal } : {}),
    });
    // In stream mode got waits for the caller to end the request body of any method but GET and HEAD.
    const method = (request.method ?? 'GET').toUpperCase();
    if (body === undefined && method !== 'GET' && method !== 'HEAD') stream.end();
    const response = await new Promise<GotResponse>((resolve, reject) => {
      const onResponse = (answer: GotResponse) => {
        stream.off('error', onError);
        resolve(answer);
      };
      const onError = (error: Error) => {
        stream.off('response', onResponse);
        reject(error);
      };
      stream.once('response', onResponse);
      stream.once('error', onError);
    });
    return { stream, response };
  }

  /** Runs attempts under the retry policy until a final accepted response, or throws a typed error. */
  async function send(request: RequestOptions, defaultTotal: number | undefined): Promise<{ stream: GotRequest; response: GotResponse; attempts: number; url: URL }> {
    const url = resolveUrl(request.url);
    const params = toSearchParams(request.searchParams);
    if (params) for (const [name, value] of params) url.searchParams.append(name, value);
    const method = (request.method ?? 'GET').toUpperCase();
    const policy = request.retry ?? baseRetry;
    const timeouts: Timeouts = { ...baseTimeouts, total: defaultTotal, ...request.timeouts };
    let waitedMs = 0;
    for (let attempt = 1; ; attempt += 1) {
      let opened: { stream: GotRequest; response: GotResponse };
      try {
        opened = await open(request, url, timeouts);
      } catch (error) {
        if (request.signal?.aborted) throw error;
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
      const { stream, response } = opened;
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

  function responseFields(response: GotResponse, attempts: number) {
    return {
      status: response.statusCode,
      headers: response.headers,
      url: response.url,
      redirectUrls: response.redirectUrls.map((u) => u.toString()),
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
      const raw = await readLimited(stream, limit, () => `the response from ${redactUrl(url)}`);
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
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
