// Gate evaluation (lib/analysis/evaluate.ts) on small hand-made results: each check's verdict, value and reason as the
// report shows them, the URL's scores under each aggregation, and what a run summary keeps. In process and fast:
// `npm run mutate -- analysis` runs it for every mutant.
import assert from 'node:assert/strict';
import type { CategoryId } from '../../lib/analysis/enums.js';
import { evaluateRuns } from '../../lib/analysis/evaluate.js';
import type { AuditResult, PageanalysisApiResponse } from '../../lib/analysis/model.js';
import type { Threshold } from '../../lib/analysis/thresholds.js';

interface RunOptions {
  /** first-contentful-paint and interactive: what picks the representative run. */
  fcp?: number;
  tti?: number;
  scores?: Partial<Record<CategoryId, number | null>>;
  audits?: Record<string, AuditResult>;
  finalUrl?: string;
  fetchTime?: string;
  id?: string;
  analyzedAt?: string;
  runtimeError?: { code?: string; message?: string };
}

function result(options: RunOptions = {}): PageanalysisApiResponse {
  const categories = Object.fromEntries(Object.entries(options.scores ?? {}).map(([id, score]) => [id, { id, score }]));
  return {
    ...(options.id === undefined ? {} : { id: options.id }),
    ...(options.analyzedAt === undefined ? {} : { analysisUTCTimestamp: options.analyzedAt }),
    beaconResult: {
      runWarnings: [],
      ...(options.finalUrl === undefined ? {} : { finalUrl: options.finalUrl }),
      ...(options.fetchTime === undefined ? {} : { fetchTime: options.fetchTime }),
      ...(options.runtimeError === undefined ? {} : { runtimeError: options.runtimeError as { code: string; message: string } }),
      categories,
      audits: {
        'first-contentful-paint': { numericValue: options.fcp ?? 1000 },
        interactive: { numericValue: options.tti ?? 2000 },
        ...options.audits,
      },
    },
  };
}

const URL = 'http://site.test/';
const perf = (min: number, extra: Partial<Threshold> = {}): Threshold => ({ kind: 'category', category: 'performance', min, ...extra }) as Threshold;
const audit = (id: string, operator: '<=' | '<' | '>=' | '>', value: number, extra: Partial<Threshold> = {}): Threshold =>
  ({ kind: 'audit', audit: id, operator, value, ...extra }) as Threshold;
const dom = (value: number): Record<string, AuditResult> => ({ 'dom-size': { numericValue: value } });

