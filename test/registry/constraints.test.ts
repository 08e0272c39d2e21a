import assert from 'node:assert/strict';
import { SemVer } from 'semver';
import { GantryError } from '../../lib/errors.js';
import {
  allows,
  NoMatchingVersionError,
  parseConstraints,
  parseVersion,
  selectVersion,
  type ConstraintSet,
  type ParsedVersion,
} from '../../lib/registry/constraints.js';

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

describe('MUTATION-REGISTRY: what callers of parseVersion, parseConstraints, allows and selectVersion see', () => {
  /** The GantryError `call` throws, for its message, hint, code and exit code. */
  const thrown = (call: () => unknown): GantryError => {
    try {
      call();
    } catch (error) {
      assert.ok(error instanceof GantryError, `expected a GantryError, got ${String(error)}`);
      return error;
    }
    assert.fail('expected an error');
  };
  const version = (text: string) => parseVersion(text) as ParsedVersion;

  it('MUTATION-REGISTRY: parseVersion pads to three parts, drops leading zeros and build metadata, trims, and counts the written parts', () => {
    assert.deepEqual(parseVersion('1'), { semver: '1.0.0', segments: 1, prerelease: false });
    assert.deepEqual(parseVersion('v1.2'), { semver: '1.2.0', segments: 2, prerelease: false });
    assert.deepEqual(parseVersion(' 01.02.003+build.7 '), { semver: '1.2.3', segments: 3, prerelease: false });
    assert.deepEqual(parseVersion('1.2-rc.1+b'), { semver: '1.2.0-rc.1', segments: 2, prerelease: true });
    assert.deepEqual(parseVersion('1.0.0-rc.10+build.17'), { semver: '1.0.0-rc.10', segments: 3, prerelease: true });
  });

  it('MUTATION-REGISTRY: parseVersion answers undefined for what is not a version, including what semver refuses after the pattern', () => {
    for (const text of ['', 'latest', '1.2.3.4', '1.x', 'v', '1.2.3-01', '99999999999999999999.0.0']) assert.equal(parseVersion(text), undefined, text);
  });

  it('MUTATION-REGISTRY: parseVersion refuses a text that is not a string with a usage error naming it', () => {
    for (const text of [42, undefined, null]) {
      const error = thrown(() => parseVersion(text as unknown as string));
      assert.equal(error.exitCode, 2);
      assert.match(error.message, /^parseVersion: text must be a version string such as "1\.2\.3", got /);
    }
  });

  it('MUTATION-REGISTRY: parseConstraints trims, reads no constraint as any version, and keeps each part padded with its written length', () => {
    for (const none of ['', '   ', undefined, null]) assert.deepEqual(parseConstraints(none as string | undefined), { text: '', parts: [] });
    assert.deepEqual(parseConstraints('  ~> v1.2 ,!= 1.2.5 , <2  '), {
      text: '~> v1.2 ,!= 1.2.5 , <2',
      parts: [
        { operator: '~>', version: '1.2.0', segments: 2 },
        { operator: '!=', version: '1.2.5', segments: 3 },
        { operator: '<', version: '2.0.0', segments: 1 },
      ],
    });
    assert.deepEqual(parseConstraints('1.0.0-beta').parts, [{ operator: '=', version: '1.0.0-beta', segments: 3 }]);
  });

  it('MUTATION-REGISTRY: a constraint that is not a string, a malformed part and an invalid version are usage errors saying which', () => {
    const notText = thrown(() => parseConstraints(42 as unknown as string));
    assert.equal(notText.message, 'a version constraint must be a string such as "~> 1.2", got number');
    assert.equal(notText.code, 'INVALID_CONSTRAINT');
    assert.equal(notText.exitCode, 2);
    const malformed = thrown(() => parseConstraints('>= 1.0,  => 2 '));
    assert.equal(malformed.message, 'the version constraint ">= 1.0,  => 2" has an empty or malformed part "=> 2"');
    assert.equal(malformed.code, 'INVALID_CONSTRAINT');
    const invalid = thrown(() => parseConstraints('>= 1.0, < two'));
    assert.equal(invalid.message, 'the version constraint ">= 1.0, < two" has an invalid version "two"');
    assert.equal(invalid.code, 'INVALID_CONSTRAINT');
    assert.equal(invalid.hint, 'operators are =, !=, >, >=, <, <=, ~> followed by a version such as 1.2.3; separate parts with commas');
  });

  it('MUTATION-REGISTRY: each operator bounds on the right side, and ~> holds every written part but the last', () => {
    const allowed = (constraint: string, text: string) => allows(parseConstraints(constraint), version(text));
    assert.deepEqual(
      ['1.9.9', '2.0.0', '2.0.1'].map((v) => allowed('> 2.0.0', v)),
      [false, false, true],
    );
    assert.deepEqual(
      ['1.9.9', '2.0.0', '2.0.1'].map((v) => allowed('>= 2.0.0', v)),
      [false, true, true],
    );
    assert.deepEqual(
      ['1.9.9', '2.0.0', '2.0.1'].map((v) => allowed('< 2.0.0', v)),
      [true, false, false],
    );
    assert.deepEqual(
      ['1.9.9', '2.0.0', '2.0.1'].map((v) => allowed('<= 2.0.0', v)),
      [true, true, false],
    );
    assert.deepEqual(
      ['1.9.9', '2.0.0', '2.0.1'].map((v) => allowed('!= 2.0.0', v)),
      [true, false, true],
    );
    assert.deepEqual(
      ['1.2.2', '1.2.3', '1.2.9', '1.3.0'].map((v) => allowed('~> 1.2.3', v)),
      [false, true, true, false],
    );
    assert.deepEqual(
      ['1.1.9', '1.2.0', '1.9.0', '2.0.0'].map((v) => allowed('~> 1.2', v)),
      [false, true, true, false],
    );
    assert.deepEqual(
      ['0.9.0', '1.0.0', '7.0.0'].map((v) => allowed('~> 1', v)),
      [false, true, true],
    );
    assert.equal(allowed('~> 1.2.3-beta', '1.2.3'), false, '~> naming a pre-release matches no release');
    assert.equal(allowed('= 1.0.0', '2.0.0-rc.1'), false, 'a pre-release is allowed only by a constraint naming it');
    assert.equal(allowed('', '2.0.0-rc.1'), false);
  });

  it('MUTATION-REGISTRY: allows refuses a set or a version that did not come from the parsers with a usage error naming it', () => {
    const set = parseConstraints('>= 1.0');
    const cases: Array<[unknown, unknown, RegExp]> = [
      [null, version('1.0.0'), /^allows: set must be a constraint set from parseConstraints, got null$/],
      [{ text: '', parts: 'x' }, version('1.0.0'), /^allows: set must be a constraint set from parseConstraints, got null$/],
      [{ text: 5, parts: [] }, version('1.0.0'), /^allows: set must be a constraint set from parseConstraints, got null$/],
      [set, 'v1', /^allows: version must be a version from parseVersion, got a string$/],
      [set, { semver: 'one', segments: 3, prerelease: false }, /^allows: version must be a version from parseVersion, got null$/],
      [set, { semver: new SemVer('1.0.0'), segments: 3, prerelease: false }, /^allows: version must be a version from parseVersion, got null$/],
    ];
    for (const [s, v, message] of cases) {
      const error = thrown(() => allows(s as ConstraintSet, v as ParsedVersion));
      assert.equal(error.exitCode, 2);
      assert.match(error.message, message);
    }
  });

  it('MUTATION-REGISTRY: selectVersion refuses a list or a set of the wrong kind naming itself, and names "the module" for a subject that is not text', () => {
    assert.match(
      thrown(() => selectVersion('1.0.0' as unknown as string[], parseConstraints(''))).message,
      /^selectVersion: listed must be an array of version strings, got a string$/,
    );
    assert.match(
      thrown(() => selectVersion([], { text: '' } as ConstraintSet)).message,
      /^selectVersion: set must be a constraint set from parseConstraints, got null$/,
    );
    assert.equal(thrown(() => selectVersion([], parseConstraints(''), 42 as unknown as string)).message, 'the module has no usable versions');
    assert.equal(
      thrown(() => selectVersion(['2.0.0'], parseConstraints('1.0.0'))).message,
      'no version of the module matches "1.0.0"; the newest available is 2.0.0',
    );
  });

  it('MUTATION-REGISTRY: listed entries that are not version strings are skipped and reported as text', () => {
    const selection = selectVersion(['1.0.0', 42, null, '1.1.0-rc.1', 'x'] as unknown as string[], parseConstraints(''));
    assert.deepEqual(selection, { version: '1.0.0', skipped: ['42', 'null', 'x'] });
  });

  it('MUTATION-REGISTRY: "no usable versions" counts the unparseable ones, carries no hint and exits 1 (NO_MATCHING_VERSION)', () => {
    const none = thrown(() => selectVersion([], parseConstraints('~> 1.0'), 'acme/net/aws'));
    assert.equal(none.message, 'acme/net/aws has no usable versions');
    assert.equal(none.hint, undefined);
    assert.equal(none.exitCode, 1);
    assert.equal(none.code, 'NO_MATCHING_VERSION');
    assert.ok(none instanceof NoMatchingVersionError);
    assert.equal(
      thrown(() => selectVersion(['latest', 'x'], parseConstraints(''), 'acme/net/aws')).message,
      'acme/net/aws has no usable versions (2 unparseable skipped)',
    );
  });

  it('MUTATION-REGISTRY: "no version matches" says "any version" for no constraint, names the newest release (a pre-release when there is none) and hints by what the constraint names', () => {
    const onlyPre = thrown(() => selectVersion(['2.0.0-rc.1', '1.0.0-beta'], parseConstraints(''), 'acme/net/aws'));
    assert.equal(onlyPre.message, 'no version of acme/net/aws matches any version; the newest available is 2.0.0-rc.1');
    assert.equal(onlyPre.hint, 'widen the constraint or check the address');
    assert.equal(onlyPre.code, 'NO_MATCHING_VERSION');
    const mixed = thrown(() => selectVersion(['1.0.0', '1.2.0-beta'], parseConstraints('1.2.0-beta, >= 1.0')));
    assert.equal(mixed.message, 'no version of the module matches "1.2.0-beta, >= 1.0"; the newest available is 1.0.0');
    assert.equal(
      mixed.hint,
      'a pre-release is selected only by a constraint that is exactly that version (e.g. "= 1.2.0-beta.1"), as in Terraform; `~>` or another part next to it selects none',
    );
    assert.equal(thrown(() => selectVersion(['1.0.0'], parseConstraints('>= 1.0, ~> 3.0'))).hint, 'widen the constraint or check the address');
  });
});
