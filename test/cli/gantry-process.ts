// `gantry …` in a process of its own, the built command (dist/lib/cli/main.js: `npm run build` first, as `pretest`
// does), for tests of long-running commands such as `gantry dev`: started until its output says it is ready, then
// stopped with SIGTERM as Ctrl-C would.
import { spawn, type ChildProcess } from 'node:child_process';
import { gantryBin } from '../analysis/gantry.js';

/** Spawns `gantry <args>` with a minimal environment (plus `env`), in `cwd` when given. */
export function spawnGantry(args: readonly string[], env: Record<string, string> = {}, cwd?: string): ChildProcess {
  return spawn(process.execPath, [gantryBin, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, GANTRY_LOG: 'warn', ...env },
    ...(cwd ? { cwd } : {}),
  });
}

/**
 * Starts `gantry <args>` and resolves once `ready` finds what it waits for in the output so far (anything but
 * undefined); rejects with the exit code and stderr if the command ends first.
 */
export function startGantry<T>(
  args: readonly string[],
  ready: (stdout: string) => T | undefined,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; value: T; stdout: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawnGantry(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      const value = ready(stdout);
      if (value !== undefined) resolve({ child, value, stdout: () => stdout });
    });
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => reject(new Error(`gantry ${args.join(' ')} exited with ${code}: ${stderr}`)));
  });
}

/** Runs `gantry <args>` to its end: its exit code and everything it printed. */
export async function runGantry(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnGantry(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await exited(child);
  return { code, stdout, stderr };
}

/** Resolves with the exit code once the process has ended. */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('close', (code) => resolve(code))));
}

/** Stops the process as Ctrl-C would and waits for it to end. */
export async function stopGantry(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const ended = exited(child);
  child.kill('SIGTERM');
  await ended;
}

/** What a finished `gantry` run printed and how it ended. */
export interface GantryRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built command (`dist/lib/cli/main.js`, as a user runs it) to its end with exactly `env` (plus PATH and
 * GANTRY_LOG=warn unless given; a value of undefined leaves the variable out); with `shell`, runs that bash line
 * instead, where "$NODE" "$GANTRY" is the command — for arguments that must reach it as raw bytes.
 */
export function runBuiltGantry(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  options: { cwd?: string; shell?: string } = {},
): Promise<GantryRun> {
  return new Promise((resolve, reject) => {
    const fullEnv = Object.fromEntries(
      Object.entries({ PATH: process.env.PATH, GANTRY_LOG: 'warn', ...env }).filter(([, v]) => v !== undefined),
    ) as NodeJS.ProcessEnv;
    const where = options.cwd ? { cwd: options.cwd } : {};
    const child = options.shell
      ? spawn('bash', ['--norc', '-c', options.shell], { env: { ...fullEnv, GANTRY: gantryBin, NODE: process.execPath }, ...where })
      : spawn(process.execPath, [gantryBin, ...args], { env: fullEnv, ...where });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
