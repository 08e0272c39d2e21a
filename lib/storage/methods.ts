/**
 * All 70 methods of the storage API (spec §A, the STO-* rules; Drive v2's parameters), as one table: HTTP method,
 * path below `/storage/v2/`, query parameters with their types, the body, whether `If-Match` applies, and for list
 * methods the key of their items. `createMethods(transport)` turns it into the namespaces of the client
 * (`files.insert`, `permissions.getIdForEmail`, …); each call checks its parameters before anything is sent (an
 * unknown or mistyped parameter is a UsageError naming the method), URL-encodes path parameters as one segment each,
 * and goes through the transport (token, retries, StorageError). Metadata only: uploads, downloads (`alt=media`) and
 * streamed exports live in lib/storage/upload/, download.ts and export.ts.
 */
import { expectObject, expectOptions, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { withFields, type StorageParams, type StoragePage, type StorageTransport } from './transport.js';
import type * as T from './types.js';
import type * as Q from './params.js';

type QueryType = 'string' | 'bool' | 'int' | 'int64';

export interface MethodSpec {
  http: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Below `/storage/v2/`, path parameters written `{name}` (STO-BASE-PREFIX). */
  path: string;
  /** The method's own query parameters; `!` marks a required one. */
  query: Readonly<Record<string, QueryType | `${QueryType}!`>>;
  /** A JSON `requestBody`: required, optional, or none. */
  body?: 'required' | 'optional';
  /** Takes `ifMatch` (an etag; 412 conditionNotMet when the resource has changed). */
  ifMatch?: boolean;
  /** A POST that can be sent twice with the same effect, so it is retried like a GET. */
  idempotent?: boolean;
  /** A list method: the key of its items; it gets `.all()`, which pages. */
  items?: string;
  /** What comes back: JSON (default), nothing (204), or bytes. */
  response?: 'json' | 'none' | 'bytes';
}

const allDrives = { supportsAllDrives: 'bool', supportsTeamDrives: 'bool' } as const;
const view = { includeLabels: 'string', includePermissionsForView: 'string' } as const;
const page = { maxResults: 'int', pageToken: 'string' } as const;
const driveScope = { driveId: 'string', teamDriveId: 'string', ...allDrives } as const;
const conversion = { convert: 'bool', ocr: 'bool', ocrLanguage: 'string', pinned: 'bool', timedTextLanguage: 'string', timedTextTrackName: 'string' } as const;
const fileRead = { acknowledgeAbuse: 'bool', projection: 'string', revisionId: 'string', updateViewedDate: 'bool', ...allDrives, ...view } as const;
const changesList = {
  ...driveScope,
  ...view,
  ...page,
  includeCorpusRemovals: 'bool',
  includeDeleted: 'bool',
  includeItemsFromAllDrives: 'bool',
  includeSubscribed: 'bool',
  includeTeamDriveItems: 'bool',
  spaces: 'string',
  startChangeId: 'int64',
} as const;
const fileUpdate = {
  ...allDrives,
  ...view,
  ...conversion,
  addParents: 'string',
  removeParents: 'string',
  enforceSingleParent: 'bool',
  modifiedDateBehavior: 'string',
  newRevision: 'bool',
  setModifiedDate: 'bool',
  updateViewedDate: 'bool',
  useContentAsIndexableText: 'bool',
} as const;
const fileState = { ...allDrives, ...view } as const;
const permissionRef = { ...allDrives, useDomainAdminAccess: 'bool' } as const;
const permissionUpdate = { ...permissionRef, enforceExpansiveAccess: 'bool', removeExpiration: 'bool', transferOwnership: 'bool' } as const;

const F = 'files/{fileId}';

/** The spec's table, in its order (STO-RESOURCES: about, apps, changes, channels, children, comments, drives, files, parents, permissions, properties, replies, revisions). */
export const STORAGE_METHODS = {
  'about.get': { http: 'GET', path: 'about', query: { includeSubscribed: 'bool', maxChangeIdCount: 'int64', startChangeId: 'int64' } },
  'apps.get': { http: 'GET', path: 'apps/{appId}', query: {} },
  'apps.list': { http: 'GET', path: 'apps', query: { appFilterExtensions: 'string', appFilterMimeTypes: 'string', languageCode: 'string' }, items: 'items' },
  'changes.get': { http: 'GET', path: 'changes/{changeId}', query: driveScope },
  'changes.getStartPageToken': { http: 'GET', path: 'changes/startPageToken', query: driveScope },
  'changes.list': { http: 'GET', path: 'changes', query: changesList, items: 'items' },
  'changes.watch': { http: 'POST', path: 'changes/watch', query: changesList, body: 'required' },
  'channels.stop': { http: 'POST', path: 'channels/stop', query: {}, body: 'required', response: 'none' },
  'children.delete': { http: 'DELETE', path: 'files/{folderId}/children/{childId}', query: { enforceSingleParent: 'bool' }, response: 'none' },
  'children.get': { http: 'GET', path: 'files/{folderId}/children/{childId}', query: {} },
  'children.insert': { http: 'POST', path: 'files/{folderId}/children', query: { enforceSingleParent: 'bool', ...allDrives }, body: 'required' },
  'children.list': { http: 'GET', path: 'files/{folderId}/children', query: { ...page, orderBy: 'string', q: 'string' }, items: 'items' },
  'comments.delete': { http: 'DELETE', path: `${F}/comments/{commentId}`, query: {}, response: 'none' },
  'comments.get': { http: 'GET', path: `${F}/comments/{commentId}`, query: { includeDeleted: 'bool' } },
  'comments.insert': { http: 'POST', path: `${F}/comments`, query: {}, body: 'required' },
  'comments.list': { http: 'GET', path: `${F}/comments`, query: { ...page, includeDeleted: 'bool', updatedMin: 'string' }, items: 'items' },
  'comments.patch': { http: 'PATCH', path: `${F}/comments/{commentId}`, query: {}, body: 'required' },
  'comments.update': { http: 'PUT', path: `${F}/comments/{commentId}`, query: {}, body: 'required' },
  'drives.delete': { http: 'DELETE', path: 'drives/{driveId}', query: { allowItemDeletion: 'bool', useDomainAdminAccess: 'bool' }, response: 'none' },
  'drives.get': { http: 'GET', path: 'drives/{driveId}', query: { useDomainAdminAccess: 'bool' } },
  'drives.hide': { http: 'POST', path: 'drives/{driveId}/hide', query: {}, idempotent: true },
  'drives.insert': { http: 'POST', path: 'drives', query: { requestId: 'string!' }, body: 'required', idempotent: true },
  'drives.list': { http: 'GET', path: 'drives', query: { ...page, q: 'string', useDomainAdminAccess: 'bool' }, items: 'items' },
  'drives.unhide': { http: 'POST', path: 'drives/{driveId}/unhide', query: {}, idempotent: true },
  'drives.update': { http: 'PUT', path: 'drives/{driveId}', query: { useDomainAdminAccess: 'bool' }, body: 'required' },
  'files.copy': {
    http: 'POST',
    path: `${F}/copy`,
    query: { ...allDrives, ...view, ...conversion, enforceSingleParent: 'bool', visibility: 'string' },
    body: 'optional',
  },
  'files.delete': { http: 'DELETE', path: F, query: { ...allDrives, enforceSingleParent: 'bool' }, ifMatch: true, response: 'none' },
  'files.emptyTrash': { http: 'DELETE', path: 'files/trash', query: { driveId: 'string', enforceSingleParent: 'bool' }, response: 'none' },
  'files.export': { http: 'GET', path: `${F}/export`, query: { mimeType: 'string!' }, response: 'bytes' },
  'files.generateCseToken': { http: 'GET', path: 'files/generateCseToken', query: { fileId: 'string', parent: 'string' } },
  'files.generateIds': { http: 'GET', path: 'files/generateIds', query: { maxResults: 'int', space: 'string', type: 'string' } },
  'files.get': { http: 'GET', path: F, query: fileRead },
  'files.insert': {
    http: 'POST',
    path: 'files',
    query: { ...allDrives, ...view, ...conversion, enforceSingleParent: 'bool', useContentAsIndexableText: 'bool', visibility: 'string' },
    body: 'optional',
  },
  'files.list': {
    http: 'GET',
    path: 'files',
    items: 'items',
    query: {
      ...allDrives,
      ...view,
      ...page,
      corpora: 'string',
      corpus: 'string',
      driveId: 'string',
      includeItemsFromAllDrives: 'bool',
      includeTeamDriveItems: 'bool',
      orderBy: 'string',
      projection: 'string',
      q: 'string',
      spaces: 'string',
      teamDriveId: 'string',
    },
  },
  'files.listLabels': { http: 'GET', path: `${F}/listLabels`, query: page, items: 'items' },
  'files.modifyLabels': { http: 'POST', path: `${F}/modifyLabels`, query: {}, body: 'required' },
  'files.patch': { http: 'PATCH', path: F, query: fileUpdate, body: 'optional', ifMatch: true },
  'files.touch': { http: 'POST', path: `${F}/touch`, query: fileState, ifMatch: true, idempotent: true },
  'files.trash': { http: 'POST', path: `${F}/trash`, query: fileState, ifMatch: true, idempotent: true },
  'files.untrash': { http: 'POST', path: `${F}/untrash`, query: fileState, ifMatch: true, idempotent: true },
  'files.update': { http: 'PUT', path: F, query: fileUpdate, body: 'optional', ifMatch: true },
  'files.watch': { http: 'POST', path: `${F}/watch`, query: fileRead, body: 'required' },
  'parents.delete': { http: 'DELETE', path: `${F}/parents/{parentId}`, query: { enforceSingleParent: 'bool' }, response: 'none' },
  'parents.get': { http: 'GET', path: `${F}/parents/{parentId}`, query: {} },
  'parents.insert': { http: 'POST', path: `${F}/parents`, query: { enforceSingleParent: 'bool', ...allDrives }, body: 'required' },
  'parents.list': { http: 'GET', path: `${F}/parents`, query: {}, items: 'items' },
  'permissions.delete': {
    http: 'DELETE',
    path: `${F}/permissions/{permissionId}`,
    query: { ...permissionRef, enforceExpansiveAccess: 'bool' },
    response: 'none',
  },
  'permissions.get': { http: 'GET', path: `${F}/permissions/{permissionId}`, query: permissionRef },
  'permissions.getIdForEmail': { http: 'GET', path: 'permissionIds/{email}', query: {} },
  'permissions.insert': {
    http: 'POST',
    path: `${F}/permissions`,
    body: 'required',
    query: {
      ...allDrives,
      emailMessage: 'string',
      enforceExpansiveAccess: 'bool',
      enforceSingleParent: 'bool',
      moveToNewOwnersRoot: 'bool',
      sendNotificationEmails: 'bool',
      useDomainAdminAccess: 'bool',
    },
  },
  'permissions.list': { http: 'GET', path: `${F}/permissions`, query: { ...permissionRef, ...page, includePermissionsForView: 'string' }, items: 'items' },
  'permissions.patch': { http: 'PATCH', path: `${F}/permissions/{permissionId}`, query: permissionUpdate, body: 'required' },
  'permissions.update': { http: 'PUT', path: `${F}/permissions/{permissionId}`, query: permissionUpdate, body: 'required' },
  'properties.delete': { http: 'DELETE', path: `${F}/properties/{propertyKey}`, query: { visibility: 'string' }, response: 'none' },
  'properties.get': { http: 'GET', path: `${F}/properties/{propertyKey}`, query: { visibility: 'string' } },
  'properties.insert': { http: 'POST', path: `${F}/properties`, query: {}, body: 'required', idempotent: true },
  'properties.list': { http: 'GET', path: `${F}/properties`, query: {}, items: 'items' },
  'properties.patch': { http: 'PATCH', path: `${F}/properties/{propertyKey}`, query: { visibility: 'string' }, body: 'required' },
  'properties.update': { http: 'PUT', path: `${F}/properties/{propertyKey}`, query: { visibility: 'string' }, body: 'required' },
  'replies.delete': { http: 'DELETE', path: `${F}/comments/{commentId}/replies/{replyId}`, query: {}, response: 'none' },
  'replies.get': { http: 'GET', path: `${F}/comments/{commentId}/replies/{replyId}`, query: { includeDeleted: 'bool' } },
  'replies.insert': { http: 'POST', path: `${F}/comments/{commentId}/replies`, query: {}, body: 'required' },
  'replies.list': { http: 'GET', path: `${F}/comments/{commentId}/replies`, query: { ...page, includeDeleted: 'bool' }, items: 'items' },
  'replies.patch': { http: 'PATCH', path: `${F}/comments/{commentId}/replies/{replyId}`, query: {}, body: 'required' },
  'replies.update': { http: 'PUT', path: `${F}/comments/{commentId}/replies/{replyId}`, query: {}, body: 'required' },
  'revisions.delete': { http: 'DELETE', path: `${F}/revisions/{revisionId}`, query: {}, response: 'none' },
  'revisions.get': { http: 'GET', path: `${F}/revisions/{revisionId}`, query: {} },
  'revisions.list': { http: 'GET', path: `${F}/revisions`, query: page, items: 'items' },
  'revisions.patch': { http: 'PATCH', path: `${F}/revisions/{revisionId}`, query: {}, body: 'required' },
  'revisions.update': { http: 'PUT', path: `${F}/revisions/{revisionId}`, query: {}, body: 'required' },
} as const satisfies Record<string, MethodSpec>;

export type StorageMethodName = keyof typeof STORAGE_METHODS;

/** `changes.list.all()`: the changes, page after page; once it has ended, the token to ask with next time. */
export interface ChangeIterator extends AsyncGenerator<T.Change, void, undefined> {
  /** The last page's `newStartPageToken`: save it and pass it as `pageToken` to see only newer changes. */
  newStartPageToken: string | undefined;
}

/** Each method's parameters and answer; list methods also what `.all()` gives. */
interface Signatures {
  'about.get': [Q.AboutGetParams, T.About];
  'apps.get': [Q.AppsGetParams, T.App];
  'apps.list': [Q.AppsListParams, T.AppList, AsyncGenerator<T.App>];
  'changes.get': [Q.ChangesGetParams, T.Change];
  'changes.getStartPageToken': [Q.ChangesGetStartPageTokenParams, T.StartPageToken];
  'changes.list': [Q.ChangesListParams, T.ChangeList, ChangeIterator];
  'changes.watch': [Q.ChangesWatchParams, T.Channel];
  'channels.stop': [Q.ChannelsStopParams, void];
  'children.delete': [Q.ChildrenDeleteParams, void];
  'children.get': [Q.ChildrenGetParams, T.ChildReference];
  'children.insert': [Q.ChildrenInsertParams, T.ChildReference];
  'children.list': [Q.ChildrenListParams, T.ChildList, AsyncGenerator<T.ChildReference>];
  'comments.delete': [Q.CommentsDeleteParams, void];
  'comments.get': [Q.CommentsGetParams, T.Comment];
  'comments.insert': [Q.CommentsInsertParams, T.Comment];
  'comments.list': [Q.CommentsListParams, T.CommentList, AsyncGenerator<T.Comment>];
  'comments.patch': [Q.CommentsUpdateParams, T.Comment];
  'comments.update': [Q.CommentsUpdateParams, T.Comment];
  'drives.delete': [Q.DrivesDeleteParams, void];
  'drives.get': [Q.DrivesGetParams, T.Drive];
  'drives.hide': [Q.DrivesHideParams, T.Drive];
  'drives.insert': [Q.DrivesInsertParams, T.Drive];
  'drives.list': [Q.DrivesListParams, T.DriveList, AsyncGenerator<T.Drive>];
  'drives.unhide': [Q.DrivesHideParams, T.Drive];
  'drives.update': [Q.DrivesUpdateParams, T.Drive];
  'files.copy': [Q.FilesCopyParams, T.File];
  'files.delete': [Q.FilesDeleteParams, void];
  'files.emptyTrash': [Q.FilesEmptyTrashParams, void];
  'files.export': [Q.FilesExportParams, Buffer];
  'files.generateCseToken': [Q.FilesGenerateCseTokenParams, T.GenerateCseTokenResponse];
  'files.generateIds': [Q.FilesGenerateIdsParams, T.GeneratedIds];
  'files.get': [Q.FilesGetParams, T.File];
  'files.insert': [Q.FilesInsertParams, T.File];
  'files.list': [Q.FilesListParams, T.FileList, AsyncGenerator<T.File>];
  'files.listLabels': [Q.FilesListLabelsParams, T.LabelList, AsyncGenerator<T.Label>];
  'files.modifyLabels': [Q.FilesModifyLabelsParams, T.ModifyLabelsResponse];
  'files.patch': [Q.FilesUpdateParams, T.File];
  'files.touch': [Q.FilesStateParams, T.File];
  'files.trash': [Q.FilesStateParams, T.File];
  'files.untrash': [Q.FilesStateParams, T.File];
  'files.update': [Q.FilesUpdateParams, T.File];
  'files.watch': [Q.FilesWatchParams, T.Channel];
  'parents.delete': [Q.ParentsDeleteParams, void];
  'parents.get': [Q.ParentsGetParams, T.ParentReference];
  'parents.insert': [Q.ParentsInsertParams, T.ParentReference];
  'parents.list': [Q.ParentsListParams, T.ParentList, AsyncGenerator<T.ParentReference>];
  'permissions.delete': [Q.PermissionsDeleteParams, void];
  'permissions.get': [Q.PermissionsGetParams, T.Permission];
  'permissions.getIdForEmail': [Q.PermissionsGetIdForEmailParams, T.PermissionId];
  'permissions.insert': [Q.PermissionsInsertParams, T.Permission];
  'permissions.list': [Q.PermissionsListParams, T.PermissionList, AsyncGenerator<T.Permission>];
  'permissions.patch': [Q.PermissionsUpdateParams, T.Permission];
  'permissions.update': [Q.PermissionsUpdateParams, T.Permission];
  'properties.delete': [Q.PropertiesGetParams, void];
  'properties.get': [Q.PropertiesGetParams, T.Property];
  'properties.insert': [Q.PropertiesInsertParams, T.Property];
  'properties.list': [Q.PropertiesListParams, T.PropertyList, AsyncGenerator<T.Property>];
  'properties.patch': [Q.PropertiesUpdateParams, T.Property];
  'properties.update': [Q.PropertiesUpdateParams, T.Property];
  'replies.delete': [Q.RepliesDeleteParams, void];
  'replies.get': [Q.RepliesGetParams, T.CommentReply];
  'replies.insert': [Q.RepliesInsertParams, T.CommentReply];
  'replies.list': [Q.RepliesListParams, T.CommentReplyList, AsyncGenerator<T.CommentReply>];
  'replies.patch': [Q.RepliesUpdateParams, T.CommentReply];
  'replies.update': [Q.RepliesUpdateParams, T.CommentReply];
  'revisions.delete': [Q.RevisionsGetParams, void];
  'revisions.get': [Q.RevisionsGetParams, T.Revision];
  'revisions.list': [Q.RevisionsListParams, T.RevisionList, AsyncGenerator<T.Revision>];
  'revisions.patch': [Q.RevisionsUpdateParams, T.Revision];
  'revisions.update': [Q.RevisionsUpdateParams, T.Revision];
}

// Every method of the table has a signature and the other way round.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const signaturesCoverTheTable: Same<keyof Signatures, StorageMethodName> = true;
void signaturesCoverTheTable;

/** Parameters may be left out when none is required. */
type Call<P, R> = Partial<P> extends P ? (params?: P) => Promise<R> : (params: P) => Promise<R>;
type Iterate<P, I> = Partial<P> extends P ? (params?: P) => I : (params: P) => I;
/** A list method: one page, and `.all()` for every item, page after page. */
export type ListMethod<P, R, I> = Call<P, R> & { all: Iterate<P, I> };
type Method<S> = S extends [infer P, infer R, infer I] ? ListMethod<P, R, I> : S extends [infer P, infer R] ? Call<P, R> : never;

/** One resource's methods: `StorageResource<'files'>` has insert, get, list, … */
export type StorageResource<R extends string> = {
  [K in keyof Signatures as K extends `${R}.${infer M}` ? M : never]: Method<Signatures[K]>;
};

/** Every resource of the table (about, apps, … revisions) with its methods. */
export type StorageMethods = { [R in StorageMethodName extends `${infer Resource}.${string}` ? Resource : never]: StorageResource<R> };

const commonQuery: Record<string, QueryType> = { fields: 'string', alt: 'string', quotaUser: 'string', prettyPrint: 'bool', userIp: 'string' };

/** One path segment: encoded whole, so `a/b`, `?` or `#` stay inside it; `.` and `..` would be resolved away. */
export function pathSegment(where: string, name: string, value: unknown): string {
  expectString(where, `params.${name}`, value, 'a non-empty string (an id)');
  if (value === '.' || value === '..')
    throw new UsageError(`${where}: params.${name} cannot be "${value}": a URL would resolve it to another path`, { code: 'INVALID_ARGUMENT' });
  return encodeURIComponent(value);
}

function checkQuery(where: string, name: string, type: QueryType, value: unknown): string | number | boolean {
  const ok =
    type === 'bool'
      ? typeof value === 'boolean'
      : type === 'int'
        ? Number.isSafeInteger(value) && (value as number) >= 0
        : type === 'int64'
          ? (Number.isSafeInteger(value) && (value as number) >= 0) || (typeof value === 'string' && /^\d{1,19}$/.test(value))
          : typeof value === 'string';
  if (!ok) {
    const takes = { bool: 'true or false', int: 'a whole number of at least 0', int64: 'a whole number (or its decimal string)', string: 'a string' }[type];
    throw new UsageError(`${where}: params.${name} must be ${takes}, got ${JSON.stringify(value) ?? typeof value}`, { code: 'INVALID_ARGUMENT' });
  }
  return value as string | number | boolean;
}

interface Prepared {
  path: string;
  searchParams: StorageParams;
  headers: Record<string, string>;
  json?: unknown;
  signal?: AbortSignal;
}

/** The request a call makes, its parameters checked: nothing is sent for a parameter the method does not take. */
export function prepareCall(name: StorageMethodName, params: unknown, where: string = name): Prepared {
  const spec: MethodSpec = STORAGE_METHODS[name];
  expectOptions(where, params, 'params');
  const given = (params ?? {}) as Record<string, unknown>;
  const pathNames = [...spec.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  // Unknown names first: `fileID` for `fileId` is a typo to point at, not a missing fileId.
  const known = [
    ...pathNames,
    ...Object.keys(spec.query),
    ...Object.keys(commonQuery),
    ...(spec.body ? ['requestBody'] : []),
    ...(spec.ifMatch ? ['ifMatch'] : []),
    'signal',
  ];
  for (const key of Object.keys(given)) {
    if (given[key] === undefined || known.includes(key)) continue;
    const meant = known.find((name) => name.toLowerCase() === key.toLowerCase());
    throw new UsageError(`${where}: unknown parameter "${key}"${meant ? ` (did you mean "${meant}"?)` : ''}`, {
      code: 'INVALID_ARGUMENT',
      hint: `${name} takes ${known.join(', ')}`,
    });
  }
  const path = `/storage/v2/${spec.path.replace(/\{(\w+)\}/g, (_, key: string) => pathSegment(where, key, given[key]))}`;
  const searchParams: StorageParams = {};
  const headers: Record<string, string> = {};
  const prepared: Prepared = { path, searchParams, headers };
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined || pathNames.includes(key)) continue;
    if (key === 'requestBody' && spec.body) {
      expectObject(where, 'params.requestBody', value, 'an object (the resource as JSON)');
      prepared.json = value;
    } else if (key === 'ifMatch' && spec.ifMatch) {
      expectString(where, 'params.ifMatch', value, 'an etag string');
      headers['if-match'] = value;
    } else if (key === 'signal') {
      if (!(value instanceof AbortSignal)) throw new UsageError(`${where}: params.signal must be an AbortSignal`, { code: 'INVALID_ARGUMENT' });
      prepared.signal = value;
    } else if (key in spec.query || key in commonQuery) {
      const declared = (spec.query as Record<string, string>)[key] ?? commonQuery[key]!;
      searchParams[key] = checkQuery(where, key, declared.replace('!', '') as QueryType, value);
    }
  }
  for (const [key, declared] of Object.entries(spec.query as Record<string, string>)) {
    if (declared.endsWith('!') && searchParams[key] === undefined) throw new UsageError(`${where}: params.${key} is required`, { code: 'INVALID_ARGUMENT' });
  }
  if (spec.body === 'required' && prepared.json === undefined)
    throw new UsageError(`${where}: params.requestBody is required (the ${name.split('.')[0]} resource as JSON)`, { code: 'INVALID_ARGUMENT' });
  if (searchParams.alt !== undefined && searchParams.alt !== 'json') {
    throw new UsageError(`${where}: alt=${String(searchParams.alt)} is not a metadata call`, {
      code: 'INVALID_ARGUMENT',
      hint: 'content is downloaded with the storage download functions (alt=media) and exported with the export functions',
    });
  }
  return prepared;
}

