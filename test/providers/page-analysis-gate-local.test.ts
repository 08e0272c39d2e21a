// PageAnalysisGate's local engine through the engine harness (consumer mode, esm): Lighthouse in Chromium for real
// against a page on 127.0.0.1, in the parallel part of `npm test` (a light page scores ≥ 0.9 under load too:
// docs/testing.md, "Running the suite"). The api engine's tests are page-analysis-gate.test.ts.
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectDeploymentFailure, Harness, type Stack } from '../harness/index.js';
import { startTestSite, type TestSite } from '../analysis/site.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'page-analysis-gate.cjs'), esm: path.join(programs, 'page-analysis-gate.mjs') };

describe('PageAnalysisGate (Pulumi dynamic resource) through the engine harness: the local engine', function () {
  this.timeout(300_000);
  let site: TestSite;
  let stack: Stack | undefined;

  before(async () => {
    site = await startTestSite();
  });
  afterEach(async () => {
    await stack?.dispose();
    stack = undefined;
  });
  after(async () => {
    await site?.stop();
  });

  it('esm consumer, local engine: Lighthouse in Chromium gates a page on 127.0.0.1; a 404 page fails the create with the engine error (ERRORED_DOCUMENT_REQUEST) and records nothing', async () => {
    stack = await Harness.consumer({ kind: 'esm' });
    const created = await stack.up(program, { url: `${site.url}/`, thresholds: { performance: 0.9, accessibility: 0.9 }, runs: 1, engine: 'local' });
    assert.equal(created.outputs.passed, true);
    assert.equal(created.outputs.engineUsed, 'local');
    const scores = created.outputs.scores as Record<string, number>;
    assert.ok(scores.performance >= 0.9 && scores.accessibility >= 0.9, JSON.stringify(scores));
    await stack.destroy();

    const failed = await expectDeploymentFailure(stack.up(program, { url: `${site.url}/missing`, thresholds: { performance: 0.5 }, runs: 3, engine: 'local' }));
    assert.match(failed.message, /could not analyse the page/);
    assert.match(failed.message, /ERRORED_DOCUMENT_REQUEST/);
    assert.equal(failed.result.resources.gate, undefined, 'nothing recorded for a gate that never passed');
  });
});
