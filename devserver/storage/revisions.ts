// revisions.* (STO-REVISIONS-*): one revision per content update; `alt=media` downloads a revision; deleting the
// head makes the previous one the head; the only remaining revision cannot be deleted.
import { sendContent } from './content.js';
import { fileListReply, type Ctx, type Handler } from './context.js';
import { notFound, readJson, badRequest, StorageFailure } from './http.js';
import { revisionJson } from './represent.js';
import type { FileRecord, RevisionRecord } from './store.js';

function find(ctx: Ctx): { file: FileRecord; revisions: RevisionRecord[]; revision: RevisionRecord } {
  const file = ctx.model.file(ctx.params.fileId!);
  const revisions = ctx.model.data.revisions[file.id] ?? [];
  const id = ctx.params.revisionId === 'head' ? file.headRevisionId : ctx.params.revisionId;
  const revision = revisions.find((r) => r.id === id);
  if (!revision) throw notFound(ctx.params.revisionId!, 'Revision', 'revisionId');
  return { file, revisions, revision };
}

export const list: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const items = (ctx.model.data.revisions[file.id] ?? []).map((r) => revisionJson(ctx.model, file, r, ctx.origin));
  return fileListReply(ctx, file, 'revisionList', 'revisions', items);
};

export const get: Handler = async (ctx) => {
  const { file, revision } = find(ctx);
  const alt = ctx.query.get('alt') ?? 'json';
  if (alt === 'media') {
    await sendContent(ctx.req, ctx.res, ctx.model, file, revision.id, ctx.faults.cut('download'));
    return undefined;
  }
  if (alt !== 'json') throw badRequest(`Invalid value '${alt}'`, 'alt');
  return { status: 200, body: revisionJson(ctx.model, file, revision, ctx.origin) };
};

export const patch: Handler = async (ctx) => {
  const { file, revision } = find(ctx);
  const body = await readJson(ctx.req);
  if (body.pinned !== undefined) {
    if (typeof body.pinned !== 'boolean') throw badRequest('Invalid value for pinned', 'pinned');
    revision.pinned = body.pinned;
  }
  return { status: 200, body: revisionJson(ctx.model, file, revision, ctx.origin) };
};

export const remove: Handler = async (ctx) => {
  const { file, revisions, revision } = find(ctx);
  if (revisions.length === 1) throw new StorageFailure(400, 'cannotDeleteOnlyRevision', 'The only revision of a file cannot be deleted', 'revisionId');
  revisions.splice(revisions.indexOf(revision), 1);
  await ctx.model.store.removeContent(revision.id);
  if (file.headRevisionId === revision.id) {
    const head = revisions[revisions.length - 1]!;
    file.headRevisionId = head.id;
    file.md5Checksum = head.md5Checksum;
    file.fileSize = head.fileSize;
    file.mimeType = head.mimeType;
  }
  ctx.model.changed(file);
  return { status: 204 };
};
