/**
 * BrowserCheck: opens a page in headless Chromium through WebDriver during the deployment, and fails the deployment
 * when the page does not load, its title does not match, or its HTTP status is not the expected one. It checks on
 * create and whenever an input changes (put the deployed version in `triggers` to check every release); a failed
 * check fails the operation and the state keeps the previous passing result.
 *
 * The provider object below (made by `serializedProvider`, ./serialized.ts) is what Pulumi serializes into
 * `__provider`: its methods capture nothing and load the implementation (`browserCheckOperations`, through
 * `gantry/providers`) when the engine calls them. Browser paths are read at run time: CHROME_PATH /
 * CHROMEDRIVER_PATH, then the stack config gantry:chromePath / gantry:chromedriverPath, then /usr/bin/chromium and
 * /usr/bin/chromedriver.
 */
import { randomUUID } from 'node:crypto';
import { CheckFailedError } from '../lib/errors.js';
import {
  browserCheckProblems,
  renderBrowserCheck,
  runBrowserCheck,
  type BrowserCheckItem,
  type BrowserCheckOptions,
  type StatusSource,
} from '../lib/automation/index.js';
import { triggersProblems } from './inputs.js';
import { dynamicResource, type ArgsOf } from './resource.js';
import { runOnChangeOperations } from './run-on-change.js';
import { runOnChangeMethods, serializedProvider, type Operations, type ProviderSettings } from './serialized.js';

/** The check's own options as the library takes them, plus the values that re-run it. */
export interface BrowserCheckInputs extends Pick<
  BrowserCheckOptions,
  'url' | 'title' | 'titleMatch' | 'status' | 'statusSource' | 'pageLoadTimeoutMs' | 'titleWaitMs'
> {
  /** Values whose change runs the check again, e.g. `{ version: site.version }`. */
  triggers?: Record<string, string>;
}

export type BrowserCheckArgs = ArgsOf<BrowserCheckInputs>;

export interface BrowserCheckOutputs extends BrowserCheckInputs {
  /** Always true in state: a failing check fails the operation instead of being recorded. */
  passed: boolean;
  finalUrl: string | null;
  /** The page's title when it was checked. */
  pageTitle: string | null;
  /** The page's HTTP status when it was checked. */
  httpStatus: number | null;
  /** Where `httpStatus` came from: `browser` or `http`. */
  statusFrom: StatusSource | null;
  checks: BrowserCheckItem[];
  browserVersion: string | null;
  checkedAt: string;
}

const browserCheckProvider = serializedProvider('browserCheckOperations', {
  config: { chromePath: 'gantry:chromePath', chromedriverPath: 'gantry:chromedriverPath' },
  ...runOnChangeMethods,
});

export type BrowserCheckSettings = ProviderSettings<typeof browserCheckProvider>;

const inputKeys = ['url', 'title', 'titleMatch', 'status', 'statusSource', 'pageLoadTimeoutMs', 'titleWaitMs', 'triggers'] as const;

export class BrowserCheck extends dynamicResource<BrowserCheckArgs, BrowserCheckOutputs>(browserCheckProvider, {
  type: 'gantry:automation:BrowserCheck',
  inputs: inputKeys,
  outputs: ['passed', 'finalUrl', 'pageTitle', 'httpStatus', 'statusFrom', 'checks', 'browserVersion', 'checkedAt'],
}) {}

// ---- the implementation: not serialized; loaded in the plugin through `gantry/providers` ----

async function runCheck(settings: BrowserCheckSettings | undefined, inputs: BrowserCheckInputs): Promise<BrowserCheckOutputs> {
  const { triggers: _triggers, ...options } = inputs;
  // Environment first, then the stack configuration; the library falls back to the Debian paths.
  const chromePath = process.env.CHROME_PATH || settings?.chromePath;
  const driverPath = process.env.CHROMEDRIVER_PATH || settings?.chromedriverPath;
  const result = await runBrowserCheck({
    ...options,
    driverOptions: { ...(chromePath ? { chromePath } : {}), ...(driverPath ? { driverPath } : {}) },
  });
  if (!result.passed) {
    throw new CheckFailedError(`browser check of ${result.url} failed: ${result.reason}\n${renderBrowserCheck(result)}`);
  }
  return {
    ...inputs,
    passed: true,
    finalUrl: result.finalUrl,
    pageTitle: result.title,
    httpStatus: result.status,
    statusFrom: result.statusSource,
    checks: result.checks,
    browserVersion: result.browserVersion,
    checkedAt: result.checkedAt,
  };
}

export const browserCheckOperations = runOnChangeOperations({
  keys: inputKeys,
  // A value not known yet (the site's URL before the site exists, in a preview) is checked once known.
  problems: (inputs: BrowserCheckInputs) => [...browserCheckProblems(inputs), ...triggersProblems(inputs.triggers)],
  run: runCheck,
  idOf: () => `browsercheck-${randomUUID()}`,
}) satisfies Operations<typeof browserCheckProvider, BrowserCheckInputs, BrowserCheckOutputs>;
