/**
 * The dev server's own analyser: runs the Lighthouse command line (a child process, which launches and kills its
 * own Chromium through chrome-launcher) and returns its JSON result. Independent of lib/analysis by design.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface LighthouseCliRequest {
  url: string;
  /** Lighthouse category ids. */
  categories: string[];
  desktop: boolean;
  locale?: string;
  timeoutMs?: number;
}

/**
 * Only what chrome-launcher does not pass already: its default flags (kept, as Lighthouse keeps them) switch off
 * background networking, component updates, sync and the first-run wizard.
 */
const CHROME_FLAGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic'];

export function runLighthouseCli(request: LighthouseCliRequest): Promise<Record<string, unknown>> {
  const cli = require.resolve('lighthouse/cli/index.js');
  const args = [
    cli,
    request.url,
    '--output=json',
    '--output-path=stdout',
    '--quiet',
    `--chrome-flags=${CHROME_FLAGS.join(' ')}`,
    `--only-categories=${request.categories.join(',')}`,
    ...(request.desktop ? ['--preset=desktop'] : []),
    ...(request.locale ? [`--locale=${request.locale}`] : []),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CHROME_PATH: process.env.CHROME_PATH ?? '/usr/bin/chromium' },
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(() => child.kill('SIGINT'), request.timeoutMs ?? 180_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const text = Buffer.concat(stdout).toString('utf8');
      // Lighthouse exits non-zero on a runtime error but still prints the result; the result is what we serve.
      try {
        resolve(JSON.parse(text) as Record<string, unknown>);
      } catch {
        reject(new Error(`lighthouse exited with ${code}: ${stderr.trim() || 'no output'}`));
      }
    });
  });
}
