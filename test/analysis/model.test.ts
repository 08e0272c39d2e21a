/* eslint-disable @typescript-eslint/no-explicit-any -- tests edit recorded JSON documents freely */
import assert from 'node:assert/strict';
import {
  CATEGORIES,
  STRATEGIES,
  effectiveCategories,
  effectiveStrategy,
  parsePageanalysisResponse,
  PageanalysisResponseError,
  RENDERER_FORMATTED_STRING_NAMES,
  lighthouseResultToResponse,
} from '../../lib/analysis/index.js';
import { recordedLighthouseResult, recordedResponse } from './fixture.js';

type Json = Record<string, any>;

function rejects(mutate: (r: Json) => void, path: string): void {
  const response = recordedResponse();
  mutate(response);
  assert.throws(
    () => parsePageanalysisResponse(response),
    (error: unknown) => error instanceof PageanalysisResponseError && error.problems.some((p) => p.startsWith(`${path}:`)),
    `a wrong type at ${path} must be rejected, naming the path`,
  );
}

function accepts(mutate: (r: Json) => void, read: (r: Json) => unknown, expected: unknown): void {
  const response = recordedResponse();
  mutate(response);
  const parsed = parsePageanalysisResponse(response) as Json;
  assert.deepEqual(read(parsed), expected);
}

