import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { CapabilitiesRequest } from './client.js';
import { DriverProcessError } from './errors.js';

/** Flags that keep a headless Chromium off the network except for the pages we ask for. */
export const chromeFlags = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
] as const;

const chromeCandidates = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
const driverCandidates = ['/usr/bin/chromedriver'];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string[] {
  return (env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name));
}

/** The browser: an explicit path, else `CHROME_PATH`, else `/usr/bin/chromium`, then the usual Chrome locations. */
export function resolveChromePath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit ?? env.CHROME_PATH;
  if (chosen) {
    if (!isExecutable(chosen)) throw new DriverProcessError(`the browser ${chosen} is not an executable file`, { hint: 'set CHROME_PATH to a Chromium or Chrome binary' });
    return chosen;
  }
  const found = chromeCandidates.find(isExecutable);
  if (!found) {
    throw new DriverProcessError(`no Chromium found (looked at ${chromeCandidates.join(', ')})`, {
      hint: 'install it (Debian: apt-get install chromium chromium-driver) or set CHROME_PATH',
    });
  }
  return found;
}

/** The driver: an explicit path, else `CHROMEDRIVER_PATH`, else `/usr/bin/chromedriver`, then `chromedriver` on PATH. */
export function resolveChromeDriverPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit ?? env.CHROMEDRIVER_PATH;
  if (chosen) {
    if (!isExecutable(chosen)) throw new DriverProcessError(`the driver ${chosen} is not an executable file`, { hint: 'set CHROMEDRIVER_PATH to a chromedriver binary' });
    return chosen;
  }
  const candidates = [...driverCandidates, ...onPath('chromedriver', env)];
  const found = candidates.find(isExecutable);
  if (!found) {
    throw new DriverProcessError('no chromedriver found (looked at /usr/bin/chromedriver and PATH)', {
      hint: 'install it (Debian: apt-get install chromium-driver) or set CHROMEDRIVER_PATH',
    });
  }
  return found;
}

export interface ChromeCapabilityOptions {
  binary: string;
  /** A fresh, empty folder for this session's profile; removed by whoever created it. */
  userDataDir: string;
  /** Page-load timeout of the session, in ms. */
  pageLoadTimeoutMs?: number;
  /** More Chromium flags, after ours. */
  extraArgs?: readonly string[];
  /** Ask chromedriver for its legacy (pre-W3C) protocol (send these as `desiredCapabilities`); only for tests and old tools. */
  legacyProtocol?: boolean;
}

/** The new-session capabilities for headless Chromium under chromedriver. */
export function chromeCapabilities(options: ChromeCapabilityOptions): CapabilitiesRequest {
  return {
    alwaysMatch: {
      browserName: 'chrome',
      pageLoadStrategy: 'normal',
      // A page that opens alert() or confirm() must not block the check: such prompts are dismissed.
      unhandledPromptBehavior: 'dismiss',
      timeouts: { pageLoad: options.pageLoadTimeoutMs ?? 30_000, script: 10_000, implicit: 0 },
      'goog:chromeOptions': {
        binary: options.binary,
        args: [...chromeFlags, `--user-data-dir=${options.userDataDir}`, ...(options.extraArgs ?? [])],
        ...(options.legacyProtocol ? { w3c: false } : {}),
      },
    },
  };
}
