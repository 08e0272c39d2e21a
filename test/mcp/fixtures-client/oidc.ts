/**
 * oidc-provider (panva's, a devDependency) as a real, independent OAuth 2.1 authorization server for the context
 * client: authorization code with PKCE (S256, required for public clients), RFC 8707 resource indicators issuing JWT
 * access tokens whose `aud` is the resource, RFC 7591 dynamic registration (open), refresh tokens for every client
 * allowed the grant (rotated: public clients), RFC 9207 `iss` in every authorization response, and its development
 * interactions (login `dev`, any password; a consent page) — driven by `browser.ts`, an HTTP form-poster. And the
 * client-credentials grant for three machine clients, one per client authentication: client_secret_basic,
 * client_secret_post, private_key_jwt (an ES256 key whose private half is `machineKey`).
 *
 * Knobs for refusal tests, applied to its metadata document as it leaves (a provider middleware, its documented
 * extension point): `metadata.withoutS256` drops `code_challenge_methods_supported`, `metadata.issuer` replaces the
 * issuer, `metadata.extra` adds fields (e.g. `client_id_metadata_document_supported`). `requests` records each request the provider routed, with the OAuth parameters it parsed.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { trackSockets } from '../../peers/http.js';
import { holdNotices } from '../../peers/oidc-provider.js';

export interface RoutedRequest {
  route: string | undefined;
  method: string;
  path: string;
  /** The query as sent (a token must never be in one). */
  query: string;
  /** The OAuth parameters oidc-provider parsed (query or form body). */
  params: Record<string, unknown>;
  status: number;
  /** Set when the request carried an Authorization header (client authentication). */
  authorization: boolean;
}

export interface AuthorizationServerPeer {
  issuer: string;
  /** A pre-registered public native client (redirect http://127.0.0.1/callback, any port: RFC 8252 §7.3). */
  staticClientId: string;
  /** A pre-registered confidential client (client_secret_basic). */
  confidentialClientId: string;
  confidentialClientSecret: string;
  /** Machine clients (client_credentials only): one secret for both secret methods, a key for private_key_jwt. */
  machine: { basicId: string; postId: string; keyId: string; secret: string; keyPem: string; keyJwk: string };
  requests: RoutedRequest[];
  serverErrors: Error[];
  notices: string[];
  metadata: { withoutS256: boolean; issuer: string | undefined; extra: Record<string, unknown> };
  /** Grants only these scopes for the resource (default: every scope a test tool needs except platform:read). */
  resourceScopes: string;
  stop(): Promise<void>;
}

export async function startAuthorizationServer(options: { resources?: () => string[] } = {}): Promise<AuthorizationServerPeer> {
  const notices: string[] = [];
  const releaseNotices = holdNotices(notices);
  const server = http.createServer();
  const closeSockets = trackSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const signingKey = {
    ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
    kid: randomUUID(),
    use: 'sig',
    alg: 'RS256',
  };
  const confidentialClientSecret = `secret-${randomBytes(16).toString('hex')}`;
  const machineKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const machine = {
    basicId: 'gantry-mcp-machine-basic',
    postId: 'gantry-mcp-machine-post',
    keyId: 'gantry-mcp-machine-key',
    secret: `machine-secret-${randomBytes(16).toString('hex')}`,
    keyPem: machineKey.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
    keyJwk: JSON.stringify(machineKey.privateKey.export({ format: 'jwk' })),
  };
  const peer: AuthorizationServerPeer = {
    issuer,
    staticClientId: 'gantry-mcp-static',
    confidentialClientId: 'gantry-mcp-confidential',
    confidentialClientSecret,
    machine,
    requests: [],
    serverErrors: [],
    notices,
    metadata: { withoutS256: false, issuer: undefined, extra: {} },
    resourceScopes: 'modules:read gates:run secrets:list',
    async stop() {
      closeSockets();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      releaseNotices();
    },
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: peer.staticClientId,
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
      },
      {
        client_id: peer.confidentialClientId,
        client_secret: confidentialClientSecret,
        application_type: 'native',
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
      },
      ...(
        [
          [machine.basicId, 'client_secret_basic'],
          [machine.postId, 'client_secret_post'],
        ] as const
      ).map(([client_id, token_endpoint_auth_method]) => ({
        client_id,
        client_secret: machine.secret,
        token_endpoint_auth_method,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      })),
      {
        client_id: machine.keyId,
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        jwks: { keys: [{ ...machineKey.publicKey.export({ format: 'jwk' }), use: 'sig', alg: 'ES256' }] },
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    scopes: ['openid', 'offline_access'],
    async findAccount(_ctx: unknown, id: string) {
      return {
        accountId: id,
        async claims() {
          return { sub: id };
        },
      };
    },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: string | string[]) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, resourceIndicator: string) => {
          const known = options.resources?.();
          if (known && !known.includes(resourceIndicator)) {
            const { errors } = (await import('oidc-provider')) as unknown as { errors: { InvalidTarget: new () => Error } };
            throw new errors.InvalidTarget();
          }
          return { scope: peer.resourceScopes, audience: resourceIndicator, accessTokenTTL: 600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    pkce: { required: () => true },
    async issueRefreshToken(_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) {
      return client.grantTypeAllowed('refresh_token');
    },
    async expiresWithSession() {
      return false;
    },
    ttl: { AccessToken: 600, AuthorizationCode: 60, RefreshToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
  });
  provider.use(async (ctx, next) => {
    await next();
    const oidc = ctx.oidc as { route?: string; params?: Record<string, unknown> } | undefined;
    if (oidc?.route === 'discovery' && ctx.body && typeof ctx.body === 'object') {
      const body = { ...(ctx.body as Record<string, unknown>), ...peer.metadata.extra };
      if (peer.metadata.withoutS256) delete body.code_challenge_methods_supported;
      if (peer.metadata.issuer !== undefined) body.issuer = peer.metadata.issuer;
      ctx.body = body;
    }
    const request = ctx as unknown as { querystring: string; headers: Record<string, string | undefined> };
    peer.requests.push({
      route: oidc?.route,
      method: ctx.method,
      path: ctx.path,
      query: request.querystring,
      params: { ...(oidc?.params ?? {}) },
      status: ctx.status,
      authorization: request.headers.authorization !== undefined,
    });
  });
  provider.on('server_error', (_ctx, error) => peer.serverErrors.push(error as Error));
  server.on('request', provider.callback());
  return peer;
}
