// drives.* (STO-DRIVES-*) and apps.* (STO-APPS-*). Shared drives are metadata only here: files live in My Drive
// (see docs/storage.md). `drives.insert` needs `requestId` (idempotent: the same id answers the same drive).
import { createHash } from 'node:crypto';
import { pageOffset, pageToken, queryInt, type Ctx, type Handler } from './context.js';
import { badRequest, notFound, readJson, StorageFailure } from './http.js';
import { newId, type DriveRecord } from './store.js';

function driveJson(ctx: Ctx, d: DriveRecord) {
  return {
    kind: 'storage#drive',
    id: d.id,
    name: d.name,
    hidden: d.hidden,
    createdDate: d.createdDate,
    ...(d.colorRgb ? { colorRgb: d.colorRgb } : {}),
    ...(d.themeId ? { themeId: d.themeId } : {}),
    capabilities: {
      canAddChildren: true,
      canComment: true,
      canCopy: true,
      canDeleteDrive: true,
      canDownload: true,
      canEdit: true,
      canListChildren: true,
      canManageMembers: true,
      canRename: true,
      canShare: true,
    },
    restrictions: { adminManagedRestrictions: false, copyRequiresWriterPermission: false, domainUsersOnly: false, driveMembersOnly: false },
  };
}

function drive(ctx: Ctx): DriveRecord {
  const found = ctx.model.data.drives[ctx.params.driveId!];
  if (!found) throw notFound(ctx.params.driveId!, 'Shared drive', 'driveId');
  return found;
}

function apply(d: DriveRecord, body: Record<string, unknown>): void {
  if (body.name !== undefined) {
    if (typeof body.name !== 'string' || body.name.trim() === '') throw badRequest('Invalid value for name', 'name');
    d.name = body.name;
  }
  if (body.colorRgb !== undefined) {
    if (typeof body.colorRgb !== 'string' || !/^#[0-9a-fA-F]{6}$/.test(body.colorRgb)) throw badRequest('Invalid value for colorRgb', 'colorRgb');
    d.colorRgb = body.colorRgb;
  }
  if (body.themeId !== undefined) {
    if (typeof body.themeId !== 'string') throw badRequest('Invalid value for themeId', 'themeId');
    d.themeId = body.themeId;
  }
}

export const insert: Handler = async (ctx) => {
  const requestId = ctx.query.get('requestId');
  if (!requestId) throw new StorageFailure(400, 'required', 'Required parameter: requestId', 'requestId');
  const body = await readJson(ctx.req);
  const existing = Object.values(ctx.model.data.drives).find((d) => d.requestId === requestId);
  if (existing) return { status: 200, body: driveJson(ctx, existing) };
  if (typeof body.name !== 'string' || body.name.trim() === '') throw badRequest('Required: name', 'name', 'required');
  const d: DriveRecord = { id: '0A' + newId(17).slice(1), name: body.name, hidden: false, createdDate: ctx.model.now(), requestId };
  apply(d, body);
  ctx.model.data.drives[d.id] = d;
  return { status: 200, body: driveJson(ctx, d) };
};

export const list: Handler = async (ctx) => {
  const max = queryInt(ctx, 'maxResults', 10, 1, 100);
  const offset = pageOffset(ctx);
  const all = Object.values(ctx.model.data.drives).sort((a, b) => a.createdDate.localeCompare(b.createdDate));
  const items = all.slice(offset, offset + max);
  const next = offset + items.length < all.length ? pageToken(offset + items.length) : undefined;
  return { status: 200, body: { kind: 'storage#driveList', ...(next ? { nextPageToken: next } : {}), items: items.map((d) => driveJson(ctx, d)) } };
};

export const get: Handler = async (ctx) => ({ status: 200, body: driveJson(ctx, drive(ctx)) });

export const update: Handler = async (ctx) => {
  const d = drive(ctx);
  apply(d, await readJson(ctx.req));
  return { status: 200, body: driveJson(ctx, d) };
};

export const remove: Handler = async (ctx) => {
  const d = drive(ctx);
  delete ctx.model.data.drives[d.id];
  return { status: 204 };
};

export const hide: Handler = async (ctx) => {
  const d = drive(ctx);
  d.hidden = true;
  return { status: 200, body: driveJson(ctx, d) };
};

export const unhide: Handler = async (ctx) => {
  const d = drive(ctx);
  d.hidden = false;
  return { status: 200, body: driveJson(ctx, d) };
};

/** The one app the server knows: Gantry itself. */
const APP_ID = '100000000001';
/** Drive v2's App has no selfLink (only the list has one). */
function appJson() {
  return {
    kind: 'storage#app',
    id: APP_ID,
    name: 'Gantry',
    objectType: 'file',
    installed: true,
    authorized: true,
    useByDefault: false,
    supportsCreate: false,
    supportsImport: false,
    supportsMultiOpen: false,
    supportsOfflineCreate: false,
    hasDriveWideScope: false,
    primaryMimeTypes: [],
    secondaryMimeTypes: [],
    primaryFileExtensions: [],
    secondaryFileExtensions: [],
    productId: createHash('sha1').update(APP_ID).digest('hex').slice(0, 12),
    shortDescription: 'Infrastructure automation: gate reports and release artefacts',
    icons: [],
  };
}

export const appsList: Handler = async (ctx) => ({
  status: 200,
  body: { kind: 'storage#appList', selfLink: `${ctx.origin}/storage/v2/apps`, defaultAppIds: [], items: [appJson()] },
});

export const appsGet: Handler = async (ctx) => {
  if (ctx.params.appId !== APP_ID) throw notFound(ctx.params.appId!, 'App', 'appId');
  return { status: 200, body: appJson() };
};
