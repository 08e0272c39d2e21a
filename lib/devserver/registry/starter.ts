// How `gantry dev` and `gantry demo` start the registry: the example modules on a well-known port, so that
// examples/gantry.modules.json can name the host (127.0.0.1:5758) the way a real manifest names a registry.
import path from 'node:path';
import { getLogger } from '../../log.js';
import { CatalogError } from './catalog.js';
import { startRegistryServer, type RegistryServer } from './server.js';

export const DEV_REGISTRY_PORT = 5758;

/** GANTRY_DEV_REGISTRY_PORT overrides the port; 0 picks an ephemeral one. */
export function devRegistryPort(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GANTRY_DEV_REGISTRY_PORT;
  if (raw === undefined || raw === '') return DEV_REGISTRY_PORT;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new CatalogError(`GANTRY_DEV_REGISTRY_PORT must be a port number (0-65535), got "${raw}"`);
  return Number(raw);
}

/**
 * Starts the example registry on 5758. If that port is taken and no port was asked for explicitly, any free port is
 * used instead (with a warning): `gantry demo` follows the server wherever it runs, and `gantry dev` prints the address.
 * GANTRY_DEV_REGISTRY_TOKEN, when set, makes the API require that bearer token (shown as the server's credentials).
 */
export async function startExampleRegistry(context: { host: string; examplesDir: string }, env: NodeJS.ProcessEnv = process.env): Promise<RegistryServer> {
  const port = devRegistryPort(env);
  const explicit = env.GANTRY_DEV_REGISTRY_PORT !== undefined && env.GANTRY_DEV_REGISTRY_PORT !== '';
  const token = env.GANTRY_DEV_REGISTRY_TOKEN || undefined;
  const start = (p: number) => startRegistryServer({ dir: path.join(context.examplesDir, 'modules'), host: context.host, port: p, ...(token ? { token } : {}) });
  try {
    return await start(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    if (explicit) {
      throw new CatalogError(`port ${port} on ${context.host} is in use: stop what listens there or set GANTRY_DEV_REGISTRY_PORT (0 for any free port)`);
    }
    const server = await start(0);
    getLogger().warn(`port ${port} is in use; the module registry listens on ${server.url} instead (addresses: ${server.host}/<namespace>/<name>/<provider>)`);
    return server;
  }
}
