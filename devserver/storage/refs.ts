// parents.* and children.* (STO-PARENTS-*, STO-CHILDREN-*): the references between files and folders, over the
// same `parents` array files.patch edits.
import { fileListReply, pageOffset, pageToken, queryInt, type Ctx, type Handler } from './context.js';
import { badRequest, notFound, readJson } from './http.js';
import { parseQuery } from './query.js';
import { parentJson } from './represent.js';
import { FOLDER_MIME, type FileRecord } from './store.js';

function childJson(ctx: Ctx, folderId: string, childId: string) {
  return {
    kind: 'storage#childReference',
    id: childId,
    selfLink: `${ctx.origin}/storage/v2/files/${folderId}/children/${childId}`,
    childLink: `${ctx.origin}/storage/v2/files/${childId}`,
  };
}

function folder(ctx: Ctx, id: string): FileRecord {
  const file = ctx.model.file(id, 'folderId');
  if (file.mimeType !== FOLDER_MIME) throw badRequest(`${id} is not a folder`, 'folderId');
  return file;
}

async function bodyId(ctx: Ctx): Promise<string> {
  const body = await readJson(ctx.req);
  if (typeof body.id !== 'string' || body.id === '') throw badRequest('Required', 'id', 'required');
  return body.id;
}

/** Adds `parentId` (checked: a folder, neither the child nor below it) to the child's parents. */
function link(ctx: Ctx, child: FileRecord, parentId: string, location: string): FileRecord {
  const parent = ctx.model.parentFor(child, parentId, location);
  if (!child.parents.includes(parent.id)) {
    child.parents.push(parent.id);
    ctx.model.changed(child, false);
  }
  return parent;
}

function unlink(ctx: Ctx, child: FileRecord, parentId: string, location: string): void {
  const id = ctx.model.resolveId(parentId);
  if (!child.parents.includes(id)) throw notFound(parentId, 'Parent', location);
  child.parents = child.parents.filter((p) => p !== id);
  ctx.model.changed(child, false);
}

const parentsList: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const items = file.parents.map((p) => parentJson(ctx.model, file.id, p, ctx.origin));
  return fileListReply(ctx, file, 'parentList', 'parents', items);
};

const parentsGet: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const id = ctx.model.resolveId(ctx.params.parentId!);
  if (!file.parents.includes(id)) throw notFound(ctx.params.parentId!, 'Parent', 'parentId');
  return { status: 200, body: parentJson(ctx.model, file.id, id, ctx.origin) };
};

const parentsInsert: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const parent = link(ctx, file, await bodyId(ctx), 'id');
  return { status: 200, body: parentJson(ctx.model, file.id, parent.id, ctx.origin) };
};

const parentsDelete: Handler = async (ctx) => {
  unlink(ctx, ctx.model.file(ctx.params.fileId!), ctx.params.parentId!, 'parentId');
  return { status: 204 };
};

const childrenList: Handler = async (ctx) => {
  const parent = folder(ctx, ctx.params.folderId!);
  const max = queryInt(ctx, 'maxResults', 100, 0, 1000);
  const offset = pageOffset(ctx);
  const predicate = parseQuery(ctx.query.get('q'), (id) => ctx.model.resolveId(id));
  const all = ctx.model
    .children(parent.id)
    .filter((f) => predicate(f, f.labels.trashed))
    .sort((a, b) => a.seq - b.seq);
  const page = ctx.faults.emptyPage() ? [] : all.slice(offset, offset + (max === 0 ? 100 : max));
  const next = offset + page.length < all.length ? pageToken(offset + page.length) : undefined;
  const items = page.map((f) => childJson(ctx, parent.id, f.id));
  return fileListReply(ctx, parent, 'childList', 'children', items, next ? { nextPageToken: next } : {});
};

const childrenGet: Handler = async (ctx) => {
  const parent = folder(ctx, ctx.params.folderId!);
  const child = ctx.model.data.files[ctx.params.childId!];
  if (!child || !child.parents.includes(parent.id)) throw notFound(ctx.params.childId!, 'Child', 'childId');
  return { status: 200, body: childJson(ctx, parent.id, child.id) };
};

const childrenInsert: Handler = async (ctx) => {
  const parent = folder(ctx, ctx.params.folderId!);
  const child = ctx.model.file(await bodyId(ctx), 'id');
  link(ctx, child, parent.id, 'folderId');
  return { status: 200, body: childJson(ctx, parent.id, child.id) };
};

const childrenDelete: Handler = async (ctx) => {
  const parent = folder(ctx, ctx.params.folderId!);
  unlink(ctx, ctx.model.file(ctx.params.childId!, 'childId'), parent.id, 'childId');
  return { status: 204 };
};

/** parents.* and children.*, by verb as routes.ts takes a resource. */
export const parents = { list: parentsList, insert: parentsInsert, get: parentsGet, remove: parentsDelete };
export const children = { list: childrenList, insert: childrenInsert, get: childrenGet, remove: childrenDelete };
