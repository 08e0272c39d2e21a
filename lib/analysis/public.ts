// The `analysis` namespace of the public API (`import { analysis } from 'gantry'`; docs/api.md lists it): engines,
// gates, their reports and the v5 client. lib/index.ts exports the main names flat as well. The area's entry point
// (index.ts) is its internal face, for the command, the providers and the other areas.
export { createEngine, createLocalEngine, createRemoteEngine, createPageanalysisClient, parsePageanalysisResponse } from './index.js';
export { runGate, evaluateRuns, parseCategoryThresholds, parseAuditThreshold, CATEGORIES, STRATEGIES, AGGREGATION_METHODS } from './index.js';
export { renderGateTable, renderGateMarkdown, writeLocalReports, archiveReportsToS3, publishReportsToStorage } from './index.js';
export { PageanalysisApiError, PageanalysisResponseError, LocalEngineError } from './index.js';
export type {
  AnalysisEngine,
  EngineChoice,
  EngineName,
  FormFactor,
  RemoteEngineOptions,
  LocalEngineOptions,
  PageanalysisClient,
  RunPageanalysisParams,
} from './index.js';
export type {
  GateOptions,
  GateResult,
  UrlGateResult,
  GateStatus,
  CheckResult,
  Threshold,
  AggregationMethod,
  GateSummary,
  S3ArchiveOptions,
  StoragePublishOptions,
} from './index.js';
export type { PageanalysisApiResponse, BeaconResult } from './index.js';
