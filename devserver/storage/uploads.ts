// Uploads at /upload/storage/v2/files (insert) and /upload/storage/v2/files/{fileId} (update) (STO-FILES-INSERT,
// STO-FILES-UPDATE, AMB-24): `uploadType=media`, `multipart` and `resumable` with Drive's protocol — the session
// from POST/PUT with X-Upload-Content-Type/-Length (200 + Location), chunks with `Content-Range: bytes a-b/total`
// (308 + `Range: bytes=0-n`, never a Location), the status query `bytes */total`, 404 for an unknown or expired
// session and 400 for a chunk that is not a multiple of 256 KiB unless it is the last. An update honours `addParents`
// and `removeParents` as files.update does (files.ts's parentMoves), checked before anything changes.
import { rm } from 'node:fs/promises';
import { commitContent, receive } from './content.js';
import { checkIfMatch, type Ctx, type Handler } from './context.js';
import { parentMoves } from './files.js';
import { badRequest, readJson, StorageFailure, type Reply } from './http.js';
import { boundaryOf, readMultipart } from './multipart.js';
import { fileJson } from './represent.js';
import { FOLDER_MIME, newId, type FileRecord, type SessionRecord } from './store.js';

export const CHUNK_GRANULARITY = 256 * 1024;

/** Every request under /upload/storage/v2/files[/{fileId}]. */
export const upload: Handler = async (ctx) => {
  const uploadId = ctx.query.get('upload_id');
  if (uploadId !== null) return ctx.resumable.run(ctx, uploadId);
  const type = ctx.query.get('uploadType');
  const fileId = ctx.params.fileId;
  if (fileId === undefined && ctx.method !== 'POST') throw new StorageFailure(405, 'methodNotAllowed', 'Method Not Allowed', undefined, 'other');
  if (fileId !== undefined && ctx.method !== 'PUT') throw new StorageFailure(405, 'methodNotAllowed', 'Method Not Allowed', undefined, 'other');
  const existing = fileId !== undefined ? ctx.model.file(fileId) : undefined;
  if (existing) {
    checkIfMatch(ctx, existing);
    if (existing.mimeType === FOLDER_MIME) throw badRequest('A folder has no content to upload', 'fileId');
    // addParents is checked before a byte is read (and again when the content is committed): a bad id changes nothing.
    parentMoves(ctx.model, existing, ctx.query);
  }
  switch (type) {
    case 'media':
    case 'multipart':
      return simple(ctx, type, existing);
    case 'resumable':
      return startSession(ctx, existing);
    case null:
      throw new StorageFailure(400, 'required', 'Required parameter: uploadType', 'uploadType');
    default:
      throw badRequest(`Invalid value '${type}'. Values must match the following regular expression: '(media|multipart|resumable)'`, 'uploadType');
  }
};

async function simple(ctx: Ctx, type: 'media' | 'multipart', existing: FileRecord | undefined): Promise<Reply> {
  const temp = ctx.model.store.uploadPath(`simple-${newId(16)}`);
  try {
    const contentType = ctx.req.headers['content-type'] ?? 'application/octet-stream';
    let metadata: Record<string, unknown> = {};
    let mediaType = contentType.split(';')[0]!.trim();
    if (type === 'multipart') {
      const parsed = await readMultipart(ctx.req, boundaryOf(contentType), temp);
      metadata = parsed.metadata;
      mediaType = parsed.mediaType?.split(';')[0]!.trim() ?? 'application/octet-stream';
    } else {
      const got = await receive(ctx.req, ctx.req, temp, { cutAfter: ctx.faults.cut('upload') });
      if (!got.complete) throw new StorageFailure(400, 'badContent', 'The request body ended early', undefined, 'other');
    }
    const file = finishTarget(ctx, existing, metadata, mediaType, ctx.query);
    await commitContent(ctx.model, file, temp, typeof metadata.mimeType === 'string' ? metadata.mimeType : mediaType);
    return { status: 200, body: fileJson(ctx.model, file, ctx.origin) };
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * The file an upload ends in: a new one from the metadata, or the existing one with the metadata applied and moved by
 * the update's `addParents`/`removeParents` (in `query`: the request's, or a resumable session's first request's) —
 * checked again here, before anything changes, since a folder may have gone while the bytes came.
 */
export function finishTarget(
  ctx: Ctx,
  existing: FileRecord | undefined,
  metadata: Record<string, unknown>,
  mediaType: string,
  query: URLSearchParams,
): FileRecord {
  if (existing) {
    const moveParents = parentMoves(ctx.model, existing, query);
    ctx.model.applyMetadata(existing, metadata);
    moveParents();
    return existing;
  }
  const file = ctx.model.create(metadata, { mimeType: mediaType }, typeof metadata.id === 'string' ? metadata.id : undefined);
  ctx.model.data.files[file.id] = file;
  return file;
}

async function startSession(ctx: Ctx, existing: FileRecord | undefined): Promise<Reply> {
  const metadata = await readJson(ctx.req);
  const lengthHeader = ctx.req.headers['x-upload-content-length'];
  let total: number | undefined;
  if (lengthHeader !== undefined) {
    if (typeof lengthHeader !== 'string' || !/^\d{1,15}$/.test(lengthHeader)) throw badRequest('Invalid X-Upload-Content-Length', 'X-Upload-Content-Length');
    total = Number(lengthHeader);
  }
  const headerType = ctx.req.headers['x-upload-content-type'];
  const contentType =
    typeof headerType === 'string' && headerType.trim() !== ''
      ? headerType.trim()
      : typeof metadata.mimeType === 'string'
        ? metadata.mimeType
        : (existing?.mimeType ?? 'application/octet-stream');
  if (!existing) {
    // Checked now (bad parents, bad fields, a taken id), so the session cannot fail at its last chunk for its metadata.
    ctx.model.create(metadata, { mimeType: contentType }, typeof metadata.id === 'string' ? metadata.id : undefined);
  }
  const now = Date.now();
  const session: SessionRecord = {
    id: newId(48).slice(1),
    ...(existing ? { fileId: existing.id } : {}),
    metadata,
    contentType,
    ...(total !== undefined ? { total } : {}),
    received: 0,
    createdAt: now,
    expiresAt: now + ctx.sessionTtlMs,
    query: Object.fromEntries([...ctx.query].filter(([k]) => k !== 'uploadType')),
  };
  ctx.model.data.sessions[session.id] = session;
  ctx.stats.sessions[session.id] = { bytesReceived: 0, requests: 0, completed: false };
  const where = existing ? `/upload/storage/v2/files/${existing.id}` : '/upload/storage/v2/files';
  const location = `${ctx.origin}${where}?uploadType=resumable&upload_id=${session.id}`;
  return { status: 200, headers: { location, 'x-guploader-uploadid': session.id } };
}
