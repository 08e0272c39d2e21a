// Gate thresholds as a user writes them (lib/analysis/thresholds.ts): what is read, what is refused with which words,
// and how a threshold is named back. In process and fast: `npm run mutate -- analysis` runs it for every mutant.
import assert from 'node:assert/strict';
import {
  auditThresholdsFromInput,
  categoriesFor,
  categoryThresholdsFromRecord,
  checkThresholdIds,
  describeThreshold,
  normalizeMinScore,
  parseAuditThreshold,
  parseCategoryThresholds,
  thresholdName,
  type AuditThreshold,
  type Threshold,
} from '../../lib/analysis/thresholds.js';
import { UsageError } from '../../lib/errors.js';

/** The usage error `run` throws (exit 2), for its exact message and hint. */
function usageError(run: () => unknown): { message: string; hint: string | undefined } {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
    assert.equal(error.exitCode, 2);
    return { message: error.message, hint: error.hint };
  }
  assert.fail('expected a usage error');
}

const CATEGORIES_HINT = 'the categories are performance, accessibility, best-practices, seo';
const AUDITS_HINT = 'thresholds name an audit by its id; `gantry gate --list-audits` prints every id with its category and unit (Lighthouse 12.8.2)';
const lcpMax = (value: number, extra: Partial<AuditThreshold> = {}): AuditThreshold => ({
  kind: 'audit',
  audit: 'largest-contentful-paint',
  operator: '<=',
  value,
  ...extra,
});

