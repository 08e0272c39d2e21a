/**
 * Where the authorization server's endpoints are. Its metadata wins (AMB-14): `device_authorization_endpoint` from
 * `/.well-known/openid-configuration`, else RFC 8414's `/.well-known/oauth-authorization-server`; only a server with
 * neither gets the spec's path shapes under the address given (`{auth_url}/device/code`, `/token`, `/revoke`). The
 * metadata is the server saying where it serves; a path guessed from the address is right only for servers laid out as
 * the spec's, and an RFC 8628 server (oidc-provider's `/device/auth`) is not.
 */
import { UsageError } from '../errors.js';
import { ProtocolError, type HttpClient } from '../http/index.js';
import { getJson } from './transport.js';
import { checkAuthServer } from './errors.js';

export interface AuthEndpoints {
  /** The address the user gave, normalised (no trailing slash). */
  authUrl: string;
  issuer: string | undefined;
  deviceAuthorization: string;
  token: string;
  revocation: string;
  userinfo: string | undefined;
  jwksUri: string | undefined;
  /** Which document said so, or `defaults` when the server publishes none. */
  source: 'openid-configuration' | 'oauth-authorization-server' | 'defaults';
}

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** An authorization-server address: https, or http on loopback only (tokens cross it), no query, no fragment, no userinfo. */
export function checkAuthUrl(raw: string, name = 'the authorization server address'): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UsageError(`${name} "${raw.slice(0, 200)}" is not a URL`, { hint: 'e.g. https://oauth2.example.com (`gantry dev` prints GANTRY_AUTH_URL)' });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopbackHosts.has(url.hostname))) {
    throw new UsageError(`${name} must be https (http only on 127.0.0.1, ::1 or localhost): tokens and the client secret travel to it`, { hint: `got ${url.protocol}//${url.host}` });
  }
  if (url.username || url.password) throw new UsageError(`${name} must not carry a user name or password`);
  if (url.search || url.hash) throw new UsageError(`${name} must not have a query or fragment`);
  return url.href.replace(/\/+$/, '');
}

function endpointOf(value: unknown, field: string, origin: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ProtocolError(`the authorization server's metadata has a ${field} that is not a string`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ProtocolError(`the authorization server's metadata has a ${field} that is not a URL: ${value.slice(0, 120)}`);
  }
  // Metadata naming plain http for a remote host would send tokens in clear text.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopbackHosts.has(url.hostname))) {
    throw new ProtocolError(`the authorization server's metadata points ${field} at ${url.protocol}//${url.host}, which is not https`, `metadata fetched from ${origin}`);
  }
  return url.href;
}

async function metadata(http: HttpClient, url: string, signal?: AbortSignal): Promise<Record<string, unknown> | undefined> {
  const answer = await getJson(http, url, {}, signal);
  if (answer.status === 404 || answer.status === 405 || answer.status === 410) return undefined;
  if (answer.status !== 200) {
    if (answer.status >= 500) throw new ProtocolError(`${url} answered ${answer.status}`, 'the authorization server failed; try again later');
    return undefined;
  }
  if (!answer.json) throw new ProtocolError(`${url} is not a JSON object`, checkAuthServer('it should be the authorization server, not a web page'));
  return answer.json;
}

/** RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path. */
function wellKnown(authUrl: string, name: string): string[] {
  const url = new URL(authUrl);
  const path = url.pathname.replace(/\/+$/, '');
  const candidates = [`${url.origin}${path}/.well-known/${name}`];
  if (path) candidates.push(`${url.origin}/.well-known/${name}${path}`);
  return candidates;
}

export async function discoverEndpoints(http: HttpClient, authUrl: string, signal?: AbortSignal): Promise<AuthEndpoints> {
  const base = checkAuthUrl(authUrl);
  const documents: Array<['openid-configuration' | 'oauth-authorization-server', string]> = [
    ...wellKnown(base, 'openid-configuration').map((u) => ['openid-configuration', u] as ['openid-configuration', string]),
    ...wellKnown(base, 'oauth-authorization-server').map((u) => ['oauth-authorization-server', u] as ['oauth-authorization-server', string]),
  ];
  for (const [source, url] of documents) {
    const document = await metadata(http, url, signal);
    if (!document) continue;
    const device = endpointOf(document.device_authorization_endpoint, 'device_authorization_endpoint', url);
    const token = endpointOf(document.token_endpoint, 'token_endpoint', url);
    // Metadata without a device endpoint (an OpenID provider listing only its web flows) still says where its token
    // and revocation endpoints are; the device endpoint then takes the spec's shape.
    return {
      authUrl: base,
      issuer: typeof document.issuer === 'string' ? document.issuer : undefined,
      deviceAuthorization: device ?? `${base}/device/code`,
      token: token ?? `${base}/token`,
      revocation: endpointOf(document.revocation_endpoint, 'revocation_endpoint', url) ?? `${base}/revoke`,
      userinfo: endpointOf(document.userinfo_endpoint, 'userinfo_endpoint', url),
      jwksUri: endpointOf(document.jwks_uri, 'jwks_uri', url),
      source,
    };
  }
  return { authUrl: base, issuer: undefined, deviceAuthorization: `${base}/device/code`, token: `${base}/token`, revocation: `${base}/revoke`, userinfo: undefined, jwksUri: undefined, source: 'defaults' };
}
