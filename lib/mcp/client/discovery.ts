/**
 * Discovery (CTX-STD-RFC9728, CTX-STD-RFC8414): from a context server to its protected resource metadata, the
 * authorization server it names, and that server's metadata — every document checked before anything of it is used.
 */
import { shown } from '../../errors.js';
import type { HttpClient } from '../../http/index.js';
import { checkMetadata, findMetadata, wellKnownUrl, type AuthorizationServerMetadata, type SendOptions } from '../../oauth/index.js';
import { canonicalServerUri, checkEndpoint, sameResource } from './canonical.js';
import { isHttpsOrLoopback } from '../../loopback.js';
import { ContextClientError, fromOAuth, peerFailed } from './errors.js';

export type { AuthorizationServerMetadata };

/** RFC 9728 §2, as far as the client uses it. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported?: string[];
  [field: string]: unknown;
}

export interface DiscoveredResource {
  /** The canonical server URI: `resource` in every request to the authorization server. */
  resource: string;
  /** Where the metadata came from. */
  metadataUrl: string;
  metadata: ProtectedResourceMetadata;
}

export interface DiscoveredAuthorizationServer {
  issuer: string;
  /** Where the metadata came from. */
  metadataUrl: string;
  metadata: AuthorizationServerMetadata;
}

const stringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

/**
 * The well-known addresses of a server's protected resource metadata, in the order RFC 9728 §3.1 and the MCP
 * specification give: the path-inserted form (`/.well-known/oauth-protected-resource/<path>`), then the root.
 */
export function protectedResourceMetadataUrls(serverUrl: string): string[] {
  const url = new URL(canonicalServerUri(serverUrl));
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  const urls = path !== '' ? [`${url.origin}/.well-known/oauth-protected-resource${path}`] : [];
  urls.push(`${url.origin}/.well-known/oauth-protected-resource`);
  return urls;
}

/**
 * The addresses of an issuer's metadata, in order (RFC 8414 §3.1 and OpenID Connect Discovery, as the MCP
 * specification lists them): for `https://as/tenant`, `/.well-known/oauth-authorization-server/tenant`,
 * `/.well-known/openid-configuration/tenant`, `/tenant/.well-known/openid-configuration`; for an issuer without a
 * path, the two root forms.
 */
export function authorizationServerMetadataUrls(issuer: string): string[] {
  const urls = [
    wellKnownUrl(issuer, 'oauth-authorization-server', 'inserted'),
    wellKnownUrl(issuer, 'openid-configuration', 'inserted'),
    wellKnownUrl(issuer, 'openid-configuration', 'appended'),
  ];
  return [...new Set(urls)];
}

/**
 * How the documents are read: a 4xx (but 408 and 429) means "not here", a peer that fails is raised by the HTTP core
 * after its retries, a redirect is followed.
 */
const reading = (signal: AbortSignal | undefined): SendOptions => ({ signal, serverFailure: peerFailed, followRedirects: true });

function checkMetadataUrl(value: string, serverUrl: string): string {
  let url: URL;
  try {
    url = new URL(value, serverUrl);
  } catch {
    throw new ContextClientError(`the context server's WWW-Authenticate names resource_metadata ${shown(value.slice(0, 200))}, which is no URL`, {
      code: 'CTX_NO_RESOURCE_METADATA',
    });
  }
  if (!isHttpsOrLoopback(url)) {
    throw new ContextClientError(`the context server's resource metadata ${url.origin}${url.pathname} is not https`, {
      code: 'CTX_INSECURE_ENDPOINT',
      hint: 'a protected resource metadata document is read over https (plain http only on a loopback address)',
    });
  }
  return url.toString();
}

/**
 * The protected resource metadata of `serverUrl` (CTX-STD-RFC9728, CTX-EP-401-WWW-AUTHENTICATE): from the
 * `resource_metadata` of a 401's Bearer challenge when there is one, else the path-inserted then the root well-known
 * address. Its `resource` must be the server called (RFC 9728 §3.3, compared canonically: AMB-21) and its
 * `authorization_servers` non-empty (CTX-PRM-AUTHORIZATION-SERVERS).
 */
