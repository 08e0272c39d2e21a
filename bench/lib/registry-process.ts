// Starts the embedded registry in a process of its own, so a benchmark measures the client's event loop only.
// Child mode (run directly): serve `dir` with `latencyMs` and print the server's URL and host as one JSON line.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startRegistryServer } from '../../devserver/registry/index.js';

export interface RegistryProcess {
  url: string;
  host: string;
  /** Requests the registry answered since the last clear (admin endpoint). */
  requests(): Promise<Array<{ path: string; status: number }>>;
  clearRequests(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRegistryProcess(dir: string, latencyMs: number): Promise<RegistryProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), dir, String(latencyMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the registry process exited with ${code}`)));
  });
  const { url, host } = JSON.parse(line) as { url: string; host: string };
  return {
    url,
    host,
    async requests() {
      const body = (await (await fetch(`${url}/_gantry/requests`)).json()) as unknown;
      return (Array.isArray(body) ? body : (body as { requests: unknown[] }).requests) as Array<{ path: string; status: number }>;
    },
    async clearRequests() {
      await fetch(`${url}/_gantry/requests`, { method: 'DELETE' });
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, latency] = process.argv.slice(2);
  const server = await startRegistryServer({ dir: dir as string, latencyMs: Number(latency ?? 0) });
  process.stdout.write(`${JSON.stringify({ url: server.url, host: server.host })}\n`);
  process.on('SIGTERM', () => {
    void server.stop().then(() => process.exit(0));
  });
}
