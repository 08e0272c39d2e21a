/**
 * StorageFolder: a folder in the storage service (Drive v2's `application/vnd.google-apps.folder`), as a Pulumi
 * dynamic resource. A new name, parent or description is a metadata patch of the same folder (its id and links
 * stay); a folder trashed outside Pulumi is drift that the next `up` takes out of the trash; one deleted outside is
 * gone (refresh) or replaced (up).
 *
 * Delete trashes the folder (`permanentDelete: true` deletes it, skipping the trash), and refuses while the folder
 * holds anything that is not in the trash — what others put there, or another stack's files — so that Gantry never
 * removes what it did not create; with `permanentDelete` it also refuses when the trash inside holds an item Gantry
 * did not make (a permanent delete takes the folder's trashed content with it).
 *
 * The provider object below (made by `resourceType` with `serializedProvider`, ./serialized.ts) is what Pulumi
 * serializes into `__provider`: its methods capture nothing and load `storageFolderOperations` through
 * `gantry/providers` in the plugin, where the token is read from STORAGE_TOKEN or a `gantry auth` login
 * (./storage-shared.ts).
 */
import { resourceType, type ArgsOf } from './resource.js';
import { serviceMethods } from './serialized.js';
import { storageConfig } from './storage-config.js';

export interface StorageFolderInputs {
  /** The folder's name (its title). A new name renames the folder. */
  name: string;
  /** The id of the folder it sits in; default `root`. A new parent moves the folder. */
  parent: string;
  description?: string;
  /** On delete, delete the folder instead of trashing it. */
  permanentDelete?: boolean;
}

export type StorageFolderArgs = ArgsOf<Omit<StorageFolderInputs, 'parent'> & Partial<Pick<StorageFolderInputs, 'parent'>>>;

export interface StorageFolderOutputs extends StorageFolderInputs {
  /** The folder's page in the service's web interface. */
  alternateLink?: string;
  /** Set when the service publishes the folder's content on the web. */
  webViewLink?: string;
  createdDate?: string;
  /** True when the folder is in the trash (drift: the next `up` takes it out). */
  trashed: boolean;
}

export const storageFolder = resourceType<StorageFolderInputs, StorageFolderOutputs>()({
  type: 'gantry:storage:StorageFolder',
  operations: 'storageFolderOperations',
  inputs: ['name', 'parent', 'description', 'permanentDelete'],
  outputs: ['alternateLink', 'webViewLink', 'createdDate', 'trashed'],
  config: storageConfig,
  ...serviceMethods,
});

export class StorageFolder extends storageFolder.Resource {}

export const { provider: storageFolderProvider, inputKeys, operations: storageFolderOperations } = storageFolder;
