// How `gantry dev` and `gantry demo` start the registry: the example modules on a well-known port, so that
// examples/gantry.modules.json can name the host (127.0.0.1:5758) the way a real manifest names a registry.
import path from 'node:path';
import type { DevServerStarter } from '../dev-server.js';
import { claimDevPort, devPort, type DevPortSpec } from '../port.js';
import type { RegistryServer } from './server.js';

export const DEV_REGISTRY_PORT = 5758;
const PORT: DevPortSpec = { name: 'module registry', variable: 'GANTRY_DEV_REGISTRY_PORT', port: DEV_REGISTRY_PORT };

/** GANTRY_DEV_REGISTRY_PORT overrides the port; 0 picks an ephemeral one. */
export function devRegistryPort(env: NodeJS.ProcessEnv = process.env): number {
  return devPort(PORT.variable, PORT.port, env).port;
}

/**
 * Starts the example registry on 5758 (or any free port when that is taken and no port was asked for: `gantry demo`
 * follows the server wherever it runs, and `gantry dev` prints the address).
 * GANTRY_DEV_REGISTRY_TOKEN, when set, makes the API require that bearer token (shown as the server's credentials).
 */
export async function startExampleRegistry(
  context: { host: string; examplesDir: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<RegistryServer & { env: Record<string, string> }> {
  const onPort = claimDevPort(PORT, context.host, env);
  const token = env.GANTRY_DEV_REGISTRY_TOKEN || undefined;
  const { startRegistryServer } = await import('./server.js'); // the CLI reads DEV_REGISTRY_PORT without loading the server
  const server = await onPort((p) =>
    startRegistryServer({ dir: path.join(context.examplesDir, 'modules'), host: context.host, port: p, ...(token ? { token } : {}) }),
  );
  return Object.assign(server, { env: registryClientEnv(server.host, token) });
}

/**
 * What a client of the registry at `host` (`127.0.0.1:5758`) reads: the default host for addresses without one, and
 * the token when the server requires one, under the name Terraform's encoding gives the host (`.` → `_`, `-` → `__`;
 * a token applies to every port of its host).
 */
export function registryClientEnv(host: string, token?: string): Record<string, string> {
  const hostname = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return {
    GANTRY_REGISTRY_HOST: host,
    ...(token ? { [`GANTRY_TOKEN_${hostname.replace(/-/g, '__').replace(/\./g, '_')}`]: token } : {}),
  };
}

export const devServer: DevServerStarter = {
  name: 'registry',
  description: 'module registry serving examples/modules (modules.v1) on 127.0.0.1:5758',
  start: (context) => startExampleRegistry(context),
};
