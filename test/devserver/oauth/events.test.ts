// Security events of the embedded authorization server: Security Event Tokens (RFC 8417) pushed by RFC 8935 to a
// tiny receiver here, their signatures checked against jwks_uri with node:crypto.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_ACCOUNT_DISABLED, EVENT_SESSIONS_REVOKED, EVENT_TOKEN_REVOKED, startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { createHash } from 'node:crypto';
import { admin, form, getJson, login, refresh, verifyJwt, VIDEO_READONLY, type Json, type TestClient } from './helpers.js';

interface Push {
  contentType: string;
  body: string;
}

async function startReceiver(status = 202): Promise<{ url: string; pushes: Push[]; close(): Promise<void> }> {
  const pushes: Push[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pushes.push({ contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/risc`,
    pushes,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('devserver/oauth: security events (RFC 8417 tokens, RFC 8935 push)', function () {
  this.timeout(20_000);
  let server: OAuthServer;
  let client: TestClient;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    server = await startOAuthServer({ interval: 0 });
    receiver = await startReceiver();
    client = server.registerClient();
    assert.equal((await admin(server.url, 'POST', `clients/${encodeURIComponent(client.id)}/receivers`, { url: receiver.url })).status, 201);
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.pushes.length = 0;
    server.reset();
  });

  const decode = async (push: Push): Promise<Json> => {
    assert.equal(push.contentType, 'application/secevent+jwt');
    const { header, claims } = await verifyJwt(push.body, server.jwksUri);
    assert.equal(header.typ, 'secevent+jwt');
    assert.equal(claims.iss, server.url);
    assert.equal(claims.aud, client.id);
    assert.equal(typeof claims.jti, 'string');
    assert.equal(typeof claims.iat, 'number');
    return claims;
  };

  it('DEV-RISC-DELIVERY DEV-RISC-TOKEN-REVOKED DEV-TL-USER-REVOKE: a user revoking access pushes token-revoked naming the refresh token by hash_base64_sha512_sha512', async () => {
    const tokens = await login(server.url, client, VIDEO_READONLY);
    await admin(server.url, 'POST', 'users/dev/revoke-access', {});
    const deliveries = (await admin(server.url, 'GET', 'security-events')).body;
    assert.equal(deliveries.length, 1);
    assert.deepEqual([deliveries[0].status, deliveries[0].accepted, deliveries[0].event], [202, true, EVENT_TOKEN_REVOKED]);
    const claims = await decode(receiver.pushes[0]!);
    const expected = createHash('sha512').update(createHash('sha512').update(tokens.refresh_token).digest()).digest('base64');
    assert.deepEqual(claims.events, {
      [EVENT_TOKEN_REVOKED]: {
        subject: { subject_type: 'oauth_token', token_type: 'refresh_token', token_identifier_alg: 'hash_base64_sha512_sha512', token: expected },
      },
    });
    assert.equal((await refresh(server.url, client, tokens.refresh_token)).body.error, 'invalid_grant');
  });

  it('DEV-RISC-SESSIONS-REVOKED: revoking the sessions pushes sessions-revoked with an iss_sub subject; OAuth tokens stay', async () => {
    const tokens = await login(server.url, client, VIDEO_READONLY);
    server.revokeSessions('dev');
    const [delivery] = await server.securityEvents();
    assert.equal(delivery!.event, EVENT_SESSIONS_REVOKED);
    const claims = await decode(receiver.pushes[0]!);
    const sub = (await admin(server.url, 'GET', 'users')).body[0].sub;
    assert.deepEqual(claims.events, { [EVENT_SESSIONS_REVOKED]: { subject: { subject_type: 'iss_sub', iss: server.url, sub } } });
    assert.equal((await refresh(server.url, client, tokens.refresh_token)).status, 200);
  });

  it('DEV-RISC-ACCOUNT-DISABLED: disabling the account pushes account-disabled; its tokens stop working and approvals are refused', async () => {
    server.addUser({ username: 'victim', email: 'victim@gantry.test' });
    const tokens = await login(server.url, client, VIDEO_READONLY, 'victim');
    await admin(server.url, 'POST', 'users/victim/disable', { reason: 'hijacking' });
    await server.securityEvents(); // once the push has arrived
    const claims = await decode(receiver.pushes.at(-1)!);
    assert.equal(claims.events[EVENT_ACCOUNT_DISABLED].reason, 'hijacking');
    assert.equal(claims.events[EVENT_ACCOUNT_DISABLED].subject.subject_type, 'iss_sub');
    assert.equal((await refresh(server.url, client, tokens.refresh_token)).body.error, 'invalid_grant');
    assert.equal((await getJson(`${server.url}/video/v3/channels?part=id&mine=true`, { authorization: `Bearer ${tokens.access_token}` })).status, 401);
    const code = (await form(`${server.url}/device/code`, { client_id: client.id, scope: 'email' })).body;
    assert.throws(() => server.approve(code.user_code, 'victim'), /disabled/);
  });

  it('DEV-RISC-DELIVERY: a receiver that does not answer 202 is recorded as not accepted; a client the user never used gets nothing', async () => {
    const refusing = await startReceiver(500);
    try {
      const other = server.registerClient({ securityEventReceivers: [refusing.url] });
      server.registerClient({ securityEventReceivers: [refusing.url] }); // never used by dev
      await login(server.url, other, 'email');
      server.revokeSessions('dev');
      const deliveries = (await server.securityEvents()).filter((d) => d.url === refusing.url);
      assert.equal(deliveries.length, 1);
      assert.deepEqual([deliveries[0]!.status, deliveries[0]!.accepted], [500, false]);
    } finally {
      await refusing.close();
    }
  });
});
