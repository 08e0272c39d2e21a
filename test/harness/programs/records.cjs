// A CommonJS Pulumi program, as `tsc` emits a default Pulumi TypeScript project: one Record per
// entry of the test's arguments (a CapturingRecord, the anti-pattern, when
// `capturing`; `value` an additional secret output when `secretOutput`); stack
// outputs are the records' values and versions.
const pulumi = require('@pulumi/pulumi');
const testRecords = require('gantry-test-records');

module.exports = async function ({ records }) {
  const outputs = {};
  for (const { name, key, value, secret, secretOutput, capturing } of records) {
    const Kind = capturing ? testRecords.CapturingRecord : testRecords.Record;
    const options = secretOutput ? { additionalSecretOutputs: ['value'] } : {};
    const record = new Kind(name, { key, value: secret ? pulumi.secret(value) : value }, options);
    outputs[`${name}Value`] = record.value;
    outputs[`${name}Version`] = record.version;
  }
  return outputs;
};
