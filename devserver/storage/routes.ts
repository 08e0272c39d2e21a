// The route table of the storage API (STO-BASE-PREFIX, AMB-23, AMB-24): templates are matched in order, so the
// literal paths `files/trash`, `files/generateIds` and `files/generateCseToken` come before `files/{fileId}`.
import { RouteTable, type RouteResult } from '../kit/index.js';
import type { Handler } from './context.js';
import * as changes from './changes.js';
import * as channels from './channels.js';
import * as drives from './drives.js';
import * as labels from './labels.js';
import * as comments from './comments.js';
import * as files from './files.js';
import * as permissions from './permissions.js';
import * as properties from './properties.js';
import * as refs from './refs.js';
import * as revisions from './revisions.js';
import { upload } from './uploads.js';

export interface Route {
  method: string;
  template: string;
  name: string;
  handler: Handler;
}

/**
 * Drive's verbs on a collection and its members, routed in this order: list, insert, get, patch, update (PUT, served by
 * patch unless given), delete (`remove`). A handler module that names its handlers so is its own Verbs; one that serves
 * a second resource exports that one's Verbs (refs.parents, refs.children, comments.replies).
 */
interface Verbs {
  list?: Handler;
  insert?: Handler;
  get?: Handler;
  patch?: Handler;
  update?: Handler;
  remove?: Handler;
}

/** The routes of one resource: `collection` and `collection/{id}`, for the verbs it has. */
function resource(name: string, collection: string, id: string, verbs: Verbs): Route[] {
  const member = `${collection}/{${id}}`;
  const all: Array<[string, string, string, Handler | undefined]> = [
    ['GET', collection, 'list', verbs.list],
    ['POST', collection, 'insert', verbs.insert],
    ['GET', member, 'get', verbs.get],
    ['PATCH', member, 'patch', verbs.patch],
    ['PUT', member, 'update', verbs.update ?? verbs.patch],
    ['DELETE', member, 'delete', verbs.remove],
  ];
  return all.flatMap(([method, template, verb, handler]) => (handler ? [{ method, template, name: `${name}.${verb}`, handler }] : []));
}

const F = '/storage/v2/files';
export const ROUTES: Route[] = [
  { method: 'GET', template: F, name: 'files.list', handler: files.list },
  { method: 'POST', template: F, name: 'files.insert', handler: files.insert },
  { method: 'DELETE', template: `${F}/trash`, name: 'files.emptyTrash', handler: files.emptyTrash },
  { method: 'GET', template: `${F}/generateIds`, name: 'files.generateIds', handler: files.generateIds },
  { method: 'GET', template: `${F}/generateCseToken`, name: 'files.generateCseToken', handler: files.generateCseToken },
  { method: 'GET', template: `${F}/{fileId}`, name: 'files.get', handler: files.get },
  { method: 'PATCH', template: `${F}/{fileId}`, name: 'files.patch', handler: files.patch },
  { method: 'PUT', template: `${F}/{fileId}`, name: 'files.update', handler: files.patch },
  { method: 'DELETE', template: `${F}/{fileId}`, name: 'files.delete', handler: files.remove },
  { method: 'GET', template: `${F}/{fileId}/export`, name: 'files.export', handler: labels.exportFile },
  { method: 'GET', template: `${F}/{fileId}/listLabels`, name: 'files.listLabels', handler: labels.listLabels },
  { method: 'POST', template: `${F}/{fileId}/modifyLabels`, name: 'files.modifyLabels', handler: labels.modifyLabels },
  { method: 'POST', template: `${F}/{fileId}/watch`, name: 'files.watch', handler: channels.watchFile },
  { method: 'POST', template: `${F}/{fileId}/copy`, name: 'files.copy', handler: files.copy },
  { method: 'POST', template: `${F}/{fileId}/trash`, name: 'files.trash', handler: files.trash },
  { method: 'POST', template: `${F}/{fileId}/untrash`, name: 'files.untrash', handler: files.untrash },
  { method: 'POST', template: `${F}/{fileId}/touch`, name: 'files.touch', handler: files.touch },
  ...resource('parents', `${F}/{fileId}/parents`, 'parentId', refs.parents),
  ...resource('children', `${F}/{folderId}/children`, 'childId', refs.children),
  ...resource('permissions', `${F}/{fileId}/permissions`, 'permissionId', permissions),
  { method: 'GET', template: '/storage/v2/permissionIds/{email}', name: 'permissions.getIdForEmail', handler: permissions.idForEmailRoute },
  ...resource('properties', `${F}/{fileId}/properties`, 'propertyKey', properties),
  ...resource('comments', `${F}/{fileId}/comments`, 'commentId', comments),
  ...resource('replies', `${F}/{fileId}/comments/{commentId}/replies`, 'replyId', comments.replies),
  ...resource('revisions', `${F}/{fileId}/revisions`, 'revisionId', revisions),
  { method: 'GET', template: '/storage/v2/about', name: 'about.get', handler: changes.about },
  { method: 'GET', template: '/storage/v2/changes/startPageToken', name: 'changes.getStartPageToken', handler: changes.startPageToken },
  { method: 'GET', template: '/storage/v2/changes', name: 'changes.list', handler: changes.list },
  { method: 'POST', template: '/storage/v2/changes/watch', name: 'changes.watch', handler: channels.watchChanges },
  { method: 'POST', template: '/storage/v2/channels/stop', name: 'channels.stop', handler: channels.stop },
  ...resource('drives', '/storage/v2/drives', 'driveId', drives),
  { method: 'POST', template: '/storage/v2/drives/{driveId}/hide', name: 'drives.hide', handler: drives.hide },
  { method: 'POST', template: '/storage/v2/drives/{driveId}/unhide', name: 'drives.unhide', handler: drives.unhide },
  { method: 'GET', template: '/storage/v2/apps', name: 'apps.list', handler: drives.appsList },
  { method: 'GET', template: '/storage/v2/apps/{appId}', name: 'apps.get', handler: drives.appsGet },
  { method: 'GET', template: '/storage/v2/changes/{changeId}', name: 'changes.get', handler: changes.get },
  { method: 'POST', template: '/upload/storage/v2/files', name: 'files.insert', handler: upload },
  { method: 'PUT', template: '/upload/storage/v2/files', name: 'files.insert', handler: upload },
  { method: 'PUT', template: '/upload/storage/v2/files/{fileId}', name: 'files.update', handler: upload },
  { method: 'POST', template: '/upload/storage/v2/files/{fileId}', name: 'files.update', handler: upload },
];

const TABLE = new RouteTable(ROUTES);

/** The first route whose template and method match; `allowed` lists the methods of a path matched by template only. */
export function route(method: string, pathname: string): RouteResult<Route> {
  return TABLE.match(method, pathname);
}