describe('analysis: threshold syntax (MUTATION-ANALYSIS)', () => {
  it('MUTATION-ANALYSIS: a limit is a decimal number, with sign, point, exponent and spaces around; hex, binary, Infinity and units are refused', () => {
    const limit = (text: string) => parseAuditThreshold(`dom-size<=${text}`).value;
    const read: Array<[string, number]> = [
      ['1500', 1500],
      ['+1500', 1500],
      ['1500.', 1500],
      ['12.5', 12.5],
      ['1.25', 1.25],
      ['.5', 0.5],
      ['.25', 0.25],
      ['1.5e3', 1500],
      ['1.5E3', 1500],
      ['15e+2', 1500],
      ['150000e-2', 1500],
      ['1e10', 1e10],
      [' 1500 ', 1500],
      ['0', 0],
    ];
    for (const [text, value] of read) assert.equal(limit(text), value, text);
    for (const text of ['0x10', '0b1', '0o7', 'Infinity', '1e', 'e3', '.', '1.2.3', '2,5', '--1', '1500ms', 'NaN', '1e1.5', '- 1']) {
      const { message, hint } = usageError(() => limit(text));
      assert.equal(message, `--audit dom-size<=${text.trim()}: "${text}" is not a number`, text);
      assert.equal(hint, "the limit is a number in the audit's unit (milliseconds for timings): dom-size<=2500");
    }
    assert.equal(parseCategoryThresholds('performance=+0.9')[0].min, 0.9);
    assert.equal(parseCategoryThresholds('performance=.95')[0].min, 0.95);
    assert.equal(parseCategoryThresholds('performance=9e1')[0].min, 0.9);
  });

  it('MUTATION-ANALYSIS: an audit limit below 0 is refused naming the limit as written; 0 itself is a limit', () => {
    assert.deepEqual(parseAuditThreshold('total-blocking-time<=0'), { kind: 'audit', audit: 'total-blocking-time', operator: '<=', value: 0 });
    const { message, hint } = usageError(() => parseAuditThreshold('cumulative-layout-shift< -0.1 '));
    assert.equal(message, '--audit cumulative-layout-shift< -0.1: the limit -0.1 is below 0, which no audit value is');
    assert.equal(hint, "the limit is a number in the audit's unit (milliseconds for timings): cumulative-layout-shift<2500");
    assert.equal(usageError(() => auditThresholdsFromInput({ 'dom-size': -1 })).message, 'audits.dom-size: the limit -1 is below 0, which no audit value is');
  });

  it('MUTATION-ANALYSIS: an audit threshold is an id, one of <= < >= >, and a number; spaces and case are forgiven, anything before the id is not', () => {
    assert.deepEqual(parseAuditThreshold('  Largest-Contentful-Paint >= 2500'), lcpMax(2500, { operator: '>=' }));
    assert.deepEqual(parseAuditThreshold('largest-contentful-paint>2500'), lcpMax(2500, { operator: '>' }));
    assert.deepEqual(parseAuditThreshold('largest-contentful-paint<2500'), lcpMax(2500, { operator: '<' }));
    assert.deepEqual(parseAuditThreshold('largest-contentful-paint\t<=\t2500'), lcpMax(2500));
    for (const text of ['!largest-contentful-paint<=2500', '-dom-size<=1', 'dom-size=<1', 'dom-size 1', '<=2500', 'dom size<=1']) {
      const { message, hint } = usageError(() => parseAuditThreshold(text));
      assert.equal(message, `--audit ${text}: "${text}" is not an audit threshold`, text);
      assert.equal(hint, 'write it as largest-contentful-paint<=2500 (an audit id, <=, <, >= or >, a number)');
    }
    assert.equal(usageError(() => parseAuditThreshold(' dom-size=1 ')).message, '--audit dom-size=1: " dom-size=1 " is not an audit threshold');
    assert.equal(usageError(() => parseAuditThreshold('dom-size=1', 'audits[3]')).message, 'audits[3]: "dom-size=1" is not an audit threshold');
  });

  it('MUTATION-ANALYSIS: an unknown audit is refused with its close matches, or none; an interaction-only audit is told apart', () => {
    assert.deepEqual(
      usageError(() => parseAuditThreshold('dom-siz<=2')),
      {
        message: '--audit dom-siz<=2: unknown audit "dom-siz"; did you mean dom-size, dom-size-insight?',
        hint: AUDITS_HINT,
      },
    );
    assert.deepEqual(
      usageError(() => parseAuditThreshold('zzzzzz<=2')),
      { message: '--audit zzzzzz<=2: unknown audit "zzzzzz"', hint: AUDITS_HINT },
    );
    assert.deepEqual(
      usageError(() => parseAuditThreshold('interaction-to-next-paint<=200')),
      {
        message:
          "--audit interaction-to-next-paint<=200: the audit interaction-to-next-paint is measured only over user interactions (Lighthouse's timespan mode), never in a page load",
        hint: 'a gate analyses a page load: use a page-load metric such as total-blocking-time',
      },
    );
  });

  it('MUTATION-ANALYSIS: a threshold list given to the gate is checked audit by audit, named as written; categories need no check', () => {
    assert.doesNotThrow(() => checkThresholdIds([{ kind: 'category', category: 'seo', min: 0.9 }, lcpMax(2500)]));
    assert.deepEqual(
      usageError(() =>
        checkThresholdIds([
          { kind: 'category', category: 'seo', min: 0.9 },
          { kind: 'audit', audit: 'zzzzzz', property: 'score', operator: '>=', value: 1 },
        ]),
      ),
      { message: 'the threshold zzzzzz.score>=1: unknown audit "zzzzzz"', hint: AUDITS_HINT },
    );
  });

  it('MUTATION-ANALYSIS: category thresholds: spaces and empty items in the list are skipped; a bad item is named as written, trimmed', () => {
    assert.deepEqual(parseCategoryThresholds(' performance = 0.9 ,, seo:1 ,'), [
      { kind: 'category', category: 'performance', min: 0.9 },
      { kind: 'category', category: 'seo', min: 1 },
    ]);
    assert.deepEqual(parseCategoryThresholds('best practices>=90'), [{ kind: 'category', category: 'best-practices', min: 0.9 }]);
    assert.deepEqual(parseCategoryThresholds('SEO=100,accessibility=2'), [
      { kind: 'category', category: 'seo', min: 1 },
      { kind: 'category', category: 'accessibility', min: 0.02 },
    ]);
    assert.deepEqual(categoryThresholdsFromRecord({ performance: 90, BEST_PRACTICES: 0.8 }), [
      { kind: 'category', category: 'performance', min: 0.9 },
      { kind: 'category', category: 'best-practices', min: 0.8 },
    ]);
    assert.deepEqual(parseCategoryThresholds(''), []);
    for (const part of ['performance', '9performance=0.9', 'performance=', '=0.9', 'performance<=0.9', 'perf.ormance=0.9']) {
      assert.deepEqual(
        usageError(() => parseCategoryThresholds(`seo=1, ${part} `)),
        {
          message: `--min: "${part}" is not a category threshold`,
          hint: 'write it as performance=0.9 or performance>=90',
        },
      );
    }
    assert.deepEqual(
      usageError(() => parseCategoryThresholds('seo=1, performance=fast ')),
      {
        message: '--min performance=fast: "fast" is not a number',
        hint: 'a score is 0–1 or a whole percentage: performance=0.9 or performance=90',
      },
    );
    assert.deepEqual(
      usageError(() => parseCategoryThresholds('best-practices=120')),
      {
        message: '--min best-practices=120: a minimum score is a fraction from 0 to 1 or a whole percentage from 2 to 100, not 120',
        hint: 'write 90 % as best-practices=0.9 or best-practices=90',
      },
    );
  });

  it('MUTATION-ANALYSIS: an unknown category is named with the list of categories and a close match when there is one', () => {
    assert.deepEqual(
      usageError(() => parseCategoryThresholds('speed=0.9')),
      { message: '--min speed=0.9: unknown category "speed"', hint: CATEGORIES_HINT },
    );
    assert.deepEqual(
      usageError(() => parseCategoryThresholds('accessibilty=0.9')),
      {
        message: '--min accessibilty=0.9: unknown category "accessibilty"; did you mean accessibility?',
        hint: CATEGORIES_HINT,
      },
    );
    // Spaces and underscores are read as the hyphen they stand for before looking for a close match.
    assert.deepEqual(
      usageError(() => parseCategoryThresholds('Best _ Practic=0.9')),
      {
        message: '--min Best _ Practic=0.9: unknown category "Best _ Practic"; did you mean best-practices?',
        hint: CATEGORIES_HINT,
      },
    );
    assert.deepEqual(
      usageError(() => categoryThresholdsFromRecord({ sea: 0.9 })),
      {
        message: 'thresholds.sea: unknown category "sea"; did you mean seo?',
        hint: CATEGORIES_HINT,
      },
    );
  });

  it('an unknown category is offered close categories only, never an audit its letters abbreviate (si, lcp)', () => {
    assert.deepEqual(
      usageError(() => parseCategoryThresholds('si=0.9')),
      { message: '--min si=0.9: unknown category "si"; did you mean seo?', hint: CATEGORIES_HINT },
    );
    assert.deepEqual(
      usageError(() => parseCategoryThresholds('lcp=0.9')),
      { message: '--min lcp=0.9: unknown category "lcp"', hint: CATEGORIES_HINT },
    );
  });

  it('MUTATION-ANALYSIS: a minimum score is a fraction 0–1 or a whole percentage 2–100, whatever the input, spelled back in its own syntax', () => {
    assert.equal(normalizeMinScore(0, 'x'), 0);
    assert.equal(normalizeMinScore(1, 'x'), 1);
    assert.equal(normalizeMinScore(0.5, 'x'), 0.5);
    assert.equal(normalizeMinScore(2, 'x'), 0.02);
    assert.equal(normalizeMinScore(100, 'x'), 1);
    for (const value of [-0.01, 1.01, 1.5, 101, 90.5, Number.NaN, Infinity]) {
      assert.deepEqual(
        usageError(() => normalizeMinScore(value, 'the input')),
        {
          message: `the input: a minimum score is a fraction from 0 to 1 or a whole percentage from 2 to 100, not ${value}`,
          hint: 'write 90 % as performance=0.9 or performance=90',
        },
        String(value),
      );
    }
  });

  it('MUTATION-ANALYSIS: resource inputs: a category minimum and an audit maximum must be numbers, named by their key or index', () => {
    assert.deepEqual(
      usageError(() => categoryThresholdsFromRecord({ performance: '90' })),
      {
        message: 'thresholds.performance: expected a number, got "90"',
        hint: undefined,
      },
    );
    assert.equal(usageError(() => auditThresholdsFromInput({ 'dom-size': '200' })).message, 'audits.dom-size: expected a number, got "200"');
    assert.equal(usageError(() => auditThresholdsFromInput({ 'dom-size': Number.NaN })).message, 'audits.dom-size: expected a number, got null');
    assert.equal(usageError(() => auditThresholdsFromInput({ 'dom-size': Infinity })).message, 'audits.dom-size: expected a number, got null');
    assert.equal(usageError(() => auditThresholdsFromInput({ lcp: 2500 })).message, 'audits.lcp: unknown audit "lcp"; did you mean largest-contentful-paint?');
    assert.equal(usageError(() => auditThresholdsFromInput(['dom-size<=1', 1500])).message, 'audits[1]: expected a string like "total-blocking-time<=200"');
    assert.equal(
      usageError(() => auditThresholdsFromInput(['dom-size<=1', 'lcp<=1'])).message,
      'audits[1]: unknown audit "lcp"; did you mean largest-contentful-paint?',
    );
    assert.deepEqual(auditThresholdsFromInput({ 'dom-size': 0.5, interactive: 3800 }), [
      { kind: 'audit', audit: 'dom-size', operator: '<=', value: 0.5 },
      { kind: 'audit', audit: 'interactive', operator: '<=', value: 3800 },
    ]);
  });
});

