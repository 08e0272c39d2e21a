// An ES-module Pulumi program: StorageFolders, StorageFiles and StoragePermissions from the test's arguments. A
// folder's or file's `name` is its resource name and, unless `title` is given, its name in the service; a `parent`
// or `fileId` written `@name` is the id of the resource of that name made in the same run; a file with
// `secret: true` gets its content as a Pulumi secret. Stack outputs: each resource's id.
import * as pulumi from '@pulumi/pulumi';
import { StorageFile, StorageFolder, StoragePermission } from 'gantry/providers';

export default async function ({ folders = [], files = [], permissions = [] }) {
  const made = {};
  const ref = (value) => (typeof value === 'string' && value.startsWith('@') ? made[value.slice(1)].id : value);
  for (const { name, title, parent, ...args } of folders) made[name] = new StorageFolder(name, { ...args, name: title ?? name, parent: ref(parent) });
  for (const { name, title, parent, secret, content, ...args } of files) {
    made[name] = new StorageFile(name, { ...args, name: title ?? name, parent: ref(parent), content: secret ? pulumi.secret(content) : content });
  }
  for (const { name, fileId, ...args } of permissions) made[name] = new StoragePermission(name, { ...args, fileId: ref(fileId) });
  return Object.fromEntries(Object.entries(made).map(([name, resource]) => [`${name}Id`, resource.id]));
}
