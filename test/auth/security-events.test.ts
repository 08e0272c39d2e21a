// Security events (DEV-RISC-*): the embedded authorization server pushes Security Event Tokens (RFC 8417, RFC 8935)
// to a receiver built from lib/auth's handler; verified ones drop the account's stored logins, forged ones change
// nothing.
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import {
  applySecurityEvent,
  authHttpClient,
  deviceLogin,
  discoverEndpoints,
  jwksKeys,
  resolveScopes,
  securityEventHandler,
  type SecurityEvent,
} from '../../lib/auth/index.js';
import { listProfiles, openTokenStore, saveLogin } from '../../lib/auth/store/index.js';

describe('security events drop the stored logins of the account they name', function () {
  this.timeout(60_000);
  let server: OAuthServer;
  let client: { id: string; secret: string | null };
  let receiver: http.Server;
  let receiverUrl: string;
  let configDir: string;
  const received: SecurityEvent[] = [];
  const httpClient = authHttpClient();

  before(async () => {
    server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1 });
    client = server.registerClient({ name: 'security events test' });
    configDir = await mkdtemp(join(tmpdir(), 'gantry-secevents-'));
    const endpoints = await discoverEndpoints(httpClient, server.url);
    assert.ok(endpoints.jwksUri && endpoints.issuer, 'the server publishes its keys and issuer');
    const handle = securityEventHandler({
      keys: jwksKeys(httpClient, endpoints.jwksUri, endpoints.issuer, [client.id]),
      onEvent: async (event) => {
        received.push(event);
        await applySecurityEvent(event, { configDir, insecureStorage: true });
      },
    });
    receiver = http.createServer(handle);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/security-events`;
    server.addSecurityEventReceiver(client.id, receiverUrl);
  });

  after(async () => {
    httpClient.close();
    await new Promise((resolve) => receiver.close(resolve));
    await server.stop();
    await rm(configDir, { recursive: true, force: true });
  });

  async function loginAs(profile: string): Promise<void> {
    const result = await deviceLogin({
      authUrl: server.url,
      clientId: client.id,
      clientSecret: client.secret!,
      scopes: resolveScopes(['openid', 'email']),
      onCode: (code) => setTimeout(() => server.approve(code.userCode), 100).unref(),
    });
    const { store } = await openTokenStore('file', { configDir, insecureStorage: true });
    await saveLogin(
      store,
      { authUrl: server.url, clientId: client.id, profile, tokens: result.tokens, ...(result.account ? { account: result.account } : {}) },
      { configDir },
    );
  }

  const profiles = async () => (await listProfiles({ configDir })).map((entry) => entry.profile).sort();

  it('DEV-RISC-DELIVERY DEV-RISC-SESSIONS-REVOKED: a verified sessions-revoked event drops every stored login of the account', async () => {
    await loginAs('one');
    await loginAs('two');
    assert.deepEqual(await profiles(), ['one', 'two']);
    server.revokeSessions('dev');
    const pushes = (await server.securityEvents()).filter((d) => d.event.endsWith('/sessions-revoked'));
    assert.ok(pushes.length >= 1 && pushes.every((d) => d.accepted && d.status === 202), JSON.stringify(pushes));
    assert.deepEqual(await profiles(), [], 'both logins are gone from the index');
    assert.deepEqual(
      (await readdir(join(configDir, 'auth'))).filter((name) => name !== 'profiles.json'),
      [],
      'and from the store',
    );
    assert.ok(received.at(-1)!.sub, 'the event names the account by issuer and subject');
  });

  it('DEV-RISC-TOKEN-REVOKED DEV-TL-USER-REVOKE: the user revoking access in the account settings drops the login whose refresh token it names', async () => {
    await loginAs('three');
    server.userRevokesAccess('dev', client.id);
    const pushes = (await server.securityEvents()).filter((d) => d.event.endsWith('/token-revoked'));
    assert.ok(pushes.length >= 1 && pushes.every((d) => d.accepted), JSON.stringify(pushes));
    assert.ok(received.some((event) => event.type.endsWith('/token-revoked') && event.tokenHash !== undefined));
    assert.deepEqual(await profiles(), []);
  });

  it('DEV-RISC-DELIVERY: a forged event (another key), a wrong media type and a body that is no JWT are refused and drop nothing', async () => {
    await loginAs('five');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = {
      iss: server.url,
      aud: client.id,
      iat: Math.floor(Date.now() / 1000),
      jti: 'forged',
      events: {
        'https://schemas.openid.net/secevent/risc/event-type/account-disabled': {
          subject: { subject_type: 'iss_sub', iss: server.url, sub: received[0]?.sub ?? '1' },
        },
      },
    };
    for (const kid of [undefined, 'not-a-published-key']) {
      const head = part({ alg: 'RS256', typ: 'secevent+jwt', ...(kid ? { kid } : {}) });
      const body = part(claims);
      const jwt = `${head}.${body}.${sign('RSA-SHA256', Buffer.from(`${head}.${body}`), privateKey).toString('base64url')}`;
      const answer = await fetch(receiverUrl, { method: 'POST', headers: { 'content-type': 'application/secevent+jwt' }, body: jwt });
      assert.equal(answer.status, 400);
      const { err } = (await answer.json()) as { err: string };
      assert.ok(['authentication_failed', 'invalid_key'].includes(err), err);
    }
    const wrongType = await fetch(receiverUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(wrongType.status, 400);
    const notJwt = await fetch(receiverUrl, { method: 'POST', headers: { 'content-type': 'application/secevent+jwt' }, body: 'hello' });
    assert.equal(((await notJwt.json()) as { err: string }).err, 'invalid_request');
    assert.deepEqual(await profiles(), ['five'], 'the login is still there');
    assert.ok(existsSync(join(configDir, 'auth', 'profiles.json')));
  });
  it("DEV-RISC-ACCOUNT-DISABLED: account-disabled drops the account's logins (last: the account stays disabled)", async () => {
    await loginAs('four');
    server.disableAccount('dev', 'test');
    const pushes = (await server.securityEvents()).filter((d) => d.event.endsWith('/account-disabled'));
    assert.ok(pushes.length >= 1 && pushes.every((d) => d.accepted), JSON.stringify(pushes));
    assert.deepEqual(await profiles(), []);
  });
});
