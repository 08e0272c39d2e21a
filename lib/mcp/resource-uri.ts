/**
 * The canonical server URI (CTX-URI-*): the `resource` of the protected resource metadata, of authorization and token
 * requests, and the audience of the tokens. Server and client both read it here, so they cannot disagree on it.
 */
import { expectString } from '../arguments.js';
import { UsageError, shown } from '../errors.js';

/**
 * `https://MCP.Example.com:8443/mcp/` → `https://mcp.example.com:8443/mcp`: absolute with scheme and host
 * (CTX-URI-ABSOLUTE), lower-case scheme and host (CTX-URI-CASE; the URL parser does it), the default port dropped, no
 * trailing slash (CTX-URI-NO-TRAILING-SLASH). A fragment (CTX-URI-NO-FRAGMENT) and credentials are refused; a query
 * is kept (RFC 8707 §2 discourages one but allows it). `code` names the setting's error (the server's `--resource`, the
 * client's server URL).
 */
export function canonicalResourceUri(input: string | URL, what = 'the resource', code = 'MCP_BAD_RESOURCE', example = 'https://mcp.example.com/mcp'): string {
  const text = input instanceof URL ? input.href : input;
  expectString('canonicalResourceUri', what, text, `an absolute URI such as ${example}`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${what} ${shown(text.slice(0, 200))} is not an absolute URL`, { code, hint: `give it with its scheme, e.g. ${example}` });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`${what} must be http(s), not ${url.protocol}`, { code });
  if (url.username !== '' || url.password !== '')
    throw new UsageError(`${what} must not carry credentials`, { code, hint: 'tokens come from OAuth; leave user:password@ out' });
  if (text.includes('#'))
    throw new UsageError(`${what} must have no fragment (CTX-URI-NO-FRAGMENT)`, { code, hint: 'the canonical server URI has no fragment (RFC 8707 §2)' });
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

/**
 * Whether two URIs name the same resource (AMB-21): both sides canonicalised, so the case of scheme and host and a
 * trailing slash do not matter; the path's case does (paths are case-sensitive).
 */
export function sameResource(a: string, b: string): boolean {
  try {
    return canonicalResourceUri(a) === canonicalResourceUri(b);
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
