// The storage API as a resource server of the embedded authorization server: a device login's access token is let in
// when its scopes include a storage scope, as Drive accepts a Google login's — asked of the tokeninfo endpoint.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { startDevStorage } from '../../../devserver/storage/starter.js';
import { admin, login, revoke, type TestClient } from '../oauth/helpers.js';
import { harness, type Harness } from './helpers.js';

const STORAGE_FILE = 'https://www.googleapis.com/auth/storage.file';

describe("devserver/storage: device-login tokens through the authorization server's tokeninfo", function () {
  this.timeout(20_000);
  let oauth: OAuthServer;
  let client: TestClient;
  let storage: Harness;
  before(async () => {
    oauth = await startOAuthServer({ interval: 0 });
    client = oauth.registerClient();
    storage = await harness({ tokenInfoUrl: `${oauth.url}/tokeninfo` });
  });
  after(async () => {
    await storage?.close();
    await oauth?.stop();
  });

  const about = (token: string) => fetch(`${storage.server.url}/storage/v2/about`, { headers: { authorization: `Bearer ${token}` } });

  it('STO-ABOUT-GET: a login with storage.file is let in; one without a storage scope is 403 insufficientPermissions; a token never issued or revoked before its first use is 401 authError; an answer is remembered', async () => {
    const tokens = await login(oauth.url, client, `openid email ${STORAGE_FILE}`);
    const ok = await about(tokens.access_token);
    assert.equal(ok.status, 200);
    assert.equal(((await ok.json()) as { kind: string }).kind, 'storage#about');

    const videoOnly = await login(oauth.url, client, 'https://www.googleapis.com/auth/video.readonly');
    const refused = await about(videoOnly.access_token);
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: { errors: Array<{ reason: string }> } }).error.errors[0]!.reason, 'insufficientPermissions');
    assert.match(refused.headers.get('www-authenticate')!, /error="insufficient_scope"/);

    const bad = await about('ya29.not-issued-by-anyone');
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as { error: { errors: Array<{ reason: string }> } }).error.errors[0]!.reason, 'authError');

    // A token asked about once is remembered until it expires (at most five minutes): a second request asks nothing.
    const asked = (await admin(oauth.url, 'GET', 'requests')).body.filter((entry: { path: string }) => entry.path === '/tokeninfo').length;
    assert.equal((await about(tokens.access_token)).status, 200);
    assert.equal((await admin(oauth.url, 'GET', 'requests')).body.filter((entry: { path: string }) => entry.path === '/tokeninfo').length, asked);

    // A fresh token revoked before its first use is refused.
    const revoked = await login(oauth.url, client, STORAGE_FILE);
    await revoke(oauth.url, client, revoked.access_token);
    assert.equal((await about(revoked.access_token)).status, 401);
  });

  it("gantry dev wires it: the storage starter asks the run's authorization server, and its own STORAGE_TOKEN still works", async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const stateDir = await mkdtemp(join(tmpdir(), 'gantry-storage-starter-'));
    const dev = await startDevStorage({ host: '127.0.0.1', stateDir, started: [{ name: 'oauth', url: oauth.url }] }, { GANTRY_DEV_STORAGE_PORT: '0' });
    try {
      const tokens = await login(oauth.url, client, STORAGE_FILE);
      for (const token of [tokens.access_token, dev.env!.STORAGE_TOKEN!]) {
        const answer = await fetch(`${dev.url}/storage/v2/about`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(answer.status, 200);
      }
    } finally {
      await dev.stop();
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