/** One line per field rule: where the field sits, a good value, a value of the wrong type. */
const fieldRules: Array<{ rule: string; path: string; set: (r: Json, v: unknown) => void; get: (r: Json) => unknown; good: unknown; bad: unknown }> = [
  { rule: 'PAG-RESP-KIND', path: '$.kind', set: (r, v) => (r.kind = v), get: (r) => r.kind, good: 'pageanalysis#result', bad: 5 },
  {
    rule: 'PAG-RESP-CAPTCHA-RESULT',
    path: '$.captchaResult',
    set: (r, v) => (r.captchaResult = v),
    get: (r) => r.captchaResult,
    good: 'CAPTCHA_NOT_NEEDED',
    bad: true,
  },
  { rule: 'PAG-RESP-ID', path: '$.id', set: (r, v) => (r.id = v), get: (r) => r.id, good: 'https://example.com/final', bad: ['x'] },
  {
    rule: 'PAG-RESP-ANALYSIS-UTC-TIMESTAMP',
    path: '$.analysisUTCTimestamp',
    set: (r, v) => (r.analysisUTCTimestamp = v),
    get: (r) => r.analysisUTCTimestamp,
    good: '2026-11-21T12:00:00.000Z',
    bad: 1700000000,
  },
  { rule: 'PAG-RESP-VERSION', path: '$.version', set: (r, v) => (r.version = v), get: (r) => r.version, good: { major: '5', minor: '1' }, bad: '5.1' },
  { rule: 'PAG-OBJ-VERSION', path: '$.version.major', set: (r, v) => (r.version = { major: v, minor: '0' }), get: (r) => r.version.major, good: '12', bad: 12 },
  {
    rule: 'PAG-RESP-BEACON-RESULT',
    path: '$.beaconResult',
    set: (r, v) => (r.beaconResult = v),
    get: (r) => r.beaconResult,
    good: { runWarnings: ['kept'] },
    bad: 'result',
  },
  {
    rule: 'PAG-RESP-LOADING-EXPERIENCE',
    path: '$.loadingExperience',
    set: (r, v) => (r.loadingExperience = v),
    get: (r) => r.loadingExperience,
    good: { id: 'https://example.com/', overall_category: 'FAST' },
    bad: [],
  },
  {
    rule: 'PAG-RESP-ORIGIN-LOADING-EXPERIENCE',
    path: '$.originLoadingExperience',
    set: (r, v) => (r.originLoadingExperience = v),
    get: (r) => r.originLoadingExperience,
    good: { id: 'https://example.com', origin_fallback: true },
    bad: 'fast',
  },
  {
    rule: 'PAG-LE-ID',
    path: '$.loadingExperience.id',
    set: (r, v) => (r.loadingExperience = { id: v }),
    get: (r) => r.loadingExperience.id,
    good: 'https://example.com/*',
    bad: 7,
  },
  {
    rule: 'PAG-LE-METRICS',
    path: '$.loadingExperience.metrics["LARGEST_CONTENTFUL_PAINT_MS"]',
    set: (r, v) => (r.loadingExperience = { metrics: { LARGEST_CONTENTFUL_PAINT_MS: v } }),
    get: (r) => r.loadingExperience.metrics.LARGEST_CONTENTFUL_PAINT_MS,
    good: { percentile: 1800, category: 'FAST', distributions: [] },
    bad: 1800,
  },
  {
    rule: 'PAG-LE-OVERALL-CATEGORY',
    path: '$.loadingExperience.overall_category',
    set: (r, v) => (r.loadingExperience = { overall_category: v }),
    get: (r) => r.loadingExperience.overall_category,
    good: 'AVERAGE',
    bad: 2,
  },
  {
    rule: 'PAG-LE-INITIAL-URL',
    path: '$.loadingExperience.initial_url',
    set: (r, v) => (r.loadingExperience = { id: 'https://example.com/b', initial_url: v }),
    get: (r) => r.loadingExperience.initial_url,
    good: 'https://example.com/a',
    bad: {},
  },
  {
    rule: 'PAG-LE-ORIGIN-FALLBACK',
    path: '$.originLoadingExperience.origin_fallback',
    set: (r, v) => (r.originLoadingExperience = { origin_fallback: v }),
    get: (r) => r.originLoadingExperience.origin_fallback,
    good: false,
    bad: 'true',
  },
  {
    rule: 'PAG-BR-FETCH-TIME',
    path: '$.beaconResult.fetchTime',
    set: (r, v) => (r.beaconResult.fetchTime = v),
    get: (r) => r.beaconResult.fetchTime,
    good: '2026-11-21T12:00:00.000Z',
    bad: null,
  },
  {
    rule: 'PAG-BR-REQUESTED-URL',
    path: '$.beaconResult.requestedUrl',
    set: (r, v) => (r.beaconResult.requestedUrl = v),
    get: (r) => r.beaconResult.requestedUrl,
    good: 'http://a.test/',
    bad: 1,
  },
  {
    rule: 'PAG-BR-FINAL-URL',
    path: '$.beaconResult.finalUrl',
    set: (r, v) => (r.beaconResult.finalUrl = v),
    get: (r) => r.beaconResult.finalUrl,
    good: 'http://a.test/final',
    bad: false,
  },
  {
    rule: 'PAG-BR-BEACON-VERSION',
    path: '$.beaconResult.beaconVersion',
    set: (r, v) => (r.beaconResult.beaconVersion = v),
    get: (r) => r.beaconResult.beaconVersion,
    good: '12.8.2',
    bad: 12.8,
  },
  {
    rule: 'PAG-BR-I18N',
    path: '$.beaconResult.i18n',
    set: (r, v) => (r.beaconResult.i18n = v),
    get: (r) => r.beaconResult.i18n,
    good: { rendererFormattedStrings: {} },
    bad: 'en',
  },
  {
    rule: 'PAG-OBJ-I18N',
    path: '$.beaconResult.i18n.rendererFormattedStrings',
    set: (r, v) => (r.beaconResult.i18n = { rendererFormattedStrings: v }),
    get: (r) => r.beaconResult.i18n.rendererFormattedStrings,
    good: { labDataTitle: 'Lab data' },
    bad: ['Lab data'],
  },
  {
    rule: 'PAG-BR-USER-AGENT',
    path: '$.beaconResult.userAgent',
    set: (r, v) => (r.beaconResult.userAgent = v),
    get: (r) => r.beaconResult.userAgent,
    good: 'Mozilla/5.0',
    bad: {},
  },
  {
    rule: 'PAG-BR-AUDITS',
    path: '$.beaconResult.audits["interactive"]',
    set: (r, v) => (r.beaconResult.audits.interactive = v),
    get: (r) => r.beaconResult.audits.interactive,
    good: { id: 'interactive', score: 0.5, numericValue: 4000, extra: 'kept' },
    bad: 4000,
  },
  {
    rule: 'PAG-BR-CATEGORY-GROUPS',
    path: '$.beaconResult.categoryGroups',
    set: (r, v) => (r.beaconResult.categoryGroups = v),
    get: (r) => r.beaconResult.categoryGroups,
    good: { metrics: { title: 'Metrics' } },
    bad: ['metrics'],
  },
  {
    rule: 'PAG-BR-STACK-PACKS',
    path: '$.beaconResult.stackPacks',
    set: (r, v) => (r.beaconResult.stackPacks = v),
    get: (r) => r.beaconResult.stackPacks,
    good: [{ id: 'wordpress', title: 'WordPress', iconDataURL: 'data:image/svg+xml;base64,PHN2Zy8+', descriptions: { 'unused-css-rules': 'Use a plugin' } }],
    bad: { id: 'wordpress' },
  },
  {
    rule: 'PAG-OBJ-STACK-PACK',
    path: '$.beaconResult.stackPacks[0].descriptions["unused-css-rules"]',
    set: (r, v) => (r.beaconResult.stackPacks = [{ id: 'x', descriptions: { 'unused-css-rules': v } }]),
    get: (r) => r.beaconResult.stackPacks[0].descriptions['unused-css-rules'],
    good: 'advice',
    bad: 3,
  },
  {
    rule: 'PAG-BR-ENVIRONMENT',
    path: '$.beaconResult.environment',
    set: (r, v) => (r.beaconResult.environment = v),
    get: (r) => r.beaconResult.environment,
    good: { networkUserAgent: 'a', hostUserAgent: 'b', benchmarkIndex: 1500 },
    bad: 'linux',
  },
  {
    rule: 'PAG-OBJ-ENVIRONMENT',
    path: '$.beaconResult.environment.benchmarkIndex',
    set: (r, v) => (r.beaconResult.environment = { benchmarkIndex: v }),
    get: (r) => r.beaconResult.environment.benchmarkIndex,
    good: 2048.5,
    bad: 'fast',
  },
  {
    rule: 'PAG-BR-RUNTIME-ERROR',
    path: '$.beaconResult.runtimeError',
    set: (r, v) => (r.beaconResult.runtimeError = v),
    get: (r) => r.beaconResult.runtimeError,
    good: { code: 'NO_FCP', message: 'The page did not paint any content.' },
    bad: 'NO_FCP',
  },
  {
    rule: 'PAG-OBJ-RUNTIME-ERROR',
    path: '$.beaconResult.runtimeError.code',
    set: (r, v) => (r.beaconResult.runtimeError = { code: v, message: 'm' }),
    get: (r) => r.beaconResult.runtimeError.code,
    good: 'ERRORED_DOCUMENT_REQUEST',
    bad: 404,
  },
  {
    rule: 'PAG-BR-CATEGORIES',
    path: '$.beaconResult.categories',
    set: (r, v) => (r.beaconResult.categories = v),
    get: (r) => r.beaconResult.categories,
    good: { performance: { id: 'performance', score: 0.5 } },
    bad: [],
  },
  {
    rule: 'PAG-OBJ-CATEGORIES',
    path: '$.beaconResult.categories.best-practices',
    set: (r, v) => (r.beaconResult.categories['best-practices'] = v),
    get: (r) => r.beaconResult.categories['best-practices'],
    good: { id: 'best-practices', title: 'Best Practices', score: 1 },
    bad: 1,
  },
  {
    rule: 'PAG-OBJ-BEACON-CATEGORY',
    path: '$.beaconResult.categories.seo.score',
    set: (r, v) => (r.beaconResult.categories.seo.score = v),
    get: (r) => r.beaconResult.categories.seo.score,
    good: null,
    bad: '0.9',
  },
  {
    rule: 'PAG-OBJ-AUDIT-REF',
    path: '$.beaconResult.categories.performance.auditRefs[0].weight',
    set: (r, v) => (r.beaconResult.categories.performance.auditRefs = [{ id: 'interactive', weight: v, group: 'metrics' }]),
    get: (r) => r.beaconResult.categories.performance.auditRefs[0].weight,
    good: 10,
    bad: '10',
  },
  {
    rule: 'PAG-BR-TIMING',
    path: '$.beaconResult.timing',
    set: (r, v) => (r.beaconResult.timing = v),
    get: (r) => r.beaconResult.timing,
    good: { total: 9000 },
    bad: 9000,
  },
  {
    rule: 'PAG-OBJ-TIMING',
    path: '$.beaconResult.timing.total',
    set: (r, v) => (r.beaconResult.timing = { total: v }),
    get: (r) => r.beaconResult.timing.total,
    good: 12345.6,
    bad: '12 s',
  },
  {
    rule: 'PAG-BR-CONFIG-SETTINGS',
    path: '$.beaconResult.configSettings',
    set: (r, v) => (r.beaconResult.configSettings = v),
    get: (r) => r.beaconResult.configSettings,
    good: { formFactor: 'desktop', onlyCategories: ['performance'] },
    bad: 'desktop',
  },
  {
    rule: 'PAG-OBJ-CONFIG-SETTINGS',
    path: '$.beaconResult.configSettings.emulatedFormFactor',
    set: (r, v) => (r.beaconResult.configSettings = { emulatedFormFactor: v, onlyCategories: null, locale: 'en-US', channel: 'lr' }),
    get: (r) => r.beaconResult.configSettings.emulatedFormFactor,
    good: 'desktop',
    bad: 1,
  },
];

