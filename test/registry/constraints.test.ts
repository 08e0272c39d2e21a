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
      (error: unknown) =>
        error instanceof NoMatchingVersionError && /matches "~> 3.0"; the newest available is v2.0.1/.test(error.message) && error.exitCode === 1,
    );
  });

  it('refuses malformed constraints with a clear usage error', () => {
    for (const bad of ['>= ', '=> 1.0', '~> 1.0,', '1.0.0.0', '>= one', '>=1.0 <2.0']) {
      assert.throws(
        () => parseConstraints(bad),
        (error: unknown) => (error as { exitCode?: number }).exitCode === 2 && /version constraint/.test((error as Error).message),
        bad,
      );
    }
  });

  describe("Terraform-exact pre-releases (the cases of OpenTofu's module installer, internal/initwd/testdata/prerelease-*)", () => {
    // The registry of those cases lists one pre-release above two releases.
    const registry = ['0.0.3-alpha.1', '0.0.2', '0.0.1'];

    it('a constraint that is exactly the pre-release selects it, with or without "=" and "v"', () => {
      for (const constraint of ['0.0.3-alpha.1', 'v0.0.3-alpha.1', '=0.0.3-alpha.1', '=v0.0.3-alpha.1', '= 0.0.3-alpha.1']) {
        assert.equal(pick(registry, constraint), '0.0.3-alpha.1', constraint);
      }
    });

    it('an upper bound naming a pre-release is an ordinary bound for releases: <=0.0.3-alpha.1 picks 0.0.2', () => {
      assert.equal(pick(registry, '<=0.0.3-alpha.1'), '0.0.2');
      assert.equal(pick(registry, '<=v0.0.3-alpha.1'), '0.0.2');
      assert.equal(pick(registry, '< 0.0.3-alpha.1'), '0.0.2');
    });

    it('a lower bound naming a pre-release never selects it: >=0.0.3-alpha.1 matches nothing here', () => {
      assert.throws(() => pick(registry, '>=0.0.3-alpha.1'), NoMatchingVersionError);
      assert.throws(() => pick(registry, '>=v0.0.3-alpha.1'), NoMatchingVersionError);
      // A release above the bound is fine.
      assert.equal(pick([...registry, '0.0.3'], '>= 0.0.3-alpha.1'), '0.0.3');
    });

    it('an exact pre-release combined with another part selects nothing (no pre-release, and no release equals it)', () => {
      assert.throws(() => pick(registry, '0.0.3-alpha.1, >=0.0.2'), NoMatchingVersionError);
      assert.throws(() => pick(['1.0.0', '1.2.0-beta', '1.2.0'], '1.2.0-beta, >= 1.0'), NoMatchingVersionError);
    });

    it('~> naming a pre-release matches no release and selects no pre-release', () => {
      assert.throws(() => pick(['1.1.0', '1.2.0-beta', '1.2.0', '1.2.1'], '~> 1.2.0-beta'), NoMatchingVersionError);
      assert.throws(
        () => pick(['1.2.0-beta', '1.2.0-beta.2'], '~> 1.2.0-beta'),
        (error: unknown) => error instanceof NoMatchingVersionError && /exactly that version/.test(error.hint ?? ''),
        'the hint says how a pre-release is selected',
      );
      // Without a pre-release in the constraint, ~> keeps its meaning.
      assert.equal(pick(['1.1.0', '1.2.0-beta', '1.2.0', '1.2.1'], '~> 1.2.0'), '1.2.1');
    });

    it('!= and no constraint never select a pre-release', () => {
      assert.equal(pick(['1.0.0', '2.0.0-rc.1'], '!= 0.9.0'), '1.0.0');
      assert.throws(() => pick(['2.0.0-rc.1'], ''), NoMatchingVersionError);
    });
  });
});
