import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Outcome, Script } from './store-child.js';

const child = fileURLToPath(new URL('./store-child.ts', import.meta.url));

export interface ChildRun {
  outcomes: Outcome[];
  logs: string[];
  stdout: string;
  stderr: string;
  code: number | null;
}

/**
 * Runs `script` in a new Node process whose environment is exactly `env` plus PATH (the keyring peer's bus, HOME …;
 * nothing else inherited, so the developer's own keyring and config are never touched).
 */
export function runStoreChild(script: Script, env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const clean: NodeJS.ProcessEnv = { PATH: process.env.PATH };
    for (const [name, value] of Object.entries(env)) if (value !== undefined) clean[name] = value;
    const proc = spawn(process.execPath, ['--import', 'tsx', child, JSON.stringify(script)], { env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the store child did not finish within ${timeoutMs} ms: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    proc.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        const parsed = JSON.parse(line) as { outcomes: Outcome[]; logs: string[] };
        resolve({ ...parsed, stdout, stderr, code });
      } catch {
        reject(new Error(`the store child printed no result (exit ${code}): ${stderr.slice(-2000)} ${stdout.slice(-2000)}`));
      }
    });
  });
}
