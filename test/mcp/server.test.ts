/**
 * `gantry mcp serve` as an OAuth 2.1 resource server, against oidc-provider as the independent authorization server
 * (client-credentials tokens with RFC 8707 resource indicators: JWT or opaque, any audience and scopes), with the MCP
 * SDK's own client speaking the protocol, and the tools' upstreams (the embedded registry, secrets service and
 * platform) behind recording relays.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startRegistryServer, type RegistryServer } from '../../devserver/registry/index.js';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { SecretsClient } from '../../lib/secrets/index.js';
import { canonicalResourceUri, startContextServer, type ContextServer } from '../../lib/mcp/index.js';
import { createLogger } from '../../lib/log.js';
import { recordedLighthouseResult } from '../analysis/fixture.js';
import { startOidcResourcePeer, type OidcResourcePeer } from '../peers/oidc-resource.js';
import { startRelay, type Relay } from './relay.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
};
const call = (name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } });

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The auth-params of a Bearer challenge, e.g. `{resource_metadata, scope, error}`. */
function challengeOf(response: Response): Record<string, string> {
  const header = response.headers.get('www-authenticate') ?? '';
  assert.match(header, /^Bearer /);
  return Object.fromEntries([...header.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!.replace(/\\(.)/g, '$1')]));
}

