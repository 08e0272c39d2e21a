// How `gantry dev` and `gantry demo` start the kv secrets server: port 8200 (the secrets service's usual port, or any
// free one when it is taken), state in the run's scratch folder, a random root token printed with the address.
import path from 'node:path';
import type { DevServerStarter } from '../dev-server.js';
import { claimDevPort, devPort, type DevPortSpec } from '../port.js';
import type { SecretsServer } from './server.js';

export const DEV_SECRETS_PORT = 8200;
const PORT: DevPortSpec = { name: 'kv secrets server', variable: 'GANTRY_DEV_SECRETS_PORT', port: DEV_SECRETS_PORT };

/** GANTRY_DEV_SECRETS_PORT overrides the port; 0 picks an ephemeral one. */
export function devSecretsPort(env: NodeJS.ProcessEnv = process.env): number {
  return devPort(PORT.variable, PORT.port, env).port;
}

export async function startDevSecrets(
  context: { host: string; stateDir: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<SecretsServer & { env: Record<string, string> }> {
  const onPort = claimDevPort(PORT, context.host, env);
  const { startSecretsServer } = await import('./server.js'); // the CLI reads DEV_SECRETS_PORT without loading the server
  const server = await onPort((p) => startSecretsServer({ host: context.host, port: p, dataFile: path.join(context.stateDir, 'secrets.json') }));
  return { ...server, env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken } };
}

export const devServer: DevServerStarter = {
  name: 'secrets',
  description: 'kv secrets server (secret/ kv v2, kv/ kv v1) on 127.0.0.1:8200, random root token',
  start: (context) => startDevSecrets(context),
};
