// comments.* and replies.* (STO-COMMENTS-*, STO-REPLIES-*): comments on a file with their replies; a deleted comment
// or reply stays as a tombstone (`deleted: true`, no content) listed only with `includeDeleted=true`, as Drive does;
// a reply with verb `resolve`/`reopen` sets the comment's status.
import { randomBytes } from 'node:crypto';
import { pageOffset, pageToken, queryBool, queryInt, type Ctx, type Handler } from './context.js';
import { badRequest, notFound, readJson } from './http.js';
import { OWNER } from './represent.js';
import type { CommentRecord, FileRecord, ReplyRecord } from './store.js';

const AUTHOR = {
  kind: 'storage#user',
  displayName: OWNER.displayName,
  isAuthenticatedUser: true,
  permissionId: OWNER.permissionId,
  emailAddress: OWNER.emailAddress,
};
const newCommentId = () => `AAAA${randomBytes(12).toString('base64url')}`;
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function replyJson(ctx: Ctx, file: FileRecord, comment: CommentRecord, r: ReplyRecord) {
  return {
    kind: 'storage#commentReply',
    replyId: r.replyId,
    createdDate: r.createdDate,
    modifiedDate: r.modifiedDate,
    author: AUTHOR,
    deleted: r.deleted,
    ...(r.deleted ? {} : { content: r.content, htmlContent: escapeHtml(r.content) }),
    ...(r.verb ? { verb: r.verb } : {}),
  };
}

function commentJson(ctx: Ctx, file: FileRecord, c: CommentRecord, includeDeleted: boolean) {
  return {
    kind: 'storage#comment',
    commentId: c.commentId,
    selfLink: `${ctx.origin}/storage/v2/files/${file.id}/comments/${c.commentId}`,
    fileId: file.id,
    fileTitle: file.title,
    createdDate: c.createdDate,
    modifiedDate: c.modifiedDate,
    author: AUTHOR,
    status: c.status,
    deleted: c.deleted,
    ...(c.deleted ? {} : { content: c.content, htmlContent: escapeHtml(c.content) }),
    ...(c.anchor ? { anchor: c.anchor } : {}),
    ...(c.context ? { context: c.context } : {}),
    replies: c.replies.filter((r) => includeDeleted || !r.deleted).map((r) => replyJson(ctx, file, c, r)),
  };
}

function content(body: Record<string, unknown>, required: boolean): string | undefined {
  if (body.content === undefined && !required) return undefined;
  if (typeof body.content !== 'string' || body.content.trim() === '') throw badRequest('Required: content', 'content', 'required');
  return body.content;
}

function findComment(ctx: Ctx): { file: FileRecord; comment: CommentRecord } {
  const file = ctx.model.file(ctx.params.fileId!);
  const comment = (ctx.model.data.comments[file.id] ?? []).find((c) => c.commentId === ctx.params.commentId);
  if (!comment) throw notFound(ctx.params.commentId!, 'Comment', 'commentId');
  return { file, comment };
}

function findReply(ctx: Ctx): { file: FileRecord; comment: CommentRecord; reply: ReplyRecord } {
  const { file, comment } = findComment(ctx);
  const reply = comment.replies.find((r) => r.replyId === ctx.params.replyId);
  if (!reply) throw notFound(ctx.params.replyId!, 'Reply', 'replyId');
  return { file, comment, reply };
}

/** A comment or a reply named by the path: the record, how it renders, its 404. */
interface Target {
  file: FileRecord;
  item: CommentRecord | ReplyRecord;
  /** A comment lists its replies, deleted ones too when `includeDeleted()` (asked only then: a reply never reads it). */
  render(includeDeleted: () => boolean): unknown;
  missing(): Error;
}

function commentTarget(ctx: Ctx): Target {
  const { file, comment } = findComment(ctx);
  return {
    file,
    item: comment,
    render: (includeDeleted) => commentJson(ctx, file, comment, includeDeleted()),
    missing: () => notFound(comment.commentId, 'Comment', 'commentId'),
  };
}

function replyTarget(ctx: Ctx): Target {
  const { file, comment, reply } = findReply(ctx);
  return { file, item: reply, render: () => replyJson(ctx, file, comment, reply), missing: () => notFound(reply.replyId, 'Reply', 'replyId') };
}

/** comments.get and replies.get: a tombstone only with includeDeleted=true. */
function getOf(find: (ctx: Ctx) => Target): Handler {
  return async (ctx) => {
    const { item, render, missing } = find(ctx);
    const includeDeleted = () => queryBool(ctx, 'includeDeleted');
    if (item.deleted && !includeDeleted()) throw missing();
    return { status: 200, body: render(includeDeleted) };
  };
}

