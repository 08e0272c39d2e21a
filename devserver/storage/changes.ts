// about.get and the change log (STO-ABOUT-GET, STO-CHANGES-GETSTARTPAGETOKEN, STO-CHANGES-LIST, STO-CHANGES-GET):
// one monotonic change id per change, the log keeping each file's latest change; a page ends in `nextPageToken`
// while changes remain and in `newStartPageToken` (never both) when the log is exhausted.
import { queryBool, queryInt, type Ctx, type Handler } from './context.js';
import { badRequest, notFound, type Reply } from './http.js';
import { fileJson, OWNER } from './represent.js';
import type { ChangeRecord } from './store.js';

const QUOTA_TOTAL = 15 * 1024 ** 3;

/** A 200 as of the change log's position: `storage#<kind>`, the largest change id as ETag, the resource's own link, then `fields`. */
function logStamped(ctx: Ctx, kind: string, path: string, fields: Record<string, unknown>): Reply {
  const largest = ctx.model.data.largestChangeId;
  return { status: 200, body: { kind: `storage#${kind}`, etag: `"${largest}"`, selfLink: `${ctx.origin}/storage/v2/${path}`, ...fields } };
}

export const about: Handler = async (ctx) => {
  const files = Object.values(ctx.model.data.files);
  const used = files.reduce((sum, f) => sum + Object.values(ctx.model.data.revisions[f.id] ?? []).reduce((s, r) => s + r.fileSize, 0), 0);
  const inTrash = files.filter((f) => f.labels.trashed).reduce((sum, f) => sum + (f.fileSize ?? 0), 0);
  const largest = ctx.model.data.largestChangeId;
  return logStamped(ctx, 'about', 'about', {
    name: OWNER.displayName,
    user: OWNER,
    permissionId: OWNER.permissionId,
    rootFolderId: ctx.model.data.rootId,
    quotaType: 'LIMITED',
    quotaBytesTotal: String(QUOTA_TOTAL),
    quotaBytesUsed: String(used),
    quotaBytesUsedAggregate: String(used),
    quotaBytesUsedInTrash: String(inTrash),
    quotaBytesByService: [{ serviceName: 'DRIVE', bytesUsed: String(used) }],
    largestChangeId: String(largest),
    remainingChangeIds: '0',
    domainSharingPolicy: 'allowed',
    isCurrentAppInstalled: false,
    languageCode: 'en',
    canCreateDrives: true,
    folderColorPalette: [],
    maxUploadSizes: [{ type: '*', size: String(5 * 1024 ** 4) }],
    importFormats: [],
    exportFormats: [],
    features: [],
    additionalRoleInfo: [],
  });
};

export const startPageToken: Handler = async (ctx) => ({
  status: 200,
  body: { kind: 'storage#startPageToken', startPageToken: String(ctx.model.data.largestChangeId + 1) },
});

function changeJson(ctx: Ctx, change: ChangeRecord): Record<string, unknown> {
  const file = change.deleted ? undefined : ctx.model.data.files[change.fileId];
  return {
    kind: 'storage#change',
    id: String(change.id),
    selfLink: `${ctx.origin}/storage/v2/changes/${change.id}`,
    type: 'file',
    changeType: 'file',
    fileId: change.fileId,
    deleted: change.deleted || !file,
    modificationDate: change.modificationDate,
    ...(file ? { file: fileJson(ctx.model, file, ctx.origin) } : {}),
  };
}

export const list: Handler = async (ctx) => {
  const largest = ctx.model.data.largestChangeId;
  const raw = ctx.query.get('pageToken') ?? ctx.query.get('startChangeId') ?? '1';
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1 || Number(raw) > largest + 1) throw badRequest('Invalid Value', 'pageToken');
  const from = Number(raw);
  const max = queryInt(ctx, 'maxResults', 100, 1, 1000);
  const includeDeleted = queryBool(ctx, 'includeDeleted', true);
  const spaces = ctx.query.get('spaces');
  if (spaces !== null && !spaces.split(',').every((s) => ['drive', 'appDataFolder', 'photos'].includes(s.trim())))
    throw badRequest(`Invalid value '${spaces}'`, 'spaces');
  const pending = ctx.model.data.changes.filter((c) => c.id >= from).sort((a, b) => a.id - b.id);
  const empty = pending.length > 0 && ctx.faults.emptyPage();
  const page = empty ? [] : pending.slice(0, max);
  const rest = empty ? pending : pending.slice(max);
  const items = page.filter((c) => includeDeleted || (!c.deleted && ctx.model.data.files[c.fileId])).map((c) => changeJson(ctx, c));
  return logStamped(ctx, 'changeList', 'changes', {
    largestChangeId: String(largest),
    ...(rest.length > 0 ? { nextPageToken: String(rest[0]!.id) } : { newStartPageToken: String(largest + 1) }),
    items,
  });
};

export const get: Handler = async (ctx) => {
  const id = ctx.params.changeId!;
  const change = /^\d{1,15}$/.test(id) ? ctx.model.data.changes.find((c) => c.id === Number(id)) : undefined;
  if (!change) throw notFound(id, 'Change', 'changeId');
  return { status: 200, body: changeJson(ctx, change) };
};
