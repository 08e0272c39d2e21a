/**
 * `gantry mcp serve` over Streamable HTTP: an OAuth 2.1 resource server (CTX-ROLE-RESOURCE-SERVER) in front of the
 * SDK's transport. Stateless: every POST is a whole exchange with a fresh McpServer, so no session outlives its
 * request and none can be taken over with another token; every request is authorized on its own
 * (CTX-EP-RESOURCE-REQUEST).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { expectOptions } from '../../arguments.js';
import { UsageError } from '../../errors.js';
import { createHttpClient, noRetry, type HttpClient } from '../../http/index.js';
import { getLogger, type Logger } from '../../log.js';
import { isLoopbackHost } from '../../loopback.js';
import { discoverAuthorizationServer, type AuthorizationServerMetadata } from '../client/discovery.js';
import { canonicalResourceUri, protectedResourceMetadataUrl } from '../resource-uri.js';
import { bearerOf, challenge, refusalBody, type AuthorizationRefusal, type RefusalReason } from './challenge.js';
import { createLogLevels } from './log-levels.js';
import { createMcpServer } from './mcp-server.js';
import { createTokenValidator, IntrospectionFailed, InvalidTokenError, type IntrospectionCredentials, type TokenInfo, type TokenValidator } from './tokens.js';
import { createToolClients, MCP_SCOPES, TOOLS, type ToolDefinition } from './tools.js';

export interface ContextServerOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The endpoint's path (default `/mcp`). */
  path?: string;
  /** The authorization server's issuer URL; required unless `auth: false`. */
  authorizationServer?: string;
  /** The canonical server URI tokens must be issued for (default: the URL this serves). */
  resource?: string;
  /** The URL clients reach this server at, when a proxy stands in front (default `http://<host>:<port><path>`). */
  publicUrl?: string;
  /** Client credentials for RFC 7662 introspection of tokens that are not JWTs. */
  introspection?: IntrospectionCredentials;
  /** `false`: no authorization, on a loopback address only. */
  auth?: boolean;
  /** What the tools read their own credentials from (default process.env). */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  tools?: readonly ToolDefinition[];
  /** Clock skew allowed on a token's exp, nbf and iat, in seconds (default 60). */
  clockToleranceSeconds?: number;
  /** The HTTP client for the authorization server (metadata, JWKS, introspection). */
  http?: HttpClient;
  /**
   * Origins of browser pages allowed to call the endpoint (CORS), e.g. a browser-based MCP client on another port
   * (`http://localhost:6274`). The server's own origin is always allowed, and loopback pages when it listens on a
   * loopback address; any other Origin is refused (403).
   */
  allowedOrigins?: readonly string[];
  /** Answers the requests it takes (the ops endpoints: /healthz, /readyz, /metrics) before the server's own routes. */
  opsHandler?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Told of each MCP request's tool and outcome, each authorization refusal's reason, each JWKS fetch (the metrics). */
  observer?: ContextServerObserver;
}

export interface ContextServerObserver {
  /** `tool`: the tool called, else the JSON-RPC method (or `-`); `outcome`: ok, refused, bad-request, error. */
  request?(tool: string, outcome: string): void;
  /** Why authorization refused: no-token, malformed, expired, wrong-audience, invalid-token, insufficient-scope, unavailable. */
  refusal?(reason: RefusalReason): void;
  keysFetched?(): void;
}

