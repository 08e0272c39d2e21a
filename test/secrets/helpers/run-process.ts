// Runs a node command line in its own process with exactly the environment given (nothing inherited but what the
// caller passes) and `stdin` written then closed; resolves with the exit code and everything printed.
import { spawn } from 'node:child_process';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `base` overlaid with `overrides`, where an undefined value removes the variable. */
export function withEnv(base: NodeJS.ProcessEnv, overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export function runNode(args: string[], options: { env: NodeJS.ProcessEnv; stdin?: string; cwd?: string }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: options.env, ...(options.cwd ? { cwd: options.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}
