/**
 * BrowserCheck: opens a page in headless Chromium through WebDriver during the deployment, and fails the deployment
 * when the page does not load, its title does not match, or its HTTP status is not the expected one. It checks on
 * create and whenever an input changes (put the deployed version in `triggers` to check every release); a failed
 * check fails the operation and the state keeps the previous passing result.
 *
 * The provider object below (made by `resourceType` with `serializedProvider`, ./serialized.ts) is what Pulumi
 * serializes into `__provider`: its methods capture nothing and load the implementation (`browserCheckOperations`,
 * through `gantry/providers`) when the engine calls them. Browser paths are read at run time: CHROME_PATH /
 * CHROMEDRIVER_PATH, then the stack config gantry:chromePath / gantry:chromedriverPath, then /usr/bin/chromium and
 * /usr/bin/chromedriver.
 */
import type { BrowserCheckItem, BrowserCheckOptions, StatusSource } from '../lib/automation/index.js';
import { resourceType, type ArgsOf } from './resource.js';
import { runOnChangeMethods, type ProviderSettings } from './serialized.js';

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

export const browserCheck = resourceType<BrowserCheckInputs, BrowserCheckOutputs>()({
  type: 'gantry:automation:BrowserCheck',
  operations: 'browserCheckOperations',
  inputs: ['url', 'title', 'titleMatch', 'status', 'statusSource', 'pageLoadTimeoutMs', 'titleWaitMs', 'triggers'],
  outputs: ['passed', 'finalUrl', 'pageTitle', 'httpStatus', 'statusFrom', 'checks', 'browserVersion', 'checkedAt'],
  config: { chromePath: 'gantry:chromePath', chromedriverPath: 'gantry:chromedriverPath' },
  ...runOnChangeMethods,
});

export class BrowserCheck extends browserCheck.Resource {}

export const { provider: browserCheckProvider, inputKeys, operations: browserCheckOperations } = browserCheck;

export type BrowserCheckSettings = ProviderSettings<typeof browserCheckProvider>;
