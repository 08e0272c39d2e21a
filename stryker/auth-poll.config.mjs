import { areaConfig } from './base.mjs';

export default areaConfig('auth-poll', {
  mutate: ['lib/auth/poll.ts'],
  // In process: the poll loop against a token endpoint the test programs answer by answer, with hundredth-of-a-second
  // intervals and a held deadline clock. test/auth/device-flow.test.ts and oidc-provider.test.ts poll whole
  // authorization servers in real seconds: too slow to run for every mutant.
  spec: ['test/auth/poll.test.ts'],
});
