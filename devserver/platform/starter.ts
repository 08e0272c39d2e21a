// How `gantry dev` starts the platform API: port 5761 (GANTRY_DEV_PLATFORM_PORT overrides it; 0 picks any free
// port; a taken default port falls back to a free one), the spec's limits at full length unless
// GANTRY_DEV_PLATFORM_WINDOW_SCALE shortens them, a personal token and a workflow token, and an app (a fresh RSA key
// pair, the private key written 0600 into the run's scratch folder) with one installation. The app protects the
// environment `production` of gantry/demo (a deployment there waits for its decision) and its webhook goes to
// GANTRY_DEV_PLATFORM_APP_WEBHOOK_URL (or where PATCH /app/hook/config points it later), signed with
// GANTRY_DEV_PLATFORM_APP_WEBHOOK_SECRET or a fresh secret printed as GANTRY_WEBHOOK_SECRET.
import { httpUrl } from '../kit/index.js';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../../lib/errors.js';
import type { DevServerStarter } from '../dev-server.js';
import { claimDevPort } from '../port.js';
import type { PlatformServer } from './server.js';

export const DEV_PLATFORM_PORT = 5761;
export const DEV_APP_ID = 1;
export const DEV_INSTALLATION_ID = 1;
/** The environment of gantry/demo the dev app protects. */
export const DEV_PROTECTED_ENVIRONMENT = 'production';
const WEBHOOK_URL_VARIABLE = 'GANTRY_DEV_PLATFORM_APP_WEBHOOK_URL';
const WEBHOOK_SECRET_VARIABLE = 'GANTRY_DEV_PLATFORM_APP_WEBHOOK_SECRET';

/** The dev app's webhook from the environment: a URL (http or https) or none, and its secret (a fresh one by default). */
export function devAppWebhook(env: NodeJS.ProcessEnv = process.env): { url?: string; secret: string } {
  const raw = env[WEBHOOK_URL_VARIABLE]?.trim();
  let url: string | undefined;
  if (raw) {
    if (!httpUrl(raw)) throw new UsageError(`${WEBHOOK_URL_VARIABLE} must be an http(s) URL, e.g. http://127.0.0.1:3000/hooks`);
    url = raw;
  }
  const secret = env[WEBHOOK_SECRET_VARIABLE] || randomBytes(20).toString('hex');
  return { ...(url ? { url } : {}), secret };
}

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
  const onPort = claimDevPort({ name: 'platform API', variable: 'GANTRY_DEV_PLATFORM_PORT', port: DEV_PLATFORM_PORT }, context.host, env);
  const windowScale = devWindowScale(env);
  const webhook = devAppWebhook(env);
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = path.join(context.stateDir, 'platform-app-private-key.pem');
  await writeFile(keyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
  const { startPlatformServer } = await import('./server.js');
  const server = await onPort((p) =>
    startPlatformServer({
      host: context.host,
      port: p,
      windowScale,
      apps: [{ id: DEV_APP_ID, publicKey, installations: [{ id: DEV_INSTALLATION_ID, account: 'gantry' }], webhook: { ...webhook, contentType: 'json' } }],
      environments: [{ repository: 'gantry/demo', name: DEV_PROTECTED_ENVIRONMENT, protectionRules: [{ appId: DEV_APP_ID }] }],
    }),
  );
  const token = server.issueToken({ kind: 'personal', login: 'dev' });
  const workflowToken = server.issueToken({ kind: 'workflow', repository: 'gantry/demo' });
  return {
    ...server,
    credentials: {
      token,
      workflowToken,
      appId: String(DEV_APP_ID),
      installationId: String(DEV_INSTALLATION_ID),
      appPrivateKeyFile: keyFile,
      webhookSecret: webhook.secret,
      ...(webhook.url ? { appWebhookUrl: webhook.url } : {}),
    },
    env: {
      PLATFORM_API_URL: server.url,
      GANTRY_PLATFORM_TOKEN: token,
      GANTRY_APP_ID: String(DEV_APP_ID),
      GANTRY_APP_PRIVATE_KEY_FILE: keyFile,
      GANTRY_WEBHOOK_SECRET: webhook.secret,
    },
  };
}

export const devServer: DevServerStarter = {
  name: 'platform',
  description: 'platform REST API (rate limits enforced per identity, commit statuses, deployments, app tokens) on 127.0.0.1:5761, random tokens',
  start: (context) => startDevPlatform(context),
};
