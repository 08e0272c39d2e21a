/**
 * The storage API's one way to the service: the HTTP core with the storage retry policy, a bearer token asked for
 * each attempt (a device-grant login refreshes itself; a 401 gets one forced refresh: the core's `bearerAuth`), errors as `StorageError`, and
 * list paging that cannot silently stop early. Methods (methods.ts), uploads and downloads all go through here.
 */
import { expectOptions } from '../arguments.js';
import { UsageError } from '../errors.js';
import {
  bearerAuth,
  createHttpClient,
  definePolicy,
  networkErrorCodes,
  paginate,
  ProtocolError,
  registerSecret,
  toCredentials,
  type AccessTokenSession,
  type Credentials,
  type HttpClient,
  type HttpResponse,
  type RequestOptions,
  type RetryPolicy,
  type ProxySettings,
  type RetryNotice,
  type Timeouts,
} from '../http/index.js';
import type { Logger } from '../log.js';
import { parseServiceUrl } from '../service-url.js';
import { rateLimitReasons, toStorageError } from './errors.js';

/**
 * Where tokens come from: the core's `Credentials` (`{ token(), renew() }`), or a login's `getAccessToken()` and
 * `refresh()` (`AuthSession`), as this option has always taken.
 * @deprecated the name only: give `Credentials` (lib/http) or an `AuthSession`; this alias stays for existing code.
 */
export type StorageTokenSource = Credentials | AccessTokenSession;

export interface StorageTransportOptions {
  /** The service root, e.g. `https://storage.example.com` (STORAGE_BASE_URL); a trailing `/storage/v2` is allowed. */
  baseUrl: string;
  /** A bearer token, `Credentials`, or a login such as an `AuthSession`; a 401 renews it once (lib/http's `bearerAuth`). */
  token: string | Credentials | AccessTokenSession;
  retry?: RetryPolicy;
  logger?: Logger;
  userAgent?: string;
  proxy?: ProxySettings;
  timeouts?: Partial<Timeouts>;
  /** Told of each retry before its wait (see the HTTP core's `onRetry`). */
  onRetry?: (retry: RetryNotice) => void;
}

/**
 * Truncated exponential backoff with jitter, as Drive's documentation asks: 1 s doubling up to 32 s, for 429, 5xx,
 * network errors and 403 with a rate-limit reason; other 403s (permissions, scopes) are never retried.
 */
export const storageRetryPolicy: RetryPolicy = definePolicy({
  retries: 5,
  statuses: [408, 429, 500, 502, 503, 504],
  reasons: { 403: rateLimitReasons },
  errorCodes: networkErrorCodes,
  methods: undefined,
  backoff: { initialMs: 1_000, maxMs: 32_000, factor: 2, jitter: 0.5 },
  statusBackoff: {},
  retryAfterMaxMs: 120_000,
  budgetMs: 300_000,
});

/**
 * A request that creates something (files.insert, comments.insert, a POST) may have been carried out when the answer
 * was a 5xx or the connection broke: sending it again could make two. Only answers that say the request was not
 * carried out — 429 and the rate-limit 403s — are retried for it.
 */
export function notCarriedOutOnly(policy: RetryPolicy): RetryPolicy {
  return { ...policy, statuses: policy.statuses.filter((status) => status === 429), errorCodes: ['ECONNREFUSED'] };
}

