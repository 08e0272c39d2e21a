/**
 * The canonical server URI (CTX-URI-*): absolute, http(s), lower-case scheme and host, no fragment, no trailing slash
 * (the preferred form), the default port dropped, query kept. Used as `resource` in every authorization, token and
 * refresh request, and compared with the protected resource metadata's `resource` after the same canonicalisation
 * (AMB-21: case and a trailing slash are the only differences tolerated). And which hosts count as loopback, where
 * plain http is allowed (CTX-AS-HTTPS, CTX-AS-REDIRECT-URI-SCHEME).
 */
import { UsageError, shown } from '../../errors.js';
import { ContextClientError } from './errors.js';

/** The canonical form of a context server's URL; a UsageError (exit 2) when it is none. */
export function canonicalServerUri(input: string | URL, what = 'the context server URL'): string {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw new UsageError(`${what} ${shown(String(input).slice(0, 200))} is no absolute URL`, { code: 'CTX_SERVER_URL', hint: 'give it with its scheme, e.g. https://mcp.example.com/mcp' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`${what} must be http(s), not ${url.protocol}`, { code: 'CTX_SERVER_URL' });
  if (url.username !== '' || url.password !== '') throw new UsageError(`${what} must not carry credentials`, { code: 'CTX_SERVER_URL', hint: 'the client signs in with OAuth; leave user:password@ out' });
  if (url.hash !== '') throw new UsageError(`${what} must have no fragment (CTX-URI-NO-FRAGMENT)`, { code: 'CTX_SERVER_URL' });
  // URL already lower-cases scheme and host and drops the default port.
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

/** The same resource, after both sides are canonicalised (AMB-21). */
export function sameResource(a: string, b: string): boolean {
  try {
    return canonicalServerUri(a) === canonicalServerUri(b);
  } catch {
    return false;
  }
}

/** 127.0.0.0/8, ::1 and localhost: where plain http stays on the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

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
