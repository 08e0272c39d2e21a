/** The HTTP core's public shapes: the client, its options, requests and responses. */
import type http from 'node:http';
import type { Readable } from 'node:stream';
import type { Logger } from '../log.js';
import type { ProxySettings } from './proxy.js';
import type { RetryPolicy } from './retry.js';
import type { TlsOptions } from './tls.js';

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
  /** Run on every request of this client, before a request's own (see `HttpHooks`). */
  hooks?: HttpHooks;
  /**
   * How the core waits before a retry (default a timer); rejects with the signal's reason when it is aborted. A client
   * whose waits run on a clock of its own gives it here (lib/platform's `Clock.sleep`, a test's virtual clock).
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * One request's place among its attempts, as its hooks see it (got's `context`): the same object from the first
 * attempt to the last, including a resend a hook asked for.
 */
export interface HookContext {
  readonly method: string;
  /** The resolved URL, query included (not redacted: never log it as it is). */
  readonly url: URL;
  readonly request: RequestOptions;
  /** Headers set over the request's for the next attempt (a hook's credentials); undefined removes one. */
  headers: Record<string, string | undefined>;
  /** Query parameters set over the URL's for the next attempt (a token a spec lets travel in the query). */
  searchParams: Record<string, string>;
  /** The attempt about to go, or just answered, from 1 (a hook's resend does not count). */
  attempt: number;
  /** What hooks keep across the attempts of this request, each under a key of its own. */
  readonly state: Map<unknown, unknown>;
}

/** What `afterResponse` sees of an answer: its status and headers; the body is not read yet. */
export interface AnswerHead {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The final URL, after redirects. */
  url: string;
  /**
   * The body of an answer the request does not accept, read (up to 64 KiB) before the hooks run, as the core's error
   * will hold it: JSON as `body`, else the text as `rawBody`. What a hook decides on when the status alone does not
   * say (a rate limit's message, as got's and Octokit's hooks read `response.body`). Absent for an accepted answer,
   * whose body is the caller's to read.
   */
  errorBody?: { body?: unknown; rawBody?: string };
}

/**
 * Hooks, in got's terms and order (`beforeRequest`, `afterResponse`, `beforeRetry`), each run in turn and awaited.
 * `afterResponse` sees every answer before the core decides whether it is accepted or retried; resolving 'resend'
 * sends the request once more at once, outside the retry policy's count (got's `retryWithMergedOptions`: a renewed
 * credential; a limiter's hold, waited for in its `beforeRequest`) — `beforeRequest` runs again first, and awaiting
 * there is how a resend waits. A policy's `hookResends` bounds the resends (default 3). A request with a streamed
 * body is never resent.
 */
export interface HttpHooks {
  beforeRequest?: ReadonlyArray<(context: HookContext) => void | Promise<void>>;
  afterResponse?: ReadonlyArray<(answer: AnswerHead, context: HookContext) => 'resend' | void | Promise<'resend' | void>>;
  beforeRetry?: ReadonlyArray<(retry: RetryNotice, context: HookContext) => void | Promise<void>>;
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
   * streamed body is never retried and a redirect that would send it again (307, 308) is handed back. An async
   * iterable is streamed the same way, and each chunk is written to the connection before the next is asked for, so
   * the iterable may refill one buffer (no allocation per chunk: what makes a large upload cost no more CPU than a
   * bare `node:http` one).
   */
  body?: string | Buffer | Readable | AsyncIterable<Uint8Array>;
  /** How the body is read (default json; an empty body reads as undefined). */
  responseType?: 'json' | 'text' | 'buffer';
  /** Statuses that are not errors (default 200–299). */
  accept?: readonly number[] | ((status: number) => boolean);
  followRedirects?: boolean;
  maxRedirects?: number;
  maxBodyBytes?: number;
  retry?: RetryPolicy;
  /**
   * Sending this request twice has no more effect than sending it once, whatever its method (RFC 7009's revocation,
   * RFC 7662's introspection): a reused connection that ends before any answer sends it again, as for a GET.
   */
  repeatable?: boolean;
  timeouts?: Partial<Omit<Timeouts, 'connect'>>;
  signal?: AbortSignal;
  /** This request's hooks, run after the client's. */
  hooks?: HttpHooks;
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
