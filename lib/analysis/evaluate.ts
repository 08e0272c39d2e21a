/**
 * Gate evaluation: N analysis results of one URL against the thresholds. Pure: no engine, no I/O.
 * A run with a `runtimeError`, or without a result at all, makes every check of that URL an error: its scores
 * cannot be trusted (PAG-BR-RUNTIME-ERROR). A null score or a missing audit value fails its check with the reason.
 * Nothing unknown ever passes.
 */
import { CATEGORY_IDS, type CategoryId } from './enums.js';
import type { BeaconResult, PageanalysisApiResponse } from './model.js';
import { aggregate, representativeRunIndex, type AggregationMethod } from './aggregate.js';
import { compare, describeThreshold, isMinimum, thresholdName, type Operator, type Threshold, type ThresholdLevel } from './thresholds.js';

/** `warn`: a warn-level check that did not pass; it is shown and does not fail the gate. */
export type Verdict = 'pass' | 'fail' | 'error' | 'warn';
/** A URL's or a gate's outcome: warnings do not change it. */
export type GateStatus = Exclude<Verdict, 'warn'>;

export interface CheckResult {
  url: string;
  kind: 'category' | 'audit';
  /** Category id or audit id (`<audit>.score`, `<audit>.length` for those properties). */
  name: string;
  /** `error` fails the gate, `warn` does not. */
  level: ThresholdLevel;
  /** How the runs were aggregated for this check. */
  aggregation: AggregationMethod;
  operator: string;
  /** The limit as given (scores as fractions). */
  threshold: number;
  /** The aggregated value; null when there was none to compare. */
  value: number | null;
  /** The value in each run (null where that run had none). */
  values: (number | null)[];
  verdict: Verdict;
  /** Why a check did not pass. */
  reason?: string;
}

export interface RunSummary {
  /** 1-based. */
  run: number;
  finalUrl: string | undefined;
  analyzedAt: string | undefined;
  scores: Partial<Record<CategoryId, number | null>>;
  runtimeError?: { code: string; message: string };
}

export interface UrlEvaluation {
  url: string;
  finalUrl: string | undefined;
  status: GateStatus;
  /** 0-based index of the run whose values median-run uses (also the run whose report is kept as representative). */
  representativeRun: number;
  /** Aggregated category scores (null when any run lacked one under a method that needs them all). */
  scores: Partial<Record<CategoryId, number | null>>;
  checks: CheckResult[];
  runs: RunSummary[];
}

function runtimeErrorOf(response: PageanalysisApiResponse): { code: string; message: string } | undefined {
  const result = response.beaconResult;
  if (!result) return { code: 'NO_RESULT', message: 'the response has no beaconResult' };
  const error = result.runtimeError;
  // Lighthouse writes `runtimeError: {code: 'NO_ERROR'}` in some versions when all went well.
  if (!error || error.code === undefined || error.code === 'NO_ERROR') return undefined;
  return { code: error.code, message: error.message ?? '' };
}

function categoryScore(result: BeaconResult, id: CategoryId): number | null {
  const score = result.categories?.[id]?.score;
  return typeof score === 'number' ? score : null;
}

interface Lookup {
  value: number | null;
  missing?: string;
}

function lookup(result: BeaconResult, threshold: Threshold): Lookup {
  if (threshold.kind === 'category') {
    const category = result.categories?.[threshold.category];
    if (!category) return { value: null, missing: `the category ${threshold.category} is not in the result` };
    return typeof category.score === 'number' ? { value: category.score } : { value: null, missing: `the ${threshold.category} score is null` };
  }
  const audit = result.audits?.[threshold.audit];
  if (!audit) return { value: null, missing: `the audit ${threshold.audit} is not in the result` };
  if (threshold.property === 'score') {
    // As Lighthouse CI reads a score: not applicable passes, informative has none to speak of (0).
    if (typeof audit.score === 'number') return { value: audit.score };
    if (audit.scoreDisplayMode === 'notApplicable') return { value: 1 };
    if (audit.scoreDisplayMode === 'informative') return { value: 0 };
    return { value: null, missing: `the audit ${threshold.audit} has no score (${String(audit.scoreDisplayMode ?? 'null')})` };
  }
  if (threshold.property === 'length') {
    const items = (audit.details as { items?: unknown } | undefined)?.items;
    return { value: Array.isArray(items) ? items.length : 0 };
  }
  if (typeof audit.numericValue !== 'number') return { value: null, missing: `the audit ${threshold.audit} has no numeric value` };
  return { value: audit.numericValue };
}

