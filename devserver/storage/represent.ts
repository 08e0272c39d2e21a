// Drive v2's resource representations with `drive` renamed `storage`: storage#file, storage#parentReference,
// storage#revision, storage#fileList, storage#change.
import type { Model } from './model.js';
import { FOLDER_MIME, type FileRecord, type RevisionRecord } from './store.js';

export const OWNER = {
  kind: 'storage#user',
  displayName: 'Gantry Dev',
  emailAddress: 'dev@gantry.test',
  permissionId: '00000000000000000001',
  isAuthenticatedUser: true,
};

export function fileJson(model: Model, file: FileRecord, origin: string): Record<string, unknown> {
  const base = `${origin}/storage/v2/files/${file.id}`;
  const isFolder = file.mimeType === FOLDER_MIME;
  const extension = !isFolder && file.title.includes('.') ? file.title.slice(file.title.lastIndexOf('.') + 1) : undefined;
  return {
    kind: 'storage#file',
    id: file.id,
    etag: model.etag(file),
    selfLink: base,
    alternateLink: `${origin}/file/d/${file.id}/view`,
    title: file.title,
    mimeType: file.mimeType,
    ...(file.description !== undefined ? { description: file.description } : {}),
    labels: { ...file.labels },
    explicitlyTrashed: file.explicitlyTrashed,
    createdDate: file.createdDate,
    modifiedDate: file.modifiedDate,
    modifiedByMeDate: file.modifiedDate,
    ...(file.lastViewedByMeDate ? { lastViewedByMeDate: file.lastViewedByMeDate } : {}),
    version: String(file.version),
    parents: file.parents.map((id) => parentJson(model, file.id, id, origin)),
    ...(isFolder ? {} : { downloadUrl: `${base}?alt=media`, webContentLink: `${base}?alt=media` }),
    ...(file.originalFilename !== undefined ? { originalFilename: file.originalFilename } : {}),
    ...(extension !== undefined ? { fileExtension: extension, fullFileExtension: extension } : {}),
    ...(file.md5Checksum !== undefined ? { md5Checksum: file.md5Checksum } : {}),
    ...(file.fileSize !== undefined ? { fileSize: String(file.fileSize) } : {}),
    quotaBytesUsed: String(file.fileSize ?? 0),
    ...(file.headRevisionId !== undefined ? { headRevisionId: file.headRevisionId } : {}),
    ownerNames: [OWNER.displayName],
    owners: [OWNER],
    lastModifyingUser: OWNER,
    lastModifyingUserName: OWNER.displayName,
    editable: true,
    copyable: !isFolder,
    shared: (model.data.permissions[file.id] ?? []).length > 0,
    writersCanShare: true,
    appDataContents: false,
    spaces: ['drive'],
    properties: file.properties.map((p) => ({ kind: 'storage#property', etag: model.etag(file), key: p.key, value: p.value, visibility: p.visibility })),
  };
}

export function parentJson(model: Model, fileId: string, parentId: string, origin: string): Record<string, unknown> {
  return {
    kind: 'storage#parentReference',
    id: parentId,
    selfLink: `${origin}/storage/v2/files/${fileId}/parents/${parentId}`,
    parentLink: `${origin}/storage/v2/files/${parentId}`,
    isRoot: parentId === model.data.rootId,
  };
}

export function revisionJson(model: Model, file: FileRecord, revision: RevisionRecord, origin: string): Record<string, unknown> {
  return {
    kind: 'storage#revision',
    etag: `"${revision.id.slice(0, 20)}"`,
    id: revision.id,
    selfLink: `${origin}/storage/v2/files/${file.id}/revisions/${revision.id}`,
    mimeType: revision.mimeType,
    modifiedDate: revision.modifiedDate,
    pinned: revision.pinned,
    published: false,
    md5Checksum: revision.md5Checksum,
    fileSize: String(revision.fileSize),
    ...(revision.originalFilename !== undefined ? { originalFilename: revision.originalFilename } : {}),
    downloadUrl: `${origin}/storage/v2/files/${file.id}/revisions/${revision.id}?alt=media`,
    lastModifyingUser: OWNER,
    lastModifyingUserName: OWNER.displayName,
  };
}
