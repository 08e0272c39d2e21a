// Starts the embedded registry in a process of its own, so a benchmark measures the client's event loop only.
// Child mode (run directly): serve `dir` with `latencyMs` and print the server's URL and host as one JSON line.
import { startRegistryServer } from '../../devserver/registry/index.js';
import { runDirectly, serveAsChild, startServerChild } from './server-child.js';

export interface RegistryProcess {
  url: string;
  host: string;
  /** Requests the registry answered since the last clear (admin endpoint). */
  requests(): Promise<Array<{ path: string; status: number }>>;
  clearRequests(): Promise<void>;
  stop(): Promise<void>;
  /** CPU time (ms) the registry's process has used so far. */
  cpuMs(): number;
}

export async function startRegistryProcess(dir: string, latencyMs: number): Promise<RegistryProcess> {
  const { info, stop, cpuMs } = await startServerChild<{ url: string; host: string }>(import.meta.url, [dir, String(latencyMs)], 'registry');
  const { url, host } = info;
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
    stop,
    cpuMs,
  };
}

if (runDirectly(import.meta.url)) {
  const [dir, latency] = process.argv.slice(2);
  await serveAsChild(
    () => startRegistryServer({ dir: dir as string, latencyMs: Number(latency ?? 0) }),
    (server) => ({ url: server.url, host: server.host }),
  );
}
