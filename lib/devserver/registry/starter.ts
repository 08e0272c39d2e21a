// How `gantry dev` and `gantry demo` start the registry: the example modules on a well-known port, so that
// examples/gantry.modules.json can name the host (127.0.0.1:5758) the way a real manifest names a registry.
import path from 'node:path';
import { devPort, startOnDevPort } from '../port.js';
import type { RegistryServer } from './server.js';

export const DEV_REGISTRY_PORT = 5758;

const PORT_VARIABLE = 'GANTRY_DEV_REGISTRY_PORT';

/** GANTRY_DEV_REGISTRY_PORT overrides the port; 0 picks an ephemeral one. */
export function devRegistryPort(env: NodeJS.ProcessEnv = process.env): number {
  return devPort(PORT_VARIABLE, DEV_REGISTRY_PORT, env).port;
}

/**
 * Starts the example registry on 5758 (or any free port when that is taken and no port was asked for: `gantry demo`
 * follows the server wherever it runs, and `gantry dev` prints the address).
 * GANTRY_DEV_REGISTRY_TOKEN, when set, makes the API require that bearer token (shown as the server's credentials).
 */
export async function startExampleRegistry(context: { host: string; examplesDir: string }, env: NodeJS.ProcessEnv = process.env): Promise<RegistryServer> {
  const { port, explicit } = devPort(PORT_VARIABLE, DEV_REGISTRY_PORT, env);
  const token = env.GANTRY_DEV_REGISTRY_TOKEN || undefined;
  const { startRegistryServer } = await import('./server.js'); // the CLI reads DEV_REGISTRY_PORT without loading the server
  return startOnDevPort({ name: 'module registry', host: context.host, port, explicit, variable: PORT_VARIABLE }, (p) =>
    startRegistryServer({ dir: path.join(context.examplesDir, 'modules'), host: context.host, port: p, ...(token ? { token } : {}) }));
}