/** Float noise out of messages: 6130.000000000002 reads 6130. */
function readable(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function checkOf(url: string, threshold: Threshold, method: AggregationMethod): Omit<CheckResult, 'value' | 'values' | 'verdict'> {
  const common = { url, name: thresholdName(threshold), level: threshold.level ?? 'error', aggregation: threshold.aggregation ?? method };
  return threshold.kind === 'category'
    ? { ...common, kind: 'category', operator: '>=', threshold: threshold.min }
    : { ...common, kind: 'audit', operator: threshold.operator, threshold: threshold.value };
}

/** A check that did not pass: `fail`, or `warn` for a warn-level threshold. */
function notPassed(threshold: Threshold): Verdict {
  return threshold.level === 'warn' ? 'warn' : 'fail';
}

export function evaluateRuns(
  url: string,
  responses: readonly PageanalysisApiResponse[],
  thresholds: readonly Threshold[],
  method: AggregationMethod,
): UrlEvaluation {
  if (responses.length === 0) throw new RangeError('evaluateRuns needs at least one run');
  const runs: RunSummary[] = responses.map((response, index) => {
    const result = response.beaconResult;
    const scores: Partial<Record<CategoryId, number | null>> = {};
    for (const id of CATEGORY_IDS) if (result?.categories?.[id]) scores[id] = categoryScore(result, id);
    const runtimeError = runtimeErrorOf(response);
    return {
      run: index + 1,
      finalUrl: result?.finalUrl ?? response.id,
      analyzedAt: response.analysisUTCTimestamp ?? result?.fetchTime,
      scores,
      ...(runtimeError ? { runtimeError } : {}),
    };
  });

  const failed = runs.find((run) => run.runtimeError);
  if (failed?.runtimeError) {
    const reason = `run ${failed.run}: the engine reported ${failed.runtimeError.code}: ${failed.runtimeError.message}`.trim();
    const scores: Partial<Record<CategoryId, number | null>> = {};
    for (const threshold of thresholds) if (threshold.kind === 'category') scores[threshold.category] = null;
    return {
      url,
      finalUrl: failed.finalUrl,
      status: 'error',
      representativeRun: failed.run - 1,
      scores,
      checks: thresholds.map((threshold) => ({ ...checkOf(url, threshold, method), value: null, values: runs.map(() => null), verdict: 'error', reason })),
      runs,
    };
  }

  const results = responses.map((response) => response.beaconResult as BeaconResult);
  const representative = representativeRunIndex(results);

  const checks: CheckResult[] = thresholds.map((threshold) => {
    const looked = results.map((result) => lookup(result, threshold));
    const values = looked.map((l) => l.value);
    const base = checkOf(url, threshold, method);
    const own = base.aggregation;
    // median-run reads one run only; the other methods need a value from every run (a null never passes).
    const needed = own === 'median-run' ? [representative] : looked.map((_l, index) => index);
    const missing = needed.find((index) => looked[index].value === null);
    if (missing !== undefined) {
      const runNote = responses.length > 1 ? ` in run ${missing + 1}` : '';
      return { ...base, value: null, values, verdict: notPassed(threshold), reason: `${looked[missing].missing}${runNote}` };
    }
    const value = aggregate(values as number[], own, isMinimum(base), representative);
    const passed = compare(value, base.operator as Operator, base.threshold);
    const what = threshold.kind === 'category' || threshold.property === 'score' ? 'score' : threshold.property === 'length' ? 'length' : 'value';
    return {
      ...base,
      value,
      values,
      verdict: passed ? 'pass' : notPassed(threshold),
      ...(passed
        ? {}
        : {
            reason: `${what} ${readable(value)} is not ${base.operator} ${base.threshold} (${describeThreshold(threshold)}, ${own}${threshold.level === 'warn' ? ', warn' : ''})`,
          }),
    };
  });

  const scores: Partial<Record<CategoryId, number | null>> = {};
  for (const id of CATEGORY_IDS) {
    const values = results.map((result) => (result.categories?.[id] ? categoryScore(result, id) : undefined));
    if (values.every((v) => v === undefined)) continue;
    if (method === 'median-run') scores[id] = values[representative] ?? null;
    else scores[id] = values.some((v) => v === null || v === undefined) ? null : aggregate(values as number[], method, true, representative);
  }

  return {
    url,
    finalUrl: results[representative].finalUrl ?? responses[representative].id,
    // A warn-level check that did not pass is shown, and does not fail the URL.
    status: checks.some((c) => c.verdict === 'error') ? 'error' : checks.some((c) => c.verdict === 'fail') ? 'fail' : 'pass',
    representativeRun: representative,
    scores,
    checks,
    runs,
  };
}
