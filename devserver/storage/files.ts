// files.*: insert (metadata), get (metadata or `alt=media`), list, patch, update, copy, delete, trash, untrash,
// emptyTrash, touch, generateIds, generateCseToken (STO-FILES-*).
import { copyFile } from 'node:fs/promises';
import { commitContent, sendContent } from './content.js';
import { checkIfMatch, pageOffset, pageToken, queryBool, queryInt, type Ctx, type Handler } from './context.js';
import { badRequest, readJson, StorageFailure } from './http.js';
import type { Model } from './model.js';
import { orderBy, parseQuery } from './query.js';
import { fileJson } from './represent.js';
import { FOLDER_MIME, newId, type FileRecord } from './store.js';

const json = (ctx: Ctx, status: number, body: unknown) => ({ status, body });

export const insert: Handler = async (ctx) => {
  const body = await readJson(ctx.req);
  const file = ctx.model.create(body, { mimeType: 'application/octet-stream' }, typeof body.id === 'string' ? body.id : undefined);
  ctx.model.data.files[file.id] = file;
  ctx.model.logChange(file.id, false);
  return json(ctx, 200, fileJson(ctx.model, file, ctx.origin));
};

export const get: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  if (queryBool(ctx, 'updateViewedDate')) {
    file.lastViewedByMeDate = ctx.model.now();
    ctx.model.changed(file, false);
  }
  const alt = ctx.query.get('alt') ?? 'json';
  if (alt === 'media') {
    if (file.mimeType === FOLDER_MIME) throw new StorageFailure(403, 'fileNotDownloadable', 'Only files with binary content can be downloaded', 'alt');
    const revision = ctx.query.get('revisionId') ?? file.headRevisionId;
    if (revision !== undefined && !(ctx.model.data.revisions[file.id] ?? []).some((r) => r.id === revision))
      throw new StorageFailure(404, 'notFound', `Revision not found: ${revision}`, 'revisionId');
    await sendContent(ctx.req, ctx.res, ctx.model, file, revision, ctx.faults.cut('download'));
    return undefined;
  }
  if (alt !== 'json') throw badRequest(`Invalid value '${alt}'. Values must match the following regular expression: '(json|media)'`, 'alt');
  // Conditional GET with the etag (googleapis' client counts 304 as a success for exactly this).
  const etag = ctx.model.etag(file);
  const noneMatch = ctx.req.headers['if-none-match'];
  if (noneMatch !== undefined && noneMatch.split(',').some((t) => t.trim() === '*' || t.trim() === etag)) return { status: 304, headers: { etag } };
  return { status: 200, body: fileJson(ctx.model, file, ctx.origin), headers: { etag } };
};

export const list: Handler = async (ctx) => {
  const max = queryInt(ctx, 'maxResults', 100, 0, 1000);
  const offset = pageOffset(ctx);
  const predicate = parseQuery(ctx.query.get('q'), (id) => ctx.model.resolveId(id));
  const all = Object.values(ctx.model.data.files)
    .filter((f) => f.id !== ctx.model.data.rootId && predicate(f, f.labels.trashed))
    .sort(orderBy(ctx.query.get('orderBy')));
  const page = ctx.faults.emptyPage() ? [] : all.slice(offset, offset + (max === 0 ? 100 : max));
  const next = offset + page.length < all.length ? pageToken(offset + page.length) : undefined;
  const self = `${ctx.origin}/storage/v2/files`;
  const nextLink = next ? `${self}?${new URLSearchParams([...[...ctx.query].filter(([k]) => k !== 'pageToken'), ['pageToken', next]])}` : undefined;
  return json(ctx, 200, {
    kind: 'storage#fileList',
    etag: `"${ctx.model.data.largestChangeId}"`,
    selfLink: self,
    incompleteSearch: false,
    ...(next ? { nextPageToken: next, nextLink } : {}),
    items: page.map((f) => fileJson(ctx.model, f, ctx.origin)),
  });
};

/**
 * An update's `addParents` and `removeParents` (comma-separated ids; files.patch, files.update and a content update at
 * /upload/storage/v2/files/{fileId}): each added id is checked now by Model.parentFor — it exists and is a folder,
 * neither the file itself nor below it, else the request fails naming `addParents` — so call this before anything
 * changes; the function returned moves the file (after the body's own `parents`, as Drive applies them).
 */
export function parentMoves(model: Model, file: FileRecord, query: URLSearchParams): () => void {
  const ids = (name: string) => (query.get(name) ?? '').split(',').filter(Boolean);
  const added = ids('addParents').map((id) => model.parentFor(file, id, 'addParents').id);
  const removed = new Set(ids('removeParents').map((id) => model.resolveId(id)));
  return () => {
    if (added.length > 0 || removed.size > 0) file.parents = [...new Set([...file.parents.filter((p) => !removed.has(p)), ...added])];
  };
}

