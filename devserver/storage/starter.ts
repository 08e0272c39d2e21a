// How `gantry dev` starts the storage API: port 5763 (GANTRY_DEV_STORAGE_PORT overrides it; 0 picks any free port; a
// taken default port falls back to a free one), its state in the run's scratch folder, a random bearer token printed
// as STORAGE_TOKEN beside STORAGE_BASE_URL; the access tokens of the run's authorization server are accepted too, when
// they carry a storage scope (asked of its tokeninfo endpoint).
import path from 'node:path';
import type { DevServerStarter } from '../dev-server.js';
import { claimDevPort } from '../port.js';
import type { StorageServer } from './server.js';

export const DEV_STORAGE_PORT = 5763;

export async function startDevStorage(
  context: { host: string; stateDir: string; started?: ReadonlyArray<{ name: string; url: string }> },
  env: NodeJS.ProcessEnv = process.env,
): Promise<StorageServer> {
  const onPort = claimDevPort({ name: 'storage API', variable: 'GANTRY_DEV_STORAGE_PORT', port: DEV_STORAGE_PORT }, context.host, env);
  const { startStorageServer } = await import('./server.js');
  // A `gantry auth login` against the run's authorization server works here too, as a Google login works on Drive.
  const oauth = context.started?.find((server) => server.name === 'oauth');
  const server = await onPort((p) =>
    startStorageServer({
      host: context.host,
      port: p,
      dir: path.join(context.stateDir, 'storage'),
      ...(oauth ? { tokenInfoUrl: `${oauth.url}/tokeninfo` } : {}),
    }),
  );
  const token = server.tokens[0]!;
  return { ...server, credentials: { token }, env: { STORAGE_BASE_URL: server.url, STORAGE_TOKEN: token } };
}

export const devServer: DevServerStarter = {
  name: 'storage',
  description:
    "storage API v2 (all 70 methods, resumable uploads, persisted in the run's scratch folder) on 127.0.0.1:5763, a random token or a device login's with a storage scope",
  start: (context) => startDevStorage(context),
};
