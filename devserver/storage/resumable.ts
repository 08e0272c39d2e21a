// The chunks and status queries of a resumable upload session (see uploads.ts). A session's requests run one at a
// time; bytes that reached disk before a broken connection are kept and reported by the next status query.
import { rm, stat, writeFile } from 'node:fs/promises';
import { commitContent, receive } from './content.js';
import type { IncomingMessage } from 'node:http';
import type { Ctx } from './context.js';
import type { Model } from './model.js';
import { badRequest, StorageFailure, type Reply } from './http.js';
import { fileJson } from './represent.js';
import type { SessionRecord } from './store.js';
import { CHUNK_GRANULARITY, finishTarget } from './uploads.js';

/**
 * Per-server bookkeeping of the sessions' requests: one at a time per session, and the newest wins — a request for a
 * session that still has one in flight (the client gave up on it: a connection the server has not yet seen break)
 * destroys the older one's socket, so a status query never waits on a dead transfer.
 */
export class Resumable {
  private queues = new Map<string, Promise<unknown>>();
  private active = new Map<string, IncomingMessage>();

  run(ctx: Ctx, id: string): Promise<Reply | undefined> {
    const older = this.active.get(id);
    if (older && older !== ctx.req) older.socket.destroy();
    this.active.set(id, ctx.req);
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => (ctx.req.destroyed && ctx.req.socket.destroyed ? undefined : chunk(ctx, id)));
    this.queues.set(id, next);
    void next
      .finally(() => {
        if (this.queues.get(id) === next) this.queues.delete(id);
        if (this.active.get(id) === ctx.req) this.active.delete(id);
      })
      .catch(() => {});
    return next;
  }

  /** Forgets a session (its next request gets 404); false if there was none. */
  async expire(model: Model, id: string): Promise<boolean> {
    const session = model.data.sessions[id];
    if (!session) return false;
    this.active.get(id)?.socket.destroy();
    delete model.data.sessions[id];
    await rm(model.store.uploadPath(id), { force: true });
    await model.store.save();
    return true;
  }
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
  const session = ctx.model.data.sessions[id];
  const done = session?.completedFileId !== undefined ? ctx.model.data.files[session.completedFileId] : undefined;
  if (session && done && session.expiresAt > Date.now()) {
    ctx.req.resume();
    return { status: 200, body: fileJson(ctx.model, done, ctx.origin) };
  }
  if (!session || session.expiresAt <= Date.now() || session.completedFileId !== undefined) {
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
    if (session.total !== undefined && session.total !== range.total)
      throw badRequest(`Content-Range total ${range.total} does not match the upload's ${session.total} bytes`, 'Content-Range');
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
    throw new StorageFailure(
      400,
      'badContent',
      `Invalid request. The number of bytes uploaded is required to be a multiple of ${CHUNK_GRANULARITY} bytes except for the final request. The received request contained ${size} bytes.`,
      'Content-Range',
      'header',
      { connection: 'close' },
    );
  }
  if (range.start > session.received) {
    throw new StorageFailure(
      400,
      'badContent',
      `The chunk starts at byte ${range.start} but only ${session.received} bytes were received; query the upload's status`,
      'Content-Range',
      'header',
      { connection: 'close' },
    );
  }
  ctx.req.on('data', (c: Buffer) => (stats.bytesReceived += c.length));
  const skip = session.received - range.start;
  const got = await receive(ctx.req, ctx.req, ctx.model.store.uploadPath(id), {
    flags: 'a',
    skip,
    limit: Math.max(0, size - skip),
    cutAfter: ctx.faults.cut('upload'),
  });
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
  const file = finishTarget(ctx, existing, session.metadata, session.contentType, new URLSearchParams(session.query));
  await commitContent(ctx.model, file, path, typeof session.metadata.mimeType === 'string' ? session.metadata.mimeType : session.contentType);
  session.completedFileId = file.id;
  const stats = ctx.stats.sessions[session.id];
  if (stats) stats.completed = true;
  return { status: 200, body: fileJson(ctx.model, file, ctx.origin) };
}

async function forget(ctx: Ctx, session: SessionRecord): Promise<void> {
  delete ctx.model.data.sessions[session.id];
  await rm(ctx.model.store.uploadPath(session.id), { force: true });
}
