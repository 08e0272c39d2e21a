/* eslint-disable @typescript-eslint/no-explicit-any -- tests edit recorded JSON documents freely */
// Lighthouse CI configuration into thresholds (lib/analysis/lhci.ts), the audit list against Lighthouse's own
// default configuration, and the new threshold properties evaluated on the recorded real run.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { UsageError } from '../../lib/errors.js';
import { AUDIT_IDS, NON_NAVIGATION_AUDITS, evaluateRuns, lhciToGate, runGate, type AuditThreshold } from '../../lib/analysis/index.js';
import { recordedResponse } from './fixture.js';

const usageError = (pattern: RegExp) => (error: unknown) => error instanceof UsageError && error.exitCode === 2 && pattern.test(error.message);

describe('analysis: unknown audits are refused before running (the audit list)', () => {
  it("the list is Lighthouse 12.8.2's navigation audits: every audit of its default configuration, by the id its module declares", async () => {
    const require = createRequire(import.meta.url);
    const configPath = require.resolve('lighthouse/core/config/default-config.js');
    const { default: config } = (await import(configPath)) as { default: { audits: Array<string | { path: string }> } };
    const ids: string[] = [];
    for (const entry of config.audits) {
      const path = typeof entry === 'string' ? entry : entry.path;
      const module = (await import(new URL(`../audits/${path}.js`, `file://${configPath}`).href)) as { default: { meta: { id: string } } };
      ids.push(module.default.meta.id);
    }
    assert.deepEqual([...ids.filter((id) => !NON_NAVIGATION_AUDITS.includes(id))].sort(), [...AUDIT_IDS]);
    // …and what a real page load produced (the recorded run, all four categories).
    assert.deepEqual(Object.keys(recordedResponse().beaconResult.audits).sort(), [...AUDIT_IDS]);
  });

  it('runGate refuses a threshold on an unknown audit before the engine is asked', async () => {
    let asked = 0;
    const engine = {
      name: 'api' as const,
      analyze: async () => {
        asked += 1;
        throw new Error('not reached');
      },
    };
    await assert.rejects(
      runGate({ urls: ['http://127.0.0.1:8080/'], thresholds: [{ kind: 'audit', audit: 'lcp', operator: '<=', value: 2500 }], engine }),
      usageError(/unknown audit "lcp"; did you mean largest-contentful-paint/),
    );
    assert.equal(asked, 0);
  });
});

