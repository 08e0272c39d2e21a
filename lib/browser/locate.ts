import { expectOptions, expectString } from '../arguments.js';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ExitCode, GantryError, type ExitCodeValue } from '../errors.js';
import { missingToolHint } from '../system-packages.js';

/**
 * Chromium features switched off: the ones that call out (translation, optimization hints, media-router discovery,
 * autofill's server), and the omnibox's WebUI popups, which a headless Chromium renders all the same — a renderer of
 * their own that took about half of each launch's CPU (2.2 of 4.5 s on this machine, Chromium 156).
 */
const disabledFeatures = [
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'Translate',
  'OptimizationHints',
  'MediaRouter',
  'DialMediaRouteProvider',
  'AutofillServerCommunication',
];
const disableFeatures = '--disable-features=';

/**
 * Flags that keep a headless Chromium off the network except for the pages we ask for: without them it reaches out
 * for updates, sync, field trials and QUIC probes, which a closed network refuses many at a time.
 */
export const offlineChromeFlags: readonly string[] = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  `${disableFeatures}${disabledFeatures.join(',')}`,
];

/**
 * `offlineChromeFlags`, then `extra`. Chromium reads only the last `--disable-features`, so the features one in
 * `extra` names are added to ours rather than replacing them.
 */
export function chromeFlags(extra: readonly string[] = []): string[] {
  const isFeatures = (flag: string) => flag.startsWith(disableFeatures);
  const more = extra.filter(isFeatures).flatMap((flag) => flag.slice(disableFeatures.length).split(','));
  const features = [...new Set([...disabledFeatures, ...more.map((name) => name.trim()).filter(Boolean)])];
  return [...offlineChromeFlags.filter((flag) => !isFeatures(flag)), `${disableFeatures}${features.join(',')}`, ...extra.filter((flag) => !isFeatures(flag))];
}

const chromeCandidates = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
/** Every "not found" hint names the set-up command of scripts/system-packages.json and `gantry doctor`. */
const chromeHint = () => missingToolHint('chromium', 'set CHROME_PATH to a Chrome or Chromium binary');
const driverHint = () => missingToolHint('chromedriver', 'set CHROMEDRIVER_PATH to a chromedriver binary');

/**
 * The local browser (or its driver) is missing (exit 2: this machine cannot run the command, nothing was tried) or
 * could not be started (exit 3, `started: true`: the browser itself failed).
 */
export class BrowserLaunchError extends GantryError {
  constructor(message: string, options: { cause?: unknown; hint?: string; started?: boolean } = {}) {
    const exitCode: ExitCodeValue = options.started ? ExitCode.remote : ExitCode.usage;
    super(message, { code: 'BROWSER_LAUNCH', exitCode, hint: options.hint ?? chromeHint(), cause: options.cause });
  }
}

function expectPathArguments(where: string, explicit: unknown, env: unknown): void {
  if (explicit !== undefined && typeof explicit !== 'string') expectString(where, 'explicit', explicit, 'the path of a binary (or left out)');
  expectOptions(where, env, 'env');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function checked(path: string, describe: string, hint: string): string {
  if (!existsSync(path)) throw new BrowserLaunchError(`${describe} does not exist`, { hint });
  if (!isExecutable(path)) throw new BrowserLaunchError(`${describe} is not an executable file`, { hint });
  return path;
}

/** The browser: an explicit path (flag or config), else `CHROME_PATH`, else Debian's chromium, then the usual Chromes. */
export function resolveChromePath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  expectPathArguments('resolveChromePath', explicit, env);
  if (explicit) return checked(explicit, `the browser ${explicit} (--chrome-path, gantry:chromePath)`, chromeHint());
  if (env.CHROME_PATH) return checked(env.CHROME_PATH, `CHROME_PATH points at ${env.CHROME_PATH}, which`, chromeHint());
  const found = chromeCandidates.find(isExecutable);
  if (!found) throw new BrowserLaunchError(`no Chromium found (looked at ${chromeCandidates.join(', ')})`);
  return found;
}

/** The driver: an explicit path, else `CHROMEDRIVER_PATH`, else `/usr/bin/chromedriver`, then `chromedriver` on PATH. */
export function resolveChromeDriverPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  expectPathArguments('resolveChromeDriverPath', explicit, env);
  const chosen = explicit ?? env.CHROMEDRIVER_PATH;
  if (chosen) {
    if (!isExecutable(chosen)) throw new BrowserLaunchError(`the driver ${chosen} is not an executable file`, { hint: driverHint() });
    return chosen;
  }
  const candidates = [
    '/usr/bin/chromedriver',
    ...(env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, 'chromedriver')),
  ];
  const found = candidates.find(isExecutable);
  if (!found) throw new BrowserLaunchError('no chromedriver found (looked at /usr/bin/chromedriver and PATH)', { hint: driverHint() });
  return found;
}
