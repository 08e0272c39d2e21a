/**
 * Conditional requests (issue 28): the validators (`ETag`, `Last-Modified`) and bodies of GET answers, kept in the
 * client's memory so that a repeated GET asks `If-None-Match` / `If-Modified-Since` and a 304 — which the platform does
 * not count against the primary limit — gives back the kept body. Bounded (least recently used out first), keyed by
 * the identity, the URL and the Accept header, so one identity's answers never answer another's.
 */
import { UsageError } from '../errors.js';

/** Entries kept by default, and the largest body kept (its text), in bytes. */
export const defaultCacheEntries = 500;
export const maxCachedBodyBytes = 1024 * 1024;

export interface CachedAnswer {
  etag: string | undefined;
  lastModified: string | undefined;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it came: parsed anew for each caller, so that none can change another's copy. */
  text: string;
}

export class AnswerCache {
  private readonly entries = new Map<string, CachedAnswer>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      // Most recently used last: the first entry is the one to go.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: CachedAnswer): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

/** The key of a GET: who asks (`Identity.key`, a hash of the credential), what (URL with its query) and in what form (Accept). */
export function cacheKey(identity: string, url: URL, accept: string | undefined): string {
  return `${identity}\n${accept ?? ''}\n${url.toString()}`;
}

/** Whether the caller sent validators of its own: then its request goes as it is, and its 304 is its own. */
export function hasConditionalHeaders(headers: Record<string, string | undefined> | undefined): boolean {
  return Object.entries(headers ?? {}).some(([name, value]) => value !== undefined && /^if-(none-match|modified-since)$/i.test(name));
}

/** `cache` as the option takes it: true or absent (the default size), false (off), or `{ maxEntries }`. */
export function resolveCache(where: string, option: unknown): AnswerCache | undefined {
  if (option === false) return undefined;
  if (option === undefined || option === true) return new AnswerCache(defaultCacheEntries);
  const maxEntries = (option as { maxEntries?: unknown } | null)?.maxEntries;
  if (
    option === null ||
    typeof option !== 'object' ||
    Object.keys(option).some((key) => key !== 'maxEntries') ||
    typeof maxEntries !== 'number' ||
    !Number.isInteger(maxEntries) ||
    maxEntries < 1
  ) {
    throw new UsageError(`${where}: cache must be true, false or { maxEntries: <an integer ≥ 1> }, got ${JSON.stringify(option)}`, {
      code: 'INVALID_ARGUMENT',
    });
  }
  return new AnswerCache(maxEntries);
}
