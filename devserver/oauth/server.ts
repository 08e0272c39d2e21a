// The embedded authorization server: Google's OAuth 2.0 device flow for limited-input devices, renamed (spec §A,
// DEV-*), or RFC 8628 with `dialect: 'rfc8628'`. node:http only. It shares no code with lib/auth (the client): a
// second, independent reading of the spec.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { isGantryError } from '../../lib/errors.js';
import * as accounts from './accounts.js';
import { handleAdmin } from './admin.js';
import { channels, tokeninfo, userinfo } from './api.js';
import { newStats, oauthError, tokenError, type OAuthContext, type OAuthStats } from './context.js';
import { SecurityEvents, type SecurityEventDelivery } from './events.js';
import { close, listen, RouteTable, type RouteEntry } from '../kit/index.js';
import { BadBody, readForm, send, type Reply } from './http.js';
import { newSigningKey } from './jwt.js';
import {
  CODE_GRANT,
  DEFAULT_USERS,
  DEVICE_GRANT,
  REFRESH_GRANT,
  deviceScopes,
  resolveOptions,
  type ClientSpec,
  type Dialect,
  type OAuthServerOptions,
  type UserSpec,
} from './options.js';
import { codeForm, consentPage, decide } from './pages.js';
import * as codeflow from './codeflow.js';
import { Store, type Client } from './store.js';
import { REVOCATION_AUTH_METHODS, revoke } from './revoke.js';
import { handleToken } from './token.js';

export interface RequestLogEntry {
  at: string;
  method: string;
  path: string;
  status: number;
  /** Names of the query parameters (never their values). */
  queryKeys: string[];
  /** Whether a token, code or secret arrived in the URL query (AMB-18, AMB-19): the revoke token, access_token, … */
  tokenInQuery: boolean;
}

export interface OAuthServer {
  name: 'oauth';
  url: string;
  dialect: Dialect;
  /** `{url}/.well-known/openid-configuration`. */
  discoveryUrl: string;
  jwksUri: string;
  credentials: Record<string, string>;
  env?: Record<string, string>;
  stop(): Promise<void>;
  /** A device client, or with `redirectUris`/`tokenEndpointAuthMethod` an authorization-code client (secret null when public). */
  registerClient(spec?: ClientSpec): { id: string; secret: string | null };
  /** A signed RFC 9068 JWT access token for `resource` (negative ttlSeconds: already expired), as the code flow issues. */
  issueAccessToken(spec: { resource: string; scopes: string[]; username?: string; clientId?: string; ttlSeconds?: number }): string;
  /** `{url}/.well-known/oauth-authorization-server`. */
  metadataUrl: string;
  addUser(spec: UserSpec): { username: string; email: string; sub: string };
  approve(userCode: string, account?: string): void;
  deny(userCode: string): void;
  userRevokesAccess(account: string, clientId?: string): number;
  revokeSessions(account: string): void;
  disableAccount(account: string, reason?: string): void;
  addSecurityEventReceiver(clientId: string, url: string): void;
  /** The pushes so far, once none is in flight. */
  securityEvents(): Promise<SecurityEventDelivery[]>;
  requestLog(): RequestLogEntry[];
  stats(): OAuthStats;
  deviceCodes(): ReturnType<typeof accounts.deviceCodes>;
  /** Forgets codes, tokens, quota windows, the request log, stats and pushes; clients and users stay. */
  reset(): void;
}

const SENSITIVE_QUERY = new Set(['token', 'access_token', 'refresh_token', 'client_secret', 'device_code', 'id_token', 'code']);
const MAX_LOG = 5000;

