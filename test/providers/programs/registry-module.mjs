// The same program as an ES module consumer.
import { RegistryModule } from 'gantry/providers';

export default async function ({ source, version, dir, triggers }) {
  const mod = new RegistryModule('mod', { source, version, dir, triggers });
  return {
    version: mod.version,
    constraint: mod.constraint,
    hash: mod.hash,
    path: mod.path,
    location: mod.location,
    latestAllowed: mod.latestAllowed,
  };
}
