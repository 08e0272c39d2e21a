// An ES-module Pulumi program: one KvSecret per entry of the test's arguments, adopted with the `import`
// resource option when the entry has `importId`; stack outputs are each secret's version and (secret) data.
import { KvSecret } from 'gantry/providers';

export default async function ({ secrets }) {
  const outputs = {};
  for (const { name, importId, ...args } of secrets) {
    const secret = new KvSecret(name, args, importId ? { import: importId } : {});
    outputs[`${name}Version`] = secret.version;
    outputs[`${name}Data`] = secret.data;
  }
  return outputs;
}
