/**
 * PageAnalysisGate: a deployment gate on page-analysis scores. It analyses the page on create and whenever an input
 * changes (put the deployed version in `triggers` to gate every release, `dependsOn` the site so it runs after the
 * deploy). Below a threshold the operation fails with the table of checks, the deployment stops, and the state
 * keeps the previous passing scores. A pass records `scores`, `checks`, `reportUrl` and `analyzedAt`.
 *
 * The provider object (made by `serializedProvider`, ./serialized.ts) is what Pulumi serializes into `__provider`:
 * its methods capture nothing and load the implementation (`pageAnalysisGateOperations`, through
 * `gantry/providers`) when the engine calls them. The API base URL and key are read at run time:
 * PAGEANALYSIS_BASE_URL, PAGEANALYSIS_API_KEY / PAGEANALYSIS_TOKEN, then the stack config
 * gantry:pageanalysisBaseUrl, gantry:pageanalysisApiKey (secret); Chromium from CHROME_PATH, then gantry:chromePath.
 * S3 credentials for `reportS3` come from the usual AWS environment; `reportStorage` publishes to the storage API at
 * STORAGE_BASE_URL (else gantry:storageBaseUrl) with STORAGE_TOKEN from the plugin's environment only, never an input
 * or state.
 */
import type * as pulumi from '@pulumi/pulumi';
import { randomUUID } from 'node:crypto';
import {
  AGGREGATION_METHODS,
  archiveReportsToS3,
  auditThresholdsFromInput,
  categoryThresholdsFromRecord,
  checkReportFolder,
  checkStorageFolderId,
  createEngine,
  gateRunError,
  parseAggregationMethod,
  parseS3Url,
  parseStrategy,
  publishReportsToStorage,
  runGate,
  type CheckResult,
  type StorageReports,
  type Threshold,
} from '../lib/analysis/index.js';
import { triggersProblems } from './inputs.js';
import { dynamicResource, type ArgsOf } from './resource.js';
import { runOnChangeOperations } from './run-on-change.js';
import { runOnChangeMethods, serializedProvider, type Operations, type ProviderSettings } from './serialized.js';
import { storageConfig, withStorage } from './storage-shared.js';

export interface PageAnalysisGateInputs {
  /** The page to analyse: an absolute http(s) URL. */
  url: string;
  /** Minimum category scores, a fraction 0–1 or a whole percentage 2–100: `{ performance: 0.9, accessibility: 95 }`. */
  thresholds: Record<string, number>;
  /** Limits on audit values: `{ 'largest-contentful-paint': 2500 }` (maxima) or `['cumulative-layout-shift<0.1']`. */
  audits?: Record<string, number> | string[];
  /** Runs, aggregated (default 3). */
  runs?: number;
  /** `median-run` (default), `median`, `optimistic` or `pessimistic`. */
  aggregation?: string;
  /** `desktop` (default) or `mobile`. */
  strategy?: string;
  /** `local` (Lighthouse here) or `api`; `api` when a base URL is configured. */
  engine?: string;
  /** Archive the reports to `s3://bucket/prefix`; `reportUrl` then points at the representative report. */
  reportS3?: string;
  /**
   * Publish the reports into this folder of the storage API (its id; the folder must exist); `storageReports` then
   * lists the files and their links, and `reportUrl` is the HTML report's link unless `reportS3` set it.
   */
  reportStorage?: string;
  /** Values whose change runs the gate again, e.g. `{ version: site.version }`. */
  triggers?: Record<string, string>;
}

export type PageAnalysisGateArgs = ArgsOf<PageAnalysisGateInputs>;

export type GateCheck = Omit<CheckResult, 'url'>;

export interface PageAnalysisGateOutputs extends PageAnalysisGateInputs {
  /** Always true in state: a failing gate fails the operation instead of being recorded. */
  passed: boolean;
  /** Aggregated category scores, 0–1. */
  scores: Record<string, number | null>;
  checks: GateCheck[];
  reportUrl: string | null;
  /** With `reportStorage`: the folder, the representative link and every file published (id, title, link). */
  storageReports: StorageReports | null;
  analyzedAt: string;
  /** The engine that produced the scores (`local` or `api`) and its version. */
  engineUsed: string;
  engineVersion: string | null;
}

const pageAnalysisGateProvider = serializedProvider('pageAnalysisGateOperations', {
  config: { baseUrl: 'gantry:pageanalysisBaseUrl', apiKey: 'gantry:pageanalysisApiKey', chromePath: 'gantry:chromePath', ...storageConfig },
  ...runOnChangeMethods,
});

export type PageAnalysisGateSettings = ProviderSettings<typeof pageAnalysisGateProvider>;

const inputKeys = ['url', 'thresholds', 'audits', 'runs', 'aggregation', 'strategy', 'engine', 'reportS3', 'reportStorage', 'triggers'] as const;

export class PageAnalysisGate extends dynamicResource<PageAnalysisGateArgs, PageAnalysisGateOutputs>(pageAnalysisGateProvider, {
  type: 'gantry:analysis:PageAnalysisGate',
  inputs: inputKeys,
  outputs: ['passed', 'scores', 'checks', 'reportUrl', 'storageReports', 'analyzedAt', 'engineUsed', 'engineVersion'],
}) {}

// ---- the implementation: not serialized; loaded in the plugin through `gantry/providers` ----

function problem(property: string, run: () => unknown): pulumi.dynamic.CheckFailure[] {
  try {
    run();
    return [];
  } catch (error) {
    return [{ property, reason: error instanceof Error ? error.message : String(error) }];
  }
}

