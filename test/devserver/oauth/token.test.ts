// The token endpoint's device code grant: every state and every error of the spec's poll table, in Google's dialect
// (428 pending, 403 slow_down/access_denied/org_internal) and in the rfc8628 dialect (400 for all but invalid_client).
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { admin, form, login, poll, requestCode, sleep, verifyJwt, VIDEO, VIDEO_READONLY, type TestClient } from './helpers.js';

describe('devserver/oauth: polling the token endpoint (Google dialect)', function () {
  this.timeout(30_000);
  let server: OAuthServer;
  let client: TestClient;
  before(async () => {
    server = await startOAuthServer({ interval: 1 });
    server.addUser({ username: 'outsider', email: 'someone@elsewhere.test' });
    server.addUser({ username: 'managed', email: 'managed@gantry.test', adminPolicyScopes: [VIDEO] });
    client = server.registerClient({ name: 'Poll test' });
  });
  after(() => server.stop());

  it('DEV-ST-PENDING DEV-ERR-AUTHORIZATION-PENDING DEV-ERR-BODY-SHAPE AMB-15: before the decision a poll is 428 {"error":"authorization_pending","error_description":"Precondition Required"}', async () => {
    const code = await requestCode(server.url, client);
    const answer = await poll(server.url, client, code.device_code);
    assert.equal(answer.status, 428);
    assert.deepEqual(answer.body, { error: 'authorization_pending', error_description: 'Precondition Required' });
  });

  it('DEV-ST-SLOW-DOWN DEV-ERR-SLOW-DOWN DEV-LIM-POLL-INTERVAL: polling sooner than the interval is 403 slow_down, the interval grows by 5 s and stays grown', async function () {
    this.timeout(30_000);
    const code = await requestCode(server.url, client);
    assert.equal((await poll(server.url, client, code.device_code)).status, 428, 'the first poll is measured against nothing');
    const fast = await poll(server.url, client, code.device_code);
    assert.deepEqual([fast.status, fast.body.error], [403, 'slow_down']);
    const interval = () => server.deviceCodes().find((c) => c.user_code === code.user_code)!.interval;
    assert.equal(interval(), 6);
    await sleep(6_100);
    assert.equal((await poll(server.url, client, code.device_code)).status, 428, 'a poll 6 s later is on time');
    await sleep(1_500);
    const early = await poll(server.url, client, code.device_code);
    assert.equal(early.body.error, 'slow_down', 'the old 1 s interval no longer suffices: the increase stayed');
    assert.equal(interval(), 11);
    const stats = server.stats();
    assert.ok(stats.slowDowns >= 2);
    assert.ok(stats.polls >= 4);
  });

  it('DEV-ST-GRANTED DEV-FLOW-POLL-RESULT DEV-TOK-ACCESS-TOKEN DEV-TOK-EXPIRES-IN DEV-TOK-REFRESH-TOKEN DEV-TOK-SCOPE DEV-TOK-TOKEN-TYPE DEV-EP-POLL-TOKEN: after approval the poll is 200 with tokens and an RS256 id_token verified at jwks_uri; a second poll is invalid_grant', async () => {
    const scope = `openid email ${VIDEO_READONLY}`;
    const code = await requestCode(server.url, client, scope);
    await admin(server.url, 'POST', 'device/approve', { user_code: code.user_code });
    const answer = await poll(server.url, client, code.device_code);
    assert.equal(answer.status, 200);
    const body = answer.body;
    assert.match(body.access_token, /^ya29\./);
    assert.equal(body.expires_in, 3599);
    assert.equal(typeof body.refresh_token, 'string');
    assert.equal(body.scope, scope);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.refresh_token_expires_in, undefined, 'only for time-based access');
    const { claims } = await verifyJwt(body.id_token, server.jwksUri);
    assert.equal(claims.iss, server.url);
    assert.equal(claims.aud, client.id);
    assert.equal(claims.email, 'dev@gantry.test');
    assert.match(claims.sub, /^\d{21}$/);
    assert.ok(claims.exp > claims.iat);
    const again = await poll(server.url, client, code.device_code);
    assert.deepEqual([again.status, again.body.error], [400, 'invalid_grant']);
    const noId = await login(server.url, client, VIDEO);
    assert.equal(noId.id_token, undefined, 'no id_token without openid, email or profile');
  });

  it('DEV-ST-DENIED DEV-ERR-ACCESS-DENIED: after the user denies, the poll is 403 access_denied and no tokens', async () => {
    const code = await requestCode(server.url, client);
    await admin(server.url, 'POST', 'device/deny', { user_code: code.user_code });
    const answer = await poll(server.url, client, code.device_code);
    assert.deepEqual([answer.status, answer.body.error], [403, 'access_denied']);
    assert.equal(answer.body.access_token, undefined);
  });

  it('DEV-ST-EXPIRED DEV-LIM-CODE-VALIDITY AMB-17: after expires_in the codes are no longer valid: the page refuses the user code and a poll is 400 expired_token', async () => {
    const short = await startOAuthServer({ expiresIn: 1, interval: 0 });
    try {
      const c = short.registerClient();
      const code = await requestCode(short.url, c);
      await sleep(1_100);
      assert.equal((await admin(short.url, 'POST', 'device/approve', { user_code: code.user_code })).status, 400);
      const answer = await poll(short.url, c, code.device_code);
      assert.deepEqual([answer.status, answer.body.error], [400, 'expired_token']);
    } finally {
      await short.stop();
    }
  });

  it("DEV-ERR-INVALID-GRANT: an unknown, unparseable or another client's device code is 400 invalid_grant", async () => {
    for (const deviceCode of ['AH-1Ngnot-a-code', '%%%']) {
      const answer = await poll(server.url, client, deviceCode);
      assert.deepEqual([answer.status, answer.body.error], [400, 'invalid_grant']);
    }
    const other = server.registerClient();
    const code = await requestCode(server.url, other);
    assert.equal((await poll(server.url, client, code.device_code)).body.error, 'invalid_grant');
  });

  it('DEV-ERR-INVALID-CLIENT DEV-AUTH-CLIENT-TYPE DEV-AUTH-CLIENT-SECRET AMB-13: an unknown client, a client now registered as web, a missing or wrong secret are 401 invalid_client', async () => {
    const mine = server.registerClient();
    const code = await requestCode(server.url, mine);
    const check = async (c: TestClient, why: string) => {
      const answer = await poll(server.url, c, code.device_code);
      assert.deepEqual([answer.status, answer.body.error], [401, 'invalid_client'], why);
    };
    await check({ id: 'nobody', secret: 'x' }, 'unknown client');
    await check({ id: mine.id, secret: null }, 'no secret (Google dialect)');
    await check({ id: mine.id, secret: 'wrong' }, 'wrong secret');
    assert.equal((await admin(server.url, 'POST', 'clients', { id: mine.id, secret: mine.secret, type: 'web' })).status, 201);
    await check(mine, 'a web client is the wrong type');
    const basic = await form(
      `${server.url}/token`,
      { device_code: code.device_code, grant_type: 'urn:ietf:params:oauth:grant-type:device_code' },
      { authorization: `Basic ${Buffer.from(`${client.id}:wrong`).toString('base64')}` },
    );
    assert.equal(basic.status, 401);
    assert.match(basic.headers.get('www-authenticate') ?? '', /^Basic/);
  });

  it('DEV-ERR-ORG-INTERNAL: a client limited to one organization, approved by an account outside it, is 403 org_internal', async () => {
    const internal = server.registerClient({ orgInternal: 'gantry.test' });
    const outside = await requestCode(server.url, internal);
    await admin(server.url, 'POST', 'device/approve', { user_code: outside.user_code, account: 'outsider' });
    const answer = await poll(server.url, internal, outside.device_code);
    assert.deepEqual([answer.status, answer.body.error], [403, 'org_internal']);
    assert.equal((await login(server.url, internal, 'email')).token_type, 'Bearer', 'an account of the organization gets tokens');
  });

  it('DEV-ERR-ADMIN-POLICY-ENFORCED: a scope an administrator blocks (for the client or for the account) is 400 admin_policy_enforced', async () => {
    const blocked = server.registerClient({ adminPolicyScopes: [VIDEO_READONLY] });
    const code = await requestCode(server.url, blocked, `email ${VIDEO_READONLY}`);
    await admin(server.url, 'POST', 'device/approve', { user_code: code.user_code });
    const answer = await poll(server.url, blocked, code.device_code);
    assert.deepEqual([answer.status, answer.body.error], [400, 'admin_policy_enforced']);
    const byUser = await requestCode(server.url, client, `email ${VIDEO}`);
    await admin(server.url, 'POST', 'device/approve', { user_code: byUser.user_code, account: 'managed' });
    assert.equal((await poll(server.url, client, byUser.device_code)).body.error, 'admin_policy_enforced');
  });

  it('DEV-ERR-UNSUPPORTED-GRANT-TYPE: a missing or unknown grant_type is 400 unsupported_grant_type', async () => {
    for (const grantType of ['authorization_code', 'urn:ietf:params:oauth:grant-type:device', '']) {
      const answer = await form(`${server.url}/token`, { client_id: client.id, client_secret: client.secret!, grant_type: grantType, device_code: 'x' });
      assert.deepEqual([answer.status, answer.body.error], [400, 'unsupported_grant_type'], grantType);
    }
  });
});

