import { isLoopbackHost } from '../loopback.js';

export { isLoopbackHost };

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
