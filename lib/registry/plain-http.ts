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
 * Plain http is allowed for loopback hosts and for hosts the user opts in with `GANTRY_REGISTRY_ALLOW_HTTP`
 * (comma-separated `host` or `host:port`; `*` for every host). Everything else must be https.
 */
export function plainHttpAllowed(url: URL, env: NodeJS.ProcessEnv = process.env): boolean {
  if (isLoopbackHost(url.hostname)) return true;
  const optIn = (env.GANTRY_REGISTRY_ALLOW_HTTP ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);
  return optIn.includes('*') || optIn.includes(url.host.toLowerCase()) || optIn.includes(url.hostname.toLowerCase());
}
