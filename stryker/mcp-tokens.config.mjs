import { areaConfig } from './base.mjs';

export default areaConfig('mcp-tokens', {
  mutate: ['lib/mcp/server/tokens.ts', 'lib/mcp/server/challenge.ts'],
  // In process: the validator against a programmable authorization server on 127.0.0.1, and the challenge and
  // credential reader alone. test/mcp/server.test.ts covers the same through oidc-provider and the built command, at
  // seconds a test: too slow to run for every mutant.
  spec: ['test/mcp/token-validation.test.ts', 'test/mcp/challenge.test.ts'],
});