async function sdkClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'sdk-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe('mcp serve: the context server as an OAuth 2.1 resource server (oidc-provider issues the tokens)', function () {
  this.timeout(60_000);
  let peer: OidcResourcePeer;
  let server: ContextServer;
  let registry: RegistryServer;
  let secrets: SecretsServer;
  let platform: PlatformServer;
  let analysis: PageanalysisServer;
  const relays: Relay[] = [];
  const logLines: string[] = [];
  const tokens: string[] = [];
  const token = async (scope: string, resource = server.resource) => {
    const value = await peer.token(resource, scope);
    tokens.push(value);
    return value;
  };

  before(async () => {
    peer = await startOidcResourcePeer();
    registry = await startRegistryServer({ dir: path.join(root, 'examples/modules') });
    secrets = await startSecretsServer({});
    platform = await startPlatformServer();
    analysis = await startPageanalysisServer({ analyser: recordedAnalyser(() => recordedLighthouseResult()) });
    const [registryRelay, secretsRelay, platformRelay] = await Promise.all([startRelay(registry.url), startRelay(secrets.url), startRelay(platform.url)]);
    relays.push(registryRelay!, secretsRelay!, platformRelay!);
    await new SecretsClient({ address: secrets.url, token: secrets.credentials.token, sources: { env: {} } })
      .kv('secret', { kvVersion: 2 })
      .write('app/db', { password: 'hunter2-canary' });
    const logger = createLogger({ level: 'debug', write: (line: string) => logLines.push(line) });
    server = await startContextServer({
      authorizationServer: peer.issuer,
      introspection: peer.introspection,
      clockToleranceSeconds: 0,
      logger,
      env: {
        SECRETS_ADDR: secretsRelay!.url,
        SECRETS_TOKEN: secrets.credentials.token,
        ...platform.env,
        PLATFORM_API_URL: platformRelay!.url,
        PAGEANALYSIS_BASE_URL: analysis.url,
      },
    });
  });

  after(async () => {
    await server?.stop();
    await Promise.all(relays.map((relay) => relay.stop()));
    await Promise.all([peer?.stop(), registry?.stop(), secrets?.stop(), platform?.stop(), analysis?.stop()]);
  });

  it("CTX-EP-RESOURCE-METADATA CTX-STD-RFC9728 CTX-PRM-AUTHORIZATION-SERVERS AMB-20: serves its protected resource metadata at the path-inserted and the root well-known URL, and no authorization server metadata (that is the issuer's)", async () => {
    assert.equal(server.resourceMetadataUrl, `${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`);
    for (const url of [server.resourceMetadataUrl, `${new URL(server.url).origin}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(url);
      assert.equal(response.status, 200, url);
      const metadata = (await response.json()) as Record<string, unknown>;
      assert.equal(metadata.resource, server.resource);
      assert.deepEqual(metadata.authorization_servers, [peer.issuer]);
      assert.deepEqual(metadata.bearer_methods_supported, ['header']);
      assert.deepEqual(metadata.scopes_supported, ['modules:read', 'gates:run', 'secrets:list', 'platform:read']);
    }
    assert.equal((await fetch(`${new URL(server.url).origin}/.well-known/oauth-authorization-server`)).status, 404);
  });

  it('CTX-URI-ABSOLUTE CTX-URI-CASE CTX-URI-PORT-PATH CTX-URI-NO-FRAGMENT CTX-URI-NO-TRAILING-SLASH: the canonical server URI is lower-case in scheme and host, keeps port and path, has no trailing slash, keeps a query (RFC 8707 allows one), and refuses fragments and relative URIs', () => {
    assert.equal(canonicalResourceUri('HTTPS://MCP.Example.COM:8443/Team/MCP/'), 'https://mcp.example.com:8443/Team/MCP');
    assert.equal(canonicalResourceUri('https://mcp.example.com:443/'), 'https://mcp.example.com');
    assert.throws(() => canonicalResourceUri('https://mcp.example.com/mcp#x'), /fragment/);
    assert.throws(() => canonicalResourceUri('/mcp'), /not an absolute URL/);
    assert.equal(canonicalResourceUri('https://mcp.example.com/mcp/?tenant=1'), 'https://mcp.example.com/mcp?tenant=1');
  });

  it('CTX-EP-401-WWW-AUTHENTICATE CTX-ERR-401: a request without a token gets 401 with the metadata URL and the scope to ask for, and no error code (RFC 6750 §3.1)', async () => {
    const response = await post(server.url, initialize);
    assert.equal(response.status, 401);
    const params = challengeOf(response);
    assert.equal(params.resource_metadata, server.resourceMetadataUrl);
    assert.equal(params.scope, 'modules:read');
    assert.equal(params.error, undefined, 'no error code for a request without credentials');
    // Another scheme is no bearer token either.
    const basic = await post(server.url, initialize, { authorization: 'Basic dXNlcjpwYXNz' });
    assert.equal(basic.status, 401);
    assert.equal(challengeOf(basic).error, undefined);
  });

  it("CTX-ROLE-RESOURCE-SERVER CTX-TOKEN-AUDIENCE CTX-EP-RESOURCE-REQUEST: a JWT issued for this server lets the MCP SDK's client list the tools and call one; every request carries the header", async () => {
    const value = await token('modules:read');
    const client = await sdkClient(server.url, value);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        'gate_run',
        'modules_resolve',
        'modules_versions',
        'platform_rate_limit',
        'secrets_list',
        'secrets_metadata',
      ]);
      assert.equal(tools.find((t) => t.name === 'gate_run')?._meta?.['gantry/scope'], 'gates:run');
      const result = await client.callTool({ name: 'modules_resolve', arguments: { source: `${relays[0]!.host}/gantry/network/aws`, version: '~> 1.0' } });
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      const resolved = result.structuredContent as { version: string; location: string };
      assert.match(resolved.version, /^1\.\d+\.\d+$/);
    } finally {
      await client.close();
    }
    // The same logical exchange, one request later, without the header: refused (no session stands in for a token).
    const bare = await post(server.url, call('modules_versions', { source: `${relays[0]!.host}/gantry/network/aws` }));
    assert.equal(bare.status, 401);
  });

  it('CTX-EP-401-WWW-AUTHENTICATE CTX-TRANSPORT-HTTP: a browser page on loopback can read the 401 challenge (CORS exposes WWW-Authenticate) and send its token after a preflight', async () => {
    const origin = 'http://127.0.0.1:6274';
    const preflight = await fetch(server.url, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(preflight.status, 204, 'the preflight carries no token and is not refused for it');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /\bauthorization\b/);
    const guarded = await post(server.url, initialize, { origin });
    assert.equal(guarded.status, 401);
    assert.equal(guarded.headers.get('access-control-allow-origin'), origin);
    assert.match(guarded.headers.get('access-control-expose-headers') ?? '', /www-authenticate/, 'a browser client must be able to read the challenge');
    assert.match(guarded.headers.get('www-authenticate') ?? '', /resource_metadata=/);
    const answered = await post(server.url, initialize, { origin, authorization: `Bearer ${await token('modules:read')}` });
    assert.equal(answered.status, 200);
    assert.equal(answered.headers.get('access-control-allow-origin'), origin);
  });

  it('CTX-AUTH-VALIDATE-AUDIENCE CTX-AUTH-SERVER-OWN-TOKENS CTX-AUTH-INVALID-401: a valid token of the same issuer for another audience gets 401 invalid_token', async () => {
    const other = await token('modules:read', 'http://127.0.0.1:1/other-mcp');
    const response = await post(server.url, initialize, { authorization: `Bearer ${other}` });
    assert.equal(response.status, 401);
    const params = challengeOf(response);
    assert.equal(params.error, 'invalid_token');
    assert.match(params.error_description!, /another audience/);
    assert.equal(params.resource_metadata, server.resourceMetadataUrl);
  });

  it("AMB-21 CTX-URI-CASE: a token whose audience differs only in the case of scheme and host and a trailing slash is this server's", async () => {
    const url = new URL(server.resource);
    const variant = `HTTP://${url.host.toUpperCase()}${url.pathname}/`;
    const response = await post(server.url, initialize, { authorization: `Bearer ${await token('modules:read', variant)}` });
    assert.equal(response.status, 200);
    // The path is case-sensitive: /MCP is another resource.
    const upper = await post(server.url, initialize, { authorization: `Bearer ${await token('modules:read', `${url.origin}/MCP`)}` });
    assert.equal(upper.status, 401);
  });

  it('CTX-AUTH-INVALID-401: an expired token, a forged signature and a token from another issuer get 401 invalid_token; unknown key ids do not make it fetch the JWKS again and again', async () => {
    peer.setTtl(1);
    const shortLived = await token('modules:read');
    peer.setTtl(300);
    const good = await token('modules:read');
    const [header, payload] = good.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), scope: 'modules:read gates:run secrets:list platform:read' })).toString('base64url')}.${good.split('.')[2]}`;
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    await exportJWK(publicKey);
    const strangers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        new SignJWT({ scope: 'modules:read', client_id: 'x' })
          .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: `made-up-${i}` })
          .setIssuer(peer.issuer)
          .setAudience(server.resource)
          .setSubject('x')
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const jwksBefore = peer.paths.filter((p) => p.endsWith('/jwks')).length;
    for (const [value, pattern] of [
      [shortLived, /expired/],
      [forged, /signature/],
      ...strangers.map((s) => [s, /key the authorization server does not publish/] as const),
    ] as const) {
      const response = await post(server.url, initialize, { authorization: `Bearer ${value}` });
      assert.equal(response.status, 401);
      const params = challengeOf(response);
      assert.equal(params.error, 'invalid_token');
      assert.match(params.error_description!, pattern);
    }
    assert.ok(peer.paths.filter((p) => p.endsWith('/jwks')).length - jwksBefore <= 1, 'at most one JWKS fetch for twenty unknown key ids');
  });

  it('CTX-AUTH-NO-QUERY-TOKEN: an access token in the query string is refused with 400, even beside a good header', async () => {
    const value = await token('modules:read');
    const response = await post(`${server.url}?access_token=${encodeURIComponent(value)}`, initialize, { authorization: `Bearer ${value}` });
    assert.equal(response.status, 400);
    assert.equal(challengeOf(response).error, 'invalid_request');
    assert.ok(!logLines.some((line) => line.includes(value)), 'the token is in no log line');
  });

  it('CTX-ERR-403: a tool needing a scope the token lacks gets 403 insufficient_scope naming the scopes held and needed (step-up)', async () => {
    const value = await token('modules:read');
    const response = await post(server.url, call('gate_run', { urls: ['https://example.com/'] }), { authorization: `Bearer ${value}` });
    assert.equal(response.status, 403);
    const params = challengeOf(response);
    assert.equal(params.error, 'insufficient_scope');
    assert.equal(params.scope, 'modules:read gates:run');
    assert.equal(params.resource_metadata, server.resourceMetadataUrl);
    // A batch is refused as a whole when any call in it lacks its scope.
    const batch = await post(server.url, [call('modules_versions', { source: 'a/b/c' }), call('secrets_list', { path: 'secret/' })], {
      authorization: `Bearer ${value}`,
    });
    assert.equal(batch.status, 403);
    assert.match(challengeOf(batch).scope!, /secrets:list/);
  });

  it('CTX-ERR-400 AMB-22: the context server answers 400 to a malformed Authorization header and a body that is not JSON, with an RFC 6750 challenge or a JSON-RPC error', async () => {
    const malformed = await post(server.url, initialize, { authorization: 'Bearer a b "c"' });
    assert.equal(malformed.status, 400);
    assert.equal(challengeOf(malformed).error, 'invalid_request');
    const value = await token('modules:read');
    const garbage = await post(server.url, '{"jsonrpc": "2.0", ', { authorization: `Bearer ${value}` });
    assert.equal(garbage.status, 400);
    assert.equal(((await garbage.json()) as { error: { code: number } }).error.code, -32700);
  });

  it("RFC 7662: an opaque token is introspected with the server's own client credentials, and the answer is cached", async () => {
    peer.setFormat('opaque');
    const opaque = await token('modules:read secrets:list');
    peer.setFormat('jwt');
    assert.notEqual(opaque.split('.').length, 3);
    const before = peer.paths.filter((p) => p.endsWith('/token/introspection')).length;
    for (let i = 0; i < 3; i++) assert.equal((await post(server.url, initialize, { authorization: `Bearer ${opaque}` })).status, 200);
    assert.equal(peer.paths.filter((p) => p.endsWith('/token/introspection')).length - before, 1);
    const client = await sdkClient(server.url, opaque);
    try {
      const result = await client.callTool({ name: 'secrets_list', arguments: { path: 'secret/app' } });
      assert.deepEqual((result.structuredContent as { keys: string[] }).keys, ['db']);
    } finally {
      await client.close();
    }
  });

  it("CTX-AUTH-NO-TOKEN-PASSTHROUGH: the tools reach the registry, the secrets service and the platform with Gantry's own credentials; the received token is in none of their requests", async () => {
    const value = await token('modules:read secrets:list platform:read');
    const client = await sdkClient(server.url, value);
    try {
      const versions = await client.callTool({ name: 'modules_versions', arguments: { source: `${relays[0]!.host}/gantry/bucket/aws` } });
      assert.ok((versions.structuredContent as { versions: unknown[] }).versions.length > 0);
      const metadata = await client.callTool({ name: 'secrets_metadata', arguments: { path: 'secret/app/db' } });
      assert.equal((metadata.structuredContent as { currentVersion: number }).currentVersion, 1);
      assert.ok(!JSON.stringify(metadata).includes('hunter2-canary'), 'metadata, never values');
      const limits = await client.callTool({ name: 'platform_rate_limit', arguments: {} });
      assert.equal(limits.isError, undefined, JSON.stringify(limits.content));
      assert.ok((limits.structuredContent as { resources: Array<{ resource: string }> }).resources.some((r) => r.resource === 'core'));
    } finally {
      await client.close();
    }
    for (const relay of relays) assert.ok(relay.seen.length > 0, `${relay.url} was used`);
    const upstream = relays.flatMap((relay) => relay.seen).join('\n');
    for (const received of tokens) assert.ok(!upstream.includes(received), 'a received token reached an upstream');
    assert.ok(upstream.includes(secrets.credentials.token), "the secrets service got Gantry's own token");
  });

  it('gate_run sends progress notifications while it runs and answers with the verdict; a failed gate is a tool error', async () => {
    const value = await token('gates:run');
    const client = await sdkClient(server.url, value);
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    try {
      const result = await client.callTool(
        { name: 'gate_run', arguments: { urls: ['https://example.com/', 'https://example.org/'], runs: 2, categories: { performance: 0.5 } } },
        undefined,
        { onprogress: (p) => progress.push(p) },
      );
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      assert.equal((result.structuredContent as { status: string }).status, 'pass');
      // A gate that fails is a tool error carrying the verdict and the checks, never a result that reads as a pass.
      const failed = await client.callTool({ name: 'gate_run', arguments: { urls: ['https://example.com/'], categories: { 'best-practices': 1 } } });
      assert.equal(failed.isError, true);
      assert.equal((failed.structuredContent as { status: string }).status, 'fail');
      assert.match(JSON.stringify(failed.content), /the gate failed/);
    } finally {
      await client.close();
    }
    assert.deepEqual(
      progress.map((p) => p.progress),
      [0, 1, 2, 3, 4],
    );
    assert.ok(progress.every((p) => p.total === 4));
    assert.match(progress[0]!.message!, /run 1 of 2: https:\/\/example\.com\//);
  });

  it("logging: the server declares the logging capability; logging/setLevel is kept for the caller across stateless requests, and a tool's lines reach the caller at that level (notifications/message)", async () => {
    const heard = async (level: LoggingLevel | undefined) => {
      const client = await sdkClient(server.url, await token('gates:run'));
      const messages: Array<{ level: string; logger?: string; data: unknown }> = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void messages.push(notification.params));
      try {
        assert.ok(client.getServerCapabilities()?.logging, 'initialize declares logging');
        if (level) assert.deepEqual(await client.setLoggingLevel(level), {});
        const result = await client.callTool({ name: 'gate_run', arguments: { urls: ['https://example.com/'], categories: { performance: 0.5 } } });
        assert.equal(result.isError, undefined, JSON.stringify(result.content));
      } finally {
        await client.close();
      }
      return messages;
    };
    const quiet = await heard('warning');
    assert.deepEqual(
      quiet.filter((m) => m.level === 'info'),
      [],
      'nothing under the level set',
    );
    // A later connection of the same caller (a new server per request) keeps the level it set.
    const still = await heard(undefined);
    assert.deepEqual(
      still.filter((m) => m.level === 'info'),
      [],
      'the level outlives the request that set it',
    );
    const loud = await heard('info');
    assert.ok(
      loud.some((m) => m.level === 'info' && m.logger === 'gantry.gate_run' && /run 1 of 1: https:\/\/example\.com\//.test(String(m.data))),
      JSON.stringify(loud),
    );
  });

  it("a tool's failure is a tool error result with the reason, not a protocol error", async () => {
    const client = await sdkClient(server.url, await token('secrets:list modules:read'));
    try {
      const result = await client.callTool({ name: 'secrets_metadata', arguments: { path: 'secret/app/missing' } });
      assert.equal(result.isError, true);
      assert.match(JSON.stringify(result.content), /no metadata at secret\/app\/missing/);
      const invalid = await client.callTool({ name: 'modules_resolve', arguments: { source: 42 } });
      assert.equal(invalid.isError, true);
    } finally {
      await client.close();
    }
  });
});

describe('mcp serve: without OAuth (stdio, or --no-auth on loopback)', function () {
  this.timeout(60_000);

  it("CTX-TRANSPORT-STDIO: over stdio there is no OAuth; the tools use the environment's credentials (the built command, the SDK's stdio client)", async () => {
    const registry = await startRegistryServer({ dir: path.join(root, 'examples/modules') });
    const client = new Client({ name: 'stdio-test', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(root, 'dist/lib/cli/main.js'), 'mcp', 'serve', '--stdio'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stderr: 'pipe',
    });
    try {
      await client.connect(transport);
      const result = await client.callTool({ name: 'modules_versions', arguments: { source: `${new URL(registry.url).host}/gantry/network/aws` } });
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      assert.ok((result.structuredContent as { versions: unknown[] }).versions.length > 0);
    } finally {
      await client.close();
      await registry.stop();
    }
  });

  it('CTX-TRANSPORT-STDIO: requests written all at once with stdin closed right after are all answered before it exits', async () => {
    const registry = await startRegistryServer({ dir: path.join(root, 'examples/modules') });
    try {
      const child = spawn(process.execPath, [path.join(root, 'dist/lib/cli/main.js'), 'mcp', 'serve', '--stdio'], { env: { PATH: process.env.PATH ?? '' } });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const lines = [
        initialize,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        call('modules_versions', { source: `${new URL(registry.url).host}/gantry/network/aws` }),
        { ...call('modules_resolve', { source: `${new URL(registry.url).host}/gantry/bucket/aws` }), id: 3 },
      ];
      child.stdin.end(lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0);
      const answers = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: number; result?: { isError?: boolean } });
      assert.deepEqual(answers.map((a) => a.id).sort(), [1, 2, 3]);
      assert.ok(
        answers.every((a) => a.result && !a.result.isError),
        stdout,
      );
    } finally {
      await registry.stop();
    }
  });

  it('CTX-AUTHZ-OPTIONAL CTX-TRANSPORT-HTTP: --no-auth serves on loopback without tokens, and is refused on another address', async () => {
    const open = await startContextServer({ auth: false, env: {} });
    try {
      const response = await post(open.url, initialize);
      assert.equal(response.status, 200);
      assert.equal((await fetch(`${new URL(open.url).origin}/.well-known/oauth-protected-resource/mcp`)).status, 404);
    } finally {
      await open.stop();
    }
    await assert.rejects(startContextServer({ auth: false, host: '0.0.0.0', env: {} }), /refusing to serve without authorization on 0\.0\.0\.0/);
  });

  it('CTX-TRANSPORT-HTTP: a page on another site is refused (403, DNS rebinding); a loopback page or an allowed origin gets CORS (the preflight, the answer); a malformed origin is refused at start', async () => {
    const open = await startContextServer({ auth: false, env: {}, allowedOrigins: ['https://inspector.example.com'] });
    try {
      const foreign = await post(open.url, initialize, { origin: 'https://evil.example' });
      assert.equal(foreign.status, 403);
      assert.equal(foreign.headers.get('access-control-allow-origin'), null);
      assert.match(((await foreign.json()) as { hint: string }).hint, /--allow-origin/);
      for (const origin of ['http://localhost:6274', 'https://inspector.example.com']) {
        const preflight = await fetch(open.url, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
        });
        assert.equal(preflight.status, 204, origin);
        assert.equal(preflight.headers.get('access-control-allow-origin'), origin);
        assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
        for (const header of ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id'])
          assert.match(preflight.headers.get('access-control-allow-headers') ?? '', new RegExp(`\\b${header}\\b`));
        const answer = await post(open.url, initialize, { origin });
        assert.equal(answer.status, 200, origin);
        assert.equal(answer.headers.get('access-control-allow-origin'), origin);
        assert.match(answer.headers.get('vary') ?? '', /origin/i);
      }
      assert.equal(
        (await fetch(open.url, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } })).status,
        403,
        'no preflight for a refused origin',
      );
    } finally {
      await open.stop();
    }
    for (const bad of ['localhost:6274', 'http://localhost:6274/app', 'ftp://x.example', '']) {
      await assert.rejects(startContextServer({ auth: false, env: {}, allowedOrigins: [bad] }), /is not an origin/, bad);
    }
  });

  it('CTX-TRANSPORT-OTHER: gantry mcp serve refuses bad input before listening (exit 2)', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(root, 'dist/lib/cli/main.js'), 'mcp', 'serve', ...args], { env: { PATH: process.env.PATH ?? '' } });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
    const missing = await run(['--port', '0']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /needs its authorization server/);
    const fragment = await run(['--port', '0', '--no-auth', '--resource', 'http://127.0.0.1/mcp#x']);
    assert.equal(fragment.code, 2);
    assert.match(fragment.stderr, /fragment/);
    const badPort = await run(['--port', 'x', '--no-auth']);
    assert.equal(badPort.code, 2);
    const badOrigin = await run(['--port', '0', '--no-auth', '--allow-origin', 'http://localhost:6274/app']);
    assert.equal(badOrigin.code, 2);
    assert.match(badOrigin.stderr, /--allow-origin: "http:\/\/localhost:6274\/app" is not an origin/);
  });
});
