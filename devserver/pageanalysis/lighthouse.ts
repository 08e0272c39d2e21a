/**
 * The dev server's own analyser: runs the Lighthouse command line (a child process, which launches and kills its
 * own Chromium through chrome-launcher) and returns its JSON result. Independent of lib/analysis by design.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

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

/**
 * chrome-launcher's --disable-features (the one Lighthouse launches with) plus the omnibox's WebUI popups, which a
 * headless Chromium renders all the same: a renderer of their own, half of a launch's CPU. Chromium reads the last
 * --disable-features only, so ours repeats the launcher's list rather than replacing it.
 */
let disabledFeatures: Promise<string> | undefined;
function disableFeaturesFlag(): Promise<string> {
  disabledFeatures ??= (async () => {
    const launcherPath = createRequire(require.resolve('lighthouse/package.json')).resolve('chrome-launcher');
    const { Launcher } = (await import(pathToFileURL(launcherPath).href)) as { Launcher: { defaultFlags(): string[] } };
    const prefix = '--disable-features=';
    const theirs =
      Launcher.defaultFlags()
        .find((flag) => flag.startsWith(prefix))
        ?.slice(prefix.length)
        .split(',') ?? [];
    return `${prefix}${[...theirs, 'WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'].join(',')}`;
  })().catch((error: unknown) => {
    disabledFeatures = undefined;
    throw error;
  });
  return disabledFeatures;
}

export async function runLighthouseCli(request: LighthouseCliRequest): Promise<Record<string, unknown>> {
  const cli = require.resolve('lighthouse/cli/index.js');
  const chromeFlags = [...CHROME_FLAGS, await disableFeaturesFlag()];
  const args = [
    cli,
    request.url,
    '--output=json',
    '--output-path=stdout',
    '--quiet',
    `--chrome-flags=${chromeFlags.join(' ')}`,
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
