/**
 * Discovery (CTX-STD-RFC9728, CTX-STD-RFC8414): from a context server to its protected resource metadata, the
 * authorization server it names, and that server's metadata — every document checked before anything of it is used.
 * A server of the 2025-03-26 revision publishes no resource metadata: its origin is then the authorization base URL,
 * with RFC 8414 metadata there, else the default `/authorize`, `/token` and `/register` endpoints.
 */
import { shown } from '../../errors.js';
import type { HttpClient } from '../../http/index.js';
import {
  discoverMetadata,
  endpointsAt,
  metadataUrls,
  wellKnownUrl,
  findMetadata,
  type AuthorizationServerMetadata,
  type DiscoveredMetadata,
  type DiscoveryOptions,
  type SendOptions,
} from '../../oauth/index.js';
import { canonicalServerUri, checkEndpoint, resourceCovers } from './canonical.js';
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
  /**
   * The resource the tokens are asked for (`resource` in every request to the authorization server): the canonical
   * server URI, or the resource its metadata names where that covers it (`resourceCovers`).
   */
  resource: string;
  /** Where the metadata came from; undefined for a server of the 2025-03-26 revision, which publishes none. */
  metadataUrl: string | undefined;
  metadata: ProtectedResourceMetadata;
  /** '2025-03-26': no resource metadata; `authorization_servers` holds the server's origin, its authorization base URL. */
  revision?: '2025-03-26';
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

/** The addresses of an issuer's metadata, in order: the OAuth core's `metadataUrls` (RFC 8414, then OpenID). */
export const authorizationServerMetadataUrls = metadataUrls;

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
 * address. Its `resource` must cover the server called (RFC 9728 §3.3, compared canonically: AMB-21; a same-origin
 * path prefix: `resourceCovers`) and its `authorization_servers` be non-empty (CTX-PRM-AUTHORIZATION-SERVERS). When
 * neither address has a document and the challenge named none, the server is taken for one of the 2025-03-26
 * revision (`revision`), its origin the authorization server.
 */
export async function discoverProtectedResource(
  serverUrl: string,
  options: { http: HttpClient; resourceMetadataUrl?: string | undefined; signal?: AbortSignal },
): Promise<DiscoveredResource> {
  const resource = canonicalServerUri(serverUrl);
  const named = options.resourceMetadataUrl !== undefined;
  const candidates = named ? [checkMetadataUrl(options.resourceMetadataUrl!, resource)] : protectedResourceMetadataUrls(resource);
  const { found, tried } = await findMetadata(options.http, candidates, reading(options.signal));
  if (found) {
    const { url, document: body } = found;
    if (typeof body.resource !== 'string') {
      throw new ContextClientError(`the protected resource metadata at ${url} has no resource`, {
        code: 'CTX_NO_RESOURCE_METADATA',
        hint: 'RFC 9728 §2 requires it',
      });
    }
    if (!resourceCovers(body.resource, resource)) {
      throw new ContextClientError(
        `the protected resource metadata at ${url} is for ${shown(body.resource.slice(0, 200))}, not for ${resource} (RFC 9728 §3.3); refusing to sign in`,
        {
          code: 'CTX_RESOURCE_MISMATCH',
          hint: "the metadata must name the server called, or its origin or a path above it; call the server by the URL its metadata names, or fix the server's resource setting",
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
    return { resource: canonicalServerUri(body.resource), metadataUrl: url, metadata: body as ProtectedResourceMetadata };
  }
  if (!named) {
    // The 2025-03-26 revision: no resource metadata; the authorization base URL is the server's URL without its path.
    const origin = new URL(resource).origin;
    return { resource, metadataUrl: undefined, metadata: { resource, authorization_servers: [origin] }, revision: '2025-03-26' };
  }
  throw new ContextClientError(`no protected resource metadata for ${resource}: tried ${tried.join(', ')}`, {
    code: 'CTX_NO_RESOURCE_METADATA',
    hint: 'is this a context server with OAuth authorization? It must serve RFC 9728 metadata (CTX-EP-RESOURCE-METADATA)',
  });
}

/**
 * Where an authorization server's metadata is read, and what stands in when there is none. By default the issuer's
 * well-known addresses, the document naming the issuer exactly (RFC 8414 §3.3, and the MCP revision of 2026-07-28).
 * For a server of the 2025-03-26 revision (`base`, its origin): RFC 8414's address at that origin, the document naming
 * an issuer of that origin (no issuer formed the address), else the default endpoints that revision gives — and PKCE
 * S256, which that revision requires of every server and client alike.
 */
function lookup(issuer: string, revision: DiscoveredResource['revision']): DiscoveryOptions {
  const required = ['authorization_endpoint', 'token_endpoint'];
  if (revision !== '2025-03-26') return { checks: { issuer, required } };
  return {
    urls: [wellKnownUrl(issuer, 'oauth-authorization-server', 'inserted')],
    checks: { issuerOrigin: issuer, required },
    fallback: () =>
      endpointsAt(
        issuer,
        { authorization_endpoint: '/authorize', token_endpoint: '/token', registration_endpoint: '/register' },
        { code_challenge_methods_supported: ['S256'] },
      ),
  };
}

/**
 * The metadata of `issuer` (CTX-STD-RFC8414), from the first of its well-known addresses that has it (`lookup`), its
 * endpoints named and every one https unless on a loopback host (CTX-AS-HTTPS): the OAuth core's discovery and checks
 * (lib/oauth), its refusals as CTX_* codes. `issuer` in the answer is the one the document names.
 */
export async function discoverAuthorizationServer(
  issuer: string,
  options: { http: HttpClient; signal?: AbortSignal; revision?: DiscoveredResource['revision'] },
): Promise<DiscoveredAuthorizationServer> {
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
  let discovered: DiscoveredMetadata;
  try {
    discovered = await discoverMetadata(options.http, issuer, { ...lookup(issuer, options.revision), ...reading(options.signal) });
  } catch (error) {
    throw fromOAuth(error);
  }
  const { metadata, url, tried } = discovered;
  if (metadata) return { issuer: metadata.issuer, metadataUrl: url ?? `${issuer} (default endpoints)`, metadata };
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