/** The service root: https, or http on loopback only (a bearer token crosses it); no query, fragment or userinfo. */
export function storageBaseUrl(raw: string): string {
  const url = parseServiceUrl(raw, {
    name: 'the storage base URL',
    hint: 'set STORAGE_BASE_URL to the service root, e.g. https://storage.example.com',
    schemeHint: 'bearer tokens cross this connection',
  });
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/storage\/v2$/, '')}`;
}

/** Query parameters of a storage method. */
export type StorageParams = Record<string, string | number | boolean | undefined | ReadonlyArray<string | number>>;

export interface StorageRequest extends Omit<RequestOptions, 'url' | 'hooks'> {
  /** Below the service root, e.g. `/storage/v2/files/abc` or an absolute session URI. */
  path: string;
  /** Whether sending it twice is harmless; by default every method but POST. */
  idempotent?: boolean;
}

/** How `list` pages: abort, and a look at each page as it comes (changes.list's `newStartPageToken`). */
export interface ListOptions {
  signal?: AbortSignal;
  onPage?: (page: StoragePage<unknown>) => void;
}

/** Empty pages in a row that still carry a token, followed before the list is given up as endless. */
export const maxEmptyPages = 100;

/** One page of a list method: its items and the tokens Drive v2 pages carry. */
export interface StoragePage<T> {
  items?: T[];
  nextPageToken?: string;
  [key: string]: unknown;
}

export interface StorageTransport {
  /** The service root (no `/storage/v2`). */
  readonly baseUrl: string;
  /** The raw HTTP core, for the rare request that needs what `request` does not give. */
  readonly http: HttpClient;
  /** `Authorization` for a request sent now. */
  authorization(): Promise<string>;
  /** One request: authorised, retried by the storage policy, errors as StorageError. */
  request<T = unknown>(request: StorageRequest): Promise<HttpResponse<T>>;
  /** Every item of a list method, page after page; empty pages that carry a token are followed. */
  list<T>(path: string, searchParams?: StorageParams, itemsKey?: string, options?: ListOptions): AsyncGenerator<T>;
  close(): void;
}

/** Top-level names of a `fields` mask (`items(id,title),nextPageToken` → items, nextPageToken). */
function topLevelFields(mask: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of mask) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (char === ',' && depth === 0) {
      names.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim()) names.push(current.trim());
  return names.map((name) => name.split(/[(/]/)[0]!.trim());
}

/** A `fields` mask that also keeps these top-level fields (none added to a mask that asks for everything). */
export function withFields(fields: string | undefined, names: readonly string[]): string | undefined {
  if (typeof fields !== 'string' || fields.trim() === '' || fields.trim() === '*') return fields;
  const present = topLevelFields(fields);
  const missing = names.filter((name) => !present.includes(name));
  return missing.length === 0 ? fields : `${fields},${missing.join(',')}`;
}

/** A mask that keeps `nextPageToken`, so that asking for fewer fields never ends the paging early (googleapis#2854). */
export function withPageToken(fields: string | undefined): string | undefined {
  return withFields(fields, ['nextPageToken']);
}

export function createStorageTransport(options: StorageTransportOptions): StorageTransport {
  expectOptions('createStorageTransport', options);
  const baseUrl = storageBaseUrl(options.baseUrl);
  if (typeof options.token === 'string') {
    if (options.token.trim() === '') throw new UsageError('the storage token is empty', { hint: 'set STORAGE_TOKEN, or log in with `gantry auth login`' });
    registerSecret(options.token);
  } else if (
    !options.token ||
    (typeof (options.token as Credentials).token !== 'function' && typeof (options.token as AccessTokenSession).getAccessToken !== 'function')
  ) {
    throw new UsageError(
      'createStorageTransport: options.token takes a bearer token (a string), Credentials ({ token(), renew() }) or an object with getAccessToken(), such as an AuthSession',
    );
  }
  const credentials = toCredentials(options.token);
  // Per request, never on the client: `http` also sends to upload session URIs on other origins, which get no token.
  const auth = bearerAuth(credentials);
  const policy = options.retry ?? storageRetryPolicy;
  const http = createHttpClient({
    baseUrl: `${baseUrl}/`,
    retry: policy,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.userAgent ? { userAgent: options.userAgent } : {}),
    ...(options.proxy ? { proxy: options.proxy } : {}),
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });

  async function authorization(): Promise<string> {
    const token = await credentials.token();
    if (token === undefined) throw new UsageError('the storage token source gave no token', { hint: 'log in with `gantry auth login`, or set STORAGE_TOKEN' });
    registerSecret(token);
    return `Bearer ${token}`;
  }

  async function request<T>(input: StorageRequest): Promise<HttpResponse<T>> {
    const { path, idempotent, ...rest } = input;
    const method = (rest.method ?? 'GET').toUpperCase();
    const retry = rest.retry ?? ((idempotent ?? method !== 'POST') ? policy : notCarriedOutOnly(policy));
    const url = /^https?:\/\//.test(path) ? path : path.replace(/^\/+/, '');
    // A login whose access token was revoked or expired early gets one new token (the core's bearerAuth).
    try {
      return await http.request<T>({ ...rest, url, retry, hooks: auth });
    } catch (error) {
      throw toStorageError(error);
    }
  }

  async function* list<T>(path: string, searchParams: StorageParams = {}, itemsKey = 'items', options: ListOptions = {}): AsyncGenerator<T> {
    const fields = withPageToken(searchParams.fields as string | undefined);
    const first = searchParams.pageToken as string | undefined;
    const seen = new Set<string>(first ? [first] : []);
    let emptyInARow = 0;
    // The core's paginator, paging by the body's nextPageToken; Drive's lists have no page limit of their own.
    yield* paginate<T>(
      (page) => request<StoragePage<T>>({ ...page, path: String(page.url) }),
      (url) => new URL(String(url), `${baseUrl}/`),
      {
        url: path,
        searchParams: { ...searchParams, ...(fields !== undefined ? { fields } : {}), pageToken: first },
        ...(options.signal ? { signal: options.signal } : {}),
        requestLimit: Number.POSITIVE_INFINITY,
        transform: (response) => {
          const body = response.body as StoragePage<T> | undefined;
          options.onPage?.(body ?? {});
          return (body?.[itemsKey] as T[] | undefined) ?? [];
        },
        paginate: ({ response, currentItems, request: current }) => {
          const next = (response.body as StoragePage<T> | undefined)?.nextPageToken;
          if (!next) return false;
          if (currentItems.length === 0) {
            // An empty page that still carries a token is not the end: Drive returns them while it searches, and may
            // hand back the token it was asked with. Only an endless run of them is given up.
            if (++emptyInARow > maxEmptyPages)
              throw new ProtocolError(`${path}: ${maxEmptyPages} empty pages in a row, each with a next page token; the list is given up as endless`);
          } else {
            emptyInARow = 0;
            // A page with items that leads back to a page already read would repeat the list forever.
            if (seen.has(next)) throw new ProtocolError(`${path}: the service sent a page token it had sent before; the list would never end`);
          }
          seen.add(next);
          return { searchParams: { ...(current.searchParams as StorageParams), pageToken: next } };
        },
      },
    );
  }

  return { baseUrl, http, authorization, request, list, close: () => http.close() };
}
