/**
 * The context client (lib/mcp/client) against oidc-provider — a real, independent OAuth 2.1 authorization server with
 * resource indicators, dynamic registration and PKCE — and Gantry's context server (lib/mcp/server) behind a
 * recording relay, over real sockets on 127.0.0.1. The browser is an HTTP form-poster (fixtures-client/browser.ts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { FileTokenStore } from '../../lib/auth/store/index.js';
import { silentLogger } from '../../lib/log.js';
import { startContextServer, type ContextServer } from '../../lib/mcp/server/index.js';
import { ClientState, ContextClientError, connectContextServer, profileFor, type ConnectOptions } from '../../lib/mcp/client/index.js';
import { FormBrowser, type BrowserOptions } from './fixtures-client/browser.js';
import { startAuthorizationServer, type AuthorizationServerPeer } from './fixtures-client/oidc.js';
import { freePort, startRelay, type Relay } from './fixtures-client/relay.js';
import { testTools } from './fixtures-client/tools.js';

describe('mcp client against oidc-provider and the context server', function () {
  this.timeout(60_000);
  let op: AuthorizationServerPeer;
  let relay: Relay;
  let server: ContextServer;
  let configDir: string;
  let browser: FormBrowser;

  before(async () => {
    op = await startAuthorizationServer();
    relay = await startRelay();
    const port = await freePort();
    server = await startContextServer({ authorizationServer: op.issuer, tools: testTools, port, publicUrl: relay.url, logger: silentLogger });
    relay.target = new URL(`http://127.0.0.1:${port}/mcp`);
  });
  after(async () => {
    await server?.stop();
    await relay?.stop();
    await op?.stop();
  });
  beforeEach(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'gantry-mcp-client-'));
    browser = new FormBrowser();
    op.requests.length = 0;
    relay.requests.length = 0;
  });
  afterEach(async () => {
    op.metadata.withoutS256 = false;
    op.metadata.issuer = undefined;
    op.metadata.extra = {};
    assert.deepEqual(op.serverErrors, []);
    await rm(configDir, { recursive: true, force: true });
  });

  const options = (browse: BrowserOptions = {}, more: Partial<ConnectOptions> = {}): ConnectOptions => ({
    configDir,
    tokenStore: new FileTokenStore(configDir),
    logger: silentLogger,
    openUrl: async (url) => {
      await browser.authorize(url, browse);
    },
    ...more,
  });
  const routed = (route: string) => op.requests.filter((r) => r.route === route);

  it('CTX-STD-RFC9728 CTX-EP-401-WWW-AUTHENTICATE CTX-STD-RFC8414 CTX-STD-RFC7591 CTX-EP-AUTHORIZATION-REQUEST CTX-EP-TOKEN-REQUEST CTX-AUTH-RESOURCE-ALWAYS CTX-STD-RFC8707 CTX-TOKEN-AUDIENCE CTX-EP-RESOURCE-REQUEST CTX-AUTH-NO-QUERY-TOKEN: discovers, registers, authorizes with PKCE S256 and calls a tool', async () => {
    const connection = await connectContextServer(relay.url, options());
    try {
      const result = await connection.callTool('modules_resolve', { source: 'hashicorp/consul/aws' });
      assert.deepEqual(result.structuredContent, { echoed: 'hashicorp/consul/aws' });
      assert.equal(connection.resource, relay.url);
      // One registration, native, public, loopback redirect.
      const [registration] = routed('registration');
      assert.equal(routed('registration').length, 1);
      assert.equal(registration!.status, 201);
      // The authorization request: PKCE S256, state, resource = the canonical server URI, the challenge's scope.
      const [authorization] = routed('authorization');
      assert.equal(authorization!.params.code_challenge_method, 'S256');
      assert.match(String(authorization!.params.code_challenge), /^[A-Za-z0-9_-]{43}$/);
      assert.ok(String(authorization!.params.state).length >= 32);
      assert.equal(authorization!.params.resource, relay.url);
      assert.equal(authorization!.params.scope, 'modules:read');
      assert.match(String(authorization!.params.redirect_uri), /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      // The token request: the verifier and resource, in the form body (never the query).
      const [token] = routed('token');
      assert.equal(token!.params.grant_type, 'authorization_code');
      assert.equal(token!.params.resource, relay.url);
      assert.ok(token!.params.code_verifier);
      assert.equal(token!.query, '');
      // The access token is a JWT for this server as audience.
      const stored = await new FileTokenStore(configDir).read({
        authUrl: op.issuer,
        clientId: String(authorization!.params.client_id),
        profile: profileFor(relay.url),
      });
      assert.ok(stored, "the login is in the token store under issuer, client and the resource's profile");
      assert.equal(decodeJwt(stored.tokens.accessToken).aud, relay.url);
      assert.ok(stored.tokens.refreshToken);
      // Every request after the first 401 carried the bearer token; none had one in its query.
      assert.equal(relay.requests[0]!.status, 401);
      const mcpRequests = relay.requests.filter((r) => r.url.startsWith('/mcp'));
      assert.ok(
        mcpRequests.slice(1).every((r) => r.bearer),
        JSON.stringify(mcpRequests),
      );
      assert.ok(relay.requests.every((r) => !/access_token/.test(r.url)));
      assert.equal(browser.runs.length, 1);
      assert.match(browser.runs[0]!.callbackPage, /you can close this tab/i);
    } finally {
      await connection.close();
    }
  });

  it('CTX-DCR-FALLBACK: a second connection reuses the stored tokens and the registered client (no browser, no registration)', async () => {
    const first = await connectContextServer(relay.url, options());
    await first.close();
    const registered = await new ClientState(configDir).registeredClient(op.issuer);
    assert.ok(registered);
    op.requests.length = 0;
    const second = await connectContextServer(relay.url, options());
    try {
      await second.callTool('modules_resolve', { source: 'again' });
      assert.equal(browser.runs.length, 1);
      assert.equal(routed('registration').length, 0);
      assert.equal(routed('authorization').length, 0);
      assert.equal(second.session.authorizations, 0);
    } finally {
      await second.close();
    }
  });

  it('CTX-AS-REDIRECT-EXACT-MATCH: a new sign-in with the registered client uses its registered loopback port; when that port is taken, Gantry registers again', async () => {
    const first = await connectContextServer(relay.url, options());
    await first.close();
    const state = new ClientState(configDir);
    const registered = (await state.registeredClient(op.issuer))!;
    const port = Number(new URL(registered.redirectUri).port);
    await state.saveLogin(relay.url, undefined);
    const again = await connectContextServer(relay.url, options());
    await again.close();
    assert.equal(routed('registration').length, 1);
    assert.equal(routed('authorization')[1]!.params.redirect_uri, registered.redirectUri);
    await state.saveLogin(relay.url, undefined);
    const squatter = http.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', () => resolve()));
    try {
      const third = await connectContextServer(relay.url, options());
      await third.close();
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
    assert.equal(routed('registration').length, 2);
    const renewed = (await state.registeredClient(op.issuer))!;
    assert.notEqual(renewed.clientId, registered.clientId);
    assert.notEqual(renewed.redirectUri, registered.redirectUri);
  });

  it('CTX-AS-REFRESH-ROTATION CTX-AUTH-RESOURCE-ALWAYS: an expired access token is refreshed with resource, and the rotated refresh token is stored', async () => {
    const first = await connectContextServer(relay.url, options());
    await first.close();
    const store = new FileTokenStore(configDir);
    const entry = (await new ClientState(configDir).login(relay.url))!;
    const key = { authUrl: op.issuer, clientId: entry.clientId, profile: entry.profile };
    const before = (await store.read(key))!;
    await store.write({ ...key, tokens: { ...before.tokens, expiresAt: Date.now() - 1000 } });
    op.requests.length = 0;
    const second = await connectContextServer(relay.url, options());
    try {
      await second.callTool('modules_resolve', { source: 'refreshed' });
      assert.equal(second.session.refreshes, 1);
      assert.equal(second.session.authorizations, 0);
      const [refresh] = routed('token');
      assert.equal(refresh!.params.grant_type, 'refresh_token');
      assert.equal(refresh!.params.resource, relay.url);
      const after = (await store.read(key))!;
      assert.notEqual(after.tokens.refreshToken, before.tokens.refreshToken, 'the rotated refresh token replaced the old one');
      assert.notEqual(after.tokens.accessToken, before.tokens.accessToken);
      assert.ok(after.tokens.expiresAt > Date.now());
    } finally {
      await second.close();
    }
  });

  it('a refresh refused with invalid_grant falls back to a fresh authorization', async () => {
    const first = await connectContextServer(relay.url, options());
    await first.close();
    const store = new FileTokenStore(configDir);
    const entry = (await new ClientState(configDir).login(relay.url))!;
    const key = { authUrl: op.issuer, clientId: entry.clientId, profile: entry.profile };
    const stored = (await store.read(key))!;
    await store.write({ ...key, tokens: { ...stored.tokens, expiresAt: Date.now() - 1000, refreshToken: 'not-a-refresh-token-at-all' } });
    const second = await connectContextServer(relay.url, options());
    try {
      await second.callTool('modules_resolve', { source: 'x' });
      assert.equal(second.session.authorizations, 1);
      assert.equal(browser.runs.length, 2);
      assert.equal(routed('token').filter((r) => r.params.grant_type === 'refresh_token').length, 1);
    } finally {
      await second.close();
    }
  });

  it('CTX-ERR-403: a 403 insufficient_scope runs exactly one re-authorization with the granted and the challenged scopes, then the call succeeds (with its progress)', async () => {
    const connection = await connectContextServer(relay.url, options());
    try {
      const progress: number[] = [];
      const result = await connection.callTool('gate_run', { url: 'https://example.test' }, { onProgress: (p) => progress.push(p.progress) });
      assert.deepEqual(result.structuredContent, { gated: 'https://example.test' });
      assert.deepEqual(progress, [1, 2, 3]);
      assert.equal(connection.session.authorizations, 2);
      const scopes = routed('authorization').map((r) => String(r.params.scope).split(' ').sort());
      assert.deepEqual(scopes, [['modules:read'], ['gates:run', 'modules:read']]);
      assert.deepEqual(connection.session.grantedScopes().sort(), ['gates:run', 'modules:read']);
    } finally {
      await connection.close();
    }
  });

  it('CTX-ERR-403: a second 403 after the re-authorization is CTX_STEP_UP_REFUSED — one re-authorization, no loop', async () => {
    const connection = await connectContextServer(relay.url, options());
    try {
      await assert.rejects(connection.callTool('platform_rate_limit', {}), (error: unknown) => {
        assert.ok(error instanceof ContextClientError, String(error));
        assert.equal(error.code, 'CTX_STEP_UP_REFUSED');
        assert.equal(error.exitCode, 1);
        return true;
      });
      assert.equal(connection.session.authorizations, 2);
      assert.equal(relay.requests.filter((r) => r.status === 403).length, 2);
    } finally {
      await connection.close();
    }
  });

  it('CTX-DCR-FALLBACK: a pre-registered public client id is used as it is (no registration); a confidential one authenticates with its secret', async () => {
    const connection = await connectContextServer(relay.url, options({}, { clientId: op.staticClientId }));
    await connection.callTool('modules_resolve', { source: 'static' });
    await connection.close();
    assert.equal(routed('registration').length, 0);
    assert.equal(routed('authorization')[0]!.params.client_id, op.staticClientId);
    op.requests.length = 0;
    const confidential = await connectContextServer(relay.url, options({}, { clientId: op.confidentialClientId, clientSecret: op.confidentialClientSecret }));
    await confidential.callTool('modules_resolve', { source: 'confidential' });
    await confidential.close();
    const [token] = routed('token');
    assert.equal(token!.authorization, true, 'client_secret_basic');
    assert.equal(token!.status, 200);
  });

  it("CTX-DCR-FALLBACK: where the server advertises client ID metadata documents, the document's URL is the client id (no registration)", async () => {
    op.metadata.extra = { client_id_metadata_document_supported: true };
    const documentUrl = 'https://gantry.example/.well-known/mcp-client.json';
    let asked: URL | undefined;
    await assert.rejects(
      connectContextServer(
        relay.url,
        options(
          {},
          {
            clientMetadataUrl: documentUrl,
            openUrl: (url) => {
              asked = new URL(url);
              throw new Error('stop here: oidc-provider cannot fetch the document');
            },
          },
        ),
      ),
      /stop here/,
    );
    assert.equal(asked?.searchParams.get('client_id'), documentUrl);
    assert.equal(asked?.searchParams.get('resource'), relay.url);
    assert.equal(routed('registration').length, 0);
    // Where the server does not advertise them, dynamic registration.
    op.metadata.extra = {};
    const connection = await connectContextServer(relay.url, options({}, { clientMetadataUrl: documentUrl }));
    await connection.close();
    assert.equal(routed('registration').length, 1);
  });

  const refused = async (code: string, browse: BrowserOptions = {}) => {
    await assert.rejects(connectContextServer(relay.url, options(browse)), (error: unknown) => {
      assert.ok(error instanceof ContextClientError, String(error));
      assert.equal(error.code, code, error.message);
      assert.equal(error.exitCode, 1);
      return true;
    });
  };

  it('CTX-EP-AUTHORIZATION-REQUEST: an authorization server that does not advertise S256 is refused before anything is asked of it', async () => {
    op.metadata.withoutS256 = true;
    await refused('CTX_NO_S256');
    assert.equal(browser.runs.length, 0);
    assert.equal(routed('registration').length, 0);
    assert.equal(routed('authorization').length, 0);
  });

  it('CTX-STD-RFC8414: metadata whose issuer is not the issuer looked up is refused', async () => {
    op.metadata.issuer = `${op.issuer}/elsewhere`;
    await refused('CTX_ISSUER_MISMATCH');
    assert.equal(browser.runs.length, 0);
    assert.equal(routed('registration').length, 0);
  });

  it('CTX-EP-AUTHORIZATION-REQUEST: a callback with a tampered state is refused and its code never redeemed', async () => {
    await refused('CTX_STATE_MISMATCH', { tamper: (url) => url.searchParams.set('state', 'forged') });
    assert.equal(browser.runs[0]!.callbackStatus, 400);
    assert.equal(routed('token').length, 0);
  });

  it('RFC 9207: a callback whose iss is another issuer, or missing where the server promises it, is refused', async () => {
    await refused('CTX_ISS_MISMATCH', { tamper: (url) => url.searchParams.set('iss', 'http://127.0.0.1:1/evil') });
    await refused('CTX_ISS_MISMATCH', { tamper: (url) => url.searchParams.delete('iss') });
    assert.equal(routed('token').length, 0);
  });

  it('access denied on the authorization page is CTX_ACCESS_DENIED', async () => {
    await refused('CTX_ACCESS_DENIED', { deny: true });
  });
});
