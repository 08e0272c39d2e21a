import { areaConfig } from './base.mjs';

export default areaConfig('redact', {
  mutate: ['lib/redact.ts'],
  spec: ['test/audit/redact.test.ts', 'test/errors.test.ts'],
});
