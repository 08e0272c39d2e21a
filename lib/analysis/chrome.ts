/**
 * Starts Chromium for one analysis run and guarantees it goes away: the process group is killed and the temporary
 * profile removed on close, on failure, on process exit and on SIGINT/SIGTERM (Ctrl-C).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserLaunchError, chromeFlags, killProcessesNaming, registerEmergencyCleanup, resolveChromePath } from '../browser/index.js';

export { BrowserLaunchError, resolveChromePath };

/** Quiet, deterministic browser: the usual flags for measuring pages (timers not throttled, no extensions; the
 * features measuring does without are switched off with the offline flags' own). */
const MEASUREMENT_FLAGS = [
  '--no-default-browser-check',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-client-side-phishing-detection',
  '--disable-domain-reliability',
  '--disable-background-timer-throttling',
  '--disable-backgrounding-occluded-windows',
  '--disable-renderer-backgrounding',
  '--metrics-recording-only',
  '--mute-audio',
  '--password-store=basic',
  '--use-mock-keychain',
];

export interface Browser {
  /** The DevTools port on 127.0.0.1. */
  port: number;
  pid: number;
  profileDir: string;
  close(): Promise<void>;
}

interface Live {
  child: ChildProcess;
  profileDir: string;
}

const live = new Set<Live>();

function killSync(entry: Live): void {
  if (entry.child.exitCode === null && entry.child.signalCode === null && entry.child.pid !== undefined) {
    try {
      process.kill(-entry.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  killProcessesNaming(entry.profileDir);
  // Killed helpers can still be writing for a moment: remove, and remove again until the folder stays gone.
  // This runs in exit and signal handlers, where nothing asynchronous runs, so the short waits block.
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; attempt < 20; attempt += 1) {
    try {
      rmSync(entry.profileDir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // a file appeared while removing: try again
    }
    if (!existsSync(entry.profileDir)) return;
    Atomics.wait(pause, 0, 0, 50);
  }
}

/** How many browsers this process has running right now (tests check that it returns to 0). */
export function liveBrowserCount(): number {
  return live.size;
}

export interface LaunchOptions {
  chromePath?: string;
  /** Flags added after the offline and measurement flags. */
  extraFlags?: readonly string[];
  startTimeoutMs?: number;
}

export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  const chromePath = resolveChromePath(options.chromePath);
  const profileDir = mkdtempSync(join(tmpdir(), 'gantry-chrome-'));
  const args = [
    ...chromeFlags([...MEASUREMENT_FLAGS, ...(options.extraFlags ?? [])]),
    `--user-data-dir=${profileDir}`,
    '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=0',
    'about:blank',
  ];
  // Its own process group, so that closing it also takes down the renderer, GPU and zygote processes.
  const child = spawn(chromePath, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  const entry: Live = { child, profileDir };
  live.add(entry);
  const unregister = registerEmergencyCleanup(() => killSync(entry));

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
        const timer = setTimeout(() => {
          try {
            process.kill(-(child.pid as number), 'SIGKILL');
          } catch {
            // already gone
          }
        }, 3_000);
        await exited;
        clearTimeout(timer);
      }
      // The browser's helpers (crash handler, utility processes) can outlive the main process by a moment and write
      // into the profile; end the whole group before removing it, and remove it again if a straggler recreated it.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone
      }
      killProcessesNaming(profileDir);
      child.stderr?.destroy();
      live.delete(entry);
      unregister();
      for (let attempt = 0; attempt < 3; attempt += 1) {
        await rm(profileDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
        await new Promise((resolve) => setTimeout(resolve, 150));
        if (!existsSync(profileDir)) break;
      }
    })();
    return closed;
  };

  try {
    const port = await new Promise<number>((resolve, reject) => {
      let stderr = '';
      const timeout = setTimeout(
        () =>
          reject(
            new BrowserLaunchError(
              `Chromium (${chromePath}) did not open its DevTools port within ${options.startTimeoutMs ?? 30_000} ms: ${stderr.trim().slice(-500)}`,
              { started: true },
            ),
          ),
        options.startTimeoutMs ?? 30_000,
      );
      child.on('error', (error) => {
        clearTimeout(timeout);
        reject(new BrowserLaunchError(`could not start ${chromePath}: ${error.message}`, { cause: error }));
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timeout);
        reject(
          new BrowserLaunchError(`Chromium (${chromePath}) exited before it was ready (${signal ?? `code ${code}`}): ${stderr.trim().slice(-500)}`, {
            started: true,
          }),
        );
      });
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-8_192);
        const match = /DevTools listening on ws:\/\/[^:/]+:(\d+)\//.exec(stderr);
        if (match) {
          clearTimeout(timeout);
          resolve(Number(match[1]));
        }
      });
    });
    // Keep draining stderr so that a chatty browser never blocks on a full pipe.
    child.stderr?.resume();
    return { port, pid: child.pid as number, profileDir, close };
  } catch (error) {
    await close();
    throw error;
  }
}
