import { areaConfig } from './base.mjs';

export default areaConfig('platform', {
  mutate: ['lib/platform/budget.ts', 'lib/platform/limiter.ts'],
  spec: ['test/platform/budget.test.ts'],
});
