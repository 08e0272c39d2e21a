/**
 * The MCP SDK's own client — an implementation independent of Gantry's — signs in to `gantry mcp serve` on its own:
 * it reads the 401's challenge, the protected resource metadata and `gantry dev oauth`'s RFC 8414 metadata, registers
 * dynamically, sends the person to the login-and-consent page (posted here as a browser would post the form), trades
 * the code with its PKCE verifier, and calls a tool with the JWT access token it got.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { startRegistryServer, type RegistryServer } from '../../devserver/registry/index.js';
import { startContextServer, type ContextServer } from '../../lib/mcp/index.js';
import { silentLogger } from '../../lib/log.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REDIRECT = 'http://127.0.0.1:38677/callback';

/** What a person does in the browser: the authorization page, signed in as dev, Allow; the callback's query. */
async function approveInBrowser(authorizationUrl: URL, decision: 'allow' | 'deny' = 'allow'): Promise<URLSearchParams> {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await page.text();
  assert.equal(page.status, 200, html.slice(0, 300));
  const transaction = /name="transaction" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(transaction, 'the consent page carries its transaction');
  const answer = await fetch(new URL('/authorize/decision', authorizationUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ transaction, username: 'dev', password: 'dev', decision }),
  });
  assert.equal(answer.status, 302);
  const location = new URL(answer.headers.get('location')!);
  assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
  return location.searchParams;
}

class SdkProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrls: URL[] = [];
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      redirect_uris: [REDIRECT],
      client_name: 'SDK client',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe("mcp serve: the MCP SDK's own client discovers, registers, authorizes and calls a tool (gantry dev oauth)", function () {
  this.timeout(60_000);
  let oauth: OAuthServer;
  let registry: RegistryServer;
  let server: ContextServer;

  before(async () => {
    oauth = await startOAuthServer({ dialect: 'rfc8628' });
    registry = await startRegistryServer({ dir: path.join(root, 'examples/modules') });
    server = await startContextServer({ authorizationServer: oauth.url, env: {}, logger: silentLogger });
  });

  after(async () => {
    await server?.stop();
    await Promise.all([oauth?.stop(), registry?.stop()]);
  });

  it('CTX-ROLE-CLIENT CTX-STD-RFC9728 CTX-STD-RFC8414 CTX-STD-RFC7591 CTX-EP-AUTHORIZATION-REQUEST CTX-EP-TOKEN-REQUEST CTX-TOKEN-AUDIENCE: from a bare 401 to a tool result', async () => {
    const provider = new SdkProvider();
    const first = new StreamableHTTPClientTransport(new URL(server.url), { authProvider: provider });
    await assert.rejects(new Client({ name: 'sdk', version: '1' }).connect(first), UnauthorizedError);
    assert.ok(provider.information?.client_id, 'it registered dynamically');
    const [authorizationUrl] = provider.authorizationUrls;
    assert.ok(authorizationUrl, 'it was sent to the authorization page');
    assert.equal(authorizationUrl.origin, oauth.url);
    assert.equal(authorizationUrl.searchParams.get('resource'), server.resource);
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorizationUrl.searchParams.get('scope'), 'modules:read', "the scope of the 401's challenge");

    const callback = await approveInBrowser(authorizationUrl);
    assert.equal(callback.get('iss'), oauth.url);
    await first.finishAuth(callback.get('code')!);
    const access = provider.saved?.access_token;
    assert.ok(access);
    const claims = JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString()) as { aud: string; scope: string };
    assert.equal(claims.aud, server.resource);

    const client = new Client({ name: 'sdk', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { authProvider: provider }));
    try {
      const result = await client.callTool({
        name: 'modules_resolve',
        arguments: { source: `${new URL(registry.url).host}/gantry/network/aws`, version: '~> 1.0' },
      });
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      assert.match((result.structuredContent as { version: string }).version, /^1\./);
      // The token carries modules:read only: gate_run is refused with 403 until the client steps up.
      await assert.rejects(client.callTool({ name: 'gate_run', arguments: { urls: ['https://example.com/'] } }), /403|insufficient_scope/);
    } finally {
      await client.close();
    }
  });

  it('CTX-AUTH-SERVER-OWN-TOKENS: a token the same authorization server issued for another context server is refused', async () => {
    const other = await startContextServer({ authorizationServer: oauth.url, env: {}, logger: silentLogger });
    try {
      const provider = new SdkProvider();
      const transport = new StreamableHTTPClientTransport(new URL(other.url), { authProvider: provider });
      await assert.rejects(new Client({ name: 'sdk', version: '1' }).connect(transport), UnauthorizedError);
      await transport.finishAuth((await approveInBrowser(provider.authorizationUrls[0]!)).get('code')!);
      const foreign = provider.saved!.access_token;
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${foreign}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    } finally {
      await other.stop();
    }
  });

  it('CTX-PROXY-CONSENT: every dynamically registered client gets its own consent page, naming it — an approval given to one is never reused for another', async () => {
    const register = async (name: string) => {
      const answer = await fetch(`${oauth.url}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
      });
      assert.equal(answer.status, 201);
      return ((await answer.json()) as { client_id: string }).client_id;
    };
    const authorize = (clientId: string) => {
      const url = new URL(`${oauth.url}/authorize`);
      for (const [k, v] of Object.entries({
        client_id: clientId,
        redirect_uri: REDIRECT,
        response_type: 'code',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        scope: 'modules:read',
        resource: server.resource,
        state: 's',
      }))
        url.searchParams.set(k, v);
      return url;
    };
    const first = await register('Agent One');
    assert.ok((await approveInBrowser(authorize(first))).get('code'));
    const second = await register('Agent Two');
    const page = await fetch(authorize(second), { redirect: 'manual' });
    assert.equal(page.status, 200, 'a consent page, not a redirect with a code');
    assert.match(await page.text(), /<strong id="client">Agent Two<\/strong>/);
  });
});
