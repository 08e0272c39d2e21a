// How `gantry dev` and `gantry demo` start the registry: the example modules on a well-known port, so that
// examples/gantry.modules.json can name the host (127.0.0.1:5758) the way a real manifest names a registry.
import path from 'node:path';
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

export async function startExampleRegistry(context: { host: string; examplesDir: string }): Promise<RegistryServer> {
  const port = devRegistryPort();
  try {
    return await startRegistryServer({ dir: path.join(context.examplesDir, 'modules'), host: context.host, port });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CatalogError(`port ${port} on ${context.host} is in use: stop what listens there or set GANTRY_DEV_REGISTRY_PORT (0 for any free port)`);
    }
    throw error;
  }
}
