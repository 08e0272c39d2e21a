/* eslint-disable @typescript-eslint/no-explicit-any -- tests edit recorded JSON documents freely */
import assert from 'node:assert/strict';
import {
  aggregate,
  categoriesFor,
  evaluateRuns,
  median,
  parseAuditThreshold,
  parseCategoryThresholds,
  categoryThresholdsFromRecord,
  auditThresholdsFromInput,
  representativeRunIndex,
  runGate,
  type AnalysisEngine,
  type AnalysisRequest,
  type BeaconResult,
  type PageanalysisApiResponse,
  type Threshold,
} from '../../lib/analysis/index.js';
import { UsageError } from '../../lib/errors.js';
import { responseWith } from './fixture.js';

function run(fcp: number, tti: number, extra: { performance?: number | null; lcp?: number } = {}): PageanalysisApiResponse {
  return responseWith({
    scores: extra.performance === undefined ? {} : { performance: extra.performance },
    metrics: { 'first-contentful-paint': fcp, interactive: tti, ...(extra.lcp === undefined ? {} : { 'largest-contentful-paint': extra.lcp }) },
  }) as PageanalysisApiResponse;
}

const perf = (min: number): Threshold => ({ kind: 'category', category: 'performance', min });
const lcp = (max: number): Threshold => ({ kind: 'audit', audit: 'largest-contentful-paint', operator: '<=', value: max });

describe('analysis: thresholds', () => {
  it('category thresholds read 0.9 and 90 alike, in a comma list, with = >= or :', () => {
    assert.deepEqual(parseCategoryThresholds('performance=0.9, accessibility>=95,best-practices:1,SEO=100'), [
      { kind: 'category', category: 'performance', min: 0.9 },
      { kind: 'category', category: 'accessibility', min: 0.95 },
      { kind: 'category', category: 'best-practices', min: 1 },
      { kind: 'category', category: 'seo', min: 1 },
    ]);
    assert.deepEqual(categoryThresholdsFromRecord({ performance: 90, BEST_PRACTICES: 0.8 }), [
      { kind: 'category', category: 'performance', min: 0.9 },
      { kind: 'category', category: 'best-practices', min: 0.8 },
    ]);
  });

  it('bad thresholds are usage errors naming the part: unknown category, not a number, out of range', () => {
    assert.throws(
      () => parseCategoryThresholds('speed=0.9'),
      (e: unknown) => e instanceof UsageError && /unknown category "speed"/.test(e.message) && e.exitCode === 2,
    );
    assert.throws(() => parseCategoryThresholds('performance=fast'), /"fast" is not a number/);
    assert.throws(() => parseCategoryThresholds('performance=120'), /a fraction from 0 to 1 or a whole percentage from 2 to 100, not 120/);
    // Ambiguous: 1.01 would otherwise read as 1.01 % (a gate that always passes), 1.5 as 1.5 %, 90.5 as a precision no score has.
    for (const text of ['seo=1.01', 'seo=1.5', 'seo=90.5', 'seo=-0.1']) {
      assert.throws(
        () => parseCategoryThresholds(text),
        (e: unknown) =>
          e instanceof UsageError &&
          e.exitCode === 2 &&
          /a fraction from 0 to 1 or a whole percentage from 2 to 100/.test(e.message) &&
          e.hint === 'write 90 % as seo=0.9 or seo=90',
        text,
      );
    }
    assert.throws(
      () => categoryThresholdsFromRecord({ seo: 1.01 }),
      (e: unknown) => e instanceof UsageError && /^thresholds\.seo: /.test(e.message) && e.hint === 'write 90 % as { seo: 0.9 } or { seo: 90 }',
    );
    assert.deepEqual(parseCategoryThresholds('seo=1,accessibility=2,performance=0'), [
      { kind: 'category', category: 'seo', min: 1 },
      { kind: 'category', category: 'accessibility', min: 0.02 },
      { kind: 'category', category: 'performance', min: 0 },
    ]);
    assert.throws(() => parseCategoryThresholds('performance'), /not a category threshold/);
    assert.throws(() => parseAuditThreshold('largest-contentful-paint=2500'), /not an audit threshold/);
    assert.throws(() => auditThresholdsFromInput({ 'total-blocking-time': '200' }), /expected a number/);
  });

  it('audit thresholds take <=, <, >=, > on numeric values', () => {
    assert.deepEqual(parseAuditThreshold('largest-contentful-paint<=2500'), { kind: 'audit', audit: 'largest-contentful-paint', operator: '<=', value: 2500 });
    assert.deepEqual(parseAuditThreshold('cumulative-layout-shift < 0.1'), { kind: 'audit', audit: 'cumulative-layout-shift', operator: '<', value: 0.1 });
    assert.deepEqual(auditThresholdsFromInput({ 'total-blocking-time': 200 }), [{ kind: 'audit', audit: 'total-blocking-time', operator: '<=', value: 200 }]);
    assert.deepEqual(auditThresholdsFromInput(['interactive>3000']), [{ kind: 'audit', audit: 'interactive', operator: '>', value: 3000 }]);
  });

  it('PAG-Q-CATEGORY: only the categories the thresholds name are asked for; performance when none is named', () => {
    assert.deepEqual(categoriesFor([]), ['performance']);
    assert.deepEqual(categoriesFor([{ kind: 'category', category: 'seo', min: 0.9 }]), ['seo']);
    assert.deepEqual(categoriesFor([{ kind: 'category', category: 'seo', min: 0.9 }, lcp(2500)]), ['performance', 'seo']);
  });
});

