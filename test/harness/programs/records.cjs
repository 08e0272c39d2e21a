// A CommonJS Pulumi program, as `tsc` emits a default Pulumi TypeScript project. One record per
// entry of the test's arguments: a CapturingRecord (the anti-pattern) when `capturing`, `value`
// secret when `secret`, an additional secret output when `secretOutput`, made from an earlier
// record's outputs when `valueFrom` names it, and the deleteBeforeReplace option when
// `deleteBeforeReplace`. Stack outputs: each record's value and version.
const pulumi = require('@pulumi/pulumi');
const testRecords = require('gantry-test-records');

module.exports = async function ({ records }) {
  const outputs = {};
  const declared = {};
  for (const { name, key, value, secret, secretOutput, capturing, valueFrom, deleteBeforeReplace } of records) {
    const Kind = capturing ? testRecords.CapturingRecord : testRecords.Record;
    const options = { ...(secretOutput ? { additionalSecretOutputs: ['value'] } : {}), ...(deleteBeforeReplace ? { deleteBeforeReplace } : {}) };
    const from = declared[valueFrom];
    const input = from ? pulumi.interpolate`from ${from.key} v${from.version}` : value;
    const record = new Kind(name, { key, value: secret ? pulumi.secret(input) : input }, options);
    declared[name] = record;
    outputs[`${name}Value`] = record.value;
    outputs[`${name}Version`] = record.version;
  }
  return outputs;
};