describe('analysis: gate evaluation, check by check (MUTATION-ANALYSIS)', () => {
  it('MUTATION-ANALYSIS: a check carries its name, kind, level, aggregation, operator and limit; a passed one has no reason', () => {
    const evaluation = evaluateRuns(
      URL,
      [result({ scores: { performance: 0.95 }, audits: dom(800) })],
      [perf(0.9), audit('dom-size', '<', 1000, { level: 'warn', aggregation: 'pessimistic' })],
      'median',
    );
    assert.deepEqual(evaluation.checks, [
      {
        url: URL,
        kind: 'category',
        name: 'performance',
        level: 'error',
        aggregation: 'median',
        operator: '>=',
        threshold: 0.9,
        value: 0.95,
        values: [0.95],
        verdict: 'pass',
      },
      {
        url: URL,
        kind: 'audit',
        name: 'dom-size',
        level: 'warn',
        aggregation: 'pessimistic',
        operator: '<',
        threshold: 1000,
        value: 800,
        values: [800],
        verdict: 'pass',
      },
    ]);
    assert.equal(evaluation.status, 'pass');
  });

  it('MUTATION-ANALYSIS: <= and >= include the limit, < and > exclude it', () => {
    const at = (operator: '<=' | '<' | '>=' | '>', value: number) =>
      evaluateRuns(URL, [result({ audits: dom(1000) })], [audit('dom-size', operator, value)], 'median-run').checks[0].verdict;
    assert.deepEqual([at('<=', 1000), at('<', 1000), at('>=', 1000), at('>', 1000)], ['pass', 'fail', 'pass', 'fail']);
    assert.deepEqual([at('<=', 999), at('<', 1001), at('>=', 1001), at('>', 999)], ['fail', 'pass', 'fail', 'pass']);
  });

  it('MUTATION-ANALYSIS: the reason of a failed check says what was compared (score, value, length), without float noise, and how it was aggregated', () => {
    const evaluation = evaluateRuns(
      URL,
      [
        result({
          scores: { performance: 0.1 + 0.2 },
          audits: {
            'dom-size': { numericValue: 0.1 + 0.2 },
            'is-on-https': { score: 0 },
            'unused-javascript': { details: { items: [{}, {}] } },
          },
        }),
      ],
      [
        perf(0.9),
        audit('dom-size', '<', 0.25),
        audit('is-on-https', '>=', 1, { property: 'score', level: 'warn' }),
        audit('unused-javascript', '<=', 1, { property: 'length', aggregation: 'optimistic' }),
      ],
      'median-run',
    );
    assert.deepEqual(
      evaluation.checks.map((c) => [c.verdict, c.reason]),
      [
        ['fail', 'score 0.3 is not >= 0.9 (performance>=0.9, median-run)'],
        ['fail', 'value 0.3 is not < 0.25 (dom-size<0.25, median-run)'],
        ['warn', 'score 0 is not >= 1 (is-on-https.score>=1, median-run, warn)'],
        ['fail', 'length 2 is not <= 1 (unused-javascript.length<=1, optimistic)'],
      ],
    );
    assert.equal(evaluation.checks[1].value, 0.1 + 0.2, 'the value itself keeps its precision');
    assert.equal(evaluation.status, 'fail');
  });

  it('MUTATION-ANALYSIS: score and length as Lighthouse CI reads them: not applicable is 1, informative 0, no items list 0 items; anything else has no score', () => {
    const audits: Record<string, AuditResult> = {
      'is-on-https': { score: null, scoreDisplayMode: 'notApplicable' },
      'errors-in-console': { score: null, scoreDisplayMode: 'informative' },
      'focus-traps': { score: null, scoreDisplayMode: 'manual' },
      'uses-http2': { score: null },
      'unused-javascript': { details: { type: 'table' } },
      'unused-css-rules': { details: { items: 'none' } },
      'dom-size': { score: 1 },
    };
    const evaluation = evaluateRuns(
      URL,
      [result({ audits })],
      [
        audit('is-on-https', '>=', 1, { property: 'score' }),
        audit('errors-in-console', '<=', 0, { property: 'score' }),
        audit('focus-traps', '>=', 0, { property: 'score' }),
        audit('uses-http2', '>=', 0, { property: 'score' }),
        audit('unused-javascript', '<=', 0, { property: 'length' }),
        audit('unused-css-rules', '<=', 0, { property: 'length' }),
        audit('dom-size', '<=', 1e9, { property: 'numericValue' }),
      ],
      'median-run',
    );
    assert.deepEqual(
      evaluation.checks.map((c) => [c.value, c.verdict, c.reason]),
      [
        [1, 'pass', undefined],
        [0, 'pass', undefined],
        [null, 'fail', 'the audit focus-traps has no score (manual)'],
        [null, 'fail', 'the audit uses-http2 has no score (null)'],
        [0, 'pass', undefined],
        [0, 'pass', undefined],
        [null, 'fail', 'the audit dom-size has no numeric value'],
      ],
    );
  });

  it('MUTATION-ANALYSIS: optimistic and pessimistic lean by the operator: up for >= and >, down for <= and <', () => {
    const runs = [result({ audits: dom(100) }), result({ audits: dom(300) }), result({ audits: dom(200) })];
    const value = (operator: '<=' | '<' | '>=' | '>', method: 'optimistic' | 'pessimistic') =>
      evaluateRuns(URL, runs, [audit('dom-size', operator, 0)], method).checks[0].value;
    assert.deepEqual([value('>=', 'optimistic'), value('>', 'optimistic'), value('<=', 'optimistic'), value('<', 'optimistic')], [300, 300, 100, 100]);
    assert.deepEqual([value('>=', 'pessimistic'), value('>', 'pessimistic'), value('<=', 'pessimistic'), value('<', 'pessimistic')], [100, 100, 300, 300]);
  });

  it('MUTATION-ANALYSIS: median-run needs a value from its run only; the other methods from every run, and say which run lacked it', () => {
    // Run 2 (FCP 1000, TTI 2000) is the representative one; run 1 has no dom-size value.
    const runs = [result({ fcp: 100, tti: 100, audits: { 'dom-size': {} } }), result({ audits: dom(500) }), result({ fcp: 5000, tti: 9000, audits: dom(700) })];
    const medianRun = evaluateRuns(URL, runs, [audit('dom-size', '<=', 1000)], 'median-run');
    assert.equal(medianRun.representativeRun, 1);
    assert.deepEqual(
      medianRun.checks.map((c) => [c.value, c.values, c.verdict]),
      [[500, [null, 500, 700], 'pass']],
    );
    const own = evaluateRuns(URL, runs, [audit('dom-size', '<=', 1000, { aggregation: 'median' })], 'median-run');
    assert.deepEqual(
      own.checks.map((c) => [c.value, c.verdict, c.reason]),
      [[null, 'fail', 'the audit dom-size has no numeric value in run 1']],
    );
    const warned = evaluateRuns(URL, runs, [audit('dom-size', '<=', 1000, { level: 'warn' })], 'pessimistic');
    assert.deepEqual(
      warned.checks.map((c) => [c.verdict, c.reason]),
      [['warn', 'the audit dom-size has no numeric value in run 1']],
    );
    assert.equal(warned.status, 'pass');
    const lacking = evaluateRuns(
      URL,
      [result({ fcp: 100, tti: 100, audits: dom(1) }), result(), result({ fcp: 5000, tti: 9000, audits: dom(1) })],
      [audit('dom-size', '<=', 1)],
      'median-run',
    );
    assert.equal(lacking.checks[0].reason, 'the audit dom-size is not in the result in run 2');
  });

  it('MUTATION-ANALYSIS: no thresholds, no checks: the URL passes; no runs at all is a programming error', () => {
    const evaluation = evaluateRuns(URL, [result({ scores: { seo: 0.5 } })], [], 'median');
    assert.deepEqual([evaluation.checks, evaluation.status, evaluation.scores], [[], 'pass', { seo: 0.5 }]);
    assert.throws(
      () => evaluateRuns(URL, [], [perf(0.9)], 'median-run'),
      (error: unknown) => error instanceof RangeError && error.message === 'evaluateRuns needs at least one run',
    );
  });
});

