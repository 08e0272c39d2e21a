import { areaConfig } from './base.mjs';

// Both files import thresholds.ts and evaluate.ts themselves, not lib/analysis/index.js: the checker's project is then
// those modules and their few imports, not the whole package with Lighthouse's types (docs/testing.md: 5x faster).
export default areaConfig('analysis', {
  mutate: ['lib/analysis/evaluate.ts', 'lib/analysis/thresholds.ts'],
  spec: ['test/analysis/thresholds.test.ts', 'test/analysis/evaluate.test.ts'],
});
