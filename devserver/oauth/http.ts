// The authorization server's side of the kit: bodies in, JSON and HTML out, in its style (never cached, chunked).
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpFailure, parseForm, parseJson, readBody, sendReply, sendText, type Reply as KitReply, type ReplyStyle } from '../kit/index.js';

export interface Reply extends KitReply {
  /** Sent as text/html when set. */
  html?: string;
}

/** A body the server cannot read; answered as `invalid_request` (at /token in the dialect's own way). */
export class BadBody extends HttpFailure {}

const MAX_BODY = 256 * 1024;

const STYLE: ReplyStyle = { json: 'application/json; charset=utf-8', headers: { 'cache-control': 'no-store', pragma: 'no-cache' }, length: false };
const PAGE_HEADERS = { 'x-frame-options': 'DENY', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'" };

export async function readRaw(req: IncomingMessage, max = MAX_BODY): Promise<string> {
  return (await readBody(req, { limit: max, tooLarge: () => new BadBody(413, 'request body too large') })).toString('utf8');
}

/** A form body (application/x-www-form-urlencoded); an empty body is an empty form. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return parseForm(await readRaw(req), req, () => new BadBody(400, 'the body must be application/x-www-form-urlencoded'));
}

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return parseJson(await readRaw(req), {
    empty: 'blank',
    notJson: () => new BadBody(400, 'the body is not JSON'),
    notObject: () => new BadBody(400, 'the body must be a JSON object'),
  }) as Record<string, unknown>;
}

export function send(res: ServerResponse, reply: Reply): void {
  if (reply.html === undefined) return sendReply(res, reply, STYLE);
  sendText(res, reply.status, reply.html, 'text/html; charset=utf-8', { ...PAGE_HEADERS, ...STYLE.headers, ...(reply.headers ?? {}) }, STYLE);
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