describe('analysis: aggregation of N runs (as Lighthouse CI)', () => {
  it('median-run picks the run closest to the median FCP and median TTI', () => {
    const runs = [run(100, 900), run(300, 3000), run(200, 2000), run(5000, 2100)].map((r) => r.beaconResult as BeaconResult);
    // median FCP (upper median of 4, as LHCI) = 300, median TTI = 2100: run 3 (200, 2000) is nearest.
    assert.equal(representativeRunIndex(runs), 2);
    const three = [run(1000, 5000), run(1050, 5200), run(900, 9000)].map((r) => r.beaconResult as BeaconResult);
    assert.equal(representativeRunIndex(three), 1);
    assert.equal(representativeRunIndex([run(1, 1).beaconResult as BeaconResult]), 0);
  });

  it('median, optimistic and pessimistic lean the right way for scores and for timings', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(aggregate([0.5, 0.9, 0.7], 'optimistic', true, 0), 0.9);
    assert.equal(aggregate([0.5, 0.9, 0.7], 'pessimistic', true, 0), 0.5);
    assert.equal(aggregate([2500, 1800, 3000], 'optimistic', false, 0), 1800);
    assert.equal(aggregate([2500, 1800, 3000], 'pessimistic', false, 0), 3000);
    assert.equal(aggregate([2500, 1800, 3000], 'median-run', false, 2), 3000);
  });

  it('evaluation lists every check with value, threshold, per-run values and verdict; median-run uses one run for all', () => {
    const runs = [
      run(1000, 5000, { performance: 0.95, lcp: 1500 }),
      run(1050, 5200, { performance: 0.85, lcp: 2600 }),
      run(900, 9000, { performance: 0.99, lcp: 1000 }),
    ];
    const result = evaluateRuns('http://site.test/', runs, [perf(0.9), lcp(2500)], 'median-run');
    assert.equal(result.representativeRun, 1);
    assert.equal(result.status, 'fail');
    assert.deepEqual(
      result.checks.map((c) => [c.name, c.value, c.threshold, c.verdict]),
      [
        ['performance', 0.85, 0.9, 'fail'],
        ['largest-contentful-paint', 2600, 2500, 'fail'],
      ],
    );
    assert.deepEqual(result.checks[0].values, [0.95, 0.85, 0.99]);
    assert.match(result.checks[0].reason ?? '', /score 0.85 is not >= 0.9/);
    assert.equal(result.scores.performance, 0.85);

    const optimistic = evaluateRuns('http://site.test/', runs, [perf(0.9), lcp(2500)], 'optimistic');
    assert.equal(optimistic.status, 'pass');
    assert.deepEqual(
      optimistic.checks.map((c) => c.value),
      [0.99, 1000],
    );
    const median = evaluateRuns('http://site.test/', runs, [perf(0.9), lcp(2500)], 'median');
    assert.deepEqual(
      median.checks.map((c) => [c.value, c.verdict]),
      [
        [0.95, 'pass'],
        [1500, 'pass'],
      ],
    );
    const pessimistic = evaluateRuns('http://site.test/', runs, [perf(0.9)], 'pessimistic');
    assert.deepEqual(
      pessimistic.checks.map((c) => [c.value, c.verdict]),
      [[0.85, 'fail']],
    );
  });

  it('PAG-OBJ-BEACON-CATEGORY: a null score never passes, under any method; the reason says which run', () => {
    const runs = [run(1000, 5000, { performance: 1 }), run(1000, 5000, { performance: null }), run(1000, 5000, { performance: 1 })];
    for (const method of ['median', 'optimistic', 'pessimistic'] as const) {
      const result = evaluateRuns('http://site.test/', runs, [perf(0.5)], method);
      assert.equal(result.status, 'fail', method);
      assert.equal(result.checks[0].value, null);
      assert.match(result.checks[0].reason ?? '', /the performance score is null in run 2/);
    }
    const single = evaluateRuns('http://site.test/', [run(1, 1, { performance: null })], [perf(0)], 'median-run');
    assert.equal(single.status, 'fail');
    assert.equal(single.checks[0].reason, 'the performance score is null');
  });

  it('a category or audit missing from the result fails its check (never passes)', () => {
    const response = run(1, 1);
    delete (response.beaconResult as any).categories.seo;
    const result = evaluateRuns(
      'http://site.test/',
      [response],
      [
        { kind: 'category', category: 'seo', min: 0 },
        { kind: 'audit', audit: 'no-such-audit', operator: '<=', value: 1e9 },
      ],
      'median-run',
    );
    assert.deepEqual(
      result.checks.map((c) => [c.verdict, c.reason]),
      [
        ['fail', 'the category seo is not in the result'],
        ['fail', 'the audit no-such-audit is not in the result'],
      ],
    );
  });

  it('PAG-BR-RUNTIME-ERROR: a runtimeError in any run makes every check an error with the code, even with perfect scores elsewhere', () => {
    const broken = responseWith({ runtimeError: { code: 'NO_FCP', message: 'The page did not paint any content.' } }) as PageanalysisApiResponse;
    const result = evaluateRuns('http://site.test/', [run(1, 1, { performance: 1 }), broken], [perf(0), lcp(1e9)], 'optimistic');
    assert.equal(result.status, 'error');
    assert.ok(result.checks.every((c) => c.verdict === 'error' && c.value === null));
    assert.match(result.checks[0].reason ?? '', /run 2: the engine reported NO_FCP: The page did not paint any content/);
    assert.equal(result.scores.performance, null);
    assert.equal(evaluateRuns('http://site.test/', [{ kind: 'x' }], [perf(0)], 'median-run').status, 'error');
  });
});

