/**
 * A page-analysis gate: N runs per URL through one engine, aggregated and checked against the thresholds.
 * The result says pass (every check passed), fail (a check said no) or error (the engine could not produce a
 * trustworthy result for some URL); it never says pass for something it could not measure.
 */
import { expectArray, expectObject } from '../arguments.js';
import type { CategoryId } from './enums.js';
import type { AggregationMethod } from './aggregate.js';
import type { AnalysisEngine, AnalysisRun, EngineName, FormFactor } from './engine.js';
import { evaluateRuns, type CheckResult, type GateStatus, type UrlEvaluation } from './evaluate.js';
import { categoriesFor, checkThresholdIds, DEFAULT_CATEGORY_THRESHOLDS, type Threshold } from './thresholds.js';
import { UsageError } from '../errors.js';

export interface GateOptions {
  urls: readonly string[];
  /** Category and audit thresholds; a performance score of 0.9 when empty. */
  thresholds?: readonly Threshold[];
  /** Runs per URL (default 3). */
  runs?: number;
  aggregation?: AggregationMethod;
  strategy?: FormFactor;
  locale?: string;
  engine: AnalysisEngine;
  /** Called before each run starts: `run k of n` for progress displays. */
  onProgress?: (progress: { url: string; urlIndex: number; urlCount: number; run: number; runs: number }) => void;
  signal?: AbortSignal;
}

export interface UrlGateResult extends UrlEvaluation {
  /** Every run's v5 response, in order. */
  responses: AnalysisRun['response'][];
  /** Lighthouse HTML per run, local engine only (not serialized). */
  html?: Array<(() => string) | undefined>;
}

export interface GateResult {
  status: GateStatus;
  engine: EngineName;
  strategy: FormFactor;
  aggregation: AggregationMethod;
  runs: number;
  categories: CategoryId[];
  thresholds: Threshold[];
  analyzedAt: string;
  urls: UrlGateResult[];
  /** Every check of every URL. */
  checks: CheckResult[];
  /** Set when the reports were archived to S3: the first URL's `report.html` (local engine), else its `report.json`. */
  reportUrl?: string;
}

export const DEFAULT_RUNS = 3;
export const MAX_RUNS = 25;

export function checkGateOptions(options: Pick<GateOptions, 'urls' | 'runs' | 'locale'>): void {
  expectObject('runGate', 'options', options, 'an object with urls and thresholds');
  expectArray('runGate', 'options.urls', options.urls, 'an array of page URLs');
  if (options.urls.length === 0) throw new UsageError('a gate needs at least one URL');
  for (const url of options.urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`"${url}" is not a URL`, { hint: 'give a full address such as https://example.com/' });
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`"${url}" is not an http(s) URL`);
  }
  const runs = options.runs ?? DEFAULT_RUNS;
  if (!Number.isInteger(runs) || runs < 1 || runs > MAX_RUNS)
    throw new UsageError(`runs must be a whole number from 1 to ${MAX_RUNS}, not ${runs}`, {
      hint: 'more runs steady the verdict; 3 is the default, 5 is common for noisy pages',
    });
  // A locale that is no BCP 47 tag made Lighthouse fail after Chromium had started ("Incorrect locale information
  // provided", exit 3): refused here, before any engine runs.
  if (options.locale !== undefined) {
    let canonical: string[] = [];
    try {
      canonical = typeof options.locale === 'string' && options.locale.trim() !== '' ? Intl.getCanonicalLocales(options.locale) : [];
    } catch {
      canonical = [];
    }
    if (canonical.length !== 1) {
      throw new UsageError(`the locale ${JSON.stringify(options.locale)} is not a language tag`, {
        code: 'GATE_BAD_LOCALE',
        hint: 'give a BCP 47 language tag such as en-US, de or pt-BR (Lighthouse formats in English when it has no translation)',
      });
    }
  }
}

export async function runGate(options: GateOptions): Promise<GateResult> {
  checkGateOptions(options);
  const thresholds = options.thresholds && options.thresholds.length > 0 ? [...options.thresholds] : [...DEFAULT_CATEGORY_THRESHOLDS];
  // A threshold on an audit that no page load produces could only fail after minutes of analysis: refused first.
  checkThresholdIds(thresholds);
  const runs = options.runs ?? DEFAULT_RUNS;
  const aggregation = options.aggregation ?? 'median-run';
  const strategy = options.strategy ?? 'DESKTOP';
  const categories = categoriesFor(thresholds);
  const analyzedAt = new Date().toISOString();
  const results: UrlGateResult[] = [];

  for (const [urlIndex, url] of options.urls.entries()) {
    const collected: AnalysisRun[] = [];
    for (let run = 1; run <= runs; run += 1) {
      options.signal?.throwIfAborted();
      options.onProgress?.({ url, urlIndex, urlCount: options.urls.length, run, runs });
      const outcome = await options.engine.analyze({
        url,
        categories,
        strategy,
        ...(options.locale ? { locale: options.locale } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      collected.push(outcome);
      // A run the engine could not complete makes the URL an error whatever follows: stop spending minutes on it.
      const error = outcome.response.beaconResult?.runtimeError?.code;
      if (!outcome.response.beaconResult || (error && error !== 'NO_ERROR')) break;
    }
    const evaluation = evaluateRuns(
      url,
      collected.map((c) => c.response),
      thresholds,
      aggregation,
    );
    results.push({
      ...evaluation,
      responses: collected.map((c) => c.response),
      ...(collected.some((c) => c.html) ? { html: collected.map((c) => c.html) } : {}),
    });
  }

  const statuses = results.map((r) => r.status);
  return {
    status: statuses.includes('error') ? 'error' : statuses.includes('fail') ? 'fail' : 'pass',
    engine: options.engine.name,
    strategy,
    aggregation,
    runs,
    categories,
    thresholds,
    analyzedAt,
    urls: results,
    checks: results.flatMap((r) => r.checks),
  };
}
