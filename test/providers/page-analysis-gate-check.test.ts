// PageAnalysisGate's Check and Diff, called as the dynamic-provider plugin calls them (the harness drives full
// deployments in pageAnalysisGate.test.ts; it has no preview, so values unknown at preview time are tested here).
import assert from 'node:assert/strict';
import { pageAnalysisGateOperations } from '../../providers/page-analysis-gate-operations.js';

const UNKNOWN = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

describe('PageAnalysisGate: Check and Diff', () => {
  it('reports every bad input by property, with the reason', async () => {
    const { failures } = await pageAnalysisGateOperations.check(
      {},
      {
        url: 'ftp://x/',
        thresholds: { speed: 1 },
        audits: ['lcp=1'],
        runs: 2.5,
        aggregation: 'mean',
        strategy: 'tablet',
        engine: 'cloud',
        reportS3: 'bucket',
        triggers: { v: 1 },
      },
    );
    assert.deepEqual(
      failures.map((f) => f.property),
      ['url', 'thresholds', 'audits', 'runs', 'aggregation', 'strategy', 'engine', 'reportS3', 'triggers'],
    );
    assert.match(failures[1].reason, /unknown category "speed"/);
    const missing = await pageAnalysisGateOperations.check({}, { url: 'https://shop.example/' });
    assert.deepEqual(
      missing.failures.map((f) => f.property),
      ['thresholds'],
    );
  });

  it('values not known at preview time (a URL from a site not created yet) are not refused', async () => {
    const { failures, inputs } = await pageAnalysisGateOperations.check(
      {},
      { url: UNKNOWN, thresholds: { performance: UNKNOWN }, triggers: { version: UNKNOWN } },
    );
    assert.deepEqual(failures, []);
    assert.equal(inputs.url, UNKNOWN);
    const mixed = await pageAnalysisGateOperations.check({}, { url: UNKNOWN, thresholds: { performance: 0.9 }, runs: 0 });
    assert.deepEqual(
      mixed.failures.map((f) => f.property),
      ['runs'],
    );
  });

  it('any input change (triggers, thresholds, URL) means an update; outputs alone do not', async () => {
    const olds = {
      url: 'https://a/',
      thresholds: { performance: 0.9 },
      triggers: { version: '1' },
      passed: true,
      analyzedAt: 'then',
      scores: { performance: 1 },
      checks: [],
      reportUrl: null,
      storageReports: null,
      engineUsed: 'local',
      engineVersion: null,
    };
    assert.equal(
      (await pageAnalysisGateOperations.diff('id', olds, { url: 'https://a/', thresholds: { performance: 0.9 }, triggers: { version: '1' } })).changes,
      false,
    );
    assert.equal((await pageAnalysisGateOperations.diff('id', olds, { ...olds, triggers: { version: '2' } })).changes, true);
    assert.equal((await pageAnalysisGateOperations.diff('id', olds, { ...olds, thresholds: { performance: 0.95 } })).changes, true);
    assert.deepEqual((await pageAnalysisGateOperations.diff('id', olds, { ...olds, url: 'https://b/' })).replaces, []);
  });
});
