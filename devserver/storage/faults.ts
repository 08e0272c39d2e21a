// Fault injection of the storage server, set through `/_gantry/faults` or the server object: cut a transfer after N
// bytes (the socket destroyed), answer a status (5xx) for the next requests, and a quota answering 403
// userRateLimitExceeded once a window's requests are spent.
import { UsageError } from '../../lib/errors.js';

export type StorageFault =
  | { kind: 'cut'; afterBytes: number; direction?: 'upload' | 'download'; times?: number }
  | { kind: 'status'; status: number; times?: number; path?: string; method?: string }
  | { kind: 'quota'; requests: number; windowMs?: number; reason?: 'userRateLimitExceeded' | 'rateLimitExceeded'; status?: 403 | 429 }
  /** The next list pages (files, children, changes) come back empty, still carrying a token to the same place. */
  | { kind: 'emptyPage'; times?: number };

export function checkStorageFault(value: unknown): StorageFault {
  const f = value as Record<string, unknown> | null;
  const count = (v: unknown, name: string, min: number) => {
    if (v === undefined) return;
    if (!Number.isSafeInteger(v) || (v as number) < min) throw new UsageError(`fault ${name} must be a whole number of at least ${min}`);
  };
  if (!f || typeof f !== 'object') throw new UsageError('a fault is an object with a kind: cut, status, quota or emptyPage');
  count(f.times, 'times', 1);
  switch (f.kind) {
    case 'cut':
      count(f.afterBytes, 'afterBytes', 0);
      if (f.afterBytes === undefined) throw new UsageError('a cut fault needs afterBytes');
      if (f.direction !== undefined && f.direction !== 'upload' && f.direction !== 'download')
        throw new UsageError("a cut fault's direction is upload or download");
      return {
        kind: 'cut',
        afterBytes: f.afterBytes as number,
        direction: (f.direction as 'upload' | 'download' | undefined) ?? 'upload',
        times: (f.times as number | undefined) ?? 1,
      };
    case 'status':
      if (!Number.isSafeInteger(f.status) || (f.status as number) < 400 || (f.status as number) > 599)
        throw new UsageError('a status fault needs a status from 400 to 599');
      if (f.path !== undefined && typeof f.path !== 'string') throw new UsageError("a status fault's path is a string (a prefix)");
      if (f.method !== undefined && typeof f.method !== 'string') throw new UsageError("a status fault's method is a string");
      return {
        kind: 'status',
        status: f.status as number,
        times: (f.times as number | undefined) ?? 1,
        ...(f.path ? { path: f.path as string } : {}),
        ...(f.method ? { method: (f.method as string).toUpperCase() } : {}),
      };
    case 'quota':
      count(f.requests, 'requests', 0);
      count(f.windowMs, 'windowMs', 1);
      if (f.requests === undefined) throw new UsageError('a quota fault needs requests (per window)');
      if (f.reason !== undefined && f.reason !== 'userRateLimitExceeded' && f.reason !== 'rateLimitExceeded')
        throw new UsageError("a quota fault's reason is userRateLimitExceeded or rateLimitExceeded");
      if (f.status !== undefined && f.status !== 403 && f.status !== 429) throw new UsageError("a quota fault's status is 403 or 429");
      return {
        kind: 'quota',
        requests: f.requests as number,
        windowMs: (f.windowMs as number | undefined) ?? 60_000,
        reason: (f.reason as 'userRateLimitExceeded' | 'rateLimitExceeded' | undefined) ?? 'userRateLimitExceeded',
        status: (f.status as 403 | 429 | undefined) ?? 403,
      };
    case 'emptyPage':
      return { kind: 'emptyPage', times: (f.times as number | undefined) ?? 1 };
    default:
      throw new UsageError("a fault's kind is cut, status, quota or emptyPage");
  }
}

export class Faults {
  private list: StorageFault[] = [];
  private window = { start: 0, used: 0 };

  set(faults: StorageFault[]): void {
    this.list = faults.map(checkStorageFault);
    this.window = { start: 0, used: 0 };
  }

  add(faults: StorageFault[]): void {
    this.list.push(...faults.map(checkStorageFault));
  }

  current(): StorageFault[] {
    return this.list.map((f) => ({ ...f }));
  }

  /** A status to answer instead of serving the request, if a fault says so (consumed). */
  status(method: string, path: string): number | undefined {
    const i = this.list.findIndex((f) => f.kind === 'status' && (!f.path || path.startsWith(f.path)) && (!f.method || f.method === method));
    if (i < 0) return undefined;
    return this.consume(i).status;
  }

  /** The quota's answer when it is spent for this request. */
  overQuota(now: number): { status: number; reason: string } | undefined {
    const quota = this.list.find((f): f is Extract<StorageFault, { kind: 'quota' }> => f.kind === 'quota');
    if (!quota) return undefined;
    if (now - this.window.start >= (quota.windowMs ?? 60_000)) this.window = { start: now, used: 0 };
    this.window.used++;
    return this.window.used > quota.requests ? { status: quota.status ?? 403, reason: quota.reason ?? 'userRateLimitExceeded' } : undefined;
  }

  /** True when this list page is to come back empty (consumed). */
  emptyPage(): boolean {
    const i = this.list.findIndex((f) => f.kind === 'emptyPage');
    if (i < 0) return false;
    this.consume(i);
    return true;
  }

  /** Bytes after which to cut this transfer (consumed), if a fault says so. */
  cut(direction: 'upload' | 'download'): number | undefined {
    const i = this.list.findIndex((f) => f.kind === 'cut' && (f.direction ?? 'upload') === direction);
    if (i < 0) return undefined;
    return this.consume(i).afterBytes;
  }

  private consume<F extends StorageFault>(i: number): F & { status: number; afterBytes: number } {
    const fault = this.list[i] as F & { times?: number; status: number; afterBytes: number };
    if (fault.times !== undefined && --fault.times <= 0) this.list.splice(i, 1);
    return fault;
  }
}
