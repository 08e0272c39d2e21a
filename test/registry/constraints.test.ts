import assert from 'node:assert/strict';
import { NoMatchingVersionError, parseConstraints, selectVersion } from '../../lib/registry/constraints.js';

const pick = (versions: string[], constraint: string) => selectVersion(versions, parseConstraints(constraint)).version;

describe('registry: version constraints (Terraform semantics on semver)', () => {
  const listed = ['0.9.0', '1.0.0', '1.2.0', '1.2.3', '1.2.9', '1.3.0', '1.10.1', '2.0.0', '2.1.0-beta.1', 'v2.0.1'];

  it('the newest allowed version wins; no constraint means the newest release', () => {
    assert.equal(pick(listed, ''), 'v2.0.1');
    assert.equal(pick(['1.0.0', '1.10.0', '1.9.0'], ''), '1.10.0');
  });

  it('supports =, !=, >, >=, <, <= and comma as "and"; a bare version means =', () => {
    assert.equal(pick(listed, '= 1.2.3'), '1.2.3');
    assert.equal(pick(listed, '1.2.3'), '1.2.3');
    assert.equal(pick(listed, '>= 1.0, < 1.3'), '1.2.9');
    assert.equal(pick(listed, '> 1.2.9, <= 1.3.0'), '1.3.0');
    assert.equal(pick(listed, '< 2, != 1.10.1'), '1.3.0');
  });

  it('~>1.2 is >=1.2.0 <2.0.0 and ~>1.2.3 is >=1.2.3 <1.3.0', () => {
    assert.equal(pick(listed, '~> 1.2'), '1.10.1');
    assert.equal(pick(listed, '~>1.2.3'), '1.2.9');
    // go-version: with one written part there is no part to hold, so ~> 1 is just >= 1.0.0.
    assert.equal(pick(listed, '~> 1'), 'v2.0.1');
    assert.throws(() => pick(['1.1.9', '1.2.2', '1.3.0'], '~> 1.2.3'), NoMatchingVersionError);
  });

  it('accepts a v prefix in constraints and in listed versions (the listed spelling is kept)', () => {
    assert.equal(pick(listed, '>= v2.0.1'), 'v2.0.1');
    assert.equal(pick(['v1.0.0', 'v1.1.0'], '~> v1.0'), 'v1.1.0');
  });

  it('pre-releases only when named exactly', () => {
    assert.equal(pick(listed, '>= 2.0.0'), 'v2.0.1');
    assert.throws(() => pick(listed, '>= 2.1.0-beta.1'), NoMatchingVersionError);
    assert.equal(pick(['1.0.0', '2.0.0-rc.1'], '>= 1.0'), '1.0.0');
    assert.equal(pick(listed, '2.1.0-beta.1'), '2.1.0-beta.1');
    assert.equal(pick(listed, '= 2.1.0-beta.1'), '2.1.0-beta.1');
  });

  it('skips listed versions that do not parse and reports them', () => {
    const selection = selectVersion(['1.0.0', 'latest', '1.x', '1.1.0', ''], parseConstraints('>= 1.0'));
    assert.equal(selection.version, '1.1.0');
    assert.deepEqual(selection.skipped, ['latest', '1.x', '']);
  });

  it('"no version matches" names the constraint and the newest available version', () => {
    assert.throws(
      () => pick(listed, '~> 3.0'),
      (error: unknown) => error instanceof NoMatchingVersionError && /matches "~> 3.0"; the newest available is v2.0.1/.test(error.message) && error.exitCode === 1,
    );
  });

  it('refuses malformed constraints with a clear usage error', () => {
    for (const bad of ['>= ', '=> 1.0', '~> 1.0,', '1.0.0.0', '>= one', '>=1.0 <2.0']) {
      assert.throws(() => parseConstraints(bad), (error: unknown) => (error as { exitCode?: number }).exitCode === 2 && /version constraint/.test((error as Error).message), bad);
    }
  });
});
