// How `gantry dev` starts the platform API: port 5761 (GANTRY_DEV_PLATFORM_PORT overrides it; 0 picks any free
// port; a taken default port falls back to a free one), the spec's limits at full length unless
// GANTRY_DEV_PLATFORM_WINDOW_SCALE shortens them, a personal token and a workflow token, and an app (a fresh RSA key
// pair, the private key written 0600 into the run's scratch folder) with one installation.
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { devPort, startOnDevPort } from '../port.js';
import type { PlatformServer } from './server.js';

export const DEV_PLATFORM_PORT = 5761;
const PORT_VARIABLE = 'GANTRY_DEV_PLATFORM_PORT';
export const DEV_APP_ID = 1;
export const DEV_INSTALLATION_ID = 1;

/** GANTRY_DEV_PLATFORM_WINDOW_SCALE: a number above 0 multiplying every limit window; 1 when unset. */
export function devWindowScale(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GANTRY_DEV_PLATFORM_WINDOW_SCALE;
  if (raw === undefined || raw === '') return 1;
  return parseWindowScale(raw, 'GANTRY_DEV_PLATFORM_WINDOW_SCALE');
}

export function parseWindowScale(raw: string, name: string): number {
  const value = Number(raw.trim());
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0 || value > 1000) {
    throw new UsageError(`${name} must be a number above 0 (e.g. 0.01 makes the hour 36 s), got "${raw}"`);
  }
  return value;
}

export async function startDevPlatform(context: { host: string; stateDir: string }, env: NodeJS.ProcessEnv = process.env): Promise<PlatformServer> {
  const { port, explicit } = devPort(PORT_VARIABLE, DEV_PLATFORM_PORT, env);
  const windowScale = devWindowScale(env);
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = path.join(context.stateDir, 'platform-app-private-key.pem');
  await writeFile(keyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
  const { startPlatformServer } = await import('./server.js');
  const server = await startOnDevPort({ name: 'platform API', host: context.host, port, explicit, variable: PORT_VARIABLE }, (p) =>
    startPlatformServer({
      host: context.host,
      port: p,
      windowScale,
      apps: [{ id: DEV_APP_ID, publicKey, installations: [{ id: DEV_INSTALLATION_ID, account: 'gantry' }] }],
    }));
  const token = server.issueToken({ kind: 'personal', login: 'dev' });
  const workflowToken = server.issueToken({ kind: 'workflow', repository: 'gantry/demo' });
  return {
    ...server,
    credentials: { token, workflowToken, appId: String(DEV_APP_ID), installationId: String(DEV_INSTALLATION_ID), appPrivateKeyFile: keyFile },
    env: { PLATFORM_API_URL: server.url, GANTRY_PLATFORM_TOKEN: token, GANTRY_APP_ID: String(DEV_APP_ID), GANTRY_APP_PRIVATE_KEY_FILE: keyFile },
  };
}
