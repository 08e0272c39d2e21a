/**
 * StoragePermission: who may do what with a file or folder of the storage service (permissions.insert), as a
 * Pulumi dynamic resource. A new role is a permissions.patch of the same permission; a new file, type, e-mail
 * address, domain or `withLink` is another permission (replace). Delete removes the permission (permissions.delete).
 *
 * Drive v2 has no `commenter` role of its own: it is `reader` with `additionalRoles: ["commenter"]`, which is what
 * is sent for `role: "commenter"` and how it is read back.
 *
 * The provider object below (made by `resourceType` with `serializedProvider`, ./serialized.ts) is what Pulumi
 * serializes into `__provider`: its methods capture nothing and load `storagePermissionOperations` through
 * `gantry/providers` in the plugin, where the token is read from STORAGE_TOKEN or a `gantry auth` login
 * (./storage-shared.ts).
 */
import { resourceType, type ArgsOf } from './resource.js';
import { serviceMethods } from './serialized.js';
import { storageConfig } from './storage-config.js';

export const storagePermissionRoles = ['reader', 'commenter', 'writer', 'owner'] as const;
export const storagePermissionTypes = ['user', 'group', 'domain', 'anyone'] as const;
export type StoragePermissionRole = (typeof storagePermissionRoles)[number];
export type StoragePermissionType = (typeof storagePermissionTypes)[number];

export interface StoragePermissionInputs {
  /** The file or folder (a folder's permissions reach what it holds). A new one replaces the permission. */
  fileId: string;
  /** A new role patches the permission. `owner` transfers ownership (user permissions only). */
  role: StoragePermissionRole;
  /** Who: a user or group (`emailAddress`), a domain (`domain`), or anyone. A new type replaces the permission. */
  type: StoragePermissionType;
  /** For `user` and `group`. */
  emailAddress?: string;
  /** For `domain`, e.g. `example.com`. */
  domain?: string;
  /** For `anyone`: true for anyone with the link, false (default) for anyone who finds it. */
  withLink?: boolean;
  /** Whether the service e-mails the user or group about the new permission (Drive's default: true). At insert only. */
  sendNotificationEmails?: boolean;
  /** A message in that e-mail. At insert only. */
  emailMessage?: string;
}

export type StoragePermissionArgs = ArgsOf<StoragePermissionInputs>;

export interface StoragePermissionOutputs extends StoragePermissionInputs {
  /** The permission's id on the file (the resource's id is `<fileId>/<permissionId>`). */
  permissionId: string;
  /** The user's or group's name, when the service gives one. */
  displayName?: string;
}

export const storagePermission = resourceType<StoragePermissionInputs, StoragePermissionOutputs>()({
  type: 'gantry:storage:StoragePermission',
  operations: 'storagePermissionOperations',
  inputs: ['fileId', 'role', 'type', 'emailAddress', 'domain', 'withLink', 'sendNotificationEmails', 'emailMessage'],
  outputs: ['permissionId', 'displayName'],
  config: storageConfig,
  ...serviceMethods,
});

export class StoragePermission extends storagePermission.Resource {}

export const { provider: storagePermissionProvider, inputKeys, operations: storagePermissionOperations } = storagePermission;