function thresholdsOf(inputs: PageAnalysisGateInputs): Threshold[] {
  return [...categoryThresholdsFromRecord(inputs.thresholds ?? {}), ...(inputs.audits ? auditThresholdsFromInput(inputs.audits) : [])];
}

function inputProblems(inputs: PageAnalysisGateInputs): pulumi.dynamic.CheckFailure[] {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  let url: URL | undefined;
  try {
    url = new URL(String(inputs.url));
  } catch {
    failures.push({ property: 'url', reason: `"${String(inputs.url)}" is not an absolute URL` });
  }
  if (url && url.protocol !== 'http:' && url.protocol !== 'https:') failures.push({ property: 'url', reason: 'only http and https pages can be analysed' });
  if (typeof inputs.thresholds !== 'object' || inputs.thresholds === null || Array.isArray(inputs.thresholds)) {
    failures.push({ property: 'thresholds', reason: 'thresholds map categories to minimum scores, e.g. { performance: 0.9 }' });
  } else {
    failures.push(...problem('thresholds', () => categoryThresholdsFromRecord(inputs.thresholds)));
  }
  const { audits } = inputs;
  if (audits !== undefined) failures.push(...problem('audits', () => auditThresholdsFromInput(audits)));
  if (inputs.runs !== undefined && (!Number.isInteger(inputs.runs) || inputs.runs < 1 || inputs.runs > 25))
    failures.push({ property: 'runs', reason: 'runs must be a whole number from 1 to 25' });
  if (inputs.aggregation !== undefined && !parseAggregationMethod(String(inputs.aggregation)))
    failures.push({ property: 'aggregation', reason: `aggregation is one of ${AGGREGATION_METHODS.join(', ')}` });
  if (inputs.strategy !== undefined && !parseStrategy(String(inputs.strategy)))
    failures.push({ property: 'strategy', reason: 'strategy is mobile or desktop' });
  if (inputs.engine !== undefined && inputs.engine !== 'local' && inputs.engine !== 'api')
    failures.push({ property: 'engine', reason: 'engine is local or api' });
  if (inputs.reportS3 !== undefined) failures.push(...problem('reportS3', () => parseS3Url(String(inputs.reportS3))));
  if (inputs.reportStorage !== undefined) failures.push(...problem('reportStorage', () => checkStorageFolderId(inputs.reportStorage, 'reportStorage')));
  failures.push(...triggersProblems(inputs.triggers));
  return failures;
}

async function runPageGate(settings: PageAnalysisGateSettings | undefined, inputs: PageAnalysisGateInputs): Promise<PageAnalysisGateOutputs> {
  const env = process.env;
  const baseUrl = env.PAGEANALYSIS_BASE_URL || settings?.baseUrl;
  const apiKey = env.PAGEANALYSIS_API_KEY || settings?.apiKey;
  // CHROME_PATH is read by the engine itself; the stack configuration applies when it is not set.
  const chromePath = env.CHROME_PATH ? undefined : settings?.chromePath;
  const engine = createEngine({
    ...(inputs.engine ? { engine: inputs.engine as 'local' | 'api' } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(chromePath ? { chromePath } : {}),
  });
  // The storage settings, the token and the folder are checked before the analysis: a wrong one costs no runs.
  const folderId = inputs.reportStorage;
  const storageResource = 'PageAnalysisGate reportStorage';
  if (folderId !== undefined) await withStorage(settings, storageResource, (client) => checkReportFolder(client, folderId));
  const result = await runGate({
    urls: [inputs.url],
    thresholds: thresholdsOf(inputs),
    ...(inputs.runs !== undefined ? { runs: inputs.runs } : {}),
    aggregation: parseAggregationMethod(inputs.aggregation ?? 'median-run') ?? 'median-run',
    strategy: parseStrategy(inputs.strategy ?? 'desktop') ?? 'DESKTOP',
    engine,
  });
  // The URL may carry a token (a secret input): the error shows it with credentials masked.
  if (result.status !== 'pass') throw gateRunError(result, inputs.url);
  if (inputs.reportS3) await archiveReportsToS3(result, inputs.reportS3);
  const published =
    folderId !== undefined ? await withStorage(settings, storageResource, (client) => publishReportsToStorage(result, folderId, { client })) : undefined;
  const [page] = result.urls;
  const scores: Record<string, number | null> = {};
  for (const [id, score] of Object.entries(page.scores)) scores[id] = score ?? null;
  return {
    ...inputs,
    passed: true,
    scores,
    // The URL is an input already (and may be secret): the checks do not repeat it.
    checks: result.checks.map(({ url: _url, ...check }) => check),
    reportUrl: result.reportUrl ?? null,
    storageReports: published?.storage ?? null,
    analyzedAt: result.analyzedAt,
    engineUsed: result.engine,
    engineVersion: page.responses[page.representativeRun]?.beaconResult?.beaconVersion ?? null,
  };
}

// Refresh does not analyse again (triggers and input changes do): the recorded result stays.
export const pageAnalysisGateOperations = runOnChangeOperations({
  keys: inputKeys,
  // A value not known yet (the site's URL before the site exists) is checked when it is known, not refused now.
  problems: inputProblems,
  run: runPageGate,
  idOf: () => `pageanalysisgate-${randomUUID()}`,
}) satisfies Operations<typeof pageAnalysisGateProvider, PageAnalysisGateInputs, PageAnalysisGateOutputs>;
