import { areaConfig } from './base.mjs';

export default areaConfig('registry', {
  mutate: ['lib/registry/constraints.ts', 'lib/registry/lockfile.ts'],
  // Constraints and the lock file called in-process, with temporary files for the lock's reads and writes; the
  // modules files that pin and install through the embedded registry run the same code slower.
  spec: ['test/registry/constraints.test.ts', 'test/properties/constraints.test.ts', 'test/registry/duplicate-keys.test.ts', 'test/registry/lockfile.test.ts'],
});
