// What a route handler gets, and the checks shared by handlers (If-Match, numbers, booleans in the query).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Faults } from './faults.js';
import { badRequest, StorageFailure, type Reply } from './http.js';
import type { Model } from './model.js';
import type { ChannelRecord, FileRecord } from './store.js';

export interface SessionStats {
  bytesReceived: number;
  requests: number;
  completed: boolean;
}

export interface Stats {
  requests: number;
  sessions: Record<string, SessionStats>;
}

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  pathname: string;
  params: Record<string, string>;
  query: URLSearchParams;
  origin: string;
  model: Model;
  faults: Faults;
  stats: Stats;
  sessionTtlMs: number;
  /** The resumable sessions (resumable.ts): what a handler asks of them, so that this file imports neither. */
  resumable: { run(ctx: Ctx, id: string): Promise<Reply | undefined> };
  /** The watch channels (channels.ts). */
  channels: { send(channel: ChannelRecord, state: string): void };
  /** files.export refuses files above this many bytes (403 exportSizeLimitExceeded). */
  exportLimitBytes: number;
}

/** A reply, or undefined when the handler wrote the response itself (a download). */
export type Handler = (ctx: Ctx) => Promise<Reply | undefined>;

/** 412 conditionNotMet when `If-Match` is given and does not match the file's etag (`*` matches any). */
export function checkIfMatch(ctx: Ctx, file: FileRecord): void {
  const header = ctx.req.headers['if-match'];
  if (header === undefined) return;
  const wanted = header.split(',').map((s) => s.trim());
  if (wanted.includes('*') || wanted.includes(ctx.model.etag(file))) return;
  throw new StorageFailure(412, 'conditionNotMet', 'Precondition Failed', 'If-Match', 'header');
}

export function queryBool(ctx: Ctx, name: string, fallback = false): boolean {
  const v = ctx.query.get(name);
  if (v === null) return fallback;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw badRequest(`Invalid value '${v}'. Values must match the following regular expression: '(true|false)'`, name);
}

export function queryInt(ctx: Ctx, name: string, fallback: number, min: number, max: number): number {
  const v = ctx.query.get(name);
  if (v === null) return fallback;
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || n < min || n > max) throw badRequest(`Invalid value '${v}'. Values must be within the range: [${min}, ${max}]`, name);
  return n;
}

/** Opaque page tokens: the offset into the listing, base64url-encoded with a marker. */
export function pageOffset(ctx: Ctx): number {
  const token = ctx.query.get('pageToken');
  if (token === null || token === '') return 0;
  const m = /^p(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  if (!m) throw badRequest('Invalid Value', 'pageToken');
  return Number(m[1]);
}

export const pageToken = (offset: number) => Buffer.from(`p${offset}`).toString('base64url');

/**
 * A 200 with a list under a file (its parents, children, permissions, properties, revisions): `storage#<kind>`, the
 * file's ETag, the list's own link, then `extra` (a next page token) and the items.
 */
export function fileListReply(ctx: Ctx, file: FileRecord, kind: string, collection: string, items: unknown[], extra: Record<string, unknown> = {}): Reply {
  return {
    status: 200,
    body: { kind: `storage#${kind}`, etag: ctx.model.etag(file), selfLink: `${ctx.origin}/storage/v2/files/${file.id}/${collection}`, ...extra, items },
  };
}
