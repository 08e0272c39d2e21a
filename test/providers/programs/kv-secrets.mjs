// An ES-module Pulumi program: one KvSecret per entry of the test's arguments; stack outputs are each
// secret's version, createdTime and (secret) data.
import { KvSecret } from 'gantry/providers';

export default async function ({ secrets }) {
  const outputs = {};
  for (const { name, ...args } of secrets) {
    const secret = new KvSecret(name, args);
    outputs[`${name}Version`] = secret.version;
    outputs[`${name}CreatedTime`] = secret.createdTime;
    outputs[`${name}Data`] = secret.data;
  }
  return outputs;
}