export interface ContextServer {
  /** Where clients send requests. */
  url: string;
  /** The canonical server URI: the audience tokens must name. */
  resource: string;
  resourceMetadataUrl: string;
  authorizationServer: string | undefined;
  /** Resolves once the authorization server's keys are held (none needed without authorization); throws when they cannot be fetched. */
  keysReady(): Promise<void>;
  stop(): Promise<void>;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The scope a client asks for first (RFC 6750 `scope` of the 401): read-only; a tool that needs more steps up (403). */
export const BASIC_SCOPES = [MCP_SCOPES.modulesRead];

export async function startContextServer(options: ContextServerOptions = {}): Promise<ContextServer> {
  expectOptions('startContextServer', options);
  const host = options.host ?? '127.0.0.1';
  const path = checkPath(options.path ?? '/mcp');
  const logger = options.logger ?? getLogger();
  const env = options.env ?? process.env;
  const authOn = options.auth !== false;
  if (!authOn && !isLoopbackHost(host)) {
    throw new UsageError(`refusing to serve without authorization on ${host}`, {
      code: 'MCP_NO_AUTH_PUBLIC',
      hint: 'without authorization anyone who reaches the server may call every tool: listen on 127.0.0.1, or give --authorization-server',
    });
  }
  if (authOn && !options.authorizationServer) {
    throw new UsageError('the context server needs its authorization server', {
      code: 'MCP_NO_AUTHORIZATION_SERVER',
      hint: 'give --authorization-server <issuer URL> (`gantry dev oauth` serves one), or --no-auth on a loopback address',
    });
  }
  const issuer = options.authorizationServer;
  // Checked before listening: a refused value must not leave a server behind.
  const givenResource = options.resource !== undefined ? canonicalResourceUri(options.resource, '--resource') : undefined;
  const publicUrl = options.publicUrl !== undefined ? canonicalResourceUri(options.publicUrl, '--public-url') : undefined;
  const extraOrigins = checkOrigins(options.allowedOrigins);
  const httpClient = options.http ?? createHttpClient({ retry: noRetry, timeouts: { connect: 5_000, response: 10_000 }, maxRedirects: 0, logger });
  let metadata: AuthorizationServerMetadata | undefined;
  if (authOn) {
    canonicalResourceUri(issuer!, '--authorization-server', 'MCP_BAD_AUTHORIZATION_SERVER', 'https://auth.example.com');
    // Found and checked as a client finds it (RFC 8414 addresses, the issuer matching exactly, every endpoint it
    // names https off loopback — the two a resource server reads, jwks_uri and introspection_endpoint, included).
    metadata = (await discoverAuthorizationServer(issuer!, { http: httpClient })).metadata;
  }

  const listener = http.createServer();
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port ?? 0, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  const address = listener.address() as AddressInfo;
  const url = publicUrl ?? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}${path}`;
  const resource = givenResource ?? canonicalResourceUri(url, "the server's URL");
  const resourceMetadataUrl = protectedResourceMetadataUrl(resource);
  const validator: TokenValidator | undefined = metadata
    ? createTokenValidator({
        http: httpClient,
        metadata,
        resource,
        ...(options.clockToleranceSeconds !== undefined ? { clockToleranceSeconds: options.clockToleranceSeconds } : {}),
        ...(options.introspection ? { introspection: options.introspection } : {}),
        ...(options.observer?.keysFetched ? { onKeysFetched: () => options.observer!.keysFetched!() } : {}),
      })
    : undefined;
  const tools = options.tools ?? TOOLS;
  const clients = createToolClients(env, logger);
  const logLevels = createLogLevels();
  const prmPaths = new Set([new URL(resourceMetadataUrl).pathname, '/.well-known/oauth-protected-resource']);
  const allowedOrigins = new Set([new URL(url).origin, new URL(resource).origin, ...extraOrigins]);
  const originAllowed = (origin: string) => allowedOrigins.has(origin) || (isLoopbackOrigin(origin) && isLoopbackHost(new URL(url).hostname));

  const metadataDocument = () => ({
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...new Set(tools.map((tool) => tool.scope))],
    bearer_methods_supported: ['header'],
    resource_name: 'Gantry context server',
  });

  const refuse = (res: ServerResponse, refusal: AuthorizationRefusal) => {
    options.observer?.refusal?.(refusal.reason);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store' };
    if (refusal.status === 401 || refusal.status === 403 || refusal.error === 'invalid_request')
      headers['www-authenticate'] = challenge(refusal, resourceMetadataUrl);
    if (refusal.retryAfterSeconds !== undefined) headers['retry-after'] = String(refusal.retryAfterSeconds);
    res.writeHead(refusal.status, headers).end(JSON.stringify(refusalBody(refusal)));
  };

  const authenticate = async (req: IncomingMessage): Promise<TokenInfo | AuthorizationRefusal> => {
    // node:http keeps the first of two Authorization headers and drops the other: count them as they came.
    const sent = req.rawHeaders.filter((value, index) => index % 2 === 1 && req.rawHeaders[index - 1]!.toLowerCase() === 'authorization');
    const credential = bearerOf(sent.length > 1 ? sent : req.headers.authorization);
    if (credential.kind === 'none')
      return { status: 401, reason: 'no-token', description: 'this server needs an access token: Authorization: Bearer <token>', scopes: BASIC_SCOPES };
    if (credential.kind === 'malformed') return { status: 400, reason: 'malformed', error: 'invalid_request', description: credential.reason };
    try {
      return await validator!.validate(credential.token);
    } catch (error) {
      if (error instanceof InvalidTokenError)
        return { status: 401, reason: error.reason, error: 'invalid_token', description: error.message, scopes: BASIC_SCOPES };
      logger.warn(`mcp: the authorization server could not be asked about a token: ${error instanceof Error ? error.message : String(error)}`);
      const what = error instanceof IntrospectionFailed ? error.message : 'the authorization server did not answer';
      return { status: 503, reason: 'unavailable', error: 'temporarily_unavailable', description: `${what}; try again`, retryAfterSeconds: 5 };
    }
  };

  const handleMcp = async (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => {
    // CTX-AUTH-NO-QUERY-TOKEN: a token in the URL ends up in logs and histories; refused even next to a good header.
    if (query.has('access_token'))
      return refuse(res, {
        status: 400,
        reason: 'malformed',
        error: 'invalid_request',
        description: 'an access token must not be sent in the query string; send it in the Authorization header',
      });
    const origin = req.headers.origin;
    // A browser page on another site must not reach a server on this machine (DNS rebinding; MCP's transport rules).
    if (origin !== undefined && !originAllowed(origin)) {
      res.writeHead(403, { 'content-type': 'application/json', vary: 'origin' }).end(
        JSON.stringify({
          error: 'forbidden_origin',
          error_description: `requests from ${origin.slice(0, 100)} are not accepted`,
          hint: "allow the page's origin with --allow-origin (startContextServer's allowedOrigins)",
        }),
      );
      return;
    }
    // An allowed page may read the answer, the challenge and the protocol headers (a refusal below included).
    if (origin !== undefined) for (const [name, value] of Object.entries(endpointCors(origin))) res.setHeader(name, value);
    if (req.method === 'OPTIONS')
      return void res
        .writeHead(204, {
          'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
          'access-control-allow-headers': 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
          'access-control-max-age': '600',
        })
        .end();
    let token: TokenInfo | undefined;
    if (validator) {
      const outcome = await authenticate(req);
      if ('status' in outcome) return refuse(res, outcome);
      token = outcome;
    }
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJson(req);
      if ('error' in read) {
        res
          .writeHead(read.status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: read.code, message: read.error } }));
        return;
      }
      body = read.value;
      calledTool.set(req, toolOf(body));
      if (token) {
        const needed = scopesNeeded(body, tools);
        const missing = needed.filter((scope) => !token.scopes.includes(scope));
        // CTX-ERR-403: step-up. The challenge names the scopes held and the ones missing, so a client that asks for
        // exactly what it is told keeps what it had.
        if (missing.length > 0)
          return refuse(res, {
            status: 403,
            reason: 'insufficient-scope',
            error: 'insufficient_scope',
            description: `this call needs the scope ${missing.join(' ')}`,
            scopes: [...new Set([...token.scopes, ...needed])],
          });
      }
    }
    const caller = token ? JSON.stringify([token.clientId ?? '', token.subject ?? '']) : '';
    const server = createMcpServer({ env, logger, tools, clients, logLevels, caller });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const calledTool = new WeakMap<IncomingMessage, string>();
  let requests = 0;
  listener.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (options.opsHandler?.(req, res)) return;
    const started = Date.now();
    const target = new URL(req.url ?? '/', 'http://localhost');
    const request = (requests += 1).toString(36);
    res.on('close', () => {
      logger.debug(`mcp: ${req.method} ${target.pathname} ${res.statusCode} ${Date.now() - started}ms`, { request });
      if (target.pathname === path || target.pathname === `${path}/`) options.observer?.request?.(calledTool.get(req) ?? '-', outcomeOf(res.statusCode));
    });
    const work = async () => {
      if (prmPaths.has(target.pathname) && authOn) {
        if (req.method === 'OPTIONS') return void res.writeHead(204, corsHeaders()).end();
        if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD, OPTIONS' }).end();
        // CTX-EP-RESOURCE-METADATA (RFC 9728 §3): public, cacheable, readable from a browser-based client.
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300', ...corsHeaders() }).end(JSON.stringify(metadataDocument()));
        return;
      }
      if (target.pathname === path || target.pathname === `${path}/`) return handleMcp(req, res, target.searchParams);
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'not_found', error_description: `the context server is at ${path}` }));
    };
    work().catch((error: unknown) => {
      logger.error(`mcp: ${req.method} ${target.pathname}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'server_error' }));
      else res.destroy();
    });
  });

  return {
    url,
    resource,
    resourceMetadataUrl,
    authorizationServer: issuer,
    keysReady: () => validator?.keysReady() ?? Promise.resolve(),
    stop: () =>
      new Promise<void>((resolve) => {
        listener.close(() => {
          clients.close();
          if (!options.http) httpClient.close();
          resolve();
        });
        listener.closeIdleConnections();
        setTimeout(() => listener.closeAllConnections(), 2_000).unref();
      }),
  };
}

