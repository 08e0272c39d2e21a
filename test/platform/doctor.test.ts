// gantry doctor's platform row: GET /rate_limit through the platform client, against the scripted stand-in.
import assert from 'node:assert/strict';
import { checkEndpoints } from '../../lib/doctor/endpoints.js';
import { silentLogger } from '../../lib/log.js';
import { startMockPlatform } from './helpers/mock-platform.js';
import { VirtualClock } from './helpers/virtual-clock.js';

describe('doctor: the platform API endpoint (PLATFORM_API_URL)', function () {
  this.timeout(20_000);

  it('RATE-EP-STATUS: probes GET /rate_limit with the token and reports the identity and the core budget; a 401 says to renew the token', async () => {
    const peer = await startMockPlatform(new VirtualClock(), (s) =>
      s.headers.authorization === 'Bearer ghp_doctor0000000000000000000000000000'
        ? { status: 200, body: { resources: { core: { limit: 5000, remaining: 4990, reset: 0, used: 10 } } } }
        : { status: 401, body: { message: 'Bad credentials' } },
    );
    try {
      const find = async (env: NodeJS.ProcessEnv) =>
        (await Promise.all(checkEndpoints({ env, timeoutMs: 5000, logger: silentLogger }))).find((c) => c.setting === 'PLATFORM_API_URL')!;
      const ok = await find({ PLATFORM_API_URL: peer.url, GANTRY_PLATFORM_TOKEN: 'ghp_doctor0000000000000000000000000000', NO_PROXY: '*' });
      assert.equal(ok.status, 'ok', ok.detail);
      assert.match(ok.detail, /as personal, core 4990\/5000 left/);
      assert.equal(peer.seen[0]!.path, '/rate_limit');
      const refused = await find({ PLATFORM_API_URL: peer.url, GANTRY_PLATFORM_TOKEN: 'ghp_revoked000000000000000000000000000', NO_PROXY: '*' });
      assert.equal(refused.status, 'error');
      assert.match(refused.detail, /renew/);
      assert.ok(!refused.detail.includes('ghp_revoked'));
      const unset = await find({});
      assert.equal(unset.status, 'not configured');
    } finally {
      await peer.close();
    }
  });
});