describe("analysis: a URL's scores, final URL and runs (MUTATION-ANALYSIS)", () => {
  const runs = [
    result({ fcp: 100, tti: 100, scores: { performance: 0.5, accessibility: 0.9, seo: 1 }, finalUrl: 'http://site.test/a' }),
    result({ fcp: 1000, tti: 2000, scores: { performance: 0.7, accessibility: null }, finalUrl: 'http://site.test/b' }),
    result({ fcp: 5000, tti: 9000, scores: { performance: 0.9, accessibility: 0.8 }, finalUrl: 'http://site.test/c' }),
  ];

  it("MUTATION-ANALYSIS: each category's score is aggregated as the gate's method says; a run without it makes it null, a category no run has is left out", () => {
    const scores = (method: 'median-run' | 'median' | 'optimistic' | 'pessimistic') => evaluateRuns(URL, runs, [], method).scores;
    // Run 2 is the representative one: seo is not in it, accessibility is null in it.
    assert.deepEqual(scores('median-run'), { performance: 0.7, accessibility: null, seo: null });
    assert.deepEqual(scores('median'), { performance: 0.7, accessibility: null, seo: null });
    assert.deepEqual(scores('optimistic'), { performance: 0.9, accessibility: null, seo: null });
    assert.deepEqual(scores('pessimistic'), { performance: 0.5, accessibility: null, seo: null });
    const complete = [result({ scores: { seo: 0.4 } }), result({ scores: { seo: 0.6 } })];
    assert.deepEqual(evaluateRuns(URL, complete, [], 'optimistic').scores, { seo: 0.6 });
    assert.deepEqual(evaluateRuns(URL, complete, [], 'pessimistic').scores, { seo: 0.4 });
    const representativeHasIt = [result({ fcp: 1, tti: 1 }), result({ scores: { seo: 0.4 } }), result({ fcp: 9000, tti: 9000 })];
    assert.deepEqual(evaluateRuns(URL, representativeHasIt, [], 'median-run').scores, { seo: 0.4 });
  });

  it("MUTATION-ANALYSIS: the URL's final URL is the representative run's, or its response id; each run keeps its own, its time and scores", () => {
    const evaluation = evaluateRuns(URL, runs, [], 'median-run');
    assert.equal(evaluation.finalUrl, 'http://site.test/b');
    const withIds = [
      result({
        fcp: 1,
        tti: 1,
        id: 'http://site.test/1',
        finalUrl: 'http://site.test/one',
        analyzedAt: '2026-01-01T00:00:00Z',
        fetchTime: '2025-12-31T00:00:00Z',
      }),
      result({ id: 'http://site.test/2', fetchTime: '2026-01-02T00:00:00Z', scores: { performance: null } }),
      result({ fcp: 9000, tti: 9000 }),
    ];
    const fallback = evaluateRuns(URL, withIds, [], 'median-run');
    assert.equal(fallback.finalUrl, 'http://site.test/2');
    assert.deepEqual(fallback.runs, [
      { run: 1, finalUrl: 'http://site.test/one', analyzedAt: '2026-01-01T00:00:00Z', scores: {} },
      { run: 2, finalUrl: 'http://site.test/2', analyzedAt: '2026-01-02T00:00:00Z', scores: { performance: null } },
      { run: 3, finalUrl: undefined, analyzedAt: undefined, scores: {} },
    ]);
  });

  it('PAG-BR-RUNTIME-ERROR: the first failed run decides: its code and message in every check, its final URL, null for each category asked', () => {
    const failing = [
      result({ finalUrl: 'http://site.test/1', scores: { performance: 1 } }),
      result({ finalUrl: 'http://site.test/2', runtimeError: { code: 'NO_FCP', message: 'no paint' } }),
      result({ finalUrl: 'http://site.test/3', runtimeError: { code: 'PAGE_HUNG' } }),
    ];
    const evaluation = evaluateRuns(URL, failing, [perf(0), audit('dom-size', '<=', 1e9), { kind: 'category', category: 'seo', min: 0 }], 'median');
    assert.equal(evaluation.status, 'error');
    assert.equal(evaluation.finalUrl, 'http://site.test/2');
    assert.equal(evaluation.representativeRun, 1);
    assert.deepEqual(evaluation.scores, { performance: null, seo: null });
    assert.deepEqual(
      evaluation.checks.map((c) => [c.name, c.verdict, c.value, c.values, c.reason]),
      ['performance', 'dom-size', 'seo'].map((name) => [name, 'error', null, [null, null, null], 'run 2: the engine reported NO_FCP: no paint']),
    );
    assert.deepEqual(
      evaluation.runs.map((r) => r.runtimeError),
      [undefined, { code: 'NO_FCP', message: 'no paint' }, { code: 'PAGE_HUNG', message: '' }],
    );
    assert.ok(!('runtimeError' in evaluation.runs[0]), 'a run that went well has no runtimeError field');

    const noMessage = evaluateRuns(URL, [result({ runtimeError: { code: 'PAGE_HUNG' } })], [audit('dom-size', '<=', 1)], 'median-run');
    assert.deepEqual(
      noMessage.checks.map((c) => c.reason),
      ['run 1: the engine reported PAGE_HUNG:'],
    );
    assert.deepEqual(noMessage.scores, {});
    const noResult = evaluateRuns(URL, [{ id: 'http://site.test/x' }], [perf(0)], 'median-run');
    assert.deepEqual(
      [noResult.status, noResult.finalUrl, noResult.checks[0].reason, noResult.runs[0].runtimeError],
      [
        'error',
        'http://site.test/x',
        'run 1: the engine reported NO_RESULT: the response has no beaconResult',
        { code: 'NO_RESULT', message: 'the response has no beaconResult' },
      ],
    );
  });

  it("PAG-OBJ-RUNTIME-ERROR: a runtimeError of NO_ERROR, or without a code, is no error: the run's checks are evaluated", () => {
    for (const runtimeError of [{ code: 'NO_ERROR' }, { message: 'all fine' }]) {
      const evaluation = evaluateRuns(URL, [result({ scores: { performance: 1 }, runtimeError })], [perf(0.9)], 'median-run');
      assert.deepEqual([evaluation.status, evaluation.checks[0].verdict], ['pass', 'pass'], JSON.stringify(runtimeError));
      assert.ok(!('runtimeError' in evaluation.runs[0]));
    }
  });
});
