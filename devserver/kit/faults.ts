// Fault injection: make a dev server misbehave the way real servers and proxies in front of them do, on chosen paths,
// for a chosen number of requests. Faults are plain data so tests can send them over an admin endpoint too. A
// `status` fault is the one the server answers itself, in its own error format; the others are the same on the wire
// whatever the protocol (a reset, a proxy's HTML page, a cut body, any answer given in full).
import type { IncomingMessage, ServerResponse } from 'node:http';

interface FaultScope {
  /** Path pattern: `*` matches within one segment, `**` across segments. Default `**` (every path). */
  path?: string;
  /** Only for this method (GET, HEAD). Default any. */
  method?: string;
  /** Apply to this many matching requests, then retire. Default: every matching request. */
  times?: number;
  /** Let this many matching requests through untouched first. Default 0. */
  after?: number;
}

export type Fault = FaultScope &
  (
    | { kind: 'latency'; ms: number }
    /** An error the server answers in its own format: 429 (add retryAfter), 500, 503, 4xx... */
    | { kind: 'status'; status: number; retryAfter?: number | string; message?: string }
    /** What an intermediate proxy sends: a non-JSON (HTML) error page, 502 by default. */
    | { kind: 'non-json'; status?: number; body?: string }
    /** TCP reset before any byte of the response. */
    | { kind: 'reset' }
    /** Sends the headers (with the full Content-Length when known) and part of the body, then closes. */
    | { kind: 'truncate'; bytes?: number }
    /** Any answer at all, e.g. an HTML discovery document or a 404. */
    | { kind: 'respond'; status: number; headers?: Record<string, string>; body?: string }
  );

export class FaultError extends Error {}

const KINDS = new Set(['latency', 'status', 'non-json', 'reset', 'truncate', 'respond']);

function isCount(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0);
}

/** Validates one fault from untrusted input (admin endpoint, CLI). */
export function checkFault(value: unknown): Fault {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FaultError('a fault must be an object');
  const fault = value as Record<string, unknown>;
  if (typeof fault.kind !== 'string' || !KINDS.has(fault.kind)) throw new FaultError(`fault kind must be one of ${[...KINDS].join(', ')}`);
  if (fault.path !== undefined && (typeof fault.path !== 'string' || !fault.path.startsWith('/')))
    throw new FaultError('fault path must be a pattern starting with /');
  if (fault.method !== undefined && typeof fault.method !== 'string') throw new FaultError('fault method must be a string');
  if (!isCount(fault.times) || !isCount(fault.after)) throw new FaultError('fault times and after must be non-negative integers');
  const status = fault.status;
  const validStatus = (s: unknown) => typeof s === 'number' && Number.isInteger(s) && s >= 100 && s <= 599;
  switch (fault.kind) {
    case 'latency':
      if (typeof fault.ms !== 'number' || !(fault.ms >= 0) || fault.ms > 600_000) throw new FaultError('latency fault needs ms between 0 and 600000');
      break;
    case 'status':
      if (!validStatus(status) || (status as number) < 400) throw new FaultError('status fault needs a status from 400 to 599');
      if (fault.retryAfter !== undefined && typeof fault.retryAfter !== 'number' && typeof fault.retryAfter !== 'string')
        throw new FaultError('retryAfter must be seconds or an HTTP date');
      break;
    case 'non-json':
      if (status !== undefined && !validStatus(status)) throw new FaultError('non-json fault status must be 100-599');
      break;
    case 'truncate':
      if (!isCount(fault.bytes)) throw new FaultError('truncate fault bytes must be a non-negative integer');
      break;
    case 'respond':
      if (!validStatus(status)) throw new FaultError('respond fault needs a status from 100 to 599');
      if (fault.body !== undefined && typeof fault.body !== 'string') throw new FaultError('respond fault body must be a string');
      if (
        fault.headers !== undefined &&
        (typeof fault.headers !== 'object' || fault.headers === null || Object.values(fault.headers).some((v) => typeof v !== 'string'))
      ) {
        throw new FaultError('respond fault headers must map names to strings');
      }
      break;
  }
  return { ...fault } as unknown as Fault;
}

