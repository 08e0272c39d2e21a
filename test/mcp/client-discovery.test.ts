/**
 * The discovery half of the context client on its own: the WWW-Authenticate parser (RFC 7235 §4.1), the canonical
 * server URI (CTX-URI-*), the orders of the well-known addresses, and the refusals of metadata that breaks RFC 9728 or
 * RFC 8414 — against small HTTP servers on 127.0.0.1 that serve exactly the documents each case needs.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpClient, type HttpClient } from '../../lib/http/index.js';
import { silentLogger } from '../../lib/log.js';
import {
  AuthSession,
  ContextClientError,
  authorizationServerMetadataUrls,
  bearerChallenge,
  canonicalServerUri,
  discoverAuthorizationServer,
  discoverProtectedResource,
  parseWwwAuthenticate,
  protectedResourceMetadataUrls,
  sameResource,
} from '../../lib/mcp/client/index.js';

describe('mcp client discovery', function () {
  this.timeout(20_000);
  let httpClient: HttpClient;
  let server: http.Server;
  let base: string;
  let documents: Record<string, unknown>;
  let seen: string[];

  before(async () => {
    httpClient = createHttpClient({ logger: silentLogger, proxy: {} });
    server = http.createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      seen.push(path);
      const document = documents[path];
      if (document === undefined) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      const body = typeof document === 'function' ? (document as () => unknown)() : document;
      response.writeHead(200, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    httpClient.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    documents = {};
    seen = [];
  });

  it('CTX-EP-401-WWW-AUTHENTICATE: parses challenges as RFC 7235 writes them — quoted strings with escapes and commas, several challenges, token68, several header fields', () => {
    const header =
      'Newauth realm="apps", type=1, title="Login to \\"apps\\", now", Basic realm="simple", Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="a:b c:d", error="insufficient_scope"';
    const challenges = parseWwwAuthenticate(header);
    assert.deepEqual(
      challenges.map((c) => c.scheme),
      ['newauth', 'basic', 'bearer'],
    );
    assert.equal(challenges[0]!.params.title, 'Login to "apps", now');
    assert.equal(challenges[0]!.params.type, '1');
    assert.deepEqual(bearerChallenge(header), {
      resource_metadata: 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
      scope: 'a:b c:d',
      error: 'insufficient_scope',
    });
    assert.deepEqual(parseWwwAuthenticate('Basic dXNlcjpwYXNz==, Bearer'), [
      { scheme: 'basic', params: {}, token68: 'dXNlcjpwYXNz==' },
      { scheme: 'bearer', params: {} },
    ]);
    assert.deepEqual(bearerChallenge(['Basic realm="x"', 'BEARER Scope=read , Resource_Metadata = "u"']), { scope: 'read', resource_metadata: 'u' });
    assert.equal(bearerChallenge('Basic realm="x"'), undefined);
    assert.deepEqual(parseWwwAuthenticate(''), []);
    assert.deepEqual(bearerChallenge('Bearer realm="unterminated'), { realm: 'unterminated' });
  });

  it('CTX-URI-ABSOLUTE CTX-URI-CASE CTX-URI-PORT-PATH CTX-URI-NO-FRAGMENT CTX-URI-NO-TRAILING-SLASH: the canonical server URI, and resources compared canonically (AMB-21)', () => {
    assert.equal(canonicalServerUri('HTTPS://MCP.Example.COM:443/Mcp/'), 'https://mcp.example.com/Mcp');
    assert.equal(canonicalServerUri('https://mcp.example.com/'), 'https://mcp.example.com');
    assert.equal(canonicalServerUri('http://127.0.0.1:8808/mcp'), 'http://127.0.0.1:8808/mcp');
    assert.throws(() => canonicalServerUri('https://mcp.example.com/mcp#frag'), /fragment/);
    assert.throws(() => canonicalServerUri('mcp.example.com/mcp'), /not an absolute URL/);
    assert.throws(() => canonicalServerUri('https://u:p@mcp.example.com/'), /credentials/);
    assert.ok(sameResource('https://MCP.example.com/mcp/', 'https://mcp.example.com/mcp'));
    assert.ok(!sameResource('https://mcp.example.com/mcp', 'https://mcp.example.com/MCP'));
    assert.throws(() => new AuthSession('http://mcp.example.com/mcp', httpClient), /over plain http/);
  });

  it('CTX-STD-RFC9728 CTX-STD-RFC8414: the well-known addresses in order — path-inserted first, then the root; for an issuer with a path, RFC 8414 then the two OpenID forms', () => {
    assert.deepEqual(protectedResourceMetadataUrls('https://mcp.example.com/public/mcp/'), [
      'https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp',
      'https://mcp.example.com/.well-known/oauth-protected-resource',
    ]);
    assert.deepEqual(protectedResourceMetadataUrls('https://mcp.example.com'), ['https://mcp.example.com/.well-known/oauth-protected-resource']);
    assert.deepEqual(authorizationServerMetadataUrls('https://as.example.com/tenant'), [
      'https://as.example.com/.well-known/oauth-authorization-server/tenant',
      'https://as.example.com/.well-known/openid-configuration/tenant',
      'https://as.example.com/tenant/.well-known/openid-configuration',
    ]);
    assert.deepEqual(authorizationServerMetadataUrls('https://as.example.com'), [
      'https://as.example.com/.well-known/oauth-authorization-server',
      'https://as.example.com/.well-known/openid-configuration',
    ]);
  });

  it('CTX-STD-RFC9728: without resource_metadata in the challenge, the path-inserted then the root well-known address; the resource must be the server called', async () => {
    documents['/.well-known/oauth-protected-resource'] = { resource: `${base}/mcp/`, authorization_servers: [`${base}/as`], scopes_supported: ['x'] };
    const found = await discoverProtectedResource(`${base}/mcp`, { http: httpClient });
    assert.deepEqual(seen, ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']);
    assert.equal(found.resource, `${base}/mcp`);
    assert.equal(found.metadata.authorization_servers[0], `${base}/as`);

    documents['/.well-known/oauth-protected-resource/mcp'] = { resource: `${base}/other`, authorization_servers: [`${base}/as`] };
    await assert.rejects(
      discoverProtectedResource(`${base}/mcp`, { http: httpClient }),
      (e: unknown) => e instanceof ContextClientError && e.code === 'CTX_RESOURCE_MISMATCH',
    );
    documents['/.well-known/oauth-protected-resource/mcp'] = { resource: `${base}/mcp`, authorization_servers: [] };
    await assert.rejects(
      discoverProtectedResource(`${base}/mcp`, { http: httpClient }),
      (e: unknown) => e instanceof ContextClientError && e.code === 'CTX_NO_RESOURCE_METADATA' && /CTX-PRM-AUTHORIZATION-SERVERS/.test(e.message),
    );
    // CTX-EP-401-WWW-AUTHENTICATE: the challenge's resource_metadata is used as given, and only it.
    seen = [];
    documents['/meta/here'] = { resource: `${base}/mcp`, authorization_servers: [`${base}/as2`] };
    const named = await discoverProtectedResource(`${base}/mcp`, { http: httpClient, resourceMetadataUrl: `${base}/meta/here` });
    assert.deepEqual(seen, ['/meta/here']);
    assert.equal(named.metadata.authorization_servers[0], `${base}/as2`);
    // Neither address has a document: a server of the 2025-03-26 revision (client-resource-prefix.test.ts).
    documents = {};
    assert.equal((await discoverProtectedResource(`${base}/mcp`, { http: httpClient })).revision, '2025-03-26');
  });

  it("CTX-STD-RFC8414 CTX-AS-HTTPS: the issuer's metadata from the first address that has it; an issuer mismatch, an http endpoint off loopback and missing S256 are refused", async () => {
    const issuer = `${base}/tenant`;
    const metadata = { issuer, authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token`, code_challenge_methods_supported: ['S256'] };
    documents['/tenant/.well-known/openid-configuration'] = metadata;
    const found = await discoverAuthorizationServer(issuer, { http: httpClient });
    assert.deepEqual(seen, [
      '/.well-known/oauth-authorization-server/tenant',
      '/.well-known/openid-configuration/tenant',
      '/tenant/.well-known/openid-configuration',
    ]);
    assert.equal(found.metadata.token_endpoint, `${base}/token`);

    const refusedWith = async (document: Record<string, unknown>, code: string) => {
      documents['/.well-known/oauth-authorization-server/tenant'] = document;
      await assert.rejects(discoverAuthorizationServer(issuer, { http: httpClient }), (e: unknown) => {
        assert.ok(e instanceof ContextClientError, String(e));
        assert.equal(e.code, code, e.message);
        return true;
      });
    };
    await refusedWith({ ...metadata, issuer: `${issuer}/` }, 'CTX_ISSUER_MISMATCH');
    await refusedWith({ ...metadata, token_endpoint: 'http://as.example.com/token' }, 'CTX_INSECURE_ENDPOINT');
    await refusedWith({ ...metadata, registration_endpoint: 'http://as.example.com/register' }, 'CTX_INSECURE_ENDPOINT');
    await assert.rejects(
      discoverAuthorizationServer('http://as.example.com', { http: httpClient }),
      (e: unknown) => e instanceof ContextClientError && e.code === 'CTX_INSECURE_ENDPOINT',
    );
    const { requireS256 } = await import('../../lib/mcp/client/index.js');
    for (const methods of [undefined, ['plain']]) {
      assert.throws(
        () => requireS256({ issuer, metadataUrl: '', metadata: { ...metadata, code_challenge_methods_supported: methods } as never }),
        (e: unknown) => e instanceof ContextClientError && e.code === 'CTX_NO_S256' && e.message.includes(issuer),
      );
    }
  });
});
