// The same program as a CommonJS consumer: StorageFolders, StorageFiles and StoragePermissions from the test's
// arguments (`title` is the name in the service when it is not the resource name; `@name` is the id of the resource
// of that name; `secret: true` makes a file's content a secret).
const pulumi = require('@pulumi/pulumi');
const { StorageFile, StorageFolder, StoragePermission } = require('gantry/providers');

module.exports = async function ({ folders = [], files = [], permissions = [] }) {
  const made = {};
  const ref = (value) => (typeof value === 'string' && value.startsWith('@') ? made[value.slice(1)].id : value);
  for (const { name, title, parent, ...args } of folders) made[name] = new StorageFolder(name, { ...args, name: title ?? name, parent: ref(parent) });
  for (const { name, title, parent, secret, content, ...args } of files) {
    made[name] = new StorageFile(name, { ...args, name: title ?? name, parent: ref(parent), content: secret ? pulumi.secret(content) : content });
  }
  for (const { name, fileId, ...args } of permissions) made[name] = new StoragePermission(name, { ...args, fileId: ref(fileId) });
  return Object.fromEntries(Object.entries(made).map(([name, resource]) => [`${name}Id`, resource.id]));
};
