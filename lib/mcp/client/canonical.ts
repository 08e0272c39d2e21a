/**
 * The canonical server URI (CTX-URI-*): absolute, http(s), lower-case scheme and host, no fragment, no trailing slash
 * (the preferred form), the default port dropped, query kept. Used as `resource` in every authorization, token and
 * refresh request, and compared with the protected resource metadata's `resource` after the same canonicalisation
 * (AMB-21: case and a trailing slash are the only differences tolerated) — lib/mcp/resource-uri.ts, which the server
 * shares. And the https rule for the authorization server's endpoints (CTX-AS-HTTPS).
 */
import { isLoopbackHost } from '../../loopback.js';
import { checkEndpoint as checkOAuthEndpoint } from '../../oauth/index.js';
import { canonicalResourceUri, sameResource } from '../resource-uri.js';
import { fromOAuth } from './errors.js';

/** The canonical form of a context server's URL; a UsageError (exit 2) when it is none. */
export function canonicalServerUri(input: string | URL, what = 'the context server URL'): string {
  return canonicalResourceUri(input, what, 'CTX_SERVER_URL');
}

export { sameResource, isLoopbackHost };

/**
 * Whether the `resource` a server's metadata names covers the URL called: the same resource (compared canonically,
 * AMB-21), or a resource of the same origin whose path is a whole-segment prefix of the URL's path — `http://h` and
 * `http://h/api` cover `http://h/api/mcp`, `http://h/mc` and `http://h/api/other` do not. A server may name itself by
 * its origin (one resource for all its paths, as the MCP SDKs and the conformance suite accept); what it cannot do is
 * name another origin, or a path beside its own, and so have the client ask for tokens for someone else.
 */
export function resourceCovers(named: string, called: string): boolean {
  if (sameResource(named, called)) return true;
  let resource: URL;
  let url: URL;
  try {
    resource = new URL(canonicalResourceUri(named));
    url = new URL(canonicalResourceUri(called));
  } catch {
    return false;
  }
  if (resource.origin !== url.origin || resource.search !== '') return false;
  const prefix = resource.pathname.replace(/\/+$/, '');
  return prefix === '' || url.pathname === prefix || url.pathname.startsWith(`${prefix}/`);
}

/**
 * An endpoint the authorization server names must be https (CTX-AS-HTTPS), except on a loopback host, where a local
 * or test server runs over plain http (the choice recorded in docs/mcp.md): the OAuth core's check, its refusal as
 * CTX_NO_AS_METADATA (none, or no URL) or CTX_INSECURE_ENDPOINT. Returns the URL.
 */
export function checkEndpoint(value: unknown, what: string, issuer: string): URL {
  try {
    return checkOAuthEndpoint(value, what, issuer);
  } catch (error) {
    throw fromOAuth(error);
  }
}
