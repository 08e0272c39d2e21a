import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SecretsServerOptions } from '../../../devserver/secrets/index.js';

export interface ServerProcess {
  url: string;
  rootToken: string;
  child: ChildProcess;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const script = fileURLToPath(new URL('./server-child.ts', import.meta.url));

export async function startServerProcess(options: SecretsServerOptions): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => line as string),
    once(child, 'exit').then(([code]) => {
      throw new Error(`the kv server process exited with ${code} before it was ready`);
    }),
  ]);
  const { url, rootToken } = JSON.parse(first) as { url: string; rootToken: string };
  return {
    url,
    rootToken,
    child,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}
