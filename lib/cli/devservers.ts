import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devServers, type DevContext, type DevServer } from '../devserver/index.js';
import { examplesDir } from '../paths.js';

export interface RunningDevServers {
  servers: DevServer[];
  context: DevContext;
  stop(): Promise<void>;
}

/** Starts every embedded dev server on loopback; on a failure, stops those already started. */
export async function startDevServers(options: { host?: string; keepState?: boolean } = {}): Promise<RunningDevServers> {
  const stateDir = await mkdtemp(join(tmpdir(), 'gantry-dev-'));
  const context: DevContext = { host: options.host ?? '127.0.0.1', examplesDir: examplesDir(), stateDir };
  const servers: DevServer[] = [];
  const stop = async () => {
    await Promise.allSettled(servers.reverse().map((server) => server.stop()));
    if (!options.keepState) await rm(stateDir, { recursive: true, force: true });
  };
  try {
    for (const starter of devServers) servers.push(await starter.start(context));
  } catch (error) {
    await stop();
    throw error;
  }
  return { servers, context, stop };
}

/** Resolves on Ctrl-C or SIGTERM, after `stop` has run. */
export function untilInterrupted(stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const handler = () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      void stop().then(resolve);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}
