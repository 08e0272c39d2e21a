// A real Redis peer for tests: Debian's redis-server (scripts/system-packages.json, installed by `npm run setup`) on
// 127.0.0.1 with a free port, in its own process, nothing saved to disk (unless persistIn names a folder for an append-only file), stopped by stop(). Not a mock. A test that
// needs it fails — never skips — when redis-server is missing, with the command that installs it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisPeer {
  /** redis://[:password@]127.0.0.1:port */
  url: string;
  port: number;
  password: string | undefined;
  /** The server process (kill it to see how a client behaves when Redis is down). */
  process: ChildProcess;
  /** SIGKILL by default (a crash); SIGTERM is a clean shutdown, as `systemctl restart redis` does, which writes the append-only file out. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Throws a clear error when redis-server is not installed. */
export function requireRedisServer(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'Redis peer: redis-server is not installed (needed by the shared-budget tests) — run `npm run setup` (or `sudo apt-get install -y redis-server`)',
    );
  }
}

function startOnce(port: number, password: string | undefined, timeoutMs: number, persistIn?: string): Promise<RedisPeer> {
  // persistIn: an append-only file in that folder, kept by stop(), so a server started again on it has what was there.
  const dir = persistIn ?? mkdtempSync(join(tmpdir(), 'gantry-redis-'));
  const persistence = persistIn === undefined ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', 'everysec'];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', dir, '--daemonize', 'no', '--loglevel', 'notice'];
  if (password !== undefined) args.push('--requirepass', password);
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    }
    if (persistIn === undefined) rmSync(dir, { recursive: true, force: true });
  };
  return new Promise((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (error) {
        void stop().then(() => reject(error));
        return;
      }
      const auth = password !== undefined ? `:${encodeURIComponent(password)}@` : '';
      resolve({ url: `redis://${auth}127.0.0.1:${port}`, port, password, process: child, stop });
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) finish();
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      finish(new Error(`Redis peer: redis-server exited (${signal ?? `code ${code}`}) before listening: ${output.slice(-2000)}`));
    const timer = setTimeout(() => finish(new Error(`Redis peer: redis-server did not listen within ${timeoutMs} ms: ${output.slice(-2000)}`)), timeoutMs);
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', onExit);
    child.once('error', (error) => finish(new Error(`Redis peer: could not start redis-server: ${error.message}`)));
  });
}

/** Starts redis-server on a free port of 127.0.0.1 (tries again if another process took the port meanwhile). */
export async function startRedis(options: { password?: string; timeoutMs?: number; port?: number; persistIn?: string } = {}): Promise<RedisPeer> {
  requireRedisServer();
  // A given port: the same server again after a stop (to see a client recover), no second try on another port.
  if (options.port !== undefined) return startOnce(options.port, options.password, options.timeoutMs ?? 10_000, options.persistIn);
  let last: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      return await startOnce(await freePort(), options.password, options.timeoutMs ?? 10_000, options.persistIn);
    } catch (error) {
      last = error as Error;
      if (!/Address already in use/i.test(last.message)) throw last;
    }
  }
  throw last!;
}
