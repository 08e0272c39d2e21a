// A fixture for test/reporter.test.ts (not matched by the test glob): a file whose wall time is at least 300 ms.
describe('slow', () => { before((done) => { setTimeout(done, 300); }); it('passes', () => {}); });
