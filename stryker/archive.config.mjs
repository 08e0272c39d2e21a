import { areaConfig } from './base.mjs';

export default areaConfig('archive', {
  mutate: ['lib/sources/archive.ts', 'lib/sources/tree-writer.ts', 'lib/sources/young-collection.ts'],
  // In-process only: extract.test.ts and extract-hardening.test.ts extract real archives (and install through
  // fetchSource from file: URLs) in the test process, the latter with fake bzip2 and xz programs on PATH where a
  // filter's failure is the point; the property tests call safeRelativePath and check the writer's tree against the disk; young-collection.test.ts counts the
  // paced collections. The CLI's module tests run the same code in other processes, where no mutant is active.
  spec: [
    'test/sources/extract.test.ts',
    'test/sources/extract-hardening.test.ts',
    'test/properties/archive-paths.test.ts',
    'test/properties/archive-tree.test.ts',
    'test/sources/young-collection.test.ts',
  ],
});
