// An ES-module Pulumi program: one Record per entry of the test's arguments (a CapturingRecord, the
// anti-pattern, when `capturing`; `value` an additional secret output when `secretOutput`); stack outputs are the records' values and versions.
import * as pulumi from '@pulumi/pulumi';
import { CapturingRecord, Record } from 'gantry-test-records';

export default async function ({ records }) {
  const outputs = {};
  for (const { name, key, value, secret, secretOutput, capturing } of records) {
    const Kind = capturing ? CapturingRecord : Record;
    const options = secretOutput ? { additionalSecretOutputs: ['value'] } : {};
    const record = new Kind(name, { key, value: secret ? pulumi.secret(value) : value }, options);
    outputs[`${name}Value`] = record.value;
    outputs[`${name}Version`] = record.version;
  }
  return outputs;
}
