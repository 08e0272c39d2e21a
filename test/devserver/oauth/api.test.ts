// The resource endpoints of the embedded authorization server: the video API's channels list and userinfo.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { admin, form, getJson, login, revoke, VIDEO, VIDEO_READONLY, type TestClient } from './helpers.js';

describe('devserver/oauth: the video API and userinfo', function () {
  this.timeout(20_000);
  let server: OAuthServer;
  let client: TestClient;
  before(async () => {
    server = await startOAuthServer({ interval: 0 });
    server.addUser({ username: 'quiet', email: 'quiet@gantry.test', channelTitle: null });
    client = server.registerClient();
  });
  after(() => server.stop());

  it("DEV-EP-VIDEO-CHANNELS DEV-AUTH-ACCESS-TOKEN-TRANSPORT DEV-SCOPE-VIDEO-READONLY: GET /video/v3/channels?part=snippet&mine=true answers the user's channel, with the token in the header or in query access_token", async () => {
    const tokens = await login(server.url, client, VIDEO_READONLY);
    const byHeader = await getJson(`${server.url}/video/v3/channels?part=snippet&mine=true`, { authorization: `Bearer ${tokens.access_token}` });
    assert.equal(byHeader.status, 200);
    assert.equal(byHeader.body.kind, 'video#channelListResponse');
    assert.equal(byHeader.body.items.length, 1);
    const [channel] = byHeader.body.items;
    assert.equal(channel.kind, 'video#channel');
    assert.match(channel.id, /^UC[A-Za-z0-9_-]{22}$/);
    assert.equal(channel.snippet.title, "Gantry Dev's channel");
    const byQuery = await getJson(`${server.url}/video/v3/channels?part=id&mine=true&access_token=${encodeURIComponent(tokens.access_token)}`);
    assert.equal(byQuery.status, 200);
    assert.equal(byQuery.body.items[0].id, channel.id);
    assert.equal(byQuery.body.items[0].snippet, undefined, 'only the parts asked for');
    const both = await getJson(`${server.url}/video/v3/channels?part=id&mine=true&access_token=x`, { authorization: `Bearer ${tokens.access_token}` });
    assert.equal(both.status, 400, 'one place only (RFC 6750 §2)');
    const withVideo = await login(server.url, client, VIDEO);
    assert.equal((await getJson(`${server.url}/video/v3/channels?part=snippet&mine=true`, { authorization: `Bearer ${withVideo.access_token}` })).status, 200);
    const none = await login(server.url, client, VIDEO_READONLY, 'quiet');
    assert.deepEqual(
      (await getJson(`${server.url}/video/v3/channels?part=snippet&mine=true`, { authorization: `Bearer ${none.access_token}` })).body.items,
      [],
    );
  });

  it('DEV-EP-VIDEO-CHANNELS: a missing, bad, expired or revoked token is 401 with WWW-Authenticate: Bearer; no video scope is 403; no part is 400', async () => {
    const url = `${server.url}/video/v3/channels?part=snippet&mine=true`;
    const missing = await getJson(url);
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get('www-authenticate')!, /^Bearer realm=/);
    const bad = await getJson(url, { authorization: 'Bearer ya29.nothing' });
    assert.equal(bad.status, 401);
    assert.match(bad.headers.get('www-authenticate')!, /^Bearer .*error="invalid_token"/);
    assert.equal(bad.body.error.code, 401);
    const expired = await login(server.url, client, VIDEO_READONLY);
    await admin(server.url, 'POST', 'tokens/expire', { token: expired.access_token });
    assert.equal((await getJson(url, { authorization: `Bearer ${expired.access_token}` })).status, 401);
    const revoked = await login(server.url, client, VIDEO_READONLY);
    await revoke(server.url, client, revoked.access_token);
    assert.equal((await getJson(url, { authorization: `Bearer ${revoked.access_token}` })).status, 401);
    const emailOnly = await login(server.url, client, 'email');
    const forbidden = await getJson(url, { authorization: `Bearer ${emailOnly.access_token}` });
    assert.equal(forbidden.status, 403);
    assert.match(forbidden.headers.get('www-authenticate')!, /error="insufficient_scope"/);
    assert.equal(forbidden.body.error.errors[0].reason, 'insufficientPermissions');
    const good = await login(server.url, client, VIDEO_READONLY);
    const noPart = await getJson(`${server.url}/video/v3/channels?mine=true`, { authorization: `Bearer ${good.access_token}` });
    assert.equal(noPart.status, 400);
    assert.equal(noPart.body.error.errors[0].reason, 'required');
    assert.equal(
      (await getJson(`${server.url}/video/v3/channels?part=snippet`, { authorization: `Bearer ${good.access_token}` })).status,
      400,
      'a filter is needed',
    );
  });

  it('GET /userinfo answers sub, and the e-mail address and name when their scopes were granted', async () => {
    const tokens = await login(server.url, client, 'openid email profile');
    const answer = await getJson(`${server.url}/userinfo`, { authorization: `Bearer ${tokens.access_token}` });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, {
      sub: (await admin(server.url, 'GET', 'users')).body[0].sub,
      email: 'dev@gantry.test',
      email_verified: true,
      name: 'Gantry Dev',
    });
    const openid = await login(server.url, client, 'openid');
    assert.deepEqual(Object.keys((await getJson(`${server.url}/userinfo`, { authorization: `Bearer ${openid.access_token}` })).body), ['sub']);
    assert.equal((await getJson(`${server.url}/userinfo`)).status, 401);
  });

  it("POST /tokeninfo tells a resource server (the embedded storage API) the token's client, subject, scopes and expiry; an unknown, expired or revoked token is 400 invalid_token; the token is taken from the body only", async () => {
    const storageFile = 'https://www.googleapis.com/auth/storage.file';
    const tokens = await login(server.url, client, `openid email ${storageFile}`);
    const answer = await form(`${server.url}/tokeninfo`, { access_token: tokens.access_token });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.aud, client.id);
    assert.equal(answer.body.azp, client.id);
    assert.equal(answer.body.sub, (await admin(server.url, 'GET', 'users')).body[0].sub);
    assert.deepEqual(answer.body.scope.split(' ').sort(), ['email', 'openid', storageFile].sort());
    assert.equal(answer.body.email, 'dev@gantry.test');
    const expiresIn = Number(answer.body.expires_in);
    assert.ok(expiresIn > 0 && Math.abs(Number(answer.body.exp) - (Date.now() / 1000 + expiresIn)) <= 2, JSON.stringify(answer.body));
    assert.equal(answer.body.access_token, undefined, 'the token is not echoed');

    assert.deepEqual((await form(`${server.url}/tokeninfo`, { access_token: 'ya29.nothing' })).body, {
      error: 'invalid_token',
      error_description: 'Invalid Value',
    });
    await revoke(server.url, client, tokens.access_token);
    assert.equal((await form(`${server.url}/tokeninfo`, { access_token: tokens.access_token })).status, 400, 'revoked');
    const expired = await login(server.url, client, storageFile);
    await admin(server.url, 'POST', 'tokens/expire', { token: expired.access_token });
    assert.equal((await form(`${server.url}/tokeninfo`, { access_token: expired.access_token })).status, 400, 'expired');
    const live = await login(server.url, client, storageFile);
    assert.equal((await getJson(`${server.url}/tokeninfo?access_token=${encodeURIComponent(live.access_token)}`)).status, 405, 'not in a query string');
    assert.equal((await form(`${server.url}/tokeninfo`, {})).body.error, 'invalid_request');
  });
});
