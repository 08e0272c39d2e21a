/**
 * PageAnalysisGate: a deployment gate on page-analysis scores. It analyses the page on create and whenever an input
 * changes (put the deployed version in `triggers` to gate every release, `dependsOn` the site so it runs after the
 * deploy). Below a threshold the operation fails with the table of checks, the deployment stops, and the state
 * keeps the previous passing scores. A pass records `scores`, `checks`, `reportUrl` and `analyzedAt`.
 *
 * The provider object (made by `resourceType` with `serializedProvider`, ./serialized.ts) is what Pulumi serializes
 * into `__provider`: its methods capture nothing and load the implementation (`pageAnalysisGateOperations`, through
 * `gantry/providers`) when the engine calls them. The API base URL and key are read at run time:
 * PAGEANALYSIS_BASE_URL, PAGEANALYSIS_API_KEY / PAGEANALYSIS_TOKEN, then the stack config gantry:pageanalysisBaseUrl,
 * gantry:pageanalysisApiKey (secret); Chromium from CHROME_PATH, then gantry:chromePath. S3 credentials for
 * `reportS3` come from the usual AWS environment; `reportStorage` publishes to the storage API at STORAGE_BASE_URL
 * (else gantry:storageBaseUrl) with STORAGE_TOKEN from the plugin's environment only, never an input or state.
 */
import type { CheckResult, StorageReports } from '../lib/analysis/index.js';
import { resourceType, type ArgsOf } from './resource.js';
import { runOnChangeMethods, type ProviderSettings } from './serialized.js';
import { storageConfig } from './storage-config.js';

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

export const pageAnalysisGate = resourceType<PageAnalysisGateInputs, PageAnalysisGateOutputs>()({
  type: 'gantry:analysis:PageAnalysisGate',
  operations: 'pageAnalysisGateOperations',
  inputs: ['url', 'thresholds', 'audits', 'runs', 'aggregation', 'strategy', 'engine', 'reportS3', 'reportStorage', 'triggers'],
  outputs: ['passed', 'scores', 'checks', 'reportUrl', 'storageReports', 'analyzedAt', 'engineUsed', 'engineVersion'],
  config: { baseUrl: 'gantry:pageanalysisBaseUrl', apiKey: 'gantry:pageanalysisApiKey', chromePath: 'gantry:chromePath', ...storageConfig },
  ...runOnChangeMethods,
});

export class PageAnalysisGate extends pageAnalysisGate.Resource {}

export const { provider: pageAnalysisGateProvider, inputKeys, operations: pageAnalysisGateOperations } = pageAnalysisGate;

export type PageAnalysisGateSettings = ProviderSettings<typeof pageAnalysisGateProvider>;
