// The embedded authorization server's discovery documents and device authorization endpoint, in both dialects.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { admin, form, getJson, requestCode, VIDEO, VIDEO_READONLY, type TestClient } from './helpers.js';

describe('devserver/oauth: discovery and device codes', function () {
  this.timeout(20_000);
  let server: OAuthServer;
  let client: TestClient;
  before(async () => {
    server = await startOAuthServer({ codeQuota: { requests: 3, windowSeconds: 60 } });
    client = server.registerClient();
  });
  after(() => server.stop());
  beforeEach(() => server.reset());

  it('DEV-EP-DEVICE-CODE AMB-14: both discovery documents name device_authorization_endpoint, token, revocation, userinfo and jwks endpoints', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const { status, body } = await getJson(`${server.url}${path}`);
      assert.equal(status, 200);
      assert.equal(body.issuer, server.url);
      assert.equal(body.device_authorization_endpoint, `${server.url}/device/code`);
      assert.equal(body.token_endpoint, `${server.url}/token`);
      assert.equal(body.revocation_endpoint, `${server.url}/revoke`);
      assert.equal(body.userinfo_endpoint, `${server.url}/userinfo`);
      assert.equal(body.jwks_uri, server.jwksUri);
      assert.deepEqual(body.grant_types_supported, ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token', 'authorization_code']);
      assert.ok(body.scopes_supported.includes(VIDEO_READONLY));
      assert.ok(Array.isArray(body.response_types_supported));
    }
    const jwks = await getJson(server.jwksUri);
    assert.equal(jwks.body.keys[0].kty, 'RSA');
  });

  it('AMB-14: with devicePath the endpoint moves, discovery says where, and {auth_url}/device/code is gone; discovery can be switched off', async () => {
    const moved = await startOAuthServer({ devicePath: '/o/oauth2/device/code' });
    const off = await startOAuthServer({ discovery: false });
    try {
      const c = moved.registerClient();
      const doc = (await getJson(`${moved.url}/.well-known/openid-configuration`)).body;
      assert.equal(doc.device_authorization_endpoint, `${moved.url}/o/oauth2/device/code`);
      assert.equal((await form(doc.device_authorization_endpoint, { client_id: c.id, scope: 'email' })).status, 200);
      assert.equal((await form(`${moved.url}/device/code`, { client_id: c.id, scope: 'email' })).status, 404);
      assert.equal((await getJson(`${off.url}/.well-known/openid-configuration`)).status, 404);
      assert.equal((await getJson(`${off.url}/.well-known/oauth-authorization-server`)).status, 404);
      await assert.rejects(startOAuthServer({ devicePath: '/token' }), /devicePath/);
    } finally {
      await moved.stop();
      await off.stop();
    }
  });

  it('DEV-FLOW-REQUEST-CODES DEV-DAR-DEVICE-CODE DEV-DAR-USER-CODE DEV-DAR-VERIFICATION-URL DEV-DAR-EXPIRES-IN DEV-DAR-INTERVAL DEV-LIM-DISPLAY-URL-40 DEV-LIM-DISPLAY-USER-CODE-15: the Google dialect answers device_code, user_code ABCD-EFGH, verification_url, expires_in 1800, interval 5', async () => {
    const code = await requestCode(server.url, client, `email ${VIDEO}`);
    assert.deepEqual(Object.keys(code).sort(), ['device_code', 'expires_in', 'interval', 'user_code', 'verification_url']);
    assert.ok(code.device_code.length >= 40);
    assert.match(code.user_code, /^[A-Z]{4}-[A-Z]{4}$/);
    assert.ok(code.user_code.length <= 15);
    assert.equal(code.verification_url, `${server.url}/device`);
    assert.ok(code.verification_url.length <= 40, 'fits the 40 characters');
    assert.match(code.verification_url, /^[\x20-\x7e]+$/);
    assert.deepEqual([code.expires_in, code.interval], [1800, 5]);
    const again = await requestCode(server.url, client, 'email');
    assert.notEqual(again.device_code, code.device_code);
    assert.notEqual(again.user_code, code.user_code);
  });

  it('DEV-LIM-USER-CODE-UNALTERED DEV-DAR-USER-CODE: userCodeCase mixed gives upper and lower case, and only the exact case is accepted', async () => {
    const mixed = await startOAuthServer({ userCodeCase: 'mixed' });
    try {
      const c = mixed.registerClient();
      const code = await requestCode(mixed.url, c, 'email');
      assert.match(code.user_code, /[a-z]/);
      assert.match(code.user_code, /[A-Z]/);
      const swapped = [...code.user_code].map((ch: string) => (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase())).join('');
      assert.equal((await admin(mixed.url, 'POST', 'device/approve', { user_code: swapped })).status, 400, 'another case is another code');
      assert.equal((await admin(mixed.url, 'POST', 'device/approve', { user_code: code.user_code })).status, 200);
    } finally {
      await mixed.stop();
    }
  });

  it('DEV-SCOPE-DEVICE-ALLOWED: only email, openid, profile and the four {scope_base} scopes; another is 400 invalid_scope; the scope base is an option', async () => {
    const all = [
      'email',
      'openid',
      'profile',
      ...['storage.appdata', 'storage.file', 'video', 'video.readonly'].map((s) => `https://www.googleapis.com/auth/${s}`),
    ];
    assert.equal((await form(`${server.url}/device/code`, { client_id: client.id, scope: all.join(' ') })).status, 200);
    for (const scope of [
      'https://www.googleapis.com/auth/video.upload',
      'https://www.googleapis.com/auth/video.force-ssl',
      'https://www.googleapis.com/auth/videopartner',
      'Email',
    ]) {
      const answer = await form(`${server.url}/device/code`, { client_id: client.id, scope: `email ${scope}` });
      assert.equal(answer.status, 400, scope);
      assert.equal(answer.body.error, 'invalid_scope');
      assert.equal(typeof answer.body.error_description, 'string');
      server.reset();
    }
    assert.equal((await form(`${server.url}/device/code`, { client_id: client.id })).body.error, 'invalid_request');
    const based = await startOAuthServer({ scopeBase: 'https://scopes.gantry.test' });
    try {
      const c = based.registerClient();
      assert.equal((await form(`${based.url}/device/code`, { client_id: c.id, scope: 'https://scopes.gantry.test/auth/video' })).status, 200);
      assert.equal((await form(`${based.url}/device/code`, { client_id: c.id, scope: VIDEO })).status, 400);
    } finally {
      await based.stop();
    }
  });

  it('DEV-AUTH-CLIENT-TYPE DEV-ERR-INVALID-CLIENT: an unknown client and a web client are 401 invalid_client at the code request', async () => {
    const unknown = await form(`${server.url}/device/code`, { client_id: 'nobody.apps.gantry.test', scope: 'email' });
    assert.deepEqual([unknown.status, unknown.body.error], [401, 'invalid_client']);
    const web = server.registerClient({ type: 'web' });
    const wrongType = await form(`${server.url}/device/code`, { client_id: web.id, scope: 'email' });
    assert.deepEqual([wrongType.status, wrongType.body.error], [401, 'invalid_client']);
  });

  it('DEV-ERR-CODE-QUOTA DEV-LIM-CODE-QUOTA DEV-ERR-BODY-SHAPE: beyond the per-client quota a code request is 403 {"error_code":"rate_limit_exceeded"} exactly; other clients keep theirs', async () => {
    for (let i = 0; i < 3; i++) await requestCode(server.url, client, 'email');
    const response = await fetch(`${server.url}/device/code`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.id, scope: 'email' }),
    });
    assert.equal(response.status, 403);
    assert.equal(await response.text(), '{"error_code":"rate_limit_exceeded"}');
    assert.ok(Number(response.headers.get('retry-after')) >= 1);
    const other = server.registerClient();
    await requestCode(server.url, other, 'email');
    assert.equal(server.stats().quotaRejections, 1);
  });

  it('DEV-FLOW-REQUEST-CODES: the rfc8628 dialect answers verification_uri and verification_uri_complete instead of verification_url', async () => {
    const rfc = await startOAuthServer({ dialect: 'rfc8628', interval: 2, expiresIn: 600 });
    try {
      const c = rfc.registerClient({ secret: null });
      const code = await requestCode(rfc.url, c, 'openid');
      assert.deepEqual(Object.keys(code).sort(), ['device_code', 'expires_in', 'interval', 'user_code', 'verification_uri', 'verification_uri_complete']);
      assert.equal(code.verification_uri, `${rfc.url}/device`);
      assert.equal(code.verification_uri_complete, `${rfc.url}/device?user_code=${encodeURIComponent(code.user_code)}`);
      assert.deepEqual([code.interval, code.expires_in], [2, 600]);
    } finally {
      await rfc.stop();
    }
  });

  it('bad options are refused before listening', async () => {
    await assert.rejects(startOAuthServer({ interval: -1 }), /interval/);
    await assert.rejects(startOAuthServer({ dialect: 'other' as 'google' }), /dialect/);
    await assert.rejects(startOAuthServer({ scopeBase: 'ftp://x/' }), /scopeBase/);
    await assert.rejects(startOAuthServer({ codeQuota: { requests: 0, windowSeconds: 60 } }), /codeQuota/);
  });
});
