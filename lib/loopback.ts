// Whether a host is this machine: where plain http, an unauthenticated dev server or a redirect to a local port is fine.
import { isIP } from 'node:net';

/** Whether a hostname (without port, IPv6 without brackets) is this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * The one rule for where a credential may travel over plain http: https anywhere, http only to this machine (a bearer
 * token, an API key or a notification's channel token crosses the connection).
 */
export function isHttpsOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

/** The rule as messages say it. */
export const httpsOrLoopbackText = 'https (http only on loopback: localhost, 127.0.0.0/8 or [::1])';
