// properties.* (STO-PROPERTIES-*): custom key/value properties of a file, keyed by key and visibility (`visibility`
// query parameter, default `private`, as Drive v2).
import { fileListReply, type Ctx, type Handler } from './context.js';
import { badRequest, notFound, readJson } from './http.js';
import type { FileRecord } from './store.js';

type Visibility = 'PUBLIC' | 'PRIVATE';
type Property = FileRecord['properties'][number];
const MAX_BYTES = 124;

function visibilityOf(value: unknown, fallback: Visibility): Visibility {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !['public', 'private'].includes(value.toLowerCase()))
    throw badRequest(`Invalid value '${String(value)}'. Values must be PUBLIC or PRIVATE`, 'visibility');
  return value.toUpperCase() as Visibility;
}

function json(ctx: Ctx, file: FileRecord, p: Property) {
  return {
    kind: 'storage#property',
    etag: ctx.model.etag(file),
    selfLink: `${ctx.origin}/storage/v2/files/${file.id}/properties/${encodeURIComponent(p.key)}?visibility=${p.visibility.toLowerCase()}`,
    key: p.key,
    value: p.value,
    visibility: p.visibility,
  };
}

function checkPair(key: unknown, value: unknown): { key: string; value: string } {
  if (typeof key !== 'string' || !/^[A-Za-z0-9.!@$%^&*()\-_/]{1,124}$/.test(key))
    throw badRequest('A property key is 1-124 characters of letters, digits and .!@$%^&*()-_/', 'key', key === undefined ? 'required' : 'invalid');
  if (typeof value !== 'string') throw badRequest('A property value is a string', 'value', value === undefined ? 'required' : 'invalid');
  if (Buffer.byteLength(key) + Buffer.byteLength(value) > MAX_BYTES)
    throw badRequest(`A property's key and value together are at most ${MAX_BYTES} bytes`, 'value');
  return { key, value };
}

function find(ctx: Ctx): { file: FileRecord; property: Property } {
  const file = ctx.model.file(ctx.params.fileId!);
  const visibility = visibilityOf(ctx.query.get('visibility'), 'PRIVATE');
  const property = file.properties.find((p) => p.key === ctx.params.propertyKey && p.visibility === visibility);
  if (!property) throw notFound(ctx.params.propertyKey!, 'Property', 'propertyKey');
  return { file, property };
}

export const list: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const items = file.properties.map((p) => json(ctx, file, p));
  return fileListReply(ctx, file, 'propertyList', 'properties', items);
};

export const get: Handler = async (ctx) => {
  const { file, property } = find(ctx);
  return { status: 200, body: json(ctx, file, property) };
};

/** Adds the property, or updates it when one with the same key and visibility exists. */
export const insert: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const body = await readJson(ctx.req);
  const { key, value } = checkPair(body.key, body.value);
  const visibility = visibilityOf(body.visibility, 'PRIVATE');
  const existing = file.properties.find((p) => p.key === key && p.visibility === visibility);
  const property = existing ?? { key, value, visibility };
  property.value = value;
  if (!existing) file.properties.push(property);
  ctx.model.changed(file, false);
  return { status: 200, body: json(ctx, file, property) };
};

export const patch: Handler = async (ctx) => {
  const { file, property } = find(ctx);
  const body = await readJson(ctx.req);
  if (body.value !== undefined) property.value = checkPair(property.key, body.value).value;
  if (body.visibility !== undefined) {
    const visibility = visibilityOf(body.visibility, property.visibility);
    if (visibility !== property.visibility && file.properties.some((p) => p.key === property.key && p.visibility === visibility))
      throw badRequest('A property with this key and visibility exists', 'visibility');
    property.visibility = visibility;
  }
  ctx.model.changed(file, false);
  return { status: 200, body: json(ctx, file, property) };
};

export const remove: Handler = async (ctx) => {
  const { file, property } = find(ctx);
  file.properties.splice(file.properties.indexOf(property), 1);
  ctx.model.changed(file, false);
  return { status: 204 };
};
