// How `gantry dev` starts the platform API: its port or a free one, a personal and a workflow token, an app whose
// private key is written 0600 to the run's folder, and the window scale from GANTRY_DEV_PLATFORM_WINDOW_SCALE.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { devServers } from '../../../devserver/index.js';
import { DEV_PLATFORM_PORT, startDevPlatform } from '../../../devserver/platform/index.js';
import { appJwt, call, rate } from './helpers.js';

describe('devserver/platform: the gantry dev starter', function () {
  this.timeout(30_000);
  let stateDir: string;
  beforeEach(async () => {
    stateDir = await mkdtemp(path.join(tmpdir(), 'gantry-platform-'));
  });
  afterEach(() => rm(stateDir, { recursive: true, force: true }));

  it('is listed for gantry dev; a taken port 5761 falls back to a free one; prints tokens and the key file, and the app key signs JWTs the server accepts (RATE-PRI-INSTALLATION-MIN)', async () => {
    assert.ok(devServers.some((s) => s.name === 'platform'));
    const blocker = net.createServer();
    const blocked = await new Promise<boolean>((resolve) => {
      blocker.once('error', () => resolve(false));
      blocker.listen(DEV_PLATFORM_PORT, '127.0.0.1', () => resolve(true));
    });
    const server = await startDevPlatform({ host: '127.0.0.1', stateDir }, {});
    try {
      if (blocked) assert.notEqual(new URL(server.url).port, String(DEV_PLATFORM_PORT));
      assert.match(server.credentials.token!, /^ghp_/);
      assert.equal(server.env!.PLATFORM_API_URL, server.url);
      assert.equal(server.env!.GANTRY_PLATFORM_TOKEN, server.credentials.token);
      const keyFile = server.env!.GANTRY_APP_PRIVATE_KEY_FILE!;
      assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
      const personal = await call(server.url, 'GET', '/repos/gantry/demo', { token: server.credentials.token! });
      assert.deepEqual([personal.status, rate(personal).limit], [200, 5000]);
      assert.equal(rate(await call(server.url, 'GET', '/repos/gantry/demo', { token: server.credentials.workflowToken! })).limit, 1000);
      const now = Math.floor(Date.now() / 1000);
      const jwt = appJwt(await readFile(keyFile, 'utf8'), { iss: Number(server.env!.GANTRY_APP_ID), iat: now - 30, exp: now + 500 });
      const issued = await call(server.url, 'POST', `/app/installations/${server.credentials.installationId}/access_tokens`, { token: jwt });
      assert.equal(issued.status, 201);
      assert.equal(rate(await call(server.url, 'GET', '/repos/gantry/demo', { token: issued.body.token })).limit, 5000);
    } finally {
      await server.stop();
      blocker.close();
    }
  });

  it('GANTRY_DEV_PLATFORM_WINDOW_SCALE shortens the windows (RATE-HDR-RESET); a bad value is refused before listening', async () => {
    const server = await startDevPlatform({ host: '127.0.0.1', stateDir }, { GANTRY_DEV_PLATFORM_PORT: '0', GANTRY_DEV_PLATFORM_WINDOW_SCALE: '0.01' });
    try {
      const answer = await call(server.url, 'GET', '/repos/gantry/demo');
      assert.ok(rate(answer).reset - Date.now() / 1000 <= 37, 'the hour is 36 s');
    } finally {
      await server.stop();
    }
    await assert.rejects(
      startDevPlatform({ host: '127.0.0.1', stateDir }, { GANTRY_DEV_PLATFORM_PORT: '0', GANTRY_DEV_PLATFORM_WINDOW_SCALE: '-2' }),
      /GANTRY_DEV_PLATFORM_WINDOW_SCALE must be a number above 0/,
    );
  });
});
