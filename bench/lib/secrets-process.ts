// Starts the embedded kv server in a process of its own, so a benchmark measures the client's event loop only.
// Child mode (run directly): start an in-memory server and print its URL and root token as one JSON line.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startSecretsServer } from '../../devserver/secrets/index.js';

export interface SecretsProcess {
  url: string;
  token: string;
  stop(): Promise<void>;
}

export async function startSecretsProcess(): Promise<SecretsProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the kv server process exited with ${code}`)));
  });
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  return {
    url,
    token,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startSecretsServer({});
  process.stdout.write(`${JSON.stringify({ url: server.url, token: server.rootToken })}\n`);
  process.on('SIGTERM', () => {
    void server.stop().then(() => process.exit(0));
  });
}