export async function startOAuthServer(options: OAuthServerOptions = {}): Promise<OAuthServer> {
  const resolved = resolveOptions(options);
  const store = new Store(resolved);
  for (const spec of options.users ?? DEFAULT_USERS) store.addUser(spec);
  for (const spec of options.clients ?? []) store.registerClient(spec);
  const key = newSigningKey();
  let origin = '';
  const context: OAuthContext = { options: resolved, store, key, events: new SecurityEvents(key, () => origin), stats: newStats(), origin: () => origin };
  const log = options.log ?? (() => {});
  let requests: RequestLogEntry[] = [];

  const reset = () => {
    store.reset();
    context.stats = newStats();
    context.events.clear();
    requests = [];
  };

  const discovery = () => ({
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    device_authorization_endpoint: `${origin}${resolved.devicePath}`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    introspection_endpoint: `${origin}/introspect`,
    revocation_endpoint: `${origin}/revoke`,
    userinfo_endpoint: `${origin}/userinfo`,
    jwks_uri: `${origin}/jwks`,
    grant_types_supported: [DEVICE_GRANT, REFRESH_GRANT, CODE_GRANT],
    // The authorization code flow (context-server clients); the device grant has no response type.
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...new Set([...deviceScopes(resolved.scopeBase), ...resolved.authorizationScopes])],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    // `none`: public clients of the code flow (and of the rfc8628 dialect's device flow); Google's device clients need a secret.
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    // RFC 7009 §2.1: confidential clients authenticate as at /token; public clients name themselves (client_id).
    revocation_endpoint_auth_methods_supported: REVOCATION_AUTH_METHODS,
    authorization_response_iss_parameter_supported: true,
    resource_indicators_supported: true,
    claims_supported: ['iss', 'aud', 'azp', 'sub', 'email', 'email_verified', 'name', 'iat', 'exp'],
    // RFC 8414 §2: a URL (clients such as the MCP SDK refuse the whole document otherwise); docs/auth.md describes the server.
    service_documentation: `${origin}/_gantry/`,
    ...resolved.metadataOverrides,
  });

  const deviceCode = (form: URLSearchParams): Reply => {
    context.stats.deviceCodeRequests++;
    const clientId = form.get('client_id');
    if (!clientId) return oauthError(400, 'invalid_request', 'Missing required parameter: client_id');
    const client = store.clients.get(clientId);
    if (!client) return oauthError(401, 'invalid_client', 'The OAuth client was not found.');
    if (client.type !== 'limited-input') return oauthError(401, 'invalid_client', 'Invalid client type.');
    const quota = store.takeQuota(client.id);
    if (!quota.ok) {
      context.stats.quotaRejections++;
      const retryAfter = { 'retry-after': String(quota.retryAfter) };
      // Google's own shape; RFC 8628 defines no quota error, so the rfc8628 dialect answers RFC 6585's 429 in RFC 6749's shape.
      return resolved.dialect === 'google'
        ? { status: 403, body: { error_code: 'rate_limit_exceeded' }, headers: retryAfter }
        : oauthError(429, 'rate_limit_exceeded', `Too many device code requests for this client: try again in ${quota.retryAfter} s.`, retryAfter);
    }
    const scope = form.get('scope');
    if (!scope || scope.trim() === '') return oauthError(400, 'invalid_request', 'Missing required parameter: scope');
    const scopes = [...new Set(scope.trim().split(/\s+/))];
    const allowed = deviceScopes(resolved.scopeBase);
    const refused = scopes.filter((s) => !allowed.includes(s));
    if (refused.length > 0) return oauthError(400, 'invalid_scope', `Invalid device flow scope: ${refused.join(' ')}`);
    const code = store.newDeviceCode(client.id, scopes);
    const verification = `${origin}/device`;
    const common = { device_code: code.deviceCode, user_code: code.userCode, expires_in: resolved.expiresIn, interval: resolved.interval };
    return {
      status: 200,
      body:
        resolved.dialect === 'google'
          ? { ...common, verification_url: verification }
          : { ...common, verification_uri: verification, verification_uri_complete: `${verification}?user_code=${encodeURIComponent(code.userCode)}` },
    };
  };

  // As sent: HEAD is not GET here, a path's other methods are a 405 naming the ones it has, and the documents
  // (discovery, JWKS) are a 404 to any method but GET.
  const notFound = (_req: IncomingMessage, url: URL): Reply => ({
    status: 404,
    body: { error: 'not_found', error_description: `No endpoint ${url.pathname}` },
  });
  const documents: Array<[string, () => unknown]> = [
    ...(resolved.discovery
      ? (['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'] as const).map((path): [string, () => unknown] => [path, discovery])
      : []),
    ['/jwks', () => key.jwks()],
  ];
  const routes = new RouteTable<OAuthRoute>(
    [
      ...documents.map(([template, body]): OAuthRoute => ({ method: 'GET', template, answer: () => ({ status: 200, body: body() }) })),
      ...documents.map(([template]): OAuthRoute => ({ method: '*', template, answer: notFound })),
      { method: 'POST', template: resolved.devicePath, answer: async (req) => deviceCode(await readForm(req)) },
      { method: 'POST', template: '/token', answer: async (req) => handleToken(context, await readForm(req), req) },
      { method: 'POST', template: '/revoke', answer: async (req, url) => revoke(context, await readForm(req), url, req) },
      { method: 'GET', template: '/userinfo', answer: (req, url) => userinfo(context, req, url) },
      { method: 'POST', template: '/userinfo', answer: (req, url) => userinfo(context, req, url) },
      { method: 'POST', template: '/tokeninfo', answer: async (req) => tokeninfo(context, await readForm(req)) },
      { method: 'GET', template: '/video/v3/channels', answer: (req, url) => channels(context, req, url) },
      { method: 'GET', template: '/device', answer: (req, url) => codeForm(req, url.searchParams.get('user_code')) },
      { method: 'POST', template: '/device', answer: async (req) => consentPage(context, req, await readForm(req)) },
      { method: 'POST', template: '/device/decision', answer: async (req) => decide(context, req, await readForm(req)) },
      { method: 'GET', template: '/authorize', answer: (_req, url) => codeflow.authorize(context, url) },
      { method: 'POST', template: '/authorize/decision', answer: async (req) => codeflow.decide(context, await readForm(req)) },
      { method: 'POST', template: '/register', answer: (req) => codeflow.register(context, req) },
      { method: 'POST', template: '/introspect', answer: async (req) => codeflow.introspect(context, await readForm(req), req) },
    ],
    { headAsGet: false },
  );

  const route = async (req: IncomingMessage, method: string, url: URL): Promise<Reply> => {
    const path = url.pathname;
    if (path.startsWith('/_gantry'))
      return handleAdmin(context, { requests: () => [...requests], clearRequests: () => (requests = []), reset }, method, path, req);
    const found = routes.match(method, path);
    if ('route' in found) return found.route.answer(req, url);
    return found.allowed.length > 0 ? notAllowed(found.allowed.join(', ')) : notFound(req, url);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://localhost');
    const started = Date.now();
    const queryKeys = [...new Set(url.searchParams.keys())];
    const tokenInQuery = [...url.searchParams].some(
      ([name, value]) => SENSITIVE_QUERY.has(name) || store.accessTokens.has(value) || store.refreshTokens.has(value),
    );
    res.on('close', () => {
      if (!url.pathname.startsWith('/_gantry')) {
        requests.push({ at: new Date(started).toISOString(), method, path: url.pathname, status: res.statusCode, queryKeys, tokenInQuery });
        if (requests.length > MAX_LOG) requests.shift();
      }
      log(`${method} ${url.pathname} ${res.statusCode} ${Date.now() - started}ms`);
    });
    let reply: Reply;
    try {
      reply = await route(req, method, url);
    } catch (error) {
      if (error instanceof BadBody)
        reply = url.pathname === '/token' ? tokenError(context, 'invalid_request', error.message) : oauthError(error.status, 'invalid_request', error.message);
      else if (isGantryError(error)) reply = { status: 400, body: { error: error.message } };
      else throw error;
    }
    send(res, reply);
  };

  const listener = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`error: ${req.method} ${(req.url ?? '').split('?')[0]}: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) send(res, { status: 500, body: { error: 'server_error', error_description: 'Internal error' } });
      else res.destroy();
    });
  });
  // Idle connections stay open well past any poll interval, so a client's kept-alive socket is not closed under a poll
  // a few seconds later (Node's 5 s default races a 5 s interval: ECONNRESET on the reused socket).
  listener.keepAliveTimeout = 65_000;
  listener.headersTimeout = 66_000;
  ({ origin } = await listen(listener, options.host ?? '127.0.0.1', options.port ?? 0));
  log(`authorization server (${resolved.dialect}) listening on ${origin}`);

  const publicClient = (client: Client) => ({ id: client.id, secret: client.secret });
  return {
    name: 'oauth',
    url: origin,
    dialect: resolved.dialect,
    discoveryUrl: `${origin}/.well-known/openid-configuration`,
    metadataUrl: `${origin}/.well-known/oauth-authorization-server`,
    jwksUri: `${origin}/jwks`,
    credentials: {},
    stop: async () => {
      await context.events.idle();
      await close(listener);
    },
    registerClient: (spec = {}) => publicClient(store.registerClient(spec)),
    issueAccessToken: (spec) => codeflow.issueTestAccessToken(context, spec),
    addUser: (spec) => store.addUser(spec),
    approve: (userCode, account) => accounts.decideCode(context, userCode, 'allow', account),
    deny: (userCode) => accounts.decideCode(context, userCode, 'deny'),
    userRevokesAccess: (account, clientId) => accounts.userRevokesAccess(context, account, clientId),
    revokeSessions: (account) => accounts.revokeSessions(context, account),
    disableAccount: (account, reason) => accounts.disableAccount(context, account, reason),
    addSecurityEventReceiver: (clientId, url) => accounts.addReceiver(context, clientId, url),
    securityEvents: async () => {
      await context.events.idle();
      return context.events.list();
    },
    requestLog: () => [...requests],
    stats: () => structuredClone(context.stats),
    deviceCodes: () => accounts.deviceCodes(context),
    reset,
  };
}

interface OAuthRoute extends RouteEntry {
  answer: (req: IncomingMessage, url: URL) => Reply | Promise<Reply>;
}

function notAllowed(allow: string): Reply {
  return { status: 405, body: { error: 'invalid_request', error_description: `Method not allowed; use ${allow}` }, headers: { allow } };
}
