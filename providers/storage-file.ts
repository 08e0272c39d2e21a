/**
 * StorageFile: a file in the storage service with content from a local file (`source`, streamed) or a string
 * (`content`), as a Pulumi dynamic resource.
 *
 * The content is compared by md5: Check computes the md5 of the local content (a file is read a MiB at a time, never
 * whole), Diff compares it with the service's `md5Checksum`, so an unchanged file is never uploaded again and one
 * changed in the service outside Pulumi is put back. A changed content is uploaded as a new revision of the same
 * file (files.update with media at /upload/storage/v2/files/{id}: same id, same links, the service keeps the earlier
 * revisions); a new name, parent, description or mimeType is a metadata patch. A file trashed outside Pulumi is drift
 * that the next `up` takes out of the trash; one deleted outside is gone (refresh) or created again (up).
 *
 * `content` may be a secret: the state then holds it encrypted as an input (where the engine keeps every input) and
 * only its md5 (`contentMd5`) as an output — never the text. Delete trashes the file; `permanentDelete: true`
 * deletes it, skipping the trash. Only the file this resource created is ever trashed or deleted.
 *
 * The provider object below (made by `resourceType` with `serializedProvider`, ./serialized.ts) is what Pulumi
 * serializes into `__provider`: its methods capture nothing and load `storageFileOperations` through
 * `gantry/providers` in the plugin, where the token is read from STORAGE_TOKEN or a `gantry auth` login
 * (./storage-shared.ts).
 */
import { resourceType, type ArgsOf } from './resource.js';
import { serviceMethods } from './serialized.js';
import { storageConfig } from './storage-config.js';

export interface StorageFileInputs {
  /** The id of the folder the file sits in (`root` for the root folder). A new parent moves the file. */
  parent: string;
  /** The file's name (its title). A new name renames the file. */
  name: string;
  /** A local file to upload (relative to the Pulumi program's folder, or absolute). Exactly one of source and content. */
  source?: string;
  /** The content as text (UTF-8), at most 5 MiB; may be a secret. Exactly one of source and content. */
  content?: string;
  /** The md5 (hex) of the local content, computed by Check. */
  contentMd5?: string;
  /** The content's media type; default what the service makes of application/octet-stream. */
  mimeType?: string;
  description?: string;
  /** On delete, delete the file (and its revisions) instead of trashing it. */
  permanentDelete?: boolean;
}

export type StorageFileArgs = ArgsOf<Omit<StorageFileInputs, 'contentMd5'>>;

/** Outputs: the inputs without `content`, and what the service says of the file. */
export interface StorageFileOutputs extends Omit<StorageFileInputs, 'content'> {
  /** The service's md5 of the file's current content. */
  md5Checksum?: string;
  /** Bytes, as a decimal string (Drive v2's int64). */
  fileSize?: string;
  /** The revision the content is; a new one on each content upload. */
  headRevisionId?: string;
  alternateLink?: string;
  webContentLink?: string;
  createdDate?: string;
  trashed: boolean;
}

/** Above this, give the content as a file (`source`): the engine keeps `content` in the state. */
export const maxContentBytes = 5 * 1024 * 1024;

export const storageFile = resourceType<StorageFileInputs, StorageFileOutputs, StorageFileArgs>()({
  type: 'gantry:storage:StorageFile',
  operations: 'storageFileOperations',
  // What the program gives; `contentMd5`, an input too, is Check's.
  inputs: ['parent', 'name', 'source', 'content', 'mimeType', 'description', 'permanentDelete'],
  outputs: ['contentMd5', 'md5Checksum', 'fileSize', 'headRevisionId', 'alternateLink', 'webContentLink', 'createdDate', 'trashed'],
  config: storageConfig,
  ...serviceMethods,
});

export class StorageFile extends storageFile.Resource {}

export const { provider: storageFileProvider, inputKeys: givenKeys, operations: storageFileOperations } = storageFile;
