/**
 * The canonical server URI (CTX-URI-*): the `resource` of the protected resource metadata, of authorization and token
 * requests, and the audience of the tokens. Server and client both read it here, so they cannot disagree on it.
 */
import { expectString } from '../arguments.js';
import { UsageError } from '../errors.js';

/**
 * `https://MCP.Example.com:8443/mcp/` → `https://mcp.example.com:8443/mcp`: absolute with scheme and host
 * (CTX-URI-ABSOLUTE), lower-case scheme and host (CTX-URI-CASE; the URL parser does it), the default port dropped, no
 * trailing slash (CTX-URI-NO-TRAILING-SLASH). A fragment is refused (CTX-URI-NO-FRAGMENT), and so are credentials
 * and a query: a token audience is no place for either.
 */
export function canonicalResourceUri(text: string, what = 'the resource'): string {
  expectString('canonicalResourceUri', what, text, 'an absolute URI such as https://mcp.example.com/mcp');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${what} "${text.slice(0, 200)}" is not an absolute URI`, { code: 'MCP_BAD_RESOURCE', hint: 'give scheme, host and path, e.g. https://mcp.example.com/mcp' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`${what} must be an http(s) URI, not ${url.protocol}`, { code: 'MCP_BAD_RESOURCE' });
  if (text.includes('#')) throw new UsageError(`${what} must not contain a fragment (#…)`, { code: 'MCP_BAD_RESOURCE', hint: 'the canonical server URI has no fragment (RFC 8707 §2)' });
  if (url.username || url.password) throw new UsageError(`${what} must not contain credentials`, { code: 'MCP_BAD_RESOURCE' });
  if (url.search) throw new UsageError(`${what} must not contain a query`, { code: 'MCP_BAD_RESOURCE' });
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * Whether a token's audience names this server (AMB-21): both sides canonicalised, so the case of scheme and host and a
 * trailing slash do not matter; the path's case does (paths are case-sensitive).
 */
export function sameResource(audience: string, canonical: string): boolean {
  try {
    return canonicalResourceUri(audience) === canonical;
  } catch {
    return false;
  }
}

/**
 * Where the protected resource metadata of `resource` lives (RFC 9728 §3.1): the well-known segment inserted between
 * host and path, so several servers on one host each have their own.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(canonicalResourceUri(resource));
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.protocol}//${url.host}/.well-known/oauth-protected-resource${path}`;
}