describe('analysis: Lighthouse CI configuration into thresholds', () => {
  const file = 'lighthouserc.json';

  it('levels, properties and defaults as Lighthouse CI reads them: no property means minScore 0.9; aggregation optimistic unless set', () => {
    const gate = lhciToGate(
      {
        ci: {
          collect: { url: 'http://a/' },
          assert: {
            assertions: {
              'categories:seo': 'error',
              'is-on-https': 'warn',
              'dom-size': ['error', { maxNumericValue: 1500 }],
              'unused-javascript': ['warn', { maxLength: 0, minScore: 0.5, aggregationMethod: 'median' }],
              'categories.accessibility': ['error', { minScore: 1 }],
              'bf-cache': 'off',
            },
          },
        },
      },
      file,
    );
    assert.deepEqual(gate.urls, ['http://a/']);
    assert.equal(gate.strategy, 'MOBILE');
    assert.deepEqual(gate.thresholds, [
      { kind: 'category', category: 'seo', min: 0.9, level: 'error', aggregation: 'optimistic' },
      { kind: 'audit', audit: 'is-on-https', property: 'score', operator: '>=', value: 0.9, level: 'warn', aggregation: 'optimistic' },
      { kind: 'audit', audit: 'dom-size', property: 'numericValue', operator: '<=', value: 1500, level: 'error', aggregation: 'optimistic' },
      { kind: 'audit', audit: 'unused-javascript', property: 'score', operator: '>=', value: 0.5, level: 'warn', aggregation: 'median' },
      { kind: 'audit', audit: 'unused-javascript', property: 'length', operator: '<=', value: 0, level: 'warn', aggregation: 'median' },
      { kind: 'category', category: 'accessibility', min: 1, level: 'error', aggregation: 'optimistic' },
    ]);
  });

  it("presets: the file's assertions merge over the preset's (level replaced, options merged); onlyCategories drops the preset's others", () => {
    const recommended = lhciToGate(
      { ci: { assert: { preset: 'lighthouse:recommended', assertions: { 'unused-javascript': ['warn', { minScore: 0.5 }] } } } },
      file,
    );
    const unused = recommended.thresholds.filter((t) => t.kind === 'audit' && t.audit === 'unused-javascript') as AuditThreshold[];
    assert.deepEqual(
      unused.map((t) => [t.property, t.value, t.level]),
      [
        ['score', 0.5, 'warn'],
        ['length', 0, 'warn'],
      ],
    );
    const names = (gate: ReturnType<typeof lhciToGate>) => new Set(gate.thresholds.map((t) => (t.kind === 'audit' ? t.audit : `categories:${t.category}`)));
    const all = names(lhciToGate({ ci: { assert: { preset: 'lighthouse:all' } } }, file));
    const rec = names(recommended);
    const noPwa = names(lhciToGate({ ci: { assert: { preset: 'lighthouse:no-pwa' } } }, file));
    assert.ok(all.has('uses-http2') && !rec.has('uses-http2'), 'recommended turns uses-http2 off');
    assert.ok(rec.has('viewport') && !noPwa.has('viewport') && !noPwa.has('is-on-https'), 'no-pwa turns viewport and is-on-https off');
    assert.ok(!all.has('total-blocking-time') && !all.has('metrics') && !all.has('cache-insight'), 'diagnostics and insights are not asserted');
    const perfOnly = lhciToGate({ ci: { collect: { settings: { onlyCategories: ['performance'] } }, assert: { preset: 'lighthouse:recommended' } } }, file);
    assert.ok(perfOnly.thresholds.every((t) => t.kind === 'audit' && !['color-contrast', 'meta-description', 'errors-in-console'].includes(t.audit)));
    assert.ok(perfOnly.thresholds.some((t) => t.kind === 'audit' && t.audit === 'first-contentful-paint'));
  });

  it('what would be dropped is refused (exit 2 naming the file): unknown audits, assertMatrix, budgetsFile, extends, resource-summary and user-timings assertions, bad levels and values', () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { ci: { assert: { assertions: { 'first-contentfull-paint': 'error' } } } },
        /lighthouserc\.json: assertions\["first-contentfull-paint"\]: unknown audit .*did you mean first-contentful-paint/,
      ],
      [{ ci: { assert: { assertMatrix: [] } } }, /ci\.assert\.assertMatrix is not supported/],
      [{ ci: { assert: { budgetsFile: 'budget.json' } } }, /ci\.assert\.budgetsFile is not supported/],
      [{ ci: { extends: './base.json' } }, /ci\.extends is not supported/],
      [
        { ci: { assert: { assertions: { 'resource-summary:font:count': ['warn', { maxNumericValue: 1 }] } } } },
        /resource-summary assertions are not supported/,
      ],
      [{ ci: { assert: { assertions: { 'user-timings:my-mark': ['error', { maxNumericValue: 50 }] } } } }, /user-timings assertions are not supported/],
      [{ ci: { assert: { assertions: { 'dom-size': 'fatal' } } } }, /the level must be off, warn or error/],
      [{ ci: { assert: { assertions: { 'categories:performance': ['error', { minScore: 90 }] } } } }, /minScore is a score from 0 to 1, not 90/],
      [{ ci: { assert: { assertions: { 'categories:performance': ['error', { maxNumericValue: 90 }] } } } }, /a category has a score only/],
      [{ ci: { assert: { assertions: { 'categories:speed': 'error' } } } }, /unknown category "speed"/],
      [{ ci: { assert: { preset: 'lighthouse:strict' } } }, /not a Lighthouse CI preset/],
      [{ ci: { assert: { aggregationMethod: 'mean' } } }, /"mean" is not an aggregation method/],
      [{ ci: { collect: { numberOfRuns: 0 } } }, /numberOfRuns must be a whole number from 1 to 25/],
      [{ collect: {} }, /no "ci" object/],
    ];
    for (const [config, pattern] of cases) assert.throws(() => lhciToGate(config, file), usageError(pattern), JSON.stringify(config));
  });

  it('score and length thresholds on the recorded run: not applicable counts as 1, a manual audit has no score and fails, a missing details list is 0 items; a warn does not fail the URL', () => {
    const response = recordedResponse();
    const { thresholds } = lhciToGate(
      {
        ci: {
          assert: {
            assertions: {
              'redirects-http': 'error', // notApplicable on the recorded page
              'errors-in-console': ['warn', { minScore: 1 }], // scored 0
              'uses-responsive-images': ['error', { maxLength: 0 }],
              'focus-traps': ['error', { minScore: 0.5 }], // manual: no score at all
            },
          },
        },
      },
      file,
    );
    const evaluation = evaluateRuns('http://127.0.0.1:8080/', [response as any], thresholds, 'median-run');
    assert.deepEqual(
      evaluation.checks.map((c) => [c.name, c.value, c.verdict]),
      [
        ['redirects-http.score', 1, 'pass'],
        ['errors-in-console.score', 0, 'warn'],
        ['uses-responsive-images.length', 0, 'pass'],
        ['focus-traps.score', null, 'fail'],
      ],
    );
    assert.match(evaluation.checks[3]!.reason ?? '', /the audit focus-traps has no score \(manual\)/);
    assert.equal(evaluation.status, 'fail');
    const warnOnly = evaluateRuns('http://127.0.0.1:8080/', [response as any], thresholds.slice(0, 2), 'median-run');
    assert.equal(warnOnly.status, 'pass');
  });
});
