// Token lifecycle on the embedded authorization server: refresh, revoke (both tokens), user revocation, the
// refresh-token issuance limits and time-based access.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { admin, form, getJson, login, refresh, revoke, sleep, VIDEO_READONLY, type TestClient } from './helpers.js';

const channels = (base: string, token: string) => getJson(`${base}/video/v3/channels?part=snippet&mine=true`, { authorization: `Bearer ${token}` });

describe('devserver/oauth: refresh, revoke, limits', function () {
  this.timeout(30_000);
  let server: OAuthServer;
  let client: TestClient;
  before(async () => {
    server = await startOAuthServer({ interval: 0, refreshLimit: { perClientUser: 2, perUser: 3 } });
    client = server.registerClient();
  });
  after(() => server.stop());
  beforeEach(() => server.reset());

  it('DEV-TL-REFRESH DEV-EP-REFRESH DEV-REFRESH-RESPONSE DEV-AUTH-REFRESH-REUSE AMB-16: an expired access token is replaced by a refresh (secret optional) that returns no new refresh token; the refresh token keeps working', async () => {
    const tokens = await login(server.url, client, `openid ${VIDEO_READONLY}`);
    await admin(server.url, 'POST', 'tokens/expire', { token: tokens.access_token });
    assert.equal((await channels(server.url, tokens.access_token)).status, 401);
    for (const withSecret of [false, true]) {
      const answer = await refresh(server.url, client, tokens.refresh_token, withSecret);
      assert.equal(answer.status, 200);
      assert.deepEqual(Object.keys(answer.body).sort(), ['access_token', 'expires_in', 'id_token', 'scope', 'token_type']);
      assert.equal(answer.body.token_type, 'Bearer');
      assert.equal(answer.body.scope, `openid ${VIDEO_READONLY}`);
      assert.notEqual(answer.body.access_token, tokens.access_token);
      assert.equal((await channels(server.url, answer.body.access_token)).status, 200);
    }
    const wrong = await form(`${server.url}/token`, {
      client_id: client.id,
      client_secret: 'wrong',
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    assert.deepEqual([wrong.status, wrong.body.error], [401, 'invalid_client'], 'a secret given must be right');
    const narrowed = await form(`${server.url}/token`, {
      client_id: client.id,
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'openid',
    });
    assert.equal(narrowed.body.scope, 'openid');
    const widened = await form(`${server.url}/token`, {
      client_id: client.id,
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'openid email',
    });
    assert.equal(widened.body.error, 'invalid_scope');
    assert.equal(server.stats().refreshes, 3);
  });

  it('DEV-TL-REVOKE DEV-EP-REVOKE DEV-ERR-REVOKE: revoking the access token revokes its refresh token too (200); an unknown or revoked token is 400 invalid_token', async () => {
    const tokens = await login(server.url, client, VIDEO_READONLY);
    const revoked = await revoke(server.url, client, tokens.access_token);
    assert.equal(revoked.status, 200);
    assert.equal((await channels(server.url, tokens.access_token)).status, 401);
    const after = await refresh(server.url, client, tokens.refresh_token);
    assert.deepEqual([after.status, after.body.error], [400, 'invalid_grant']);
    for (const token of [tokens.access_token, tokens.refresh_token, 'ya29.unknown']) {
      const again = await revoke(server.url, client, token);
      assert.deepEqual([again.status, again.body.error], [400, 'invalid_token']);
      assert.equal(typeof again.body.error_description, 'string');
    }
    assert.equal((await form(`${server.url}/revoke`, { client_id: client.id, client_secret: client.secret! })).body.error, 'invalid_request');
  });

  it('DEV-TL-REVOKE: revoking the refresh token ends its access tokens too', async () => {
    const tokens = await login(server.url, client, VIDEO_READONLY);
    const renewed = (await refresh(server.url, client, tokens.refresh_token)).body;
    assert.equal((await revoke(server.url, client, tokens.refresh_token)).status, 200);
    assert.equal((await channels(server.url, tokens.access_token)).status, 401);
    assert.equal((await channels(server.url, renewed.access_token)).status, 401);
    assert.equal((await refresh(server.url, client, tokens.refresh_token)).body.error, 'invalid_grant');
  });

  it('AMB-18 AMB-19 DEV-AUTH-ACCESS-TOKEN-TRANSPORT: the request log records whether a token arrived in a URL query, never its value', async () => {
    const tokens = await login(server.url, client, VIDEO_READONLY);
    const viaQuery = await getJson(`${server.url}/video/v3/channels?part=id&mine=true&access_token=${encodeURIComponent(tokens.access_token)}`);
    assert.equal(viaQuery.status, 200);
    const revokeInQuery = await fetch(`${server.url}/revoke?token=${encodeURIComponent(tokens.access_token)}`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret!}`).toString('base64')}` },
    });
    assert.equal(revokeInQuery.status, 200, 'accepted, as Google does, but recorded');
    const log = server.requestLog();
    const flagged = log.filter((entry) => entry.tokenInQuery).map((entry) => entry.path);
    assert.deepEqual(flagged, ['/video/v3/channels', '/revoke']);
    assert.ok(log.filter((entry) => entry.path === '/token' || entry.path === '/device/code').every((entry) => !entry.tokenInQuery));
    const text = JSON.stringify((await admin(server.url, 'GET', 'requests')).body);
    assert.ok(!text.includes(tokens.access_token) && !text.includes(tokens.refresh_token));
    assert.match(text, /"queryKeys":\["part","mine","access_token"\]/);
  });

  it('DEV-TL-USER-REVOKE: when the user revokes access in account settings the refresh token stops working (invalid_grant) and its access tokens end', async () => {
    const other = server.registerClient();
    const mine = await login(server.url, client, VIDEO_READONLY);
    const theirs = await login(server.url, other, VIDEO_READONLY);
    const answer = await admin(server.url, 'POST', 'users/dev/revoke-access', { client_id: client.id });
    assert.deepEqual(answer.body, { revoked: 1 });
    assert.equal((await refresh(server.url, client, mine.refresh_token)).body.error, 'invalid_grant');
    assert.equal((await channels(server.url, mine.access_token)).status, 401);
    assert.equal((await refresh(server.url, other, theirs.refresh_token)).status, 200, "another client's grant stays");
    assert.equal(server.userRevokesAccess('dev'), 1, 'without a client: every client');
    assert.equal((await refresh(server.url, other, theirs.refresh_token)).body.error, 'invalid_grant');
  });

  it('DEV-AUTH-REFRESH-ISSUANCE-LIMIT AMB-16: beyond the limit per client and user, the oldest refresh tokens stop working', async () => {
    const first = await login(server.url, client, 'email');
    const second = await login(server.url, client, 'email');
    assert.equal((await refresh(server.url, client, first.refresh_token)).status, 200, 'two fit the limit of 2');
    const third = await login(server.url, client, 'email');
    assert.equal((await refresh(server.url, client, first.refresh_token)).body.error, 'invalid_grant', 'the oldest stopped working');
    assert.equal((await refresh(server.url, client, second.refresh_token)).status, 200);
    assert.equal((await refresh(server.url, client, third.refresh_token)).status, 200);
    assert.equal((await channels(server.url, first.access_token)).status, 403, 'its access token lives on (no video scope here: 403, not 401)');
  });

  it('DEV-AUTH-REFRESH-ISSUANCE-LIMIT: beyond the limit per user across clients, the oldest of any client stop working', async () => {
    const [a, b] = [server.registerClient(), server.registerClient()];
    const a1 = await login(server.url, a, 'email');
    const b1 = await login(server.url, b, 'email');
    const c1 = await login(server.url, client, 'email');
    assert.equal((await refresh(server.url, a, a1.refresh_token)).status, 200, 'three fit the limit of 3');
    await login(server.url, b, 'email');
    assert.equal((await refresh(server.url, a, a1.refresh_token)).body.error, 'invalid_grant', "client a's token was the user's oldest");
    assert.equal((await refresh(server.url, b, b1.refresh_token)).status, 200);
    assert.equal((await refresh(server.url, client, c1.refresh_token)).status, 200);
  });

  it('DEV-TOK-REFRESH-EXPIRES-IN DEV-TL-TIME-BASED-EXPIRY: a client with time-based access gets refresh_token_expires_in, and the refresh token expires then', async () => {
    const timed = server.registerClient({ timeBasedAccessSeconds: 2 });
    const tokens = await login(server.url, timed, 'email');
    assert.equal(tokens.refresh_token_expires_in, 2);
    const early = await refresh(server.url, timed, tokens.refresh_token);
    assert.equal(early.status, 200);
    assert.ok(early.body.refresh_token_expires_in <= 2);
    await sleep(2_100);
    assert.equal((await refresh(server.url, timed, tokens.refresh_token)).body.error, 'invalid_grant');
  });
});

describe('devserver/oauth: revoke in the rfc8628 dialect', function () {
  it('DEV-ERR-REVOKE: an already invalid token is 200, as RFC 7009 §2.2 says; a missing one is 400', async () => {
    const server = await startOAuthServer({ dialect: 'rfc8628', interval: 0 });
    try {
      const c = server.registerClient();
      const tokens = await login(server.url, c, 'email');
      assert.equal((await revoke(server.url, c, tokens.refresh_token)).status, 200);
      assert.equal((await revoke(server.url, c, tokens.refresh_token)).status, 200);
      assert.equal((await revoke(server.url, c, 'unknown')).status, 200);
      assert.equal((await form(`${server.url}/revoke`, { client_id: c.id, client_secret: c.secret! })).status, 400);
      assert.equal((await refresh(server.url, c, tokens.refresh_token)).status, 400);
    } finally {
      await server.stop();
    }
  });
});
