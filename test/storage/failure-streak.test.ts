// FailureStreak (lib/storage/upload/retry.ts): the one count of a transfer's failures in a row that the resumable
// upload and the resumed download share. The transfers themselves are tested against the dev server in
// transfers.test.ts; this pins the counting rule both rely on.
import assert from 'node:assert/strict';
import { GantryError } from '../../lib/errors.js';
import { FailureStreak } from '../../lib/storage/upload/retry.js';

const retry = { attempts: 3, initialMs: 0, maxMs: 0 };

describe('FailureStreak: failures in a row of a transfer', () => {
  it('LAYER-RETRY: gives up on the attempts-th failure in a row, exit 3, the last failure as cause', () => {
    const streak = new FailureStreak(retry);
    const last = new Error('the connection failed');
    assert.equal(streak.next('the upload of a', new Error('first'), 'hint'), 0);
    assert.equal(streak.nextAttempt, 'attempt 2 of 3');
    assert.equal(streak.next('the upload of a', new Error('second'), 'hint'), 0);
    assert.throws(
      () => streak.next('the upload of a', last, 'try again later'),
      (error: unknown) =>
        error instanceof GantryError &&
        error.code === 'STORAGE_TRANSFER_GAVE_UP' &&
        error.exitCode === 3 &&
        error.cause === last &&
        /^the upload of a gave up after 3 failed attempts in a row/.test(error.message),
    );
  });

  it('LAYER-RETRY: progress past the best position starts the count over; going back or standing still does not', () => {
    const streak = new FailureStreak(retry, 100);
    streak.next('the download of b', new Error('x'), 'hint');
    streak.next('the download of b', new Error('x'), 'hint');
    streak.reached(100); // the bytes it had already: no progress
    assert.equal(streak.failures, 2);
    streak.reached(150);
    assert.equal(streak.failures, 0);
    streak.next('the download of b', new Error('x'), 'hint');
    streak.reached(120); // behind the best: still one failure in a row
    assert.equal(streak.failures, 1);
    streak.restart(); // a new session from byte 0: every position counts as progress again
    assert.equal(streak.failures, 0);
    streak.next('the download of b', new Error('x'), 'hint');
    streak.reached(1);
    assert.equal(streak.failures, 0);
  });
});