/** The scopes a JSON-RPC message (or batch) needs: a `tools/call` needs its tool's; everything else none beyond a valid token. */
export function scopesNeeded(body: unknown, tools: readonly ToolDefinition[] = TOOLS): string[] {
  const messages = Array.isArray(body) ? body : [body];
  const scopes = new Set<string>();
  for (const message of messages) {
    if (!message || typeof message !== 'object') continue;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    if (method !== 'tools/call' || typeof params?.name !== 'string') continue;
    const tool = tools.find((candidate) => candidate.name === params.name);
    if (tool) scopes.add(tool.scope);
  }
  return [...scopes];
}

/** The tool a message calls, else its JSON-RPC method (the first of a batch), for the metrics: only names of the catalogue or the protocol. */
function toolOf(body: unknown): string {
  const first: unknown = Array.isArray(body) ? body[0] : body;
  if (!first || typeof first !== 'object') return '-';
  const { method, params } = first as { method?: unknown; params?: { name?: unknown } };
  if (method === 'tools/call') return typeof params?.name === 'string' && TOOLS.some((tool) => tool.name === params.name) ? params.name : 'unknown-tool';
  if (typeof method !== 'string') return '-';
  // Only the protocol's own methods become labels: a caller's made-up names would each start a series of their own.
  return knownMethods.has(method) ? method : 'other-method';
}

