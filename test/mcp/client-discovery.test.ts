/**
 * The discovery half of the context client on its own: the WWW-Authenticate parser (RFC 7235 §4.1), the canonical
 * server URI (CTX-URI-*), the orders of the well-known addresses, and the refusals of metadata that breaks RFC 9728 or
 * RFC 8414 — against small HTTP servers on 127.0.0.1 that serve exactly the documents each case needs. And which
 * resource tokens are asked for, and from whom, beyond the one-to-one RFC 9728 case: metadata naming the server's
 * origin (or a path above the URL called), and a server of the 2025-03-26 revision with no resource metadata — driving
 * AuthSession against the same server playing the authorization server.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTokenStore } from '../../lib/auth/store/index.js';
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
  resourceCovers,
  sameResource,
} from '../../lib/mcp/client/index.js';

interface Request {
  method: string;
  path: string;
  query: URLSearchParams;
  form: URLSearchParams;
}

describe('mcp client discovery', function () {
  this.timeout(20_000);
  let httpClient: HttpClient;
  let server: http.Server;
  let base: string;
  let documents: Record<string, unknown>;
  /** The paths asked for, in order, and the requests with their query and form. */
  let seen: string[];
  let requests: Request[];
  let configDir: string;
  /** Seconds the next token lives. */
  let expiresIn = 3600;

  // The documents of each case, and an authorization server whose sign-in page approves at once (as the conformance
  // suite's does): /authorize redirects to the callback with a code, /register and /token answer.
  before(async () => {
    httpClient = createHttpClient({ logger: silentLogger, proxy: {} });
    server = http.createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push(url.pathname);
        requests.push({ method: request.method!, path: url.pathname, query: url.searchParams, form: new URLSearchParams(body) });
        const json = (status: number, value: unknown) =>
          response.writeHead(status, { 'content-type': 'application/json' }).end(typeof value === 'string' ? value : JSON.stringify(value));
        if (request.method === 'GET' && documents[url.pathname] !== undefined) return json(200, documents[url.pathname]);
        if (request.method === 'GET' && url.pathname === '/authorize') {
          const back = new URL(url.searchParams.get('redirect_uri')!);
          back.searchParams.set('code', 'the-code');
          back.searchParams.set('state', url.searchParams.get('state')!);
          return response.writeHead(302, { location: back.href }).end();
        }
        if (request.method === 'POST' && url.pathname === '/register') return json(201, { client_id: 'registered-client' });
        if (request.method === 'POST' && url.pathname === '/token')
          return json(200, { access_token: `token-${seen.length}`, token_type: 'Bearer', expires_in: expiresIn, refresh_token: 'refresh-1' });
        json(404, { error: 'not_found' });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    httpClient.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(async () => {
    documents = {};
    seen = [];
    requests = [];
    expiresIn = 3600;
    configDir = await mkdtemp(join(tmpdir(), 'gantry-mcp-discovery-'));
  });
  afterEach(async () => {
    await rm(configDir, { recursive: true, force: true });
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

  /** A session whose "browser" follows the sign-in page's redirect back to the loopback callback. */
  const session = (serverUrl = `${base}/mcp`) =>
    new AuthSession(serverUrl, httpClient, {
      configDir,
      env: {},
      tokenStore: new FileTokenStore(configDir),
      logger: silentLogger,
      openUrl: async (address) => {
        const answer = await fetch(address, { redirect: 'manual' });
        await (await fetch(answer.headers.get('location')!)).arrayBuffer();
      },
    });
  const asMetadata = (issuer: string) => ({
    issuer,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    code_challenge_methods_supported: ['S256'],
  });
  const routed = (path: string) => requests.filter((r) => r.path === path);

  it('CTX-URI-PORT-PATH CTX-TOKEN-AUDIENCE: a resource covers the URL called when it is the same, or of the same origin with a path that is a whole-segment prefix', () => {
    const covered: Array<[string, string]> = [
      ['https://h.example/mcp', 'https://h.example/mcp'],
      ['https://H.example/mcp/', 'https://h.example/mcp'],
      ['https://h.example', 'https://h.example/mcp'],
      ['https://h.example/', 'https://h.example/api/mcp'],
      ['https://h.example/api', 'https://h.example/api/mcp'],
      ['https://h.example/api/', 'https://h.example/api/mcp'],
      ['http://127.0.0.1:8808', 'http://127.0.0.1:8808/mcp'],
    ];
    for (const [named, called] of covered) assert.ok(resourceCovers(named, called), `${named} covers ${called}`);
    const refused: Array<[string, string]> = [
      ['https://h.example/mc', 'https://h.example/mcp'],
      ['https://h.example/api/other', 'https://h.example/api/mcp'],
      ['https://h.example/api/mcp/sub', 'https://h.example/api/mcp'],
      ['https://h.example/MCP', 'https://h.example/mcp'],
      ['https://evil.example', 'https://h.example/mcp'],
      ['https://h.example.evil.example', 'https://h.example/mcp'],
      ['http://h.example', 'https://h.example/mcp'],
      ['https://h.example:8443', 'https://h.example/mcp'],
      ['https://h.example/?tenant=a', 'https://h.example/mcp'],
      ['not a url', 'https://h.example/mcp'],
    ];
    for (const [named, called] of refused) assert.ok(!resourceCovers(named, called), `${named} does not cover ${called}`);
  });

  it('CTX-STD-RFC9728 CTX-URI-PORT-PATH: root metadata naming the origin is accepted for …/mcp and its resource is the one asked for; another origin or a sibling path is CTX_RESOURCE_MISMATCH', async () => {
    documents['/.well-known/oauth-protected-resource'] = { resource: base, authorization_servers: [base] };
    const found = await discoverProtectedResource(`${base}/mcp`, { http: httpClient });
    assert.equal(found.resource, base);
    assert.equal(found.revision, undefined);
    for (const resource of ['http://127.0.0.2:1/mcp', `${base}/mc`, `${base}/other/mcp`, `${base.replace('127.0.0.1', 'localhost')}/mcp`]) {
      documents['/.well-known/oauth-protected-resource'] = { resource, authorization_servers: [base] };
      await assert.rejects(
        discoverProtectedResource(`${base}/mcp`, { http: httpClient }),
        (e: unknown) => e instanceof ContextClientError && e.code === 'CTX_RESOURCE_MISMATCH' && e.message.includes(resource),
        resource,
      );
    }
  });

  it('CTX-AUTH-RESOURCE-ALWAYS CTX-EP-AUTHORIZATION-REQUEST CTX-EP-TOKEN-REQUEST: the authorization, token and refresh requests carry the resource the metadata names', async () => {
    documents['/.well-known/oauth-protected-resource'] = { resource: `${base}/`, authorization_servers: [base] };
    documents['/.well-known/oauth-authorization-server'] = asMetadata(base);
    expiresIn = 1; // inside the refresh margin: the next session refreshes first
    const first = session();
    await first.unauthorized(undefined, undefined);
    assert.equal(routed('/authorize')[0]!.query.get('resource'), base);
    assert.equal(routed('/token')[0]!.form.get('resource'), base);
    assert.equal(first.resource, `${base}/mcp`, 'the session is still for the URL called');
    // A later run refreshes from the stored login, before any discovery: the same resource.
    seen = [];
    requests = [];
    const token = await session().accessToken();
    assert.ok(token?.startsWith('token-'));
    assert.deepEqual(seen, ['/.well-known/oauth-authorization-server', '/token']);
    assert.equal(routed('/token')[0]!.form.get('grant_type'), 'refresh_token');
    assert.equal(routed('/token')[0]!.form.get('resource'), base);
  });

  it('CTX-STD-RFC8414: a 2025-03-26 server — no resource metadata: the authorization server metadata at its origin, whose issuer may have a path there; another origin is refused', async () => {
    const none = await discoverProtectedResource(`${base}/mcp`, { http: httpClient });
    assert.equal(none.revision, '2025-03-26');
    assert.equal(none.resource, `${base}/mcp`);
    assert.deepEqual(none.metadata.authorization_servers, [base]);
    // Named by a challenge, a missing document stays a refusal: the server said where it is.
    await assert.rejects(
      discoverProtectedResource(`${base}/mcp`, { http: httpClient, resourceMetadataUrl: `${base}/meta` }),
      (e: unknown) => e instanceof ContextClientError && e.code === 'CTX_NO_RESOURCE_METADATA',
    );

    documents['/.well-known/oauth-authorization-server'] = asMetadata(`${base}/oauth`);
    seen = [];
    requests = [];
    const found = await discoverAuthorizationServer(base, { http: httpClient, revision: '2025-03-26' });
    assert.deepEqual(seen, ['/.well-known/oauth-authorization-server']);
    assert.equal(found.issuer, `${base}/oauth`);
    documents['/.well-known/oauth-authorization-server'] = asMetadata('https://as.example.com');
    await assert.rejects(
      discoverAuthorizationServer(base, { http: httpClient, revision: '2025-03-26' }),
      (e: unknown) => e instanceof ContextClientError && e.code === 'CTX_ISSUER_MISMATCH',
    );
    // Without the revision, an issuer is looked up as RFC 8414 says and must match exactly.
    documents['/.well-known/oauth-authorization-server'] = asMetadata(`${base}/oauth`);
    await assert.rejects(
      discoverAuthorizationServer(base, { http: httpClient }),
      (e: unknown) => e instanceof ContextClientError && e.code === 'CTX_ISSUER_MISMATCH',
    );
  });

  it('CTX-EP-AUTHORIZATION-REQUEST CTX-EP-TOKEN-REQUEST: a 2025-03-26 server without any metadata — /register, /authorize and /token at its origin, with PKCE S256 and resource', async () => {
    const signIn = session();
    await signIn.unauthorized(undefined, undefined);
    assert.deepEqual(
      requests.map((r) => `${r.method} ${r.path}`),
      [
        'GET /.well-known/oauth-protected-resource/mcp',
        'GET /.well-known/oauth-protected-resource',
        'GET /.well-known/oauth-authorization-server',
        'POST /register',
        'GET /authorize',
        'POST /token',
      ],
    );
    const [authorization] = routed('/authorize');
    assert.equal(authorization!.query.get('code_challenge_method'), 'S256');
    assert.equal(authorization!.query.get('client_id'), 'registered-client');
    assert.equal(authorization!.query.get('resource'), `${base}/mcp`);
    assert.equal(routed('/token')[0]!.form.get('resource'), `${base}/mcp`);
    assert.ok(routed('/token')[0]!.form.get('code_verifier'));
    assert.ok(await signIn.accessToken());
  });
});