describe('analysis: the v5 model, validated at the boundary', () => {
  it('PAG-EP-RUN / PAG-RESP-BEACON-RESULT: a real recorded response parses and keeps every field', () => {
    const original = recordedResponse();
    const parsed = parsePageanalysisResponse(recordedResponse());
    assert.deepEqual(parsed, original);
    assert.equal(typeof parsed.beaconResult?.categories?.performance?.score, 'number');
  });

  for (const rule of fieldRules) {
    it(`${rule.rule}: ${rule.path.replace(/^\$\./, '')} of the right type is kept; of the wrong type it is an error naming ${rule.path}`, () => {
      accepts((r) => rule.set(r, rule.good), rule.get, rule.good);
      rejects((r) => rule.set(r, rule.bad), rule.path);
    });
  }

  it('PAG-OBJ-RENDERER-FORMATTED-STRINGS: every one of the 16 strings is checked as a string', () => {
    assert.equal(RENDERER_FORMATTED_STRING_NAMES.length, 16);
    for (const name of RENDERER_FORMATTED_STRING_NAMES) {
      accepts(
        (r) => (r.beaconResult.i18n = { rendererFormattedStrings: { [name]: 'text' } }),
        (r) => r.beaconResult.i18n.rendererFormattedStrings[name],
        'text',
      );
      rejects((r) => (r.beaconResult.i18n = { rendererFormattedStrings: { [name]: 0 } }), `$.beaconResult.i18n.rendererFormattedStrings.${name}`);
    }
    // A real Lighthouse 12 run carries most of them (it dropped scorescaleLabel and others): absent ones are optional.
    const real = recordedResponse().beaconResult.i18n.rendererFormattedStrings;
    const present = RENDERER_FORMATTED_STRING_NAMES.filter((name) => name in real);
    assert.ok(present.length >= 12, `the recorded run has ${present.join(', ')}`);
    assert.equal('scorescaleLabel' in real, false);
    for (const name of present) assert.equal(typeof real[name], 'string');
  });

  it('PAG-BR-RUN-WARNINGS: runWarnings is always present after parsing, [] when the service left it out', () => {
    const response = recordedResponse();
    delete response.beaconResult.runWarnings;
    assert.deepEqual(parsePageanalysisResponse(response).beaconResult?.runWarnings, []);
    rejects((r) => (r.beaconResult.runWarnings = 'none'), '$.beaconResult.runWarnings');
  });

  it('PAG-OBJ-BEACON-CATEGORY: a score outside 0..1 is rejected; null is allowed (the weighted average may be missing)', () => {
    rejects((r) => (r.beaconResult.categories.performance.score = 1.5), '$.beaconResult.categories.performance.score');
    accepts(
      (r) => (r.beaconResult.categories.performance.score = null),
      (r) => r.beaconResult.categories.performance.score,
      null,
    );
  });

  it('unknown fields are kept at every level; optional fields may be absent', () => {
    const response = recordedResponse();
    response.futureField = { nested: [1, 2] };
    response.beaconResult.entities = 'kept';
    response.beaconResult.categories.performance.futureScore = 0.5;
    const parsed = parsePageanalysisResponse(response) as Json;
    assert.deepEqual(parsed.futureField, { nested: [1, 2] });
    assert.equal(parsed.beaconResult.entities, 'kept');
    assert.equal(parsed.beaconResult.categories.performance.futureScore, 0.5);
    assert.deepEqual(parsePageanalysisResponse({}), {});
  });

  it('every problem is reported at once, and the message names the paths', () => {
    const response = recordedResponse();
    response.kind = 1;
    response.beaconResult.finalUrl = 2;
    try {
      parsePageanalysisResponse(response, 'the test body');
      assert.fail('expected an error');
    } catch (error) {
      assert.ok(error instanceof PageanalysisResponseError);
      assert.equal(error.problems.length, 2);
      assert.match(
        error.message,
        /the test body is not a valid page analysis v5 response: \$\.kind: expected a string, got number 1; \$\.beaconResult\.finalUrl/,
      );
      assert.equal(error.exitCode, 3);
    }
    assert.throws(() => parsePageanalysisResponse('<html>'), /\$: expected an object, got string/);
  });

  it('PAG-ENUM-CATEGORY: the five category values, UNSPECIFIED meaning none; none means PERFORMANCE only (AMB-27)', () => {
    assert.deepEqual([...CATEGORIES], ['CATEGORY_UNSPECIFIED', 'ACCESSIBILITY', 'BEST_PRACTICES', 'PERFORMANCE', 'SEO']);
    assert.deepEqual(effectiveCategories(undefined), ['performance']);
    assert.deepEqual(effectiveCategories(['CATEGORY_UNSPECIFIED']), ['performance']);
    assert.deepEqual(effectiveCategories(['SEO', 'BEST_PRACTICES', 'SEO']), ['seo', 'best-practices']);
  });

  it('PAG-ENUM-STRATEGY: the three strategy values; none or UNSPECIFIED means DESKTOP (AMB-27)', () => {
    assert.deepEqual([...STRATEGIES], ['STRATEGY_UNSPECIFIED', 'DESKTOP', 'MOBILE']);
    assert.equal(effectiveStrategy(undefined), 'DESKTOP');
    assert.equal(effectiveStrategy('STRATEGY_UNSPECIFIED'), 'DESKTOP');
    assert.equal(effectiveStrategy('MOBILE'), 'MOBILE');
  });

  it('PAG-BR-BEACON-VERSION / PAG-RESP-ID: a Lighthouse result maps into the v5 shape (lighthouseVersion → beaconVersion, id = final URL, no field data)', () => {
    const lhr = recordedLighthouseResult();
    lhr.finalDisplayedUrl = 'http://127.0.0.1:1/after-redirect';
    lhr.runtimeError = { code: 'NO_FCP', message: 'no paint', errorStack: 'at /somewhere/in/node_modules' };
    const response = lighthouseResultToResponse(lhr) as Json;
    assert.equal(response.beaconResult.beaconVersion, lhr.lighthouseVersion);
    assert.equal('lighthouseVersion' in response.beaconResult, false);
    assert.equal(response.id, 'http://127.0.0.1:1/after-redirect');
    assert.equal(response.beaconResult.finalUrl, 'http://127.0.0.1:1/after-redirect');
    assert.equal(response.analysisUTCTimestamp, lhr.fetchTime);
    assert.equal(response.loadingExperience, undefined);
    assert.deepEqual(response.beaconResult.runtimeError, { code: 'NO_FCP', message: 'no paint' });
    assert.deepEqual(response.version, { major: lhr.lighthouseVersion.split('.')[0], minor: lhr.lighthouseVersion.split('.')[1] });
  });

  it('PAG-VER-V5: the client speaks /pageanalysis/v5; result types keep their documented names (AMB-26)', async () => {
    const { RUN_PATH } = await import('../../lib/analysis/index.js');
    assert.equal(RUN_PATH, 'pageanalysis/v5/runPageanalysis');
  });
});
