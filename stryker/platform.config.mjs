import { areaConfig } from './base.mjs';

// No TypeScript checker here: on the shared 2-core machine it took 4.5 min to start and about a minute per mutant,
// while this spec runs in 130 ms. A mutant that would not compile runs as tsx strips it, and counts as killed or
// survived like any other.
export default {
  ...areaConfig('platform', {
    mutate: ['lib/platform/budget.ts', 'lib/platform/limiter.ts'],
    spec: ['test/platform/budget.test.ts'],
  }),
  checkers: [],
};
