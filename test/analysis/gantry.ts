// Runs the built gantry command (dist/lib/cli/main.js: `npm run build` first, as `pretest` does — tsx compiling the
// sources cost each run a second of CPU), as a separate process with real exit codes and streams.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const gantryBin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

export interface GantryRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function startGantry(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<GantryRun> } {
  const child = spawn(process.execPath, [gantryBin, ...args], {
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

/**
 * Runs the command as `gantry … | head -1` after head has gone: its stdout is a pipe whose reader is already closed,
 * so every write to it fails with EPIPE. Stderr is collected as usual.
 */
export function gantryIntoClosedPipe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<GantryRun> {
  const { child, done } = startGantry(args, env);
  child.stdout?.destroy();
  return done;
}

/** Processes (not zombies) of a process group, from /proc: a driver or a browser left behind shows here. */
export function liveGroupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state !== 'Z' && state !== 'X' && Number(pgrp) === pgid) found.push(Number(entry));
  }
  return found;
}
