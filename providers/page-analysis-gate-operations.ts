// The implementation behind `pageAnalysisGateOperations` (./page-analysis-gate.ts), never serialized: the dynamic-provider plugin loads it
// through `gantry/providers` when the engine calls a method.
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
  type Threshold,
} from '../lib/analysis/index.js';
import { triggersProblems } from './inputs.js';
import { runOnChangeOperations } from './run-on-change.js';
import type { Operations } from './serialized.js';
import { withStorage } from './storage-shared.js';
import {
  pageAnalysisGateProvider,
  inputKeys,
  type PageAnalysisGateInputs,
  type PageAnalysisGateOutputs,
  type PageAnalysisGateSettings,
} from './page-analysis-gate.js';

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
