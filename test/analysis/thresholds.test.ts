// Gate thresholds as a user writes them (lib/analysis/thresholds.ts): what is read, what is refused with which words,
// and how a threshold is named back. In process and fast: `npm run mutate -- analysis` runs it for every mutant.
import assert from 'node:assert/strict';
import { parseCategoryThresholds } from '../../lib/analysis/thresholds.js';
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

describe('analysis: threshold syntax (MUTATION-ANALYSIS)', () => {
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
});
