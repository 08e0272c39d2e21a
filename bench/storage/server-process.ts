// The embedded storage server in a process of its own, so that the benchmark measures the uploading process only.
// Child mode (run directly): serve a folder on 127.0.0.1 and print `{ url, token }` as one JSON line on stdout.
import { startStorageServer } from '../../devserver/storage/index.js';
import { runDirectly, serveAsChild, startServerChild } from '../lib/server-child.js';

export interface StorageProcess {
  url: string;
  token: string;
  admin(method: string, sub: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

export async function startStorageProcess(dir: string): Promise<StorageProcess> {
  const { info, stop } = await startServerChild<{ url: string; token: string }>(import.meta.url, [dir], 'storage server');
  const { url } = info;
  return {
    ...info,
    async admin(method, sub, body) {
      const res = await fetch(`${url}/_gantry/${sub}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return res.json();
    },
    stop,
  };
}

if (runDirectly(import.meta.url)) {
  await serveAsChild(
    () => startStorageServer({ dir: process.argv[2] as string }),
    (server) => ({ url: server.url, token: server.tokens[0] }),
  );
}
