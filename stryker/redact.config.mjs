import { areaConfig } from './base.mjs';

export default areaConfig('redact', {
  mutate: ['lib/redact.ts'],
  // In-process tests only: each of redact's many static mutants (module-level tables and patterns) restarts the
  // test process, so the spec is the two files that call lib/redact directly and through the HTTP core.
  spec: ['test/audit/redact-shapes.test.ts', 'test/audit/redact.test.ts'],
});
