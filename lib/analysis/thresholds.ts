/**
 * Gate thresholds: a minimum score per category (`performance>=0.9`, `performance=90`) and limits on audits'
 * numeric values (`largest-contentful-paint<=2500`). Parsed from the command line or from resource inputs into one
 * shape, with a usage error naming the bad part.
 */
import { UsageError } from '../errors.js';
import type { AggregationMethod } from './aggregate.js';
import { AUDIT_IDS, auditCategories, closeMatches, isKnownAudit, NON_NAVIGATION_AUDITS } from './audits.js';
import { CATEGORY_IDS, parseCategoryId, type CategoryId } from './enums.js';

export type Operator = '>=' | '>' | '<=' | '<';

/** `error` (the default) fails the gate; `warn` is shown and does not (Lighthouse CI's assertion levels). */
export type ThresholdLevel = 'error' | 'warn';

interface ThresholdCommon {
  /** Default `error`. */
  level?: ThresholdLevel;
  /** This check's own aggregation over the runs (a Lighthouse CI assertion's `aggregationMethod`); default the gate's. */
  aggregation?: AggregationMethod;
}

export interface CategoryThreshold extends ThresholdCommon {
  kind: 'category';
  category: CategoryId;
  /** Minimum score as a fraction 0..1; the score must be >= this. */
  min: number;
}

/**
 * What of an audit is compared: its `numericValue` (the default), its `score` (0–1; a not-applicable audit counts
 * as 1 and an informative one as 0, as Lighthouse CI reads them), or the `length` of `details.items` (0 when absent).
 */
export type AuditProperty = 'numericValue' | 'score' | 'length';

export interface AuditThreshold extends ThresholdCommon {
  kind: 'audit';
  /** Audit id, a key of `beaconResult.audits`. */
  audit: string;
  /** Default `numericValue`. */
  property?: AuditProperty;
  operator: Operator;
  /** Compared with the audit's `numericValue` (milliseconds for timings, unitless for layout shift), score or length. */
  value: number;
}

export type Threshold = CategoryThreshold | AuditThreshold;

/** Lighthouse CI's default assertion level: what a gate checks when it is given no threshold at all. */
export const DEFAULT_CATEGORY_THRESHOLDS: readonly CategoryThreshold[] = [{ kind: 'category', category: 'performance', min: 0.9 }];

/**
 * Scores are fractions in the model, but people write them both ways: 0.9 and 90 both mean 90 %. So a minimum is
 * either a fraction from 0 to 1 (1 is a perfect score) or a whole percentage from 2 to 100. Anything else is
 * refused rather than guessed: 1.01 or 1.5 could be a typo for 0.99 or a percentage below 2 % (a gate that always
 * passes), and 90.5 is a precision no score has (scores move in whole percents on the report).
 */
export function normalizeMinScore(value: number, what: string, spell: (score: string) => string = (score) => `performance=${score}`): number {
  if (Number.isFinite(value) && value >= 0 && value <= 1) return value;
  if (Number.isInteger(value) && value >= 2 && value <= 100) return value / 100;
  throw new UsageError(`${what}: a minimum score is a fraction from 0 to 1 or a whole percentage from 2 to 100, not ${value}`, {
    hint: `write 90 % as ${spell('0.9')} or ${spell('90')}`,
  });
}

function parseNumber(text: string, what: string, hint: string): number {
  const trimmed = text.trim();
  // Decimal notation only: Number() also reads 0x10, 0b1 and Infinity, which no one means as a limit.
  const value = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(trimmed) ? Number(trimmed) : NaN;
  if (!Number.isFinite(value)) throw new UsageError(`${what}: "${text}" is not a number`, { hint });
  return value;
}

export function parseCategory(text: string, what: string): CategoryId {
  const id = parseCategoryId(text);
  if (!id) {
    // closeMatches also expands audit abbreviations (si, lcp): only a category is worth suggesting here.
    const near = closeMatches(
      text
        .trim()
        .toLowerCase()
        .replace(/[\s_]+/g, '-'),
      CATEGORY_IDS,
    ).filter((id) => (CATEGORY_IDS as readonly string[]).includes(id));
    throw new UsageError(`${what}: unknown category "${text}"${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : ''}`, {
      hint: `the categories are ${CATEGORY_IDS.join(', ')}`,
    });
  }
  return id;
}

/**
 * Refuses an audit id that a page load does not produce, before anything runs: the error names close matches and
 * where the list is. `what` names the input (`--audit lcp<=2500`, `audits.lcp`, `lighthouserc.json: assertions.lcp`).
 */
export function checkAuditId(id: string, what: string): void {
  if (isKnownAudit(id)) return;
  if (NON_NAVIGATION_AUDITS.includes(id)) {
    throw new UsageError(`${what}: the audit ${id} is measured only over user interactions (Lighthouse's timespan mode), never in a page load`, {
      hint: 'a gate analyses a page load: use a page-load metric such as total-blocking-time',
    });
  }
  const near = closeMatches(id, AUDIT_IDS);
  throw new UsageError(`${what}: unknown audit "${id}"${near.length > 0 ? `; did you mean ${near.join(', ')}?` : ''}`, {
    hint: 'thresholds name an audit by its id; `gantry gate --list-audits` prints every id with its category and unit (Lighthouse 12.8.2)',
  });
}

/** Every threshold's audit id checked (runGate does this before the first run). */
export function checkThresholdIds(thresholds: readonly Threshold[]): void {
  for (const threshold of thresholds) if (threshold.kind === 'audit') checkAuditId(threshold.audit, `the threshold ${describeThreshold(threshold)}`);
}