export function compilePattern(pattern: string): RegExp {
  const escaped = pattern
    .split(/(\*\*|\*)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${escaped}$`);
}

interface ActiveFault {
  fault: Fault;
  pattern: RegExp;
  seen: number;
  applied: number;
}

/** What to do with one request, decided before routing. */
export interface FaultDecision {
  delayMs: number;
  action?: Exclude<Fault, { kind: 'latency' }>;
}

export class FaultSet {
  private active: ActiveFault[] = [];

  set(faults: Fault[]): void {
    this.active = faults.map((f) => this.activate(f));
  }

  add(faults: Fault[]): void {
    this.active.push(...faults.map((f) => this.activate(f)));
  }

  /** The faults still armed, with how many times each may still fire. */
  list(): (Fault & { remaining: number | null })[] {
    return this.active.map((a) => ({ ...a.fault, remaining: a.fault.times === undefined ? null : a.fault.times - a.applied }));
  }

  private activate(fault: Fault): ActiveFault {
    const checked = checkFault(fault);
    return { fault: checked, pattern: compilePattern(checked.path ?? '/**'), seen: 0, applied: 0 };
  }

  /** Latency faults add up; the first matching non-latency fault answers the request. */
  decide(method: string, pathname: string): FaultDecision {
    const decision: FaultDecision = { delayMs: 0 };
    for (const active of this.active) {
      const { fault } = active;
      if (fault.method && fault.method.toUpperCase() !== method) continue;
      if (!active.pattern.test(pathname)) continue;
      if (fault.kind !== 'latency' && decision.action) continue;
      active.seen++;
      if (active.seen <= (fault.after ?? 0)) continue;
      active.applied++;
      if (fault.kind === 'latency') decision.delayMs += fault.ms;
      else decision.action = fault;
    }
    this.active = this.active.filter((a) => a.fault.times === undefined || a.applied < a.fault.times);
    return decision;
  }
}

/** What a server answers itself: a `status` fault, in its own error format. */
export type StatusFault = Extract<Fault, { kind: 'status' }>;

/**
 * Applies a terminal fault that is no server's own answer. Returns false for 'truncate', which instead wraps the
 * response so the normal handler's body gets cut short.
 */
export function applyFault(action: Exclude<NonNullable<FaultDecision['action']>, StatusFault>, req: IncomingMessage, res: ServerResponse): boolean {
  switch (action.kind) {
    case 'reset':
      req.socket.resetAndDestroy();
      return true;
    case 'non-json': {
      const status = action.status ?? 502;
      const body =
        action.body ??
        `<html><head><title>${status} Bad Gateway</title></head><body><center><h1>${status} Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n`;
      res.writeHead(status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return true;
    }
    case 'respond': {
      const body = action.body ?? '';
      res.writeHead(action.status, { 'content-length': Buffer.byteLength(body), ...(action.headers ?? {}) });
      res.end(body);
      return true;
    }
    case 'truncate':
      truncateResponse(res, action.bytes);
      return false;
  }
}

/** Cuts the body after `bytes` (default: half of a known Content-Length, else 512) and closes the connection. */
function truncateResponse(res: ServerResponse, bytes?: number): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  const write = res.write.bind(res) as (chunk: unknown) => boolean;
  let declared: number | undefined;
  let sent = 0;
  let cut = false;
  // writeHead(status, headers) bypasses getHeader(), so the declared length is read on the way through.
  res.writeHead = ((...args: unknown[]) => {
    for (const arg of args.slice(1)) {
      if (arg && typeof arg === 'object' && !Array.isArray(arg)) {
        for (const [name, value] of Object.entries(arg)) if (name.toLowerCase() === 'content-length') declared = Number(value);
      }
    }
    return writeHead(...args);
  }) as typeof res.writeHead;
  const budget = () => {
    if (bytes !== undefined) return bytes;
    const length = declared ?? Number(res.getHeader('content-length'));
    return Number.isFinite(length) && length > 0 ? Math.floor(length / 2) : 512;
  };
  const hangUp = () => {
    cut = true;
    // Flush what was written, then close without finishing the message: the client sees a short body.
    res.socket?.destroySoon();
  };
  const take = (chunk: unknown): Buffer | undefined => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array | string);
    const part = buffer.subarray(0, Math.max(0, budget() - sent));
    sent += part.length;
    return part;
  };
  res.write = ((chunk: unknown) => {
    if (cut) return false;
    const part = take(chunk);
    if (part && part.length > 0) write(part);
    if (sent >= budget()) hangUp();
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: unknown) => {
    if (!cut) {
      const part = take(chunk);
      if (!res.headersSent) res.flushHeaders();
      if (part && part.length > 0) write(part);
      hangUp();
    }
    return res;
  }) as typeof res.end;
}
