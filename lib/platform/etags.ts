/**
 * Conditional requests (issue 28): the validators (`ETag`, `Last-Modified`) and bodies of GET answers, kept in the
 * client's memory so that a repeated GET asks `If-None-Match` / `If-Modified-Since` and a 304 — which the platform does
 * not count against the primary limit — gives back the kept body. Bounded (least recently used out first), keyed by
 * the identity, the URL and the Accept header, so one identity's answers never answer another's.
 */
import { UsageError } from '../errors.js';

/** Entries kept by default, the bytes of body text they may hold together, and the largest body kept, in bytes. */
export const defaultCacheEntries = 500;
export const defaultCacheBytes = 16 * 1024 * 1024;
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
  private readonly entries = new Map<string, CachedAnswer & { bytes: number }>();
  private total = 0;

  /** A long-running process (a webhook worker) reads many answers: both bounds hold, whichever is reached first. */
  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number = defaultCacheBytes,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The body text kept, in bytes. */
  get bytes(): number {
    return this.total;
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
    this.delete(key);
    const bytes = Buffer.byteLength(entry.text);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { ...entry, bytes });
    this.total += bytes;
    while (this.entries.size > this.maxEntries || this.total > this.maxBytes) this.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.bytes;
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

/** `cache` as the option takes it: true or absent (the default bounds), false (off), or `{ maxEntries?, maxBytes? }`. */
export function resolveCache(where: string, option: unknown): AnswerCache | undefined {
  if (option === false) return undefined;
  if (option === undefined || option === true) return new AnswerCache(defaultCacheEntries, defaultCacheBytes);
  const bounds = option as { maxEntries?: unknown; maxBytes?: unknown } | null;
  const bound = (value: unknown) => value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 1);
  if (
    bounds === null ||
    typeof bounds !== 'object' ||
    Object.keys(bounds).length === 0 ||
    Object.keys(bounds).some((key) => key !== 'maxEntries' && key !== 'maxBytes') ||
    !bound(bounds.maxEntries) ||
    !bound(bounds.maxBytes)
  ) {
    throw new UsageError(`${where}: cache must be true, false or { maxEntries?, maxBytes? } (integers ≥ 1), got ${JSON.stringify(option)}`, {
      code: 'INVALID_ARGUMENT',
    });
  }
  return new AnswerCache((bounds.maxEntries as number | undefined) ?? defaultCacheEntries, (bounds.maxBytes as number | undefined) ?? defaultCacheBytes);
}