describe('analysis: thresholds named back and the categories they need (MUTATION-ANALYSIS)', () => {
  const thresholds: Threshold[] = [
    { kind: 'category', category: 'best-practices', min: 0.95 },
    lcpMax(2500),
    lcpMax(2500, { property: 'numericValue', operator: '<' }),
    { kind: 'audit', audit: 'is-on-https', property: 'score', operator: '>=', value: 1 },
    { kind: 'audit', audit: 'unused-javascript', property: 'length', operator: '>', value: 0 },
  ];

  it('MUTATION-ANALYSIS: a threshold is described as it would be written, with .score or .length, and shown under its name', () => {
    assert.deepEqual(thresholds.map(describeThreshold), [
      'best-practices>=0.95',
      'largest-contentful-paint<=2500',
      'largest-contentful-paint<2500',
      'is-on-https.score>=1',
      'unused-javascript.length>0',
    ]);
    assert.deepEqual(thresholds.map(thresholdName), [
      'best-practices',
      'largest-contentful-paint',
      'largest-contentful-paint',
      'is-on-https.score',
      'unused-javascript.length',
    ]);
  });

  it("PAG-Q-CATEGORY: an audit threshold asks for its audit's category and performance; an audit of no known category asks for performance", () => {
    assert.deepEqual(categoriesFor([{ kind: 'audit', audit: 'color-contrast', operator: '>=', property: 'score', value: 1 }]), [
      'performance',
      'accessibility',
    ]);
    assert.deepEqual(categoriesFor([{ kind: 'audit', audit: 'no-such-audit', operator: '<=', value: 1 }]), ['performance']);
    assert.deepEqual(categoriesFor([]), ['performance']);
    assert.deepEqual(categoriesFor([{ kind: 'category', category: 'seo', min: 0.9 }]), ['seo']);
    assert.deepEqual(
      categoriesFor([
        { kind: 'category', category: 'seo', min: 0.9 },
        { kind: 'category', category: 'accessibility', min: 0.9 },
      ]),
      ['accessibility', 'seo'],
    );
  });
});