export async function discoverProtectedResource(
  serverUrl: string,
  options: { http: HttpClient; resourceMetadataUrl?: string | undefined; signal?: AbortSignal },
): Promise<DiscoveredResource> {
  const resource = canonicalServerUri(serverUrl);
  const candidates = options.resourceMetadataUrl ? [checkMetadataUrl(options.resourceMetadataUrl, resource)] : protectedResourceMetadataUrls(resource);
  const { found, tried } = await findMetadata(options.http, candidates, reading(options.signal));
  if (found) {
    const { url, document: body } = found;
    if (typeof body.resource !== 'string') {
      throw new ContextClientError(`the protected resource metadata at ${url} has no resource`, {
        code: 'CTX_NO_RESOURCE_METADATA',
        hint: 'RFC 9728 §2 requires it',
      });
    }
    if (!sameResource(body.resource, resource)) {
      throw new ContextClientError(
        `the protected resource metadata at ${url} is for ${shown(body.resource.slice(0, 200))}, not for ${resource} (RFC 9728 §3.3); refusing to sign in`,
        {
          code: 'CTX_RESOURCE_MISMATCH',
          hint: "call the server by the URL its metadata names, or fix the server's resource setting",
        },
      );
    }
    if (!stringList(body.authorization_servers) || body.authorization_servers.length === 0) {
      throw new ContextClientError(`the protected resource metadata at ${url} lists no authorization_servers (CTX-PRM-AUTHORIZATION-SERVERS)`, {
        code: 'CTX_NO_RESOURCE_METADATA',
      });
    }
    if (body.scopes_supported !== undefined && !stringList(body.scopes_supported)) {
      throw new ContextClientError(`the protected resource metadata at ${url} has a scopes_supported that is no list of strings`, {
        code: 'CTX_NO_RESOURCE_METADATA',
      });
    }
    return { resource, metadataUrl: url, metadata: body as ProtectedResourceMetadata };
  }
  throw new ContextClientError(`no protected resource metadata for ${resource}: tried ${tried.join(', ')}`, {
    code: 'CTX_NO_RESOURCE_METADATA',
    hint: 'is this a context server with OAuth authorization? It must serve RFC 9728 metadata (CTX-EP-RESOURCE-METADATA)',
  });
}

/**
 * The metadata of `issuer` (CTX-STD-RFC8414), from the first of its well-known addresses that has it. Its `issuer`
 * must be `issuer` exactly (RFC 8414 §3.3, and the MCP revision of 2026-07-28), its authorization and token
 * endpoints named, and every endpoint it names https unless on a loopback host (CTX-AS-HTTPS): the OAuth core's
 * checks (lib/oauth), its refusals as CTX_* codes.
 */
export async function discoverAuthorizationServer(issuer: string, options: { http: HttpClient; signal?: AbortSignal }): Promise<DiscoveredAuthorizationServer> {
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch {
    throw new ContextClientError(`the authorization server ${shown(issuer.slice(0, 200))} named by the resource metadata is no URL`, {
      code: 'CTX_NO_AS_METADATA',
    });
  }
  if (issuerUrl.search !== '' || issuerUrl.hash !== '')
    throw new ContextClientError(`the issuer ${shown(issuer)} has a query or fragment (RFC 8414 §2)`, { code: 'CTX_NO_AS_METADATA' });
  checkEndpoint(issuer, 'issuer', issuer);
  const { found, tried } = await findMetadata(options.http, authorizationServerMetadataUrls(issuer), reading(options.signal));
  if (found) {
    try {
      return { issuer, metadataUrl: found.url, metadata: checkMetadata(found, { issuer, required: ['authorization_endpoint', 'token_endpoint'] }) };
    } catch (error) {
      throw fromOAuth(error);
    }
  }
  throw new ContextClientError(`no authorization server metadata for ${issuer}: tried ${tried.join(', ')}`, {
    code: 'CTX_NO_AS_METADATA',
    hint: 'the authorization server must publish RFC 8414 metadata (or an OpenID configuration)',
  });
}

/** PKCE with S256 or nothing: a server that does not advertise S256 is refused, never used without PKCE. */
export function requireS256(server: DiscoveredAuthorizationServer): void {
  const methods = server.metadata.code_challenge_methods_supported;
  if (!methods || !methods.includes('S256')) {
    throw new ContextClientError(
      `the authorization server ${server.issuer} does not advertise PKCE S256 (code_challenge_methods_supported: ${methods ? JSON.stringify(methods) : 'missing'}); refusing to authorize without it (CTX-EP-AUTHORIZATION-REQUEST)`,
      {
        code: 'CTX_NO_S256',
        hint: 'the authorization server must support PKCE with S256 and say so in its metadata',
      },
    );
  }
}
