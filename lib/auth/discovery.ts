/**
 * Where the authorization server's endpoints are. Its metadata wins (AMB-14): `device_authorization_endpoint` from
 * `/.well-known/openid-configuration`, else RFC 8414's `/.well-known/oauth-authorization-server`; only a server with
 * neither gets the spec's path shapes under the address given (`{auth_url}/device/code`, `/token`, `/revoke`). The
 * metadata is the server saying where it serves; a path guessed from the address is right only for servers laid out as
 * the spec's, and an RFC 8628 server (oidc-provider's `/device/auth`) is not.
 */
import { UsageError } from '../errors.js';
import { ProtocolError, type HttpClient } from '../http/index.js';
import { isLoopbackHost } from '../loopback.js';
import { checkMetadata, findMetadata, optionalEndpoint, wellKnownUrl, type MetadataDocument } from '../oauth/index.js';
import { checkAuthServer, fromOAuth } from './errors.js';

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

/** An authorization-server address: https, or http on loopback only (tokens cross it), no query, no fragment, no userinfo. */
export function checkAuthUrl(raw: string, name = 'the authorization server address'): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UsageError(`${name} "${raw.slice(0, 200)}" is not a URL`, { hint: 'e.g. https://oauth2.example.com (`gantry dev` prints GANTRY_AUTH_URL)' });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new UsageError(`${name} must be https (http only on a loopback address: 127.0.0.1, ::1, localhost): tokens and the client secret travel to it`, {
      hint: `got ${url.protocol}//${url.host}`,
    });
  }
  if (url.username || url.password) throw new UsageError(`${name} must not carry a user name or password`);
  if (url.search || url.hash) throw new UsageError(`${name} must not have a query or fragment`);
  return url.href.replace(/\/+$/, '');
}

/**
 * The OpenID configuration first, then RFC 8414's document; each at the address given with the well-known segment
 * appended, then inserted after the host (RFC 8414 §3.1) — one address each for a server without a path.
 */
function documentUrls(base: string): Array<[MetadataDocument, string]> {
  const urls: Array<[MetadataDocument, string]> = [];
  for (const document of ['openid-configuration', 'oauth-authorization-server'] as const) {
    for (const placement of ['appended', 'inserted'] as const) {
      const url = wellKnownUrl(base, document, placement);
      if (!urls.some(([, seen]) => seen === url)) urls.push([document, url]);
    }
  }
  return urls;
}

export async function discoverEndpoints(http: HttpClient, authUrl: string, signal?: AbortSignal): Promise<AuthEndpoints> {
  const base = checkAuthUrl(authUrl);
  const documents = documentUrls(base);
  // A server that fails (5xx) is raised by the core: the metadata may be there once it is back.
  const { found, notJson } = await findMetadata(
    http,
    documents.map(([, url]) => url),
    { signal, serverFailure: (status) => status >= 500 },
  );
  if (!found) {
    if (notJson.length > 0)
      throw new ProtocolError(`${notJson[0]} is not a JSON object`, checkAuthServer('it should be the authorization server, not a web page'));
    return {
      authUrl: base,
      issuer: undefined,
      deviceAuthorization: `${base}/device/code`,
      token: `${base}/token`,
      revocation: `${base}/revoke`,
      userinfo: undefined,
      jwksUri: undefined,
      source: 'defaults',
    };
  }
  const { document, url } = found;
  try {
    // Metadata naming plain http for a remote host would send tokens in clear text.
    checkMetadata(found, { server: base });
    // Metadata without a device endpoint (an OpenID provider listing only its web flows) still says where its token
    // and revocation endpoints are; the device endpoint then takes the spec's shape.
    return {
      authUrl: base,
      issuer: typeof document.issuer === 'string' ? document.issuer : undefined,
      deviceAuthorization: optionalEndpoint(document.device_authorization_endpoint, 'device_authorization_endpoint', base) ?? `${base}/device/code`,
      token: optionalEndpoint(document.token_endpoint, 'token_endpoint', base) ?? `${base}/token`,
      revocation: optionalEndpoint(document.revocation_endpoint, 'revocation_endpoint', base) ?? `${base}/revoke`,
      userinfo: optionalEndpoint(document.userinfo_endpoint, 'userinfo_endpoint', base),
      jwksUri: optionalEndpoint(document.jwks_uri, 'jwks_uri', base),
      source: documents.find(([, candidate]) => candidate === url)![0],
    };
  } catch (error) {
    throw fromOAuth(error);
  }
}
