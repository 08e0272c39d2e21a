/**
 * Turning N runs into one verdict, the way Lighthouse CI's `assert` does:
 * - `median-run` (default): take every value from the one representative run, the run closest (Euclidean distance)
 *   to the median first-contentful-paint and the median time-to-interactive. Those two span the page's load, and a
 *   real run keeps its metrics consistent with each other, unlike a per-metric median.
 * - `median`: the median of each value over the runs.
 * - `optimistic`: the best value (highest score, lowest time).
 * - `pessimistic`: the worst value.
 */
import type { BeaconResult } from './model.js';

export const AGGREGATION_METHODS = ['median-run', 'median', 'optimistic', 'pessimistic'] as const;
export type AggregationMethod = (typeof AGGREGATION_METHODS)[number];

function metric(result: BeaconResult, audit: string): number {
  // Lighthouse CI counts a missing metric as 0; we do the same so that selection stays total.
  const value = result.audits?.[audit]?.numericValue;
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Lighthouse CI takes the element at floor(n/2) of the sorted values, the upper median when n is even. */
function middle(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Index of the representative run; ties go to the earlier run. */
export function representativeRunIndex(runs: readonly BeaconResult[]): number {
  if (runs.length === 0) throw new RangeError('representativeRunIndex needs at least one run');
  const fcp = runs.map((run) => metric(run, 'first-contentful-paint'));
  const tti = runs.map((run) => metric(run, 'interactive'));
  const medianFcp = middle(fcp);
  const medianTti = middle(tti);
  let best = 0;
  let bestDistance = Infinity;
  runs.forEach((_run, index) => {
    const distance = (fcp[index] - medianFcp) ** 2 + (tti[index] - medianTti) ** 2;
    if (distance < bestDistance) {
      best = index;
      bestDistance = distance;
    }
  });
  return best;
}

/** The true median (mean of the two middle values when n is even), as Lighthouse CI's `median` method. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor((sorted.length - 1) / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid] + sorted[mid + 1]) / 2;
}

/**
 * Aggregates one value over the runs. `higherIsBetter` says which way optimistic and pessimistic lean (scores and
 * `>=` limits: higher is better; timings under `<=` limits: lower is better). For median-run, pass the
 * representative run's index.
 */
export function aggregate(values: readonly number[], method: AggregationMethod, higherIsBetter: boolean, representative: number): number {
  switch (method) {
    case 'median-run':
      return values[representative];
    case 'median':
      return median(values);
    case 'optimistic':
      return higherIsBetter ? Math.max(...values) : Math.min(...values);
    case 'pessimistic':
      return higherIsBetter ? Math.min(...values) : Math.max(...values);
  }
}

export function parseAggregationMethod(text: string): AggregationMethod | undefined {
  const token = text.trim().toLowerCase();
  return (AGGREGATION_METHODS as readonly string[]).includes(token) ? (token as AggregationMethod) : undefined;
}
