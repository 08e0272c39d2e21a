// A CommonJS Pulumi program: one CommitStatus from the test's arguments; its outputs become the stack outputs.
const { CommitStatus } = require('gantry/providers');

module.exports = async function (args) {
  const status = new CommitStatus('status', args);
  return { statusId: status.statusId, url: status.url, createdAt: status.createdAt, state: status.state };
};
