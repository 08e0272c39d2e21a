// The chunks and status queries of a resumable upload session (see uploads.ts). A session's requests run one at a
// time; bytes that reached disk before a broken connection are kept and reported by the next status query.
import { rm, stat, writeFile } from 'node:fs/promises';
import { commitContent, receive } from './content.js';
import type { Ctx } from './context.js';
import { badRequest, StorageFailure, type Reply } from './http.js';
import { fileJson } from './represent.js';
import type { SessionRecord } from './store.js';
import { CHUNK_GRANULARITY, finishTarget } from './uploads.js';

const queues = new Map<string, Promise<unknown>>();
/** Sessions that completed: their status query answers the file (until the session would have expired). */
const completed = new Map<string, { fileId: string; expiresAt: number }>();

export function expireSession(ctx: Pick<Ctx, 'model'>, id: string): boolean {
  const had = ctx.model.data.sessions[id] !== undefined || completed.has(id);
  const session = ctx.model.data.sessions[id];
  if (session) session.expiresAt = 0;
  completed.delete(id);
  return had;
}

export function resumableChunk(ctx: Ctx, id: string): Promise<Reply | undefined> {
  const previous = queues.get(id) ?? Promise.resolve();
  const next = previous.catch(() => {}).then(() => chunk(ctx, id));
  queues.set(id, next);
  void next.finally(() => {
    if (queues.get(id) === next) queues.delete(id);
  }).catch(() => {});
  return next;
}

type Range = { kind: 'status'; total?: number } | { kind: 'chunk'; start: number; end: number; total?: number };

function parseContentRange(header: string | undefined, length: number | undefined): Range {
  if (header === undefined) {
    if (length === undefined || length === 0) return { kind: 'status' };
    return { kind: 'chunk', start: 0, end: length - 1, total: length };
  }
  const m = /^bytes (?:\*|(\d{1,15})-(\d{1,15}))\/(\*|\d{1,15})$/.exec(header.trim());
  if (!m) throw badRequest('Invalid Content-Range', 'Content-Range');
  const total = m[3] === '*' ? undefined : Number(m[3]);
  if (m[1] === undefined) return { kind: 'status', ...(total !== undefined ? { total } : {}) };
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (end < start || (total !== undefined && end >= total)) throw badRequest('Invalid Content-Range', 'Content-Range');
  if (length !== undefined && length !== end - start + 1) throw badRequest('Content-Length does not match Content-Range', 'Content-Range');
  return { kind: 'chunk', start, end, ...(total !== undefined ? { total } : {}) };
}

async function chunk(ctx: Ctx, id: string): Promise<Reply | undefined> {
  const done = completed.get(id);
  const session = ctx.model.data.sessions[id];
  if (done && done.expiresAt > Date.now() && ctx.model.data.files[done.fileId]) {
    ctx.req.resume();
    return { status: 200, body: fileJson(ctx.model, ctx.model.data.files[done.fileId]!, ctx.origin) };
  }
  if (!session || session.expiresAt <= Date.now()) {
    if (session) await forget(ctx, session);
    throw new StorageFailure(404, 'notFound', 'Upload session not found or expired; start a new one', 'upload_id', 'parameter', { connection: 'close' });
  }
  if (ctx.method !== 'PUT' && ctx.method !== 'POST') throw new StorageFailure(405, 'methodNotAllowed', 'Method Not Allowed', undefined, 'other');
  const stats = (ctx.stats.sessions[id] ??= { bytesReceived: 0, requests: 0, completed: false });
  stats.requests++;
  const lengthHeader = ctx.req.headers['content-length'];
  const length = lengthHeader !== undefined && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  const range = parseContentRange(ctx.req.headers['content-range'], length);
  if (range.total !== undefined) {
    if (session.total !== undefined && session.total !== range.total) throw badRequest(`Content-Range total ${range.total} does not match the upload's ${session.total} bytes`, 'Content-Range');
    if (range.total < session.received) throw badRequest('Content-Range total is below the bytes already received', 'Content-Range');
    session.total = range.total;
  }
  if (range.kind === 'status') {
    ctx.req.resume();
    if (session.total !== undefined && session.received === session.total) return finish(ctx, session);
    return incomplete(session);
  }
  const size = range.end - range.start + 1;
  const last = range.total !== undefined && range.end + 1 === range.total;
  if (!last && size % CHUNK_GRANULARITY !== 0) {
    throw new StorageFailure(400, 'badContent', `Invalid request. The number of bytes uploaded is required to be a multiple of ${CHUNK_GRANULARITY} bytes except for the final request. The received request contained ${size} bytes.`, 'Content-Range', 'header', { connection: 'close' });
  }
  if (range.start > session.received) {
    throw new StorageFailure(400, 'badContent', `The chunk starts at byte ${range.start} but only ${session.received} bytes were received; query the upload's status`, 'Content-Range', 'header', { connection: 'close' });
  }
  ctx.req.on('data', (c: Buffer) => (stats.bytesReceived += c.length));
  const skip = session.received - range.start;
  const got = await receive(ctx.req, ctx.req, ctx.model.store.uploadPath(id), { flags: 'a', skip, limit: Math.max(0, size - skip), cutAfter: ctx.faults.cut('upload') });
  session.received += got.bytes;
  await ctx.model.store.save();
  if (!got.complete) return undefined;
  if (got.bytes < size - skip && skip < size) throw badRequest('The request body is shorter than its Content-Range', 'Content-Range');
  if (session.total !== undefined && session.received === session.total) return finish(ctx, session);
  return incomplete(session);
}

function incomplete(session: SessionRecord): Reply {
  return { status: 308, headers: session.received > 0 ? { range: `bytes=0-${session.received - 1}` } : {} };
}

async function finish(ctx: Ctx, session: SessionRecord): Promise<Reply> {
  const existing = session.fileId !== undefined ? ctx.model.data.files[session.fileId] : undefined;
  if (session.fileId !== undefined && !existing) throw new StorageFailure(404, 'notFound', `File not found: ${session.fileId}`, 'fileId');
  const path = ctx.model.store.uploadPath(session.id);
  if (session.total === 0) await writeFile(path, '', { flag: 'a' });
  else await stat(path);
  const file = finishTarget(ctx, existing, session.metadata, session.contentType);
  await commitContent(ctx.model, file, path, typeof session.metadata.mimeType === 'string' ? session.metadata.mimeType : session.contentType);
  delete ctx.model.data.sessions[session.id];
  completed.set(session.id, { fileId: file.id, expiresAt: session.expiresAt });
  const stats = ctx.stats.sessions[session.id];
  if (stats) stats.completed = true;
  return { status: 200, body: fileJson(ctx.model, file, ctx.origin) };
}

async function forget(ctx: Ctx, session: SessionRecord): Promise<void> {
  delete ctx.model.data.sessions[session.id];
  await rm(ctx.model.store.uploadPath(session.id), { force: true });
}
