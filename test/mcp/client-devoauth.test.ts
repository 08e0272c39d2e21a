/**
 * The context client against `gantry dev oauth` (devserver/oauth, an independent reading of the same rules) as
 * the authorization server of Gantry's context server: sign-in, a call, a step-up; and the dev server's own knobs for
 * a client's checks (no S256 advertised, another `iss` on the callback).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { FileTokenStore } from '../../lib/auth/store/index.js';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { silentLogger } from '../../lib/log.js';
import { ContextClientError, connectContextServer, type ConnectOptions } from '../../lib/mcp/client/index.js';
import { startContextServer, type ContextServer } from '../../lib/mcp/server/index.js';
import { FormBrowser } from './fixtures-client/browser.js';
import { testTools } from './fixtures-client/tools.js';
import { startRelay } from './relay.js';
import { sendJson, startHttpPeer } from '../peers/http.js';
import { startSecretsServer } from '../../devserver/secrets/index.js';
import { SecretsClient } from '../../lib/secrets/index.js';

describe('mcp client against gantry dev oauth', function () {
  this.timeout(60_000);
  const started: Array<{ stop(): Promise<void> }> = [];
  let configDir: string;
  let browser: FormBrowser;

  async function pair(oauthOptions: Parameters<typeof startOAuthServer>[0] = {}): Promise<{ oauth: OAuthServer; server: ContextServer }> {
    const oauth = await startOAuthServer(oauthOptions);
    started.push(oauth);
    const server = await startContextServer({ authorizationServer: oauth.url, tools: testTools, logger: silentLogger });
    started.push(server);
    return { oauth, server };
  }
  beforeEach(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'gantry-mcp-devoauth-'));
    browser = new FormBrowser();
  });
  afterEach(async () => {
    for (const peer of started.splice(0).reverse()) await peer.stop();
    await rm(configDir, { recursive: true, force: true });
  });
  const options = (deny = false): ConnectOptions => ({
    configDir,
    tokenStore: new FileTokenStore(configDir),
    logger: silentLogger,
    openUrl: async (url) => {
      await browser.authorize(url, { deny });
    },
  });

  it('CTX-STD-RFC9728 CTX-STD-RFC8414 CTX-STD-RFC7591 CTX-EP-AUTHORIZATION-REQUEST CTX-EP-TOKEN-REQUEST CTX-TOKEN-AUDIENCE CTX-ERR-403: signs in, calls a tool, and steps up once for a tool that needs more', async () => {
    const { server } = await pair();
    const connection = await connectContextServer(server.url, options());
    try {
      assert.deepEqual((await connection.callTool('modules_resolve', { source: 'dev' })).structuredContent, { echoed: 'dev' });
      const progress: number[] = [];
      assert.deepEqual((await connection.callTool('gate_run', { url: 'https://x.test' }, { onProgress: (p) => progress.push(p.progress) })).structuredContent, {
        gated: 'https://x.test',
      });
      assert.deepEqual(progress, [1, 2, 3]);
      assert.equal(connection.session.authorizations, 2);
      assert.deepEqual(connection.session.grantedScopes().sort(), ['gates:run', 'modules:read']);
      const store = new FileTokenStore(configDir);
      const { ClientState } = await import('../../lib/mcp/client/index.js');
      const entry = (await new ClientState(configDir).login(server.resource))!;
      const stored = (await store.read({ authUrl: entry.issuer, clientId: entry.clientId, profile: entry.profile }))!;
      assert.equal(decodeJwt(stored.tokens.accessToken).aud, server.resource);
    } finally {
      await connection.close();
    }
  });

  it('CTX-EP-AUTHORIZATION-REQUEST: refuses the dev server when it advertises no S256', async () => {
    const { server } = await pair({ metadataOverrides: { code_challenge_methods_supported: ['plain'] } });
    await assert.rejects(connectContextServer(server.url, options()), (error: unknown) => error instanceof ContextClientError && error.code === 'CTX_NO_S256');
    assert.equal(browser.runs.length, 0);
  });

  it('RFC 9207: refuses a callback whose iss is not the dev server', async () => {
    const { server } = await pair({ callbackIssuer: 'https://elsewhere.example' });
    await assert.rejects(
      connectContextServer(server.url, options()),
      (error: unknown) => error instanceof ContextClientError && error.code === 'CTX_ISS_MISMATCH',
    );
    assert.equal(browser.runs.length, 1);
  });

  it("Deny on the dev server's consent page is CTX_ACCESS_DENIED", async () => {
    const { server } = await pair();
    await assert.rejects(
      connectContextServer(server.url, options(true)),
      (error: unknown) => error instanceof ContextClientError && error.code === 'CTX_ACCESS_DENIED',
    );
  });

  it("CTX-AUTH-CLIENT-OWN-AS-TOKENS: two context servers of one authorization server — each gets its own sign-in and token; the first's token never reaches the second", async () => {
    const { oauth, server: first } = await pair();
    // The second server behind a recording relay: its public URL (and so its resource) is the relay's.
    const target = await startContextServer({ authorizationServer: oauth.url, tools: testTools, logger: silentLogger, port: 0 });
    const relay = await startRelay(new URL(target.url).origin);
    started.push(relay);
    await target.stop();
    const second = await startContextServer({
      authorizationServer: oauth.url,
      tools: testTools,
      logger: silentLogger,
      port: Number(new URL(target.url).port),
      publicUrl: `${relay.url}/mcp`,
    });
    started.push(second);
    const one = await connectContextServer(first.url, options());
    try {
      await one.callTool('modules_resolve', { source: 'a' });
    } finally {
      await one.close();
    }
    const two = await connectContextServer(second.url, options());
    try {
      assert.deepEqual((await two.callTool('modules_resolve', { source: 'b' })).structuredContent, { echoed: 'b' });
      assert.equal(two.session.authorizations, 1, 'the second server got its own sign-in');
    } finally {
      await two.close();
    }
    assert.equal(browser.runs.length, 2);
    const { ClientState } = await import('../../lib/mcp/client/index.js');
    const store = new FileTokenStore(configDir);
    const tokens = await Promise.all(
      [first, second].map(async (server) => {
        const entry = (await new ClientState(configDir).login(server.resource))!;
        return (await store.read({ authUrl: entry.issuer, clientId: entry.clientId, profile: entry.profile }))!.tokens.accessToken;
      }),
    );
    assert.equal(decodeJwt(tokens[0]!).aud, first.resource);
    assert.equal(decodeJwt(tokens[1]!).aud, second.resource);
    const seen = relay.seen.join('\n');
    assert.ok(seen.includes(tokens[1]!), 'the second server got its own token');
    assert.ok(!seen.includes(tokens[0]!), "the first server's token never went to the second");
  });

  it('CTX-PRM-CLIENT-CHOOSES: of several authorization_servers in the metadata, the client picks one (the first) and signs in there alone', async () => {
    const [a, b] = [await startOAuthServer(), await startOAuthServer()];
    started.push(a, b);
    const protectedServer = await startHttpPeer((request, response) => {
      if (request.url.startsWith('/.well-known/oauth-protected-resource')) {
        sendJson(response, 200, { resource: `${protectedServer.url}/mcp`, authorization_servers: [a.url, b.url], scopes_supported: ['modules:read'] });
        return;
      }
      response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${protectedServer.url}/.well-known/oauth-protected-resource/mcp"` }).end();
    });
    started.push({ stop: () => protectedServer.close() });
    const shown: string[] = [];
    await assert.rejects(
      connectContextServer(`${protectedServer.url}/mcp`, {
        ...options(true),
        openUrl: async (url) => {
          shown.push(url);
          await browser.authorize(url, { deny: true });
        },
      }),
      (error: unknown) => error instanceof ContextClientError && error.code === 'CTX_ACCESS_DENIED',
    );
    assert.equal(shown.length, 1);
    assert.equal(new URL(shown[0]!).origin, a.url);
    assert.ok(
      !b.requestLog().some((entry) => entry.path !== '/.well-known/oauth-authorization-server'),
      'nothing but perhaps its metadata was asked of the second',
    );
  });

  it('tokens kept in the kv engine: two context servers each have their own kv path (secret/gantry/auth/mcp-<hash>), so the second sign-in does not collide with the first', async () => {
    const secrets = await startSecretsServer({});
    started.push(secrets);
    const { oauth, server: first } = await pair();
    const second = await startContextServer({ authorizationServer: oauth.url, tools: testTools, logger: silentLogger });
    started.push(second);
    const client = new SecretsClient({ address: secrets.url, token: secrets.credentials.token, sources: { env: {}, pulumi: undefined } });
    const kvOptions: ConnectOptions = {
      configDir,
      logger: silentLogger,
      store: 'kv',
      kv: async () => client,
      openUrl: async (url) => {
        await browser.authorize(url);
      },
    };
    for (const server of [first, second]) {
      const connection = await connectContextServer(server.url, kvOptions);
      try {
        assert.deepEqual((await connection.callTool('modules_resolve', { source: 'x' })).structuredContent, { echoed: 'x' });
      } finally {
        await connection.close();
      }
    }
    const keys = (await client.kv('secret', { kvVersion: 2 }).list('gantry/auth/')).filter((key) => key.startsWith('mcp-'));
    assert.equal(keys.length, 2, keys.join(', '));
    // Both logins are still there: a new connection to the first signs in no more.
    const again = await connectContextServer(first.url, kvOptions);
    try {
      await again.callTool('modules_resolve', { source: 'y' });
      assert.equal(again.session.authorizations, 0);
    } finally {
      await again.close();
    }
    assert.equal(browser.runs.length, 2);
  });
});