/** patch and update without content: the body's writable fields applied; addParents/removeParents honoured. */
export const patch: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  checkIfMatch(ctx, file);
  const body = await readJson(ctx.req);
  // addParents is checked before the body changes anything: each a folder, neither the file itself nor below it.
  const moveParents = parentMoves(ctx.model, file, ctx.query);
  ctx.model.applyMetadata(file, body);
  moveParents();
  const labels = body.labels as { trashed?: unknown } | undefined;
  if (labels && typeof labels.trashed === 'boolean' && labels.trashed !== file.explicitlyTrashed) {
    if (labels.trashed) ctx.model.trash(file);
    else ctx.model.untrash(file);
  }
  const touch = queryBool(ctx, 'setModifiedDate') && typeof body.modifiedDate === 'string' ? body.modifiedDate : undefined;
  ctx.model.changed(file, queryBool(ctx, 'updateModifiedDate', true) || touch === undefined);
  if (touch !== undefined) {
    if (Number.isNaN(Date.parse(touch))) throw badRequest('Invalid value for modifiedDate', 'modifiedDate');
    file.modifiedDate = new Date(touch).toISOString();
  }
  return json(ctx, 200, fileJson(ctx.model, file, ctx.origin));
};

export const copy: Handler = async (ctx) => {
  const source = ctx.model.file(ctx.params.fileId!);
  if (source.mimeType === FOLDER_MIME) throw new StorageFailure(403, 'cannotCopyFile', 'Folders cannot be copied', 'fileId');
  const body = await readJson(ctx.req);
  const file = ctx.model.create(
    { parents: source.parents.map((id) => ({ id })), description: source.description, ...body },
    { mimeType: source.mimeType, title: `Copy of ${source.title}` },
    typeof body.id === 'string' ? body.id : undefined,
  );
  file.properties = [...source.properties, ...file.properties.filter((p) => !source.properties.some((q) => q.key === p.key && q.visibility === p.visibility))];
  if (source.headRevisionId) {
    const temp = ctx.model.store.uploadPath(`copy-${newId(12)}`);
    await copyFile(ctx.model.store.contentPath(source.headRevisionId), temp);
    ctx.model.data.files[file.id] = file;
    await commitContent(ctx.model, file, temp, file.mimeType);
  } else {
    ctx.model.data.files[file.id] = file;
    ctx.model.logChange(file.id, false);
  }
  return json(ctx, 200, fileJson(ctx.model, file, ctx.origin));
};

/** files.delete, trash, untrash and touch: the file named by the path, its If-Match checked, then `act`; the answer is the file, or 204 for a delete. */
function onFile(act: (model: Model, file: FileRecord) => Promise<void> | void, answer: 'file' | 'no content' = 'file'): Handler {
  return async (ctx) => {
    const file = ctx.model.file(ctx.params.fileId!);
    checkIfMatch(ctx, file);
    await act(ctx.model, file);
    return answer === 'no content' ? { status: 204 } : json(ctx, 200, fileJson(ctx.model, file, ctx.origin));
  };
}

export const remove = onFile(async (model, file) => {
  for (const blob of model.remove(file)) await model.store.removeContent(blob);
}, 'no content');
export const trash = onFile((model, file) => model.trash(file));
export const untrash = onFile((model, file) => model.untrash(file));

export const emptyTrash: Handler = async (ctx) => {
  for (const file of Object.values(ctx.model.data.files)) {
    if (!file.explicitlyTrashed || !ctx.model.data.files[file.id]) continue;
    for (const blob of ctx.model.remove(file)) await ctx.model.store.removeContent(blob);
  }
  return { status: 204 };
};

export const touch = onFile((model, file) => model.changed(file));

export const generateIds: Handler = async (ctx) => {
  const count = queryInt(ctx, 'maxResults', 10, 1, 1000);
  const space = ctx.query.get('space') ?? 'drive';
  if (space !== 'drive' && space !== 'appDataFolder') throw badRequest(`Invalid value '${space}'`, 'space');
  return json(ctx, 200, { kind: 'storage#generatedIds', space, ids: Array.from({ length: count }, () => newId()) });
};

export const generateCseToken: Handler = async (ctx) => {
  const fileId = ctx.query.get('fileId') ?? newId();
  if (ctx.query.get('fileId') !== null) ctx.model.file(fileId);
  const jwt =
    [
      { alg: 'none', typ: 'JWT' },
      { fileId, aud: 'kacls', iat: Math.floor(Date.now() / 1000) },
    ]
      .map((p) => Buffer.from(JSON.stringify(p)).toString('base64url'))
      .join('.') + '.';
  return json(ctx, 200, { kind: 'storage#generateCseTokenResponse', fileId, jwt, currentKaclsId: 'kacls-dev', currentKaclsName: 'Gantry dev KACLS' });
};
