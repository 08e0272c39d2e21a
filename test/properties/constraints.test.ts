import assert from 'node:assert/strict';
import semver from 'semver';
import { allows, parseConstraints, parseVersion, selectVersion } from '../../lib/registry/constraints.js';
import { anyText, check, fc, fromAlphabet, typed } from './fc.js';

const part = fc.nat({ max: 12 });
const release = fc.tuple(part, part, part).map(([a, b, c]) => `${a}.${b}.${c}`);
const pre = fc.constantFrom('alpha', 'beta.1', 'rc.2', '0', 'x-y');
const written = fc
  .tuple(fc.constantFrom('', 'v'), part, fc.option(part), fc.option(part), fc.option(pre), fc.option(fc.constantFrom('build.5', '001')))
  .map(
    ([v, a, b, c, p, build]) => `${v}${a}${b === null ? '' : `.${b}`}${b !== null && c !== null ? `.${c}` : ''}${p ? `-${p}` : ''}${build ? `+${build}` : ''}`,
  );
const operator = fc.constantFrom('', '=', '!=', '>', '>=', '<', '<=', '~>');
const constraintText = fc
  .array(fc.tuple(operator, fc.constantFrom('', ' '), written), { minLength: 1, maxLength: 3 })
  .map((parts) => parts.map(([op, sp, version]) => `${op}${sp}${version}`).join(', '));
/** Near-valid noise: the grammar's characters in any order (empty parts, doubled operators, stray dots). */
const nearConstraint = fromAlphabet(['1', '0', '.', ',', ' ', '~>', '>', '=', '!', '<', '-', '+', 'v', 'a', '99999999999999999999'], 20);

describe('PROP-CONSTRAINTS: version constraints with Terraform module semantics, against semver (REG-DETAIL-VERSIONS, REG-PROTO-MINIMAL)', () => {
  it('PROP-CONSTRAINTS: parseConstraints and parseVersion never throw anything but a GantryError, whatever the text', () => {
    check(
      anyText(fc.oneof(constraintText, nearConstraint)),
      (text) => {
        typed(() => parseConstraints(text));
        const version = parseVersion(text);
        if (version) assert.notEqual(semver.valid(version.semver), null);
      },
      600,
    );
  });

  it('PROP-CONSTRAINTS: every constraint built from the grammar parses, and parsing its own text again gives the same parts', () => {
    check(constraintText, (text) => {
      const set = parseConstraints(text);
      assert.equal(set.parts.length, text.split(',').length);
      assert.deepEqual(parseConstraints(set.text), set);
    });
  });

  it('PROP-CONSTRAINTS: on releases and the operators both languages have (=, >, >=, <, <=, ~> x.y.z as ~x.y.z), allows agrees with semver.satisfies', () => {
    const shared = fc.array(fc.tuple(fc.constantFrom('=', '>', '>=', '<', '<=', '~>'), release), { minLength: 1, maxLength: 3 });
    check(
      fc.tuple(shared, release),
      ([parts, version]) => {
        const terraform = parts.map(([op, v]) => `${op} ${v}`).join(', ');
        const range = parts.map(([op, v]) => `${op === '~>' ? '~' : op}${v}`).join(' ');
        assert.equal(
          allows(parseConstraints(terraform), parseVersion(version)!),
          semver.satisfies(version, range),
          `${terraform} vs semver "${range}" on ${version}`,
        );
      },
      1000,
    );
  });

  it('PROP-CONSTRAINTS: selectVersion picks the newest allowed version or refuses with a GantryError, never anything else', () => {
    check(fc.tuple(fc.array(fc.oneof(written, fc.string({ maxLength: 8 })), { maxLength: 8 }), constraintText), ([listed, text]) => {
      const set = parseConstraints(text);
      const answer = typed(() => selectVersion(listed, set));
      const allowed = listed.map((raw) => ({ raw, v: parseVersion(raw) })).filter((c) => c.v && allows(set, c.v));
      if (!answer.ok) {
        assert.equal(allowed.length, 0);
        assert.equal(answer.error.exitCode, 1);
        return;
      }
      const chosen = parseVersion(answer.value.version)!;
      assert.ok(allows(set, chosen));
      for (const c of allowed) assert.ok(semver.lte(c.v!.semver, chosen.semver));
    });
  });
});
