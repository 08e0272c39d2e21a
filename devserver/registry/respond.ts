// Request and response plumbing of the registry server: targets, path segments, JSON and {errors} bodies, and the
// latency floor that holds a response back.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJson, readBody, sendReply, type ReplyStyle } from '../kit/index.js';
import { ApiError } from './api.js';

export function segmentsAfter(pathname: string, base: string): string[] {
  const rest = pathname.length < base.length ? '' : pathname.slice(base.length);
  const raw = rest === '' ? [] : rest.split('/');
  if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop(); // a trailing slash is tolerated
  const segments = raw.map(safeDecode);
  if (segments.some((s) => s === undefined || s === '')) throw new ApiError(404, `no registry endpoint at ${pathname}`);
  return segments as string[];
}

const HOLD_BUFFER = 1024 * 1024;

/**
 * Holds the body writes of a response until `gate` opens, then replays them in order. Headers may be set meanwhile
 * (no byte leaves before the first write). A piped source is paused after HOLD_BUFFER bytes and resumed by 'drain'.
 */
export function holdUntil(res: ServerResponse, gate: Promise<void>): void {
  const write = res.write;
  const end = res.end;
  const flushHeaders = res.flushHeaders;
  const queue: Array<() => void> = [];
  let held = 0;
  res.write = ((...args: unknown[]) => {
    queue.push(() => (write as (...a: unknown[]) => boolean).apply(res, args));
    const chunk = args[0];
    held += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.byteLength : 0;
    return held < HOLD_BUFFER;
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    queue.push(() => (end as (...a: unknown[]) => ServerResponse).apply(res, args));
    return res;
  }) as typeof res.end;
  res.flushHeaders = () => {
    queue.push(() => flushHeaders.call(res));
  };
  void gate.then(() => {
    res.write = write;
    res.end = end;
    res.flushHeaders = flushHeaders;
    for (const replay of queue) replay();
    if (held >= HOLD_BUFFER) res.emit('drain');
  });
}

/** Origin-form targets (`/path?query`) are joined to a dummy origin as text, so `//host/x` stays a path; absolute-form
 * targets (`http://host/path`, as proxies send) keep only their path and query. */
export function parseTarget(target: string | undefined): URL | undefined {
  try {
    if (!target || target === '*') return undefined;
    if (target.startsWith('/')) return new URL(`http://registry.invalid${target}`);
    const absolute = new URL(target);
    return absolute.protocol === 'http:' || absolute.protocol === 'https:'
      ? new URL(`http://registry.invalid${absolute.pathname}${absolute.search}`)
      : undefined;
  } catch {
    return undefined;
  }
}

export function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function pathOnly(target: string | undefined): string {
  return (target ?? '').split('?')[0]!;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE: ReplyStyle = { json: 'application/json' };

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendReply(res, { status, body, ...(headers ? { headers } : {}) }, STYLE);
}

/** REG-ERR-BODY: every 4xx/5xx the registry itself produces is {errors: [...]}. */
export function sendErrors(res: ServerResponse, status: number, errors: string[], headers?: Record<string, string>): void {
  sendJson(res, status, { errors }, headers);
}

/** Reads a JSON request body of at most `maxBytes` (413 beyond, 400 when it does not parse). */
export async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const body = await readBody(req, { limit: maxBytes, tooLarge: (limit) => new ApiError(413, `request body larger than ${limit} bytes`) });
  return parseJson(body, { notJson: () => new ApiError(400, 'request body is not valid JSON') });
}