/** `performance=0.9`, `performance>=90`, `best-practices:0.95`; a list separated by commas. */
export function parseCategoryThresholds(text: string): CategoryThreshold[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const match = /^([A-Za-z_ -]+?)\s*(>=|=|:)\s*(.+)$/.exec(part);
      if (!match) {
        throw new UsageError(`--min: "${part}" is not a category threshold`, { hint: 'write it as performance=0.9 or performance>=90' });
      }
      const category = parseCategory(match[1], `--min ${part}`);
      return {
        kind: 'category' as const,
        category,
        min: normalizeMinScore(
          parseNumber(match[3], `--min ${part}`, `a score is 0–1 or a whole percentage: ${category}=0.9 or ${category}=90`),
          `--min ${part}`,
          (score) => `${category}=${score}`,
        ),
      };
    });
}

/** `largest-contentful-paint<=2500`, `cumulative-layout-shift<0.1`, `interactive<=3800`; `what` names the input. */
export function parseAuditThreshold(text: string, what = `--audit ${text.trim()}`): AuditThreshold {
  const match = /^\s*([a-z0-9][a-z0-9-]*)\s*(<=|>=|<|>)\s*(.+)$/i.exec(text);
  if (!match) {
    throw new UsageError(`${what}: "${text}" is not an audit threshold`, {
      hint: 'write it as largest-contentful-paint<=2500 (an audit id, <=, <, >= or >, a number)',
    });
  }
  const audit = match[1].toLowerCase();
  checkAuditId(audit, what);
  const hint = `the limit is a number in the audit's unit (milliseconds for timings): ${audit}${match[2]}2500`;
  const value = parseNumber(match[3], what, hint);
  // Audit values (times, bytes, counts, shifts) are never below 0: such a limit always fails or always passes.
  if (value < 0) throw new UsageError(`${what}: the limit ${match[3].trim()} is below 0, which no audit value is`, { hint });
  return { kind: 'audit', audit, operator: match[2] as Operator, value };
}

/** Resource inputs: `{ performance: 0.9, accessibility: 95 }`. */
export function categoryThresholdsFromRecord(record: Record<string, unknown>): CategoryThreshold[] {
  return Object.entries(record).map(([name, value]) => {
    const category = parseCategory(name, `thresholds.${name}`);
    if (typeof value !== 'number') throw new UsageError(`thresholds.${name}: expected a number, got ${JSON.stringify(value)}`);
    return { kind: 'category' as const, category, min: normalizeMinScore(value, `thresholds.${name}`, (score) => `{ ${category}: ${score} }`) };
  });
}

/** Resource inputs: `{ 'largest-contentful-paint': 2500 }` (a maximum) or `['total-blocking-time<=200']`. */
export function auditThresholdsFromInput(input: Record<string, unknown> | readonly unknown[]): AuditThreshold[] {
  if (Array.isArray(input)) {
    return input.map((item, index) => {
      if (typeof item !== 'string') throw new UsageError(`audits[${index}]: expected a string like "total-blocking-time<=200"`);
      return parseAuditThreshold(item, `audits[${index}]`);
    });
  }
  return Object.entries(input as Record<string, unknown>).map(([audit, value]) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new UsageError(`audits.${audit}: expected a number, got ${JSON.stringify(value)}`);
    return parseAuditThreshold(`${audit}<=${value}`, `audits.${audit}`);
  });
}

export function compare(value: number, operator: Operator, limit: number): boolean {
  switch (operator) {
    case '>=':
      return value >= limit;
    case '>':
      return value > limit;
    case '<=':
      return value <= limit;
    case '<':
      return value < limit;
  }
}

/**
 * The categories a set of thresholds needs analysed: the named ones and each audit's category; performance when none
 * is named (PAG-Q-CATEGORY's default).
 */
export function categoriesFor(thresholds: readonly Threshold[]): CategoryId[] {
  const ids = new Set<CategoryId>();
  for (const threshold of thresholds) {
    if (threshold.kind === 'category') ids.add(threshold.category);
    else {
      const [category] = auditCategories(threshold.audit);
      ids.add(category ?? 'performance');
      // Asking for performance too keeps median-run selection (which reads FCP and TTI) meaningful.
      ids.add('performance');
    }
  }
  if (ids.size === 0) ids.add('performance');
  return CATEGORY_IDS.filter((id) => ids.has(id));
}

/** `performance>=0.9`, `largest-contentful-paint<=2500`, `is-on-https.score>=1`, `unused-javascript.length<=0`. */
export function describeThreshold(threshold: Threshold): string {
  if (threshold.kind === 'category') return `${threshold.category}>=${threshold.min}`;
  const property = threshold.property === undefined || threshold.property === 'numericValue' ? '' : `.${threshold.property}`;
  return `${threshold.audit}${property}${threshold.operator}${threshold.value}`;
}

/** The name a check is shown under: the category or audit id, with `.score`/`.length` for those properties. */
export function thresholdName(threshold: Threshold): string {
  if (threshold.kind === 'category') return threshold.category;
  return threshold.property === 'score' || threshold.property === 'length' ? `${threshold.audit}.${threshold.property}` : threshold.audit;
}

/** A minimum (`>=`, `>`) fails by being below it; a maximum (`<=`, `<`) by being above it. */
export function isMinimum(threshold: Pick<Threshold, 'kind'> & { operator?: string }): boolean {
  return threshold.kind === 'category' || threshold.operator === '>=' || threshold.operator === '>';
}
