// Starts the embedded kv server in a process of its own, so a benchmark measures the client's event loop only.
// Child mode (run directly): start an in-memory server and print its URL and root token as one JSON line.
import { startSecretsServer } from '../../devserver/secrets/index.js';
import { runDirectly, serveAsChild, startServerChild } from './server-child.js';

export interface SecretsProcess {
  url: string;
  token: string;
  stop(): Promise<void>;
}

export async function startSecretsProcess(): Promise<SecretsProcess> {
  const { info, stop } = await startServerChild<{ url: string; token: string }>(import.meta.url, [], 'kv server');
  return { ...info, stop };
}

if (runDirectly(import.meta.url)) {
  await serveAsChild(
    () => startSecretsServer({}),
    (server) => ({ url: server.url, token: server.rootToken }),
  );
}