async function call(transport: StorageTransport, name: StorageMethodName, params: unknown): Promise<unknown> {
  const spec: MethodSpec = STORAGE_METHODS[name];
  const { path, searchParams, headers, json, signal } = prepareCall(name, params);
  // A conditional write sent again after a lost answer would fail its own condition: it is retried only on answers
  // that say it was not carried out, as a creating POST is.
  const idempotent = headers['if-match'] !== undefined ? false : spec.http === 'POST' ? spec.idempotent === true : true;
  const response = await transport.request<unknown>({
    path,
    method: spec.http,
    searchParams,
    headers,
    idempotent,
    ...(json !== undefined ? { json } : {}),
    ...(signal ? { signal } : {}),
    ...(spec.response === 'bytes' ? { responseType: 'buffer' as const } : {}),
  });
  return spec.response === 'none' ? undefined : response.body;
}

function iterate(transport: StorageTransport, name: StorageMethodName, params: unknown): AsyncGenerator<unknown> {
  const spec: MethodSpec = STORAGE_METHODS[name];
  const { path, searchParams, signal } = prepareCall(name, params, `${name}.all`);
  // The change log's last page says where to start next time: a mask must not drop that either.
  if (name === 'changes.list') searchParams.fields = withFields(searchParams.fields as string | undefined, ['newStartPageToken']);
  const state = { newStartPageToken: undefined as string | undefined };
  const onPage = (page: StoragePage<unknown>) => {
    if (typeof page.newStartPageToken === 'string') state.newStartPageToken = page.newStartPageToken;
  };
  const generator = transport.list<unknown>(path, searchParams, spec.items, { ...(signal ? { signal } : {}), onPage });
  if (name !== 'changes.list') return generator;
  return Object.defineProperty(generator, 'newStartPageToken', { get: () => state.newStartPageToken, enumerable: true });
}

/** The namespaces of all 70 methods over one transport. */
export function createMethods(transport: StorageTransport): StorageMethods {
  const api: Record<string, Record<string, unknown>> = {};
  for (const [name, spec] of Object.entries(STORAGE_METHODS) as Array<[StorageMethodName, MethodSpec]>) {
    const [resource, method] = name.split('.') as [string, string];
    const fn = (params?: unknown) => call(transport, name, params);
    if (spec.items) Object.assign(fn, { all: (params?: unknown) => iterate(transport, name, params) });
    (api[resource] ??= {})[method] = fn;
  }
  return api as unknown as StorageMethods;
}