describe('analysis: runGate with an engine', () => {
  // A scripted engine: gate orchestration without a browser. The engines themselves are tested against real peers.
  function scripted(responses: PageanalysisApiResponse[]): AnalysisEngine & { asked: AnalysisRequest[] } {
    const asked: AnalysisRequest[] = [];
    return {
      name: 'api',
      asked,
      async analyze(request) {
        asked.push(request);
        return { response: responses[(asked.length - 1) % responses.length] };
      },
    };
  }

  it('runs N times per URL (default 3), reports progress run k of n, and asks only the needed categories', async () => {
    const engine = scripted([run(1000, 2000, { performance: 0.95 })]);
    const progress: string[] = [];
    const result = await runGate({
      urls: ['http://a.test/', 'http://b.test/'],
      engine,
      onProgress: (p) => progress.push(`${p.url} run ${p.run} of ${p.runs}`),
    });
    assert.equal(engine.asked.length, 6);
    assert.deepEqual(progress.slice(0, 3), ['http://a.test/ run 1 of 3', 'http://a.test/ run 2 of 3', 'http://a.test/ run 3 of 3']);
    assert.deepEqual(engine.asked[0], { url: 'http://a.test/', categories: ['performance'], strategy: 'DESKTOP' });
    assert.equal(result.status, 'pass');
    assert.equal(result.aggregation, 'median-run');
    assert.equal(result.checks.length, 2);
  });

  it('stops the runs of a URL at the first runtimeError: it can no longer pass', async () => {
    const engine = scripted([responseWith({ runtimeError: { code: 'CHROME_INTERSTITIAL_ERROR', message: 'interstitial' } }) as PageanalysisApiResponse]);
    const result = await runGate({ urls: ['http://127.0.0.1:9/'], engine, runs: 3 });
    assert.equal(engine.asked.length, 1);
    assert.equal(result.status, 'error');
  });

  it('rejects bad options before any run: no URL, not a URL, runs out of range', async () => {
    const engine = scripted([run(1, 1)]);
    await assert.rejects(runGate({ urls: [], engine }), /at least one URL/);
    await assert.rejects(runGate({ urls: ['example.com'], engine }), /"example.com" is not a URL/);
    await assert.rejects(runGate({ urls: ['ftp://example.com/'], engine }), /not an http\(s\) URL/);
    await assert.rejects(runGate({ urls: ['http://a.test/'], engine, runs: 0 }), /runs must be a whole number from 1 to 25/);
    assert.equal(engine.asked.length, 0);
  });
});
