import { areaConfig } from './base.mjs';

// Without the TypeScript checker, as stryker/platform.config.mjs says why.
export default {
  ...areaConfig('analysis', {
    mutate: ['lib/analysis/evaluate.ts', 'lib/analysis/thresholds.ts'],
    spec: ['test/analysis/gate-evaluation.test.ts', 'test/analysis/lhci.test.ts'],
  }),
  checkers: [],
};
