/**
 * The canonical server URI (CTX-URI-*): absolute, http(s), lower-case scheme and host, no fragment, no trailing slash
 * (the preferred form), the default port dropped, query kept. Used as `resource` in every authorization, token and
 * refresh request, and compared with the protected resource metadata's `resource` after the same canonicalisation
 * (AMB-21: case and a trailing slash are the only differences tolerated) — lib/mcp/resource-uri.ts, which the server
 * shares. And the https rule for the authorization server's endpoints (CTX-AS-HTTPS).
 */
import { shown } from '../../errors.js';
import { isLoopbackHost } from '../../loopback.js';
import { canonicalResourceUri, sameResource } from '../resource-uri.js';
import { ContextClientError } from './errors.js';

/** The canonical form of a context server's URL; a UsageError (exit 2) when it is none. */
export function canonicalServerUri(input: string | URL, what = 'the context server URL'): string {
  return canonicalResourceUri(input, what, 'CTX_SERVER_URL');
}

export { sameResource, isLoopbackHost };

/**
 * An endpoint the authorization server names must be https (CTX-AS-HTTPS), except on a loopback host, where a local
 * or test server runs over plain http (the choice recorded in docs/mcp.md). Returns the URL.
 */
export function checkEndpoint(value: unknown, what: string, issuer: string): URL {
  if (typeof value !== 'string' || value === '') {
    throw new ContextClientError(`the authorization server ${issuer} names no ${what}`, { code: 'CTX_NO_AS_METADATA', hint: 'its RFC 8414 metadata must list it' });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ContextClientError(`the authorization server ${issuer}'s ${what} ${shown(value.slice(0, 200))} is no URL`, { code: 'CTX_NO_AS_METADATA' });
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  throw new ContextClientError(`the authorization server ${issuer}'s ${what} ${url.origin}${url.pathname} is not https (CTX-AS-HTTPS)`, {
    code: 'CTX_INSECURE_ENDPOINT', hint: 'an authorization server must serve every endpoint over https; plain http is accepted only on a loopback address',
  });
}