describe('devserver/oauth: polling the token endpoint (rfc8628 dialect)', function () {
  this.timeout(30_000);
  let server: OAuthServer;
  before(async () => {
    server = await startOAuthServer({ dialect: 'rfc8628', interval: 1 });
    server.addUser({ username: 'outsider', email: 'someone@elsewhere.test' });
  });
  after(() => server.stop());

  it('DEV-ERR-AUTHORIZATION-PENDING DEV-ERR-SLOW-DOWN DEV-ERR-ACCESS-DENIED DEV-ERR-ORG-INTERNAL: the same errors with status 400 (RFC 6749 §5.2); invalid_client stays 401', async () => {
    const c = server.registerClient();
    const code = await requestCode(server.url, c);
    const pending = await poll(server.url, c, code.device_code);
    assert.deepEqual([pending.status, pending.body.error], [400, 'authorization_pending']);
    const fast = await poll(server.url, c, code.device_code);
    assert.deepEqual([fast.status, fast.body.error], [400, 'slow_down']);
    await admin(server.url, 'POST', 'device/deny', { user_code: code.user_code });
    const denied = await poll(server.url, c, code.device_code);
    assert.deepEqual([denied.status, denied.body.error], [400, 'access_denied']);
    const internal = server.registerClient({ orgInternal: 'gantry.test' });
    const other = await requestCode(server.url, internal);
    await admin(server.url, 'POST', 'device/approve', { user_code: other.user_code, account: 'outsider' });
    assert.deepEqual((await poll(server.url, internal, other.device_code)).status, 400);
    assert.equal((await poll(server.url, { id: c.id, secret: 'wrong' }, code.device_code)).status, 401);
  });

  it('DEV-CLIENT-NO-SECRETS AMB-13: a public client (no secret) polls without client_secret; a confidential one still needs it', async () => {
    const publicClient = server.registerClient({ secret: null });
    const tokens = await login(server.url, publicClient, 'openid');
    assert.equal(tokens.token_type, 'Bearer');
    const confidential = server.registerClient();
    const code = await requestCode(server.url, confidential);
    assert.equal((await poll(server.url, { id: confidential.id, secret: null }, code.device_code)).status, 401);
  });
});
