// How `gantry dev` and `gantry demo` start the kv secrets server: port 8200 (the secrets service's usual port), state
// in the run's scratch folder, a random root token printed with the address.
import path from 'node:path';
import { startSecretsServer, type SecretsServer } from './server.js';

export const DEV_SECRETS_PORT = 8200;

/** GANTRY_DEV_SECRETS_PORT overrides the port; 0 picks an ephemeral one. */
export function devSecretsPort(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GANTRY_DEV_SECRETS_PORT;
  if (raw === undefined || raw === '') return DEV_SECRETS_PORT;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new Error(`GANTRY_DEV_SECRETS_PORT must be a port number (0-65535), got "${raw}"`);
  return Number(raw);
}

export async function startDevSecrets(context: { host: string; stateDir: string }): Promise<SecretsServer & { env: Record<string, string> }> {
  const port = devSecretsPort();
  try {
    const server = await startSecretsServer({ host: context.host, port, dataFile: path.join(context.stateDir, 'secrets.json') });
    return { ...server, env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken } };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`port ${port} on ${context.host} is in use: stop what listens there or set GANTRY_DEV_SECRETS_PORT (0 for any free port)`);
    }
    throw error;
  }
}
