/**
 * Which resource the context client asks tokens for, and from whom, when the server's metadata is not the one-to-one
 * RFC 9728 case: protected resource metadata naming the server's origin (or a path above the URL called), and a
 * server of the 2025-03-26 revision with no resource metadata at all — its authorization server metadata at its
 * origin, else the default endpoints there. Against one small server on 127.0.0.1 playing the context server's
 * well-known documents and the authorization server (whose sign-in page approves at once, as the conformance suite's
 * does), driving AuthSession directly.
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
import { AuthSession, ContextClientError, discoverAuthorizationServer, discoverProtectedResource, resourceCovers } from '../../lib/mcp/client/index.js';

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  form: URLSearchParams;
}

describe('mcp client: the resource a server names and servers of the 2025-03-26 revision', function () {
  this.timeout(20_000);
  let httpClient: HttpClient;
  let server: http.Server;
  let base: string;
  let documents: Record<string, unknown>;
  let seen: Seen[];
  let configDir: string;
  /** Seconds the next token lives. */
  let expiresIn = 3600;

  before(async () => {
    httpClient = createHttpClient({ logger: silentLogger, proxy: {} });
    server = http.createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ method: request.method!, path: url.pathname, query: url.searchParams, form: new URLSearchParams(body) });
        const json = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
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
    expiresIn = 3600;
    configDir = await mkdtemp(join(tmpdir(), 'gantry-mcp-prefix-'));
  });
  afterEach(async () => {
    await rm(configDir, { recursive: true, force: true });
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
  const routed = (path: string) => seen.filter((s) => s.path === path);

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
    const token = await session().accessToken();
    assert.ok(token?.startsWith('token-'));
    assert.deepEqual(
      seen.map((s) => s.path),
      ['/.well-known/oauth-authorization-server', '/token'],
    );
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
    const found = await discoverAuthorizationServer(base, { http: httpClient, revision: '2025-03-26' });
    assert.deepEqual(
      seen.map((s) => s.path),
      ['/.well-known/oauth-authorization-server'],
    );
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
      seen.map((s) => `${s.method} ${s.path}`),
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
