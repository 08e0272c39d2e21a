// permissions.* (STO-PERMISSIONS-*): the owner's permission on every file plus the ones inserted; a user's or
// group's permission id derives from its e-mail address, so permissions.getIdForEmail answers it without a file.
import { createHash } from 'node:crypto';
import { checkIfMatch, fileListReply, type Ctx, type Handler } from './context.js';
import { badRequest, notFound, readJson, StorageFailure } from './http.js';
import { OWNER } from './represent.js';
import type { FileRecord, PermissionRecord } from './store.js';

const ROLES = ['owner', 'organizer', 'fileOrganizer', 'writer', 'commenter', 'reader'] as const;
const TYPES = ['user', 'group', 'domain', 'anyone'] as const;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function idForEmail(email: string): string {
  if (email.toLowerCase() === OWNER.emailAddress) return OWNER.permissionId;
  const digest = createHash('sha256').update(email.trim().toLowerCase()).digest();
  let id = '';
  for (let i = 0; i < 20; i++) id += String(digest[i]! % 10);
  return id.replace(/^0/, '1');
}

function ownerRecord(): PermissionRecord {
  return { id: OWNER.permissionId, type: 'user', role: 'owner', emailAddress: OWNER.emailAddress };
}

function all(ctx: Ctx, file: FileRecord): PermissionRecord[] {
  return [ownerRecord(), ...(ctx.model.data.permissions[file.id] ?? [])];
}

function json(ctx: Ctx, file: FileRecord, p: PermissionRecord): Record<string, unknown> {
  return {
    kind: 'storage#permission',
    etag: ctx.model.etag(file),
    id: p.id,
    selfLink: `${ctx.origin}/storage/v2/files/${file.id}/permissions/${p.id}`,
    role: p.role,
    type: p.type,
    ...(p.emailAddress ? { emailAddress: p.emailAddress, name: p.emailAddress === OWNER.emailAddress ? OWNER.displayName : p.emailAddress } : {}),
    ...(p.domain ? { domain: p.domain } : p.emailAddress ? { domain: p.emailAddress.split('@')[1] } : {}),
    ...(p.withLink !== undefined ? { withLink: p.withLink } : {}),
    ...(p.additionalRoles?.length ? { additionalRoles: [...p.additionalRoles] } : {}),
    ...(p.type === 'user' || p.type === 'group' || p.type === 'domain' ? { value: p.emailAddress ?? p.domain } : {}),
  };
}

function checkRole(role: unknown): PermissionRecord['role'] {
  if (!ROLES.includes(role as PermissionRecord['role']))
    throw badRequest(`Invalid value for role: ${String(role)}`, 'role', role === undefined ? 'required' : 'invalid');
  if (role === 'owner') throw new StorageFailure(403, 'forbidden', 'Ownership transfer is not supported by this server', 'role');
  return role as PermissionRecord['role'];
}

/** Drive v2's `additionalRoles`: only `commenter`, and only beside `reader` (a reader who may comment). */
function checkAdditionalRoles(value: unknown, role: PermissionRecord['role']): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((entry) => entry !== 'commenter'))
    throw badRequest(`Invalid value for additionalRoles: ${JSON.stringify(value)}`, 'additionalRoles', 'invalid');
  if (value.length > 0 && role !== 'reader') throw badRequest('additionalRoles ["commenter"] goes with role reader', 'additionalRoles', 'invalid');
  return value.length > 0 ? ['commenter'] : undefined;
}

export const list: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const items = all(ctx, file).map((p) => json(ctx, file, p));
  return fileListReply(ctx, file, 'permissionList', 'permissions', items);
};

export const get: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const found = all(ctx, file).find((p) => p.id === ctx.params.permissionId);
  if (!found) throw notFound(ctx.params.permissionId!, 'Permission', 'permissionId');
  return { status: 200, body: json(ctx, file, found) };
};

export const insert: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const body = await readJson(ctx.req);
  const role = checkRole(body.role);
  if (!TYPES.includes(body.type as PermissionRecord['type']))
    throw badRequest(`Invalid value for type: ${String(body.type)}`, 'type', body.type === undefined ? 'required' : 'invalid');
  const type = body.type as PermissionRecord['type'];
  const value =
    typeof body.value === 'string'
      ? body.value.trim()
      : typeof body.emailAddress === 'string'
        ? body.emailAddress.trim()
        : typeof body.domain === 'string'
          ? body.domain.trim()
          : undefined;
  let record: PermissionRecord;
  if (type === 'user' || type === 'group') {
    if (!value || !EMAIL.test(value)) throw badRequest('A user or group permission needs an e-mail address in value', 'value');
    record = { id: idForEmail(value), type, role, emailAddress: value.toLowerCase() };
  } else if (type === 'domain') {
    if (!value || !/^[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/.test(value)) throw badRequest('A domain permission needs a domain in value', 'value');
    record = { id: idForEmail(`@${value}`), type, role, domain: value.toLowerCase() };
  } else {
    record = { id: body.withLink === true ? 'anyoneWithLink' : 'anyone', type, role, withLink: body.withLink === true };
  }
  const additionalRoles = checkAdditionalRoles(body.additionalRoles, role);
  if (additionalRoles) record.additionalRoles = additionalRoles;
  if (record.id === OWNER.permissionId) throw badRequest('The owner already has access', 'value');
  const list = (ctx.model.data.permissions[file.id] ??= []);
  const i = list.findIndex((p) => p.id === record.id);
  if (i >= 0) list[i] = record;
  else list.push(record);
  ctx.model.changed(file, false);
  return { status: 200, body: json(ctx, file, record) };
};

export const patch: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  checkIfMatch(ctx, file);
  const found = (ctx.model.data.permissions[file.id] ?? []).find((p) => p.id === ctx.params.permissionId);
  if (!found) {
    if (ctx.params.permissionId === OWNER.permissionId) throw new StorageFailure(403, 'forbidden', "The owner's permission cannot be changed", 'permissionId');
    throw notFound(ctx.params.permissionId!, 'Permission', 'permissionId');
  }
  const body = await readJson(ctx.req);
  if (body.role !== undefined) found.role = checkRole(body.role);
  if (body.additionalRoles !== undefined || body.role !== undefined) {
    // A new role without additionalRoles keeps the old ones only where they still apply (beside reader).
    const asked = body.additionalRoles !== undefined ? body.additionalRoles : found.role === 'reader' ? found.additionalRoles : undefined;
    const additionalRoles = checkAdditionalRoles(asked, found.role);
    if (additionalRoles) found.additionalRoles = additionalRoles;
    else delete found.additionalRoles;
  }
  if (typeof body.withLink === 'boolean' && found.type === 'anyone') found.withLink = body.withLink;
  ctx.model.changed(file, false);
  return { status: 200, body: json(ctx, file, found) };
};

export const remove: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  if (ctx.params.permissionId === OWNER.permissionId)
    throw new StorageFailure(403, 'cannotRemoveOwner', "The owner's permission cannot be removed", 'permissionId');
  const list = ctx.model.data.permissions[file.id] ?? [];
  const i = list.findIndex((p) => p.id === ctx.params.permissionId);
  if (i < 0) throw notFound(ctx.params.permissionId!, 'Permission', 'permissionId');
  list.splice(i, 1);
  ctx.model.changed(file, false);
  return { status: 204 };
};

export const idForEmailRoute: Handler = async (ctx) => {
  const email = ctx.params.email!;
  if (!EMAIL.test(email)) throw badRequest('Invalid e-mail address', 'email');
  return { status: 200, body: { kind: 'storage#permissionId', id: idForEmail(email) } };
};
