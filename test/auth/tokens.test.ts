// Tokens after the login (DEV-TL-*, DEV-TOK-*, DEV-AUTH-*): the session that refreshes a minute early and stores the
// new token, refresh refused after revoke, user revoke, the issuance limit and time-based access, and the video API
// call with the token in the header (or, when asked, the query, redacted) — against the embedded server.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOAuthServer, type OAuthServer, type OAuthServerOptions } from '../../devserver/oauth/index.js';
import {
  AuthSession,
  DeviceLoginError,
  authHttpClient,
  deviceLogin,
  discoverEndpoints,
  listMyChannels,
  refreshTokens,
  resolveScopes,
  revokeToken,
  type DeviceLoginResult,
} from '../../lib/auth/index.js';
import { openTokenStore, saveLogin } from '../../lib/auth/store/index.js';
import { createHttpClient } from '../../lib/http/index.js';
import { createLogger } from '../../lib/log.js';

const scopes = resolveScopes(['openid', 'email', 'video.readonly']);

describe('device-login tokens against the embedded authorization server', function () {
  this.timeout(60_000);
  let configDir: string;
  const servers: OAuthServer[] = [];
  const http = authHttpClient();

  before(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'gantry-tokens-'));
  });
  after(async () => {
    http.close();
    for (const server of servers) await server.stop();
    await rm(configDir, { recursive: true, force: true });
  });

  async function serve(options: OAuthServerOptions = {}, clientSpec: Parameters<OAuthServer['registerClient']>[0] = {}) {
    const server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1, ...options });
    servers.push(server);
    const client = server.registerClient(clientSpec);
    return { server, client: { clientId: client.id, clientSecret: client.secret ?? undefined } };
  }

  async function login(server: OAuthServer, client: { clientId: string; clientSecret?: string | undefined }): Promise<DeviceLoginResult> {
    return deviceLogin({ authUrl: server.url, ...client, scopes, onCode: (code) => setTimeout(() => server.approve(code.userCode), 50).unref() });
  }

  async function rejection(promise: Promise<unknown>): Promise<DeviceLoginError> {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof DeviceLoginError, String(error));
      return error;
    }
    assert.fail('expected a rejection');
  }

  it('DEV-TL-REFRESH DEV-REFRESH-RESPONSE DEV-AUTH-REFRESH-REUSE DEV-EP-REFRESH: getAccessToken refreshes a minute before expiry, stores the new token and keeps the refresh token', async () => {
    const { server, client } = await serve({ accessTokenTtl: 50 });
    const result = await login(server, client);
    const { store } = await openTokenStore('file', { configDir, insecureStorage: true });
    const key = { authUrl: server.url, clientId: client.clientId, profile: 'refresh' };
    await saveLogin(store, { ...key, tokens: result.tokens }, { configDir });
    const session = new AuthSession({ store, key, clientSecret: client.clientSecret });
    try {
      // 50 s left is inside the minute: a new token, refreshed once however many ask at once.
      const [a, b] = await Promise.all([session.getAccessToken(), session.getAccessToken()]);
      assert.equal(a, b);
      assert.notEqual(a, result.tokens.accessToken);
      const stored = await store.read(key);
      assert.equal(stored!.tokens.accessToken, a, 'the new token was stored');
      assert.equal(stored!.tokens.refreshToken, result.tokens.refreshToken, 'the refresh token is reused, not lost (the answer has none)');
      assert.equal(server.requestLog().filter((e) => e.path === '/token' && e.status === 200).length, 2, 'one login, one refresh');
    } finally {
      session.close();
    }
  });

  it('DEV-TL-REVOKE DEV-EP-REVOKE DEV-ERR-REVOKE AMB-18: logout revokes in a form body, both tokens stop working, and the login is deleted', async () => {
    const { server, client } = await serve();
    const result = await login(server, client);
    const { store } = await openTokenStore('file', { configDir, insecureStorage: true });
    const key = { authUrl: server.url, clientId: client.clientId, profile: 'logout' };
    await saveLogin(store, { ...key, tokens: result.tokens }, { configDir });
    const session = new AuthSession({ store, key, clientSecret: client.clientSecret });
    try {
      const outcome = await session.logout();
      assert.equal(outcome.revoked, 'revoked');
      assert.equal(outcome.deleted, true);
      assert.equal(await store.read(key), undefined);
    } finally {
      session.close();
    }
    const revokes = server.requestLog().filter((e) => e.path === '/revoke');
    assert.ok(revokes.length >= 1 && revokes.every((e) => !e.tokenInQuery && e.queryKeys.length === 0), 'the token went in the body only');
    const endpoints = await discoverEndpoints(http, server.url);
    const refused = await rejection(refreshTokens(http, endpoints, client, result.tokens));
    assert.equal(refused.code, 'AUTH_REFRESH_REVOKED');
    assert.match(refused.hint ?? '', /gantry auth login/);
    await assert.rejects(listMyChannels(http, server.url, result.tokens.accessToken), (error: DeviceLoginError) => error.status === 401);
    assert.equal(await revokeToken(http, endpoints, result.tokens.accessToken, client), 'already-invalid', 'a token revoked twice is not an error');
  });

  it('DEV-TL-REVOKE: revoking the access token alone revokes its refresh token too', async () => {
    const { server, client } = await serve();
    const result = await login(server, client);
    const endpoints = await discoverEndpoints(http, server.url);
    assert.equal(await revokeToken(http, endpoints, result.tokens.accessToken, client), 'revoked');
    assert.equal((await rejection(refreshTokens(http, endpoints, client, result.tokens))).code, 'AUTH_REFRESH_REVOKED');
  });

  it('DEV-TL-USER-REVOKE: access revoked in the account settings makes the refresh token fail with invalid_grant, which asks for a new login', async () => {
    const { server, client } = await serve();
    const result = await login(server, client);
    server.userRevokesAccess('dev', client.clientId);
    const refused = await rejection(refreshTokens(http, await discoverEndpoints(http, server.url), client, result.tokens));
    assert.equal(refused.code, 'AUTH_REFRESH_REVOKED');
    assert.equal(refused.oauthError, 'invalid_grant');
    assert.equal(refused.exitCode, 1);
  });

  it('DEV-AUTH-REFRESH-ISSUANCE-LIMIT AMB-16: past the issuance limit the oldest refresh token stops working, the newest still works', async () => {
    const { server, client } = await serve({ refreshLimit: { perClientUser: 2 } });
    const first = await login(server, client);
    const second = await login(server, client);
    const third = await login(server, client);
    const endpoints = await discoverEndpoints(http, server.url);
    assert.equal((await rejection(refreshTokens(http, endpoints, client, first.tokens))).code, 'AUTH_REFRESH_REVOKED');
    assert.ok((await refreshTokens(http, endpoints, client, second.tokens)).accessToken);
    assert.ok((await refreshTokens(http, endpoints, client, third.tokens)).accessToken);
  });

  it('DEV-TOK-REFRESH-EXPIRES-IN DEV-TL-TIME-BASED-EXPIRY: time-based access gives the refresh token an end, and after it the refresh token is refused', async () => {
    const { server, client } = await serve({}, { timeBasedAccessSeconds: 2 });
    const result = await login(server, client);
    assert.ok(result.tokens.refreshTokenExpiresAt !== undefined);
    assert.ok(Math.abs(result.tokens.refreshTokenExpiresAt - (Date.now() + 2_000)) < 1_500);
    const endpoints = await discoverEndpoints(http, server.url);
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    const local = await rejection(refreshTokens(http, endpoints, client, result.tokens));
    assert.equal(local.code, 'AUTH_REFRESH_REVOKED', 'known expired: not even sent');
    const { refreshTokenExpiresAt: _ignored, ...withoutEnd } = result.tokens;
    const remote = await rejection(refreshTokens(http, endpoints, client, withoutEnd));
    assert.equal(remote.oauthError, 'invalid_grant', 'and the server refuses it too');
  });

  it('DEV-EP-VIDEO-CHANNELS DEV-AUTH-ACCESS-TOKEN-TRANSPORT AMB-19: the channels call sends the token as a Bearer header; in the query only when asked, and redacted in what is logged', async () => {
    const { server, client } = await serve();
    const result = await login(server, client);
    const lines: string[] = [];
    const logged = createHttpClient({ logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }) });
    try {
      const header = await listMyChannels(logged, server.url, result.tokens.accessToken);
      assert.equal(header.length, 1);
      assert.match(header[0]!.title ?? '', /Gantry Dev/);
      const calls = server.requestLog().filter((e) => e.path === '/video/v3/channels');
      assert.equal(calls.at(-1)!.tokenInQuery, false);
      assert.deepEqual(calls.at(-1)!.queryKeys.sort(), ['mine', 'part']);
      const query = await listMyChannels(logged, server.url, result.tokens.accessToken, { tokenInQuery: true });
      assert.deepEqual(query, header);
      assert.equal(
        server
          .requestLog()
          .filter((e) => e.path === '/video/v3/channels')
          .at(-1)!.tokenInQuery,
        true,
      );
      // A failing call's error shows the URL: with the token masked.
      const failing = await listMyChannels(logged, `${server.url}/nothing-here`, result.tokens.accessToken, { tokenInQuery: true }).catch(
        (error: Error) => error,
      );
      assert.ok(failing instanceof Error);
      assert.ok(!failing.message.includes(result.tokens.accessToken) && !lines.join('\n').includes(result.tokens.accessToken));
    } finally {
      logged.close();
    }
  });

  it('DEV-AUTH-REFRESH-REUSE: the stored login on disk holds the tokens in a 0600 file that names no client secret', async () => {
    const { server, client } = await serve();
    const result = await login(server, client);
    const { store } = await openTokenStore('file', { configDir, insecureStorage: true });
    const key = { authUrl: server.url, clientId: client.clientId, profile: 'disk' };
    await saveLogin(store, { ...key, tokens: result.tokens }, { configDir });
    const where = store.describe(key);
    const path = where.match(/(\/\S+\.json)/)?.[1];
    assert.ok(path, `the location names the file: ${where}`);
    const text = await readFile(path, 'utf8');
    assert.ok(text.includes(result.tokens.refreshToken!));
    assert.ok(!text.includes(client.clientSecret!), 'the client secret is not kept with the tokens');
  });
});
