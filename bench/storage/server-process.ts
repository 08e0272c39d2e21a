// The embedded storage server in a process of its own, so that the benchmark measures the uploading process only.
// Child mode (run directly): serve a folder on 127.0.0.1 and print `{ url, token }` as one JSON line on stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startStorageServer } from '../../devserver/storage/index.js';

export interface StorageProcess {
  url: string;
  token: string;
  admin(method: string, sub: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

export async function startStorageProcess(dir: string): Promise<StorageProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the storage server process exited with ${code}`)));
  });
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  return {
    url,
    token,
    async admin(method, sub, body) {
      const res = await fetch(`${url}/_gantry/${sub}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return res.json();
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startStorageServer({ dir: process.argv[2] as string });
  process.stdout.write(`${JSON.stringify({ url: server.url, token: server.tokens[0] })}\n`);
  process.on('SIGTERM', () => {
    void server.stop().then(() => process.exit(0));
  });
}
