import assert from 'node:assert/strict';
import { AGGREGATION_METHODS } from '../../lib/analysis/aggregate.js';
import { AUDIT_IDS } from '../../lib/analysis/audits.js';
import { CATEGORY_IDS } from '../../lib/analysis/enums.js';
import { LHCI_PRESETS, lhciToGate } from '../../lib/analysis/lhci.js';
import { describeThreshold, parseAuditThreshold, parseCategoryThresholds, type AuditThreshold } from '../../lib/analysis/thresholds.js';
import { anyText, check, fc, fromAlphabet, typed } from './fc.js';

const someAudits = fc.constantFrom(...AUDIT_IDS.slice(0, 40), 'no-such-audit', 'largest-contentful-paint', 'total-byte-weight');
const assertionKey = fc.oneof(
  someAudits,
  fc.constantFrom(...CATEGORY_IDS).map((c) => `categories:${c}`),
  fc.constantFrom('categories.performance', 'categories:pwa', 'resource-summary:script:size', 'performance-budget', '__proto__', 'constructor', 'toString'),
);
const option = fc.oneof(fc.constantFrom<unknown>(0, 0.9, 1, 1.5, -1, 2500, 0.5, 'x', null, true), fc.double());
const assertion = fc.oneof(
  fc.constantFrom<unknown>('off', 'warn', 'error', 'fatal', 1, null),
  fc.tuple(
    fc.constantFrom('warn', 'error', 'off', 'x'),
    fc.record(
      {
        minScore: option,
        maxNumericValue: option,
        maxLength: option,
        aggregationMethod: fc.constantFrom<unknown>(...AGGREGATION_METHODS, 'mean'),
        other: option,
      },
      { requiredKeys: [] },
    ),
  ),
  fc.constantFrom<unknown>([], ['error'], ['error', 'x'], {}),
);
/** A lighthouserc as people write them, each part sometimes of the wrong type. */
const config = fc.record(
  {
    ci: fc.record(
      {
        collect: fc.record(
          {
            url: fc.constantFrom<unknown>('http://127.0.0.1:8/', ['http://a/', 'http://b/'], [1], 7),
            numberOfRuns: fc.constantFrom<unknown>(1, 3, 0, 1.5, 1000, '2'),
            settings: fc.record(
              {
                preset: fc.constantFrom<unknown>('desktop', 'perf', 'mobile', 1),
                formFactor: fc.constantFrom<unknown>('desktop', 'mobile', 'tablet'),
                onlyCategories: fc.constantFrom<unknown>(['performance'], ['seo', 'accessibility'], ['pwa'], 'performance', [{}]),
              },
              { requiredKeys: [] },
            ),
            chromePath: fc.constant('/usr/bin/chrome'),
          },
          { requiredKeys: [] },
        ),
        assert: fc.record(
          {
            preset: fc.constantFrom<unknown>(...LHCI_PRESETS, 'lighthouse:none', 3),
            assertions: fc.oneof(fc.dictionary(assertionKey, assertion, { maxKeys: 5 }), fc.constantFrom<unknown>([], 'x')),
            aggregationMethod: fc.constantFrom<unknown>(...AGGREGATION_METHODS, 'sum'),
            budgetsFile: fc.constant('budget.json'),
          },
          { requiredKeys: [] },
        ),
        upload: fc.constant({ target: 'temporary-public-storage' }),
        extends: fc.constant('other.json'),
      },
      { requiredKeys: [] },
    ),
    lhci: fc.constantFrom<unknown>({}, 1),
  },
  { requiredKeys: [] },
);

describe('PROP-LIGHTHOUSERC: Lighthouse CI configuration files and threshold texts read into a gate', () => {
  it('PROP-LIGHTHOUSERC: lhciToGate answers a gate or a UsageError for any decoded configuration, and every threshold it answers is well-formed', () => {
    check(
      fc.oneof(config, fc.jsonValue({ maxDepth: 3 })),
      (raw) => {
        const answer = typed(() => lhciToGate(JSON.parse(JSON.stringify(raw ?? null)), 'lighthouserc.json'));
        if (!answer.ok) return;
        for (const t of answer.value.thresholds) {
          if (t.kind === 'category') assert.ok(CATEGORY_IDS.includes(t.category) && t.min >= 0 && t.min <= 1, describeThreshold(t));
          else assert.ok(AUDIT_IDS.includes(t.audit) && Number.isFinite(t.value), describeThreshold(t));
        }
      },
      800,
    );
  });

  it('PROP-LIGHTHOUSERC: --min and --audit texts answer thresholds or a UsageError, whatever the text', () => {
    const near = fromAlphabet(
      ['performance', 'seo', 'largest-contentful-paint', '=', '>=', '<=', '<', ':', ',', ' ', '0.9', '90', '-1', '1e3', '0x10', 'Infinity', '.', 'é'],
      8,
    );
    check(
      anyText(near),
      (text) => {
        typed(() => parseCategoryThresholds(text));
        typed(() => parseAuditThreshold(text));
      },
      800,
    );
  });

  it('PROP-LIGHTHOUSERC: a threshold printed by describeThreshold reads back equal', () => {
    const auditThreshold = fc.record({
      kind: fc.constant('audit' as const),
      audit: fc.constantFrom(...AUDIT_IDS),
      operator: fc.constantFrom('<=', '<', '>=', '>') as fc.Arbitrary<AuditThreshold['operator']>,
      value: fc.oneof(fc.nat(), fc.double({ min: 0, max: 1e9, noNaN: true })),
    });
    check(fc.tuple(auditThreshold, fc.constantFrom(...CATEGORY_IDS), fc.double({ min: 0, max: 1, noNaN: true })), ([audit, category, min]) => {
      assert.deepEqual(parseAuditThreshold(describeThreshold(audit)), { ...audit, value: audit.value + 0 });
      assert.deepEqual(parseCategoryThresholds(describeThreshold({ kind: 'category', category, min })), [{ kind: 'category', category, min: min + 0 }]);
    });
  });
});
