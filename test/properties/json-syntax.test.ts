import assert from 'node:assert/strict';
import { describeJsonSyntaxProblem, findDuplicateKey, findJsonSyntaxProblem, parseJsonQuietly } from '../../lib/json-syntax.js';
import { nearJson } from './arbitraries.js';
import { anyText, check, fc } from './fc.js';

const kinds = new Set([
  'the end of the input',
  'a letter',
  'a digit',
  'a byte order mark',
  'a line break',
  'a tab',
  'a space',
  'a control character',
  'a non-ASCII character',
  'a punctuation character',
]);

describe('PROP-JSON-SYNTAX: the JSON syntax checker that never quotes the text', () => {
  it('PROP-JSON-SYNTAX: findJsonSyntaxProblem agrees with JSON.parse on what is JSON, and places the problem inside the text', () => {
    check(
      anyText(nearJson),
      (text) => {
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        const problem = findJsonSyntaxProblem(text);
        assert.equal(problem === undefined, parses);
        if (!problem) return;
        assert.ok(problem.offset >= 0 && problem.offset <= text.length);
        const before = text.slice(0, problem.offset).split(/\r\n|\r|\n/);
        assert.ok(problem.line >= 1 && problem.line <= before.length + 1);
        assert.ok(kinds.has(problem.found), problem.found);
      },
      1000,
    );
  });

  it("PROP-JSON-SYNTAX: the reason parseJsonQuietly gives never contains a run of the text longer than the grammar's own words", () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9]{12,20}$/).map((s) => `Q${s}`);
    check(
      fc.tuple(
        secret,
        fc.constantFrom(
          (s: string) => s,
          (s: string) => `{"k": ${s}}`,
          (s: string) => `["${s}`,
          (s: string) => `{"${s}": }`,
          (s: string) => `"${s}\u0001"`,
        ),
      ),
      ([s, wrap]) => {
        const answer = parseJsonQuietly(wrap(s));
        assert.equal(answer.ok, false);
        if (!answer.ok) assert.ok(!answer.reason.includes(s.slice(0, 8)), answer.reason);
        assert.ok(!describeJsonSyntaxProblem(wrap(s)).includes(s.slice(0, 8)));
      },
    );
  });

  it('PROP-JSON-SYNTAX: findDuplicateKey finds a repeated key exactly when an object of the text repeats one (escapes decoded)', () => {
    const key = fc.constantFrom('a', 'b', 'a\\u0062', 'ab', '\\"', '"');
    const object = fc.array(fc.tuple(key, fc.json({ maxDepth: 1 })), { maxLength: 4 });
    check(
      fc.tuple(object, fc.boolean()),
      ([entries, wrap]) => {
        const keyText = (k: string) => (k === '"' ? '\\"' : k);
        const text = `{${entries.map(([k, v]) => `"${keyText(k)}": ${v}`).join(', ')}}`;
        const decoded = entries.map(([k]) => JSON.parse(`"${keyText(k)}"`) as string);
        const repeated = decoded.some((k, i) => decoded.indexOf(k) !== i);
        const inside = wrap ? `[1, ${text}]` : text;
        const found = findDuplicateKey(inside);
        assert.equal(found !== undefined, repeated, inside);
        if (found) assert.ok(decoded.filter((k) => k === found.key).length > 1);
      },
      500,
    );
  });
});
