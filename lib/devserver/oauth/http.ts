// Small node:http helpers of the authorization server: bodies in, JSON and HTML out.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Reply {
  status: number;
  body?: unknown;
  /** Sent as text/html when set. */
  html?: string;
  headers?: Record<string, string>;
}

export class BadBody extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const MAX_BODY = 256 * 1024;

export async function readRaw(req: IncomingMessage, max = MAX_BODY): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new BadBody(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A form body (application/x-www-form-urlencoded); an empty body is an empty form. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const text = await readRaw(req);
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (text.length > 0 && type !== 'application/x-www-form-urlencoded') throw new BadBody(400, 'the body must be application/x-www-form-urlencoded');
  return new URLSearchParams(text);
}

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readRaw(req);
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadBody(400, 'the body is not JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new BadBody(400, 'the body must be a JSON object');
  return value as Record<string, unknown>;
}

export function send(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = { 'cache-control': 'no-store', pragma: 'no-cache', ...(reply.headers ?? {}) };
  if (reply.html !== undefined) {
    res.writeHead(reply.status, { 'content-type': 'text/html; charset=utf-8', 'x-frame-options': 'DENY', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'", ...headers });
    res.end(reply.html);
    return;
  }
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(reply.body));
}

/** The client credentials of RFC 6749 §2.3.1 HTTP Basic, if the request has them. */
export function basicCredentials(req: IncomingMessage): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const unescape = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return { id: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Whether a presented secret equals the stored one, in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
