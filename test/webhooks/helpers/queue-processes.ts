// Processes for the Redis queue tests: webhook workers (helpers/queue-worker.ts) and `gantry hooks …` commands, each
// started until it says it is ready. The machine may be busy and tsx compiles on start, so readiness gets a minute.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawnGantry } from '../../cli/gantry-process.js';

const workerScript = fileURLToPath(new URL('./queue-worker.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export const READY_TIMEOUT_MS = 60_000;

export interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  ended: Promise<number | string | null>;
}

/** Waits until `ready` finds what it looks for in stdout or stderr; rejects when the process ends first or after the timeout. */
export function untilReady<T>(
  child: ChildProcess,
  what: string,
  ready: (out: { stdout: string; stderr: string }) => T | undefined,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<Started & { value: T }> {
  let stdout = '';
  let stderr = '';
  const ended = new Promise<number | string | null>((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  return new Promise((resolve, reject) => {
    let done = false;
    const check = () => {
      if (done) return;
      const value = ready({ stdout, stderr });
      if (value === undefined) return;
      done = true;
      clearTimeout(timer);
      resolve({ child, value, stdout: () => stdout, stderr: () => stderr, ended });
    };
    const timer = setTimeout(() => {
      done = true;
      child.kill('SIGKILL');
      reject(new Error(`${what} was not ready within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      check();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      check();
    });
    void ended.then((code) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`${what} ended (${code}) before it was ready; stderr: ${stderr.slice(-2000)}`));
    });
  });
}

export interface WorkerOptions {
  name: string;
  url: string;
  prefix: string;
  logKey: string;
  handlerMs?: number;
  concurrency?: number;
  leaseMs?: number;
  retryMs?: number;
  maxAttempts?: number;
}

/** A worker process (helpers/queue-worker.ts) taking jobs from the queue at `url` with `prefix`. */
export async function startQueueWorker(options: WorkerOptions): Promise<Started> {
  const child = spawn(process.execPath, ['--import', tsx, workerScript], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      WORKER_NAME: options.name,
      QUEUE_URL: options.url,
      QUEUE_PREFIX: options.prefix,
      LOG_KEY: options.logKey,
      HANDLER_MS: String(options.handlerMs ?? 200),
      CONCURRENCY: String(options.concurrency ?? 2),
      LEASE_MS: String(options.leaseMs ?? 1_500),
      RETRY_MS: String(options.retryMs ?? 200),
      MAX_ATTEMPTS: String(options.maxAttempts ?? 3),
    },
  });
  return untilReady(child, `worker ${options.name}`, ({ stdout }) => (/^ready$/m.test(stdout) ? true : undefined));
}

/** `gantry <args>` until `ready` finds its line (GANTRY_LOG=info, so the info lines on stderr count). */
export function startGantryCommand<T>(
  args: readonly string[],
  env: Record<string, string>,
  ready: (out: { stdout: string; stderr: string }) => T | undefined,
): Promise<Started & { value: T }> {
  return untilReady(spawnGantry(args, { GANTRY_LOG: 'info', ...env }), `gantry ${args.join(' ')}`, ready);
}

/** `gantry <args>` to its end: exit code, stdout, stderr. */
export async function runGantryCommand(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = READY_TIMEOUT_MS,
): Promise<{ code: number | string | null; stdout: string; stderr: string }> {
  const child = spawnGantry(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | string | null>((resolve) => child.once('close', (c, signal) => resolve(c ?? signal)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Stops a process with `signal` (SIGTERM by default) and waits for its end. */
export async function stopProcess(started: Started | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string | null> {
  if (!started) return null;
  if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill(signal);
  return started.ended;
}
