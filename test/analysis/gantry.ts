// Runs the gantry command from source (node --import tsx), as a separate process with real exit codes and streams.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface GantryRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function startGantry(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<GantryRun> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, GANTRY_LOG: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<GantryRun>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export function gantry(args: string[], env: NodeJS.ProcessEnv = {}): Promise<GantryRun> {
  return startGantry(args, env).done;
}