const knownMethods = new Set([
  'initialize',
  'ping',
  'tools/list',
  'logging/setLevel',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

function outcomeOf(status: number): string {
  if (status < 400) return 'ok';
  if (status === 401 || status === 403) return 'refused';
  return status < 500 ? 'bad-request' : 'error';
}

/** What an allowed cross-origin page gets on every answer of the endpoint. */
function endpointCors(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, vary: 'origin', 'access-control-expose-headers': 'www-authenticate, mcp-session-id, mcp-protocol-version' };
}

/** `allowedOrigins`: each an http(s) origin exactly (scheme://host[:port], nothing after). */
function checkOrigins(origins: readonly string[] | undefined): string[] {
  if (origins === undefined) return [];
  if (!Array.isArray(origins))
    throw new UsageError('startContextServer: allowedOrigins takes a list of origins such as http://localhost:6274', { code: 'INVALID_ARGUMENT' });
  return origins.map((origin: unknown) => {
    let parsed: URL | undefined;
    try {
      parsed = typeof origin === 'string' ? new URL(origin) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== String(origin).replace(/\/$/, '')) {
      throw new UsageError(`--allow-origin: ${JSON.stringify(String(origin).slice(0, 100))} is not an origin`, {
        code: 'INVALID_ARGUMENT',
        hint: 'give scheme://host[:port] exactly, as a browser sends it in Origin, e.g. http://localhost:6274',
      });
    }
    return parsed.origin;
  });
}

function corsHeaders(): Record<string, string> {
  return { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, OPTIONS', 'access-control-allow-headers': 'mcp-protocol-version' };
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    return isLoopbackHost(new URL(origin).hostname);
  } catch {
    return false;
  }
}

function checkPath(path: string): string {
  if (!/^\/[A-Za-z0-9\-._~/]*$/.test(path) || path.includes('//') || /(^|\/)\.\.?(\/|$)/.test(path)) {
    throw new UsageError(`--path "${path.slice(0, 100)}" is not a plain URL path`, { code: 'MCP_BAD_PATH', hint: 'e.g. /mcp' });
  }
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

async function readJson(req: IncomingMessage): Promise<{ value: unknown } | { status: number; code: number; error: string }> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return { status: 415, code: -32000, error: 'the body must be application/json' };
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return { status: 413, code: -32000, error: `the body is larger than ${MAX_BODY_BYTES} bytes` };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { status: 413, code: -32000, error: `the body is larger than ${MAX_BODY_BYTES} bytes` };
    chunks.push(chunk);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { status: 400, code: -32700, error: 'parse error: the body is not JSON' };
  }
}
