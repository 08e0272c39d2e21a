import { areaConfig } from './base.mjs';

export default areaConfig('analysis', {
  mutate: ['lib/analysis/evaluate.ts', 'lib/analysis/thresholds.ts'],
  spec: ['test/analysis/gate-evaluation.test.ts', 'test/analysis/lhci.test.ts'],
});
