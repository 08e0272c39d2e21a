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
import * as pulumi from '@pulumi/pulumi';
import { randomUUID } from 'node:crypto';
import { CheckFailedError } from '../lib/errors.js';
import {
  browserCheckProblems,
  renderBrowserCheck,
  runBrowserCheck,
  type BrowserCheckItem,
  type BrowserCheckOptions,
  type ExpectedStatus,
  type StatusSource,
  type TitleMatch,
} from '../lib/automation/index.js';
import { changedInputs, knownFailures, pickInputs } from './inputs.js';
import { serializedProvider, type Operations, type ProviderSettings } from './serialized.js';

export interface BrowserCheckArgs {
  /** An absolute http(s) URL. */
  url: pulumi.Input<string>;
  /** Text the page title must contain (or equal, with `titleMatch: 'equals'`). */
  title?: pulumi.Input<string>;
  titleMatch?: pulumi.Input<TitleMatch>;
  /** An exact status such as 200, `2xx` (the default) or `any`. */
  status?: pulumi.Input<ExpectedStatus>;
  /** `browser` (the navigation's own status, the default) or `http` (a separate GET). */
  statusSource?: pulumi.Input<StatusSource>;
  pageLoadTimeoutMs?: pulumi.Input<number>;
  titleWaitMs?: pulumi.Input<number>;
  /** Values whose change runs the check again, e.g. `{ version: site.version }`. */
  triggers?: pulumi.Input<Record<string, pulumi.Input<string>>>;
}

/** The check's own options as the library takes them, plus the values that re-run it. */
export interface BrowserCheckInputs extends Pick<
  BrowserCheckOptions,
  'url' | 'title' | 'titleMatch' | 'status' | 'statusSource' | 'pageLoadTimeoutMs' | 'titleWaitMs'
> {
  triggers?: Record<string, string>;
}

export interface BrowserCheckOutputs extends BrowserCheckInputs {
  /** Always true in state: a failing check fails the operation instead of being recorded. */
  passed: boolean;
  finalUrl: string | null;
  pageTitle: string | null;
  httpStatus: number | null;
  statusFrom: StatusSource | null;
  checks: BrowserCheckItem[];
  browserVersion: string | null;
  checkedAt: string;
}

const providerType = 'gantry:automation:BrowserCheck';

const browserCheckProvider = serializedProvider('browserCheckOperations', {
  config: { chromePath: 'gantry:chromePath', chromedriverPath: 'gantry:chromedriverPath' },
  withSettings: ['create', 'update'],
  withoutSettings: ['check', 'diff', 'read'],
});

export type BrowserCheckSettings = ProviderSettings<typeof browserCheckProvider>;

export class BrowserCheck extends pulumi.dynamic.Resource {
  declare readonly url: pulumi.Output<string>;
  declare readonly passed: pulumi.Output<boolean>;
  declare readonly finalUrl: pulumi.Output<string>;
  /** The page's title when it was checked. */
  declare readonly pageTitle: pulumi.Output<string>;
  /** The page's HTTP status when it was checked. */
  declare readonly httpStatus: pulumi.Output<number>;
  /** Where `httpStatus` came from: `browser` or `http`. */
  declare readonly statusFrom: pulumi.Output<StatusSource>;
  declare readonly checks: pulumi.Output<BrowserCheckItem[]>;
  declare readonly browserVersion: pulumi.Output<string>;
  declare readonly checkedAt: pulumi.Output<string>;

  constructor(name: string, args: BrowserCheckArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      browserCheckProvider,
      name,
      {
        url: args.url,
        title: args.title,
        titleMatch: args.titleMatch,
        status: args.status,
        statusSource: args.statusSource,
        pageLoadTimeoutMs: args.pageLoadTimeoutMs,
        titleWaitMs: args.titleWaitMs,
        triggers: args.triggers,
        passed: undefined,
        finalUrl: undefined,
        pageTitle: undefined,
        httpStatus: undefined,
        statusFrom: undefined,
        checks: undefined,
        browserVersion: undefined,
        checkedAt: undefined,
      },
      opts,
      providerType,
    );
  }
}

// ---- the implementation: not serialized; loaded in the plugin through `gantry/providers` ----

const inputKeys = ['url', 'title', 'titleMatch', 'status', 'statusSource', 'pageLoadTimeoutMs', 'titleWaitMs', 'triggers'] as const;

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

export const browserCheckOperations = {
  async check(_olds, news) {
    const inputs = pickInputs<BrowserCheckInputs>(news, inputKeys);
    const failures: pulumi.dynamic.CheckFailure[] = browserCheckProblems(inputs);
    const { triggers } = news;
    if (
      triggers !== undefined &&
      (typeof triggers !== 'object' || triggers === null || Array.isArray(triggers) || Object.values(triggers).some((v) => typeof v !== 'string'))
    ) {
      failures.push({ property: 'triggers', reason: 'triggers must map names to text values' });
    }
    // A value not known yet (the site's URL before the site exists, in a preview) is checked once known.
    return { inputs, failures: knownFailures(inputs, failures) };
  },

  async diff(_id, olds, news) {
    return { changes: changedInputs(olds, news, inputKeys).length > 0, replaces: [], deleteBeforeReplace: false };
  },

  async create(settings, inputs) {
    const outs = await runCheck(settings, pickInputs<BrowserCheckInputs>(inputs, inputKeys));
    return { id: `browsercheck-${randomUUID()}`, outs };
  },

  async read(id, props?) {
    // Refresh does not re-run the check (triggers do): the recorded result stays.
    return { id, props };
  },

  async update(settings, _id, _olds, news) {
    return { outs: await runCheck(settings, pickInputs<BrowserCheckInputs>(news, inputKeys)) };
  },
} satisfies Operations<typeof browserCheckProvider, BrowserCheckInputs, BrowserCheckOutputs>;
