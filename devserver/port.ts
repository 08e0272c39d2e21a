// The well-known port of a dev server, and what to do when it is taken: `gantry dev` and `gantry demo` must run
// while another copy (or anything else) holds the port, so an unasked-for port falls back to a free one.
import { ExitCode, GantryError, UsageError } from '../lib/errors.js';
import { getLogger } from '../lib/log.js';

/** The port named by `variable` in `env`, or `fallback`; 0 means any free port. */
export function devPort(variable: string, fallback: number, env: NodeJS.ProcessEnv = process.env): { port: number; explicit: boolean } {
  const raw = env[variable];
  if (raw === undefined || raw === '') return { port: fallback, explicit: false };
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new UsageError(`${variable} must be a port number (0-65535), got "${raw}"`);
  return { port: Number(raw), explicit: true };
}

/**
 * Starts a server on `port`. If the port is taken and was not asked for, any free port is used instead, with a warning
 * (`gantry dev` prints the address it got); a port asked for in `variable` that is taken is an error saying so.
 */
export async function startOnDevPort<S extends { url: string }>(
  options: { name: string; host: string; port: number; explicit: boolean; variable: string },
  start: (port: number) => Promise<S>,
): Promise<S> {
  try {
    return await start(options.port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    if (options.explicit || options.port === 0) {
      throw new GantryError(`port ${options.port} on ${options.host} is in use`, {
        code: 'DEV_PORT_IN_USE',
        exitCode: ExitCode.usage,
        hint: `stop what listens there, or set ${options.variable} to another port (0 for any free port)`,
        cause: error,
      });
    }
    const server = await start(0);
    getLogger().warn(`port ${options.port} is in use; the ${options.name} listens on ${server.url} instead`);
    return server;
  }
}

/** A dev server's well-known port: its name in messages, the variable that overrides it, the port itself. */
export interface DevPortSpec {
  name: string;
  variable: string;
  port: number;
}

/**
 * Reads and checks `spec.variable` now (a bad value is a usage error before anything else starts) and returns what
 * starts a server on that port later, as startOnDevPort does.
 */
export function claimDevPort(
  spec: DevPortSpec,
  host: string,
  env: NodeJS.ProcessEnv = process.env,
): <S extends { url: string }>(start: (port: number) => Promise<S>) => Promise<S> {
  const { port, explicit } = devPort(spec.variable, spec.port, env);
  return (start) => startOnDevPort({ name: spec.name, host, port, explicit, variable: spec.variable }, start);
}
