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
  { method: 'GET', template: `${F}/{fileId}/parents`, name: 'parents.list', handler: refs.parentsList },
  { method: 'POST', template: `${F}/{fileId}/parents`, name: 'parents.insert', handler: refs.parentsInsert },
  { method: 'GET', template: `${F}/{fileId}/parents/{parentId}`, name: 'parents.get', handler: refs.parentsGet },
  { method: 'DELETE', template: `${F}/{fileId}/parents/{parentId}`, name: 'parents.delete', handler: refs.parentsDelete },
  { method: 'GET', template: `${F}/{folderId}/children`, name: 'children.list', handler: refs.childrenList },
  { method: 'POST', template: `${F}/{folderId}/children`, name: 'children.insert', handler: refs.childrenInsert },
  { method: 'GET', template: `${F}/{folderId}/children/{childId}`, name: 'children.get', handler: refs.childrenGet },
  { method: 'DELETE', template: `${F}/{folderId}/children/{childId}`, name: 'children.delete', handler: refs.childrenDelete },
  { method: 'GET', template: `${F}/{fileId}/permissions`, name: 'permissions.list', handler: permissions.list },
  { method: 'POST', template: `${F}/{fileId}/permissions`, name: 'permissions.insert', handler: permissions.insert },
  { method: 'GET', template: `${F}/{fileId}/permissions/{permissionId}`, name: 'permissions.get', handler: permissions.get },
  { method: 'PATCH', template: `${F}/{fileId}/permissions/{permissionId}`, name: 'permissions.patch', handler: permissions.patch },
  { method: 'PUT', template: `${F}/{fileId}/permissions/{permissionId}`, name: 'permissions.update', handler: permissions.patch },
  { method: 'DELETE', template: `${F}/{fileId}/permissions/{permissionId}`, name: 'permissions.delete', handler: permissions.remove },
  { method: 'GET', template: '/storage/v2/permissionIds/{email}', name: 'permissions.getIdForEmail', handler: permissions.idForEmailRoute },
  { method: 'GET', template: `${F}/{fileId}/properties`, name: 'properties.list', handler: properties.list },
  { method: 'POST', template: `${F}/{fileId}/properties`, name: 'properties.insert', handler: properties.insert },
  { method: 'GET', template: `${F}/{fileId}/properties/{propertyKey}`, name: 'properties.get', handler: properties.get },
  { method: 'PATCH', template: `${F}/{fileId}/properties/{propertyKey}`, name: 'properties.patch', handler: properties.patch },
  { method: 'PUT', template: `${F}/{fileId}/properties/{propertyKey}`, name: 'properties.update', handler: properties.patch },
  { method: 'DELETE', template: `${F}/{fileId}/properties/{propertyKey}`, name: 'properties.delete', handler: properties.remove },
  { method: 'GET', template: `${F}/{fileId}/comments`, name: 'comments.list', handler: comments.list },
  { method: 'POST', template: `${F}/{fileId}/comments`, name: 'comments.insert', handler: comments.insert },
  { method: 'GET', template: `${F}/{fileId}/comments/{commentId}`, name: 'comments.get', handler: comments.get },
  { method: 'PATCH', template: `${F}/{fileId}/comments/{commentId}`, name: 'comments.patch', handler: comments.patch },
  { method: 'PUT', template: `${F}/{fileId}/comments/{commentId}`, name: 'comments.update', handler: comments.patch },
  { method: 'DELETE', template: `${F}/{fileId}/comments/{commentId}`, name: 'comments.delete', handler: comments.remove },
  { method: 'GET', template: `${F}/{fileId}/comments/{commentId}/replies`, name: 'replies.list', handler: comments.replyList },
  { method: 'POST', template: `${F}/{fileId}/comments/{commentId}/replies`, name: 'replies.insert', handler: comments.replyInsert },
  { method: 'GET', template: `${F}/{fileId}/comments/{commentId}/replies/{replyId}`, name: 'replies.get', handler: comments.replyGet },
  { method: 'PATCH', template: `${F}/{fileId}/comments/{commentId}/replies/{replyId}`, name: 'replies.patch', handler: comments.replyPatch },
  { method: 'PUT', template: `${F}/{fileId}/comments/{commentId}/replies/{replyId}`, name: 'replies.update', handler: comments.replyPatch },
  { method: 'DELETE', template: `${F}/{fileId}/comments/{commentId}/replies/{replyId}`, name: 'replies.delete', handler: comments.replyRemove },
  { method: 'GET', template: `${F}/{fileId}/revisions`, name: 'revisions.list', handler: revisions.list },
  { method: 'GET', template: `${F}/{fileId}/revisions/{revisionId}`, name: 'revisions.get', handler: revisions.get },
  { method: 'PATCH', template: `${F}/{fileId}/revisions/{revisionId}`, name: 'revisions.patch', handler: revisions.patch },
  { method: 'PUT', template: `${F}/{fileId}/revisions/{revisionId}`, name: 'revisions.update', handler: revisions.patch },
  { method: 'DELETE', template: `${F}/{fileId}/revisions/{revisionId}`, name: 'revisions.delete', handler: revisions.remove },
  { method: 'GET', template: '/storage/v2/about', name: 'about.get', handler: changes.about },
  { method: 'GET', template: '/storage/v2/changes/startPageToken', name: 'changes.getStartPageToken', handler: changes.startPageToken },
  { method: 'GET', template: '/storage/v2/changes', name: 'changes.list', handler: changes.list },
  { method: 'POST', template: '/storage/v2/changes/watch', name: 'changes.watch', handler: channels.watchChanges },
  { method: 'POST', template: '/storage/v2/channels/stop', name: 'channels.stop', handler: channels.stop },
  { method: 'GET', template: '/storage/v2/drives', name: 'drives.list', handler: drives.list },
  { method: 'POST', template: '/storage/v2/drives', name: 'drives.insert', handler: drives.insert },
  { method: 'GET', template: '/storage/v2/drives/{driveId}', name: 'drives.get', handler: drives.get },
  { method: 'PUT', template: '/storage/v2/drives/{driveId}', name: 'drives.update', handler: drives.update },
  { method: 'DELETE', template: '/storage/v2/drives/{driveId}', name: 'drives.delete', handler: drives.remove },
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
