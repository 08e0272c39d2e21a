/**
 * The one HTTP client factory every Gantry service client is built on: got, with our policies on top. The pieces:
 * attempt.ts (one attempt on got), send.ts (the retry loop), bodies.ts, headers.ts, failures.ts, paginate.ts.
 */
import { terminalText } from '../terminal-text.js';
import { expectOptions } from '../arguments.js';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Progress } from 'got';
import { writeFileAtomic } from '../atomic-write.js';
import { GantryError } from '../errors.js';
import { userAgent as defaultUserAgent } from '../version.js';
import { getLogger } from '../log.js';
import { ProtocolError } from './errors.js';
import { proxySettingsFromEnv } from './proxy.js';
import { redactUrl } from '../redact.js';
import { defaultRetryPolicy } from './retry.js';
import { loadTlsOptions } from './tls.js';
import { waitLimits } from '../waits.js';
import { createAttempts, type Answer } from './attempt.js';
import { readLimited, RelayedBody } from './bodies.js';
import { failure } from './failures.js';
import { addHeaders } from './headers.js';
import { paginate } from './paginate.js';
import { createSender } from './send.js';
import type {
  DownloadResult,
  HttpClient,
  HttpClientOptions,
  HttpHooks,
  RetryNotice,
  HttpResponse,
  PaginateOptions,
  RequestOptions,
  StreamOptions,
  StreamResponse,
  Timeouts,
} from './types.js';

export { nextLink } from './paginate.js';
export type * from './types.js';

const defaultTimeouts: Timeouts = { connect: 10_000, response: 60_000 };
const defaultMaxBodyBytes = 64 * 1024 * 1024;

function responseFields(answer: Answer, attempts: number) {
  return { status: answer.status, headers: answer.headers, url: answer.url, redirectUrls: answer.redirectUrls, attempts };
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  expectOptions('createHttpClient', options);
  const logger = options.logger ?? getLogger();
  const tls = loadTlsOptions(options.tls);
  if (options.tls?.skipVerify) {
    logger.warn(`TLS certificate verification is disabled for ${options.baseUrl ?? 'this client'}: anyone on the path can read and change the traffic`);
  }
  const baseHeaders = addHeaders({ 'user-agent': options.userAgent ?? defaultUserAgent }, options.headers);
  // GANTRY_TIMEOUT and GANTRY_MAX_WAIT (or the command's --timeout, --max-wait) where the client sets no bound of its own.
  const limits = waitLimits();
  const baseTimeouts = { ...defaultTimeouts, ...(limits.timeoutMs !== undefined ? { response: limits.timeoutMs } : {}), ...options.timeouts };
  const baseMaxRedirects = options.maxRedirects ?? 10;
  const attempts = createAttempts({
    tls,
    proxy: options.proxy ?? proxySettingsFromEnv(),
    connectTimeoutMs: baseTimeouts.connect,
    baseHeaders,
    baseMaxRedirects,
  });
  const { agents } = attempts;

  function resolveUrl(url: string | URL): URL {
    if (url instanceof URL) return new URL(url);
    if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return new URL(url);
    if (!options.baseUrl) throw new ProtocolError(`a relative URL (${url}) needs a base URL`);
    const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
    return new URL(url.replace(/^\//, ''), base);
  }

  const { onRetry } = options;
  const hooks: HttpHooks = {
    ...options.hooks,
    beforeRetry: [...(onRetry ? [(retry: RetryNotice) => onRetry(retry)] : []), ...(options.hooks?.beforeRetry ?? [])],
  };
  const send = createSender({
    attempts,
    logger,
    hooks,
    baseRetry: options.retry ?? defaultRetryPolicy,
    limits,
    baseTimeouts,
    baseMaxRedirects,
    resolveUrl,
    sleep: options.sleep,
  });

  const httpClient: HttpClient = {
    baseUrl: options.baseUrl,

    async request<T>(request: RequestOptions): Promise<HttpResponse<T>> {
      const { answer, attempts: count, url } = await send(request, baseTimeouts.total);
      const method = (request.method ?? 'GET').toUpperCase();
      const limit = request.maxBodyBytes ?? options.maxBodyBytes ?? defaultMaxBodyBytes;
      let raw: Buffer;
      try {
        raw = await readLimited(answer.body, limit, () => `the response from ${redactUrl(url)}`);
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        if (request.signal?.aborted) throw request.signal.reason;
        // The headers came, then the body broke off: a reset, the idle timeout or the total deadline.
        throw failure(agents, error, method, url, count, 0);
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
      return { ...responseFields(answer, count), body: body as T };
    },

    async stream(request: StreamOptions): Promise<StreamResponse> {
      const { answer, attempts: count, url } = await send(request, request.timeouts?.total);
      const length = Number(answer.headers['content-length']);
      const total = !answer.decoded && answer.headers['content-length'] !== undefined && Number.isFinite(length) ? length : undefined;
      if (request.maxBytes !== undefined && total !== undefined && total > request.maxBytes) {
        answer.finish();
        throw new ProtocolError(`the body of ${redactUrl(url)} is ${total} bytes, more than the ${request.maxBytes} allowed`);
      }
      const { onProgress, signal } = request;
      if (onProgress) answer.body.on('downloadProgress', (progress: Progress) => onProgress({ transferred: progress.transferred, total }));
      const body = new RelayedBody(answer.body, request.maxBytes, url, (error) =>
        signal?.aborted ? (signal.reason as Error) : failure(agents, error, (request.method ?? 'GET').toUpperCase(), url, count, 0),
      );
      body.once('close', answer.finish);
      return { ...responseFields(answer, count), body };
    },

    async download(request: StreamOptions & { path: string }): Promise<DownloadResult> {
      await mkdir(dirname(request.path), { recursive: true });
      try {
        const opened = await httpClient.stream(request);
        let bytes = 0;
        opened.body.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        await writeFileAtomic(request.path, opened.body);
        const { body: _body, ...fields } = opened;
        return { ...fields, path: request.path, bytes };
      } catch (error) {
        if (error instanceof Error && !(error instanceof GantryError) && !request.signal?.aborted) {
          throw failure(agents, error, (request.method ?? 'GET').toUpperCase(), resolveUrl(request.url), 1, 0);
        }
        throw error;
      }
    },

    paginate<T>(request: PaginateOptions<T>): AsyncGenerator<T> {
      return paginate((page) => httpClient.request<unknown>(page), resolveUrl, request);
    },

    close() {
      attempts.close();
    },
  };
  return httpClient;
}
