// A fixture for test/reporter.test.ts (not matched by the test glob): an after hook fails once every test has passed.
describe('after', () => { after(() => { throw new Error('cleanup'); }); it('passes', () => {}); });
