// The implementation behind `browserCheckOperations` (./browser-check.ts), never serialized: the dynamic-provider plugin loads it
// through `gantry/providers` when the engine calls a method.
import { randomUUID } from 'node:crypto';
import { CheckFailedError } from '../lib/errors.js';
import { browserCheckProblems, renderBrowserCheck, runBrowserCheck } from '../lib/automation/index.js';
import { triggersProblems } from './inputs.js';
import { runOnChangeOperations } from './run-on-change.js';
import type { Operations } from './serialized.js';
import { browserCheckProvider, inputKeys, type BrowserCheckInputs, type BrowserCheckOutputs, type BrowserCheckSettings } from './browser-check.js';

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
