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
