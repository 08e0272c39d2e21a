// A fixture for test/reporter.test.ts (not matched by the test glob): a before hook that fails stops two tests.
describe('ok', () => { it('passes', () => {}); it('skipped', function () { this.skip(); }); });
describe('broken', () => { before(() => { throw new Error('peer missing'); }); it('one', () => {}); it('two', () => {}); });
