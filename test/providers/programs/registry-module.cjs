// A CommonJS Pulumi program (as a default Pulumi TypeScript project compiles): one RegistryModule from the test's
// arguments; its outputs become the stack outputs.
const { RegistryModule } = require('gantry/providers');

module.exports = async function ({ source, version, dir, triggers }) {
  const mod = new RegistryModule('mod', { source, version, dir, triggers });
  return {
    version: mod.version,
    constraint: mod.constraint,
    hash: mod.hash,
    path: mod.path,
    location: mod.location,
    latestAllowed: mod.latestAllowed,
  };
};
