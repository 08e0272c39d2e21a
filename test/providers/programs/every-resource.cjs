// A CommonJS Pulumi program declaring the gantry resources the test lists (`{ resource, name, args }`: resource is
// a class of gantry/providers), for a preview: Check runs in the plugin for each and nothing is created.
const providers = require('gantry/providers');

module.exports = async function ({ resources }) {
  for (const { resource, name, args } of resources) new providers[resource](name, args);
  return {};
};