/** comments.patch and replies.patch: new content when given; a deleted one is not found. */
function patchOf(find: (ctx: Ctx) => Target): Handler {
  return async (ctx) => {
    const { file, item, render, missing } = find(ctx);
    if (item.deleted) throw missing();
    const text = content(await readJson(ctx.req), false);
    if (text !== undefined) item.content = text;
    item.modifiedDate = ctx.model.now();
    ctx.model.changed(file, false);
    return { status: 200, body: render(() => false) };
  };
}

/** comments.delete and replies.delete: the record stays as a tombstone. */
function removeOf(find: (ctx: Ctx) => Target): Handler {
  return async (ctx) => {
    const { file, item } = find(ctx);
    item.deleted = true;
    item.modifiedDate = ctx.model.now();
    ctx.model.changed(file, false);
    return { status: 204 };
  };
}

function page<T>(ctx: Ctx, items: T[], fallback: number, max: number): { items: T[]; nextPageToken?: string } {
  const size = queryInt(ctx, 'maxResults', fallback, 0, max);
  const offset = pageOffset(ctx);
  const slice = items.slice(offset, offset + (size || fallback));
  return { items: slice, ...(offset + slice.length < items.length ? { nextPageToken: pageToken(offset + slice.length) } : {}) };
}

export const list: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const includeDeleted = queryBool(ctx, 'includeDeleted');
  const updatedMin = ctx.query.get('updatedMin');
  if (updatedMin !== null && Number.isNaN(Date.parse(updatedMin))) throw badRequest('Invalid value for updatedMin', 'updatedMin');
  const all = (ctx.model.data.comments[file.id] ?? []).filter(
    (c) => (includeDeleted || !c.deleted) && (updatedMin === null || Date.parse(c.modifiedDate) >= Date.parse(updatedMin)),
  );
  const p = page(ctx, all, 20, 100);
  return {
    status: 200,
    body: {
      kind: 'storage#commentList',
      selfLink: `${ctx.origin}/storage/v2/files/${file.id}/comments`,
      ...(p.nextPageToken ? { nextPageToken: p.nextPageToken } : {}),
      items: p.items.map((c) => commentJson(ctx, file, c, includeDeleted)),
    },
  };
};

export const insert: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const body = await readJson(ctx.req);
  const at = ctx.model.now();
  const context = body.context as { type?: unknown; value?: unknown } | undefined;
  const comment: CommentRecord = {
    commentId: newCommentId(),
    content: content(body, true)!,
    status: 'open',
    createdDate: at,
    modifiedDate: at,
    deleted: false,
    replies: [],
    ...(typeof body.anchor === 'string' ? { anchor: body.anchor } : {}),
    ...(context && typeof context.type === 'string' && typeof context.value === 'string' ? { context: { type: context.type, value: context.value } } : {}),
  };
  (ctx.model.data.comments[file.id] ??= []).push(comment);
  ctx.model.changed(file, false);
  return { status: 200, body: commentJson(ctx, file, comment, false) };
};

const replyList: Handler = async (ctx) => {
  const { file, comment } = findComment(ctx);
  const includeDeleted = queryBool(ctx, 'includeDeleted');
  const p = page(
    ctx,
    comment.replies.filter((r) => includeDeleted || !r.deleted),
    20,
    100,
  );
  return {
    status: 200,
    body: {
      kind: 'storage#commentReplyList',
      selfLink: `${ctx.origin}/storage/v2/files/${file.id}/comments/${comment.commentId}/replies`,
      ...(p.nextPageToken ? { nextPageToken: p.nextPageToken } : {}),
      items: p.items.map((r) => replyJson(ctx, file, comment, r)),
    },
  };
};

const replyInsert: Handler = async (ctx) => {
  const { file, comment } = findComment(ctx);
  const body = await readJson(ctx.req);
  const verb = body.verb;
  if (verb !== undefined && verb !== 'resolve' && verb !== 'reopen') throw badRequest(`Invalid value for verb: ${String(verb)}`, 'verb');
  const at = ctx.model.now();
  const reply: ReplyRecord = {
    replyId: newCommentId(),
    content: content(body, verb === undefined) ?? '',
    createdDate: at,
    modifiedDate: at,
    deleted: false,
    ...(verb ? { verb } : {}),
  };
  if (verb) comment.status = verb === 'resolve' ? 'resolved' : 'open';
  comment.replies.push(reply);
  comment.modifiedDate = at;
  ctx.model.changed(file, false);
  return { status: 200, body: replyJson(ctx, file, comment, reply) };
};

export const get = getOf(commentTarget);
export const patch = patchOf(commentTarget);
export const remove = removeOf(commentTarget);

/** replies.*: a comment's replies, by verb as routes.ts takes a resource (the module's own list, insert, get … are the comments'). */
export const replies = { list: replyList, insert: replyInsert, get: getOf(replyTarget), patch: patchOf(replyTarget), remove: removeOf(replyTarget) };
