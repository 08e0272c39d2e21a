/**
 * oidc-provider (panva's OAuth 2.0 / OpenID Connect server, a devDependency) as the independent authorization server
 * of the context-server tests: the client-credentials grant with RFC 8707 resource indicators, so a test can ask for an
 * access token for any audience and scopes, as JWT (RFC 9068, `at+jwt`) or opaque; and RFC 7662 introspection for the
 * resource server's own client. Every token comes from oidc-provider's own code, not from Gantry's.
 *
 * `setFormat('opaque')` makes the next tokens opaque (introspected, not verified locally); `setTtl(s)` their lifetime.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { holdNotices } from './oidc-provider.js';

export interface OidcResourcePeer {
  issuer: string;
  /** The resource server's credentials for introspection. */
  introspection: { clientId: string; clientSecret: string };
  /** An access token from the client-credentials grant, for `resource` with `scope`. */
  token(resource: string, scope: string): Promise<string>;
  setFormat(format: 'jwt' | 'opaque'): void;
  setTtl(seconds: number): void;
  /** Every request path the provider received, in order (the resource server's JWKS and introspection calls). */
  paths: string[];
  stop(): Promise<void>;
}

export const RESOURCE_SCOPES = 'modules:read gates:run secrets:list platform:read';

export async function startOidcResourcePeer(): Promise<OidcResourcePeer> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let format: 'jwt' | 'opaque' = 'jwt';
  let ttl = 300;
  const paths: string[] = [];
  const notices: string[] = [];
  const releaseNotices = holdNotices(notices);
  const provider = new Provider(issuer, {
    scopes: RESOURCE_SCOPES.split(' '),
    clients: [
      {
        client_id: 'agent',
        client_secret: 'agent-secret-0123456789',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: RESOURCE_SCOPES,
      },
      { client_id: 'context-server', client_secret: 'introspection-secret-0123456789', grant_types: [], response_types: [], redirect_uris: [] },
    ],
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: RESOURCE_SCOPES, accessTokenTTL: ttl, accessTokenFormat: format }),
      },
    },
  });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    paths.push((req.url ?? '').split('?')[0]!);
    callback(req, res);
  });

  return {
    issuer,
    introspection: { clientId: 'context-server', clientSecret: 'introspection-secret-0123456789' },
    paths,
    setFormat: (value) => (format = value),
    setTtl: (seconds) => (ttl = seconds),
    async token(resource, scope) {
      const body = new URLSearchParams({ grant_type: 'client_credentials', resource, scope });
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from('agent:agent-secret-0123456789').toString('base64')}`,
        },
        body,
      });
      const answer = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!answer.access_token) throw new Error(`oidc-provider refused the token: ${answer.error}: ${answer.error_description}`);
      return answer.access_token;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        releaseNotices();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
