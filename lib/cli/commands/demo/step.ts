import type { DevServer } from '../../../../devserver/index.js';
import type { Output } from '../../output.js';
import { CheckFailedError } from '../../../errors.js';
import type { SharedBrowser } from './shared-browser.js';

/**
 * A step of `gantry demo` and what it is given. Its own module so that the steps and demo.ts, which lists them, both
 * depend on it (demo.ts → demo/<step>.ts → demo/step.ts) rather than on each other.
 */

export interface DemoContext {
  servers: ReadonlyMap<string, DevServer>;
  out: Output;
  /** A scratch folder for this demo run (lock files, installed modules, reports). */
  workDir: string;
  examplesDir: string;
  json: boolean;
  /** The run's one headless Chromium, for the steps that open pages. */
  browser: SharedBrowser;
  /** What the steps before this one returned, by step name (a failed step: `{ error }`). */
  results?: Readonly<Record<string, unknown>>;
}

export interface DemoStep {
  name: string;
  /** What the step does, shown before it runs. */
  description: string;
  run(context: DemoContext): Promise<Record<string, unknown>>;
}

/**
 * How long each page may take to appear in the steps' headless Chromium (WebDriver implicit wait): seconds on a loaded
 * machine. A click on a form's button only starts its POST, so a step waits for the next page's element, never a time.
 */
export const pageWaitMs = 15_000;

/** The dev server a step works with, or the step fails saying that `what` is not running. */
export function runningServer(servers: DemoContext['servers'], name: string, what: string): DevServer {
  const server = servers.get(name);
  if (!server) throw new CheckFailedError(`${what} is not running`);
  return server;
}
