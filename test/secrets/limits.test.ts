import assert from 'node:assert/strict';
import { checkJsonLimits, defaultLimits, serializeWithinLimits } from '../../lib/secrets/limits.js';
import { SecretsLimitError } from '../../lib/secrets/errors.js';

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { k: value };
  return value;
}

// Each limit error says nothing was sent and names the setting that raises it, as each face names it: the library's
// hint the option (limits.maxJsonDepth) and SECRETS_MAX_JSON_DEPTH, the command's hint --max-json-depth and the variable.
const isLimit = (limit: SecretsLimitError['limit']) => (e: unknown) =>
  e instanceof SecretsLimitError &&
  e.limit === limit &&
  e.exitCode === 2 &&
  /nothing was sent/.test(e.message) &&
  (e.hint ?? '').includes(`SECRETS_${limit.toUpperCase()}`) &&
  (e.hint ?? '').includes('`limits.') &&
  !(e.hint ?? '').includes('--') &&
  e.cliHint.includes(`SECRETS_${limit.toUpperCase()}`) &&
  e.cliHint.includes(`--${limit.replaceAll('_', '-')}`) &&
  !e.cliHint.includes('option');

describe('secrets request limits (local checks)', () => {
  it('defaults are the documented ones: 32 MB, depth 500, string 1 048 576, 10 000 entries, 10 000 elements', () => {
    assert.deepEqual(
      { ...defaultLimits },
      {
        maxRequestBytes: 33_554_432,
        maxJsonDepth: 500,
        maxJsonStringValueLength: 1_048_576,
        maxJsonObjectEntryCount: 10_000,
        maxJsonArrayElementCount: 10_000,
      },
    );
  });

  it('SEC-LIMIT-JSON-DEPTH: depth 500 passes, 501 is refused, and a 100 000-deep value does not overflow the stack', () => {
    assert.doesNotThrow(() => checkJsonLimits(nested(500)));
    assert.throws(() => checkJsonLimits(nested(501)), isLimit('max_json_depth'));
    assert.throws(() => checkJsonLimits(nested(100_000)), isLimit('max_json_depth'));
  });

  it('SEC-LIMIT-JSON-STRING-LENGTH: strings are counted in UTF-8 bytes, values and keys', () => {
    assert.doesNotThrow(() => checkJsonLimits({ v: 'x'.repeat(1_048_576) }));
    assert.throws(() => checkJsonLimits({ v: 'x'.repeat(1_048_577) }), isLimit('max_json_string_value_length'));
    // 349 526 three-byte characters = 1 048 578 bytes although only 349 526 UTF-16 units.
    assert.throws(() => checkJsonLimits({ v: '€'.repeat(349_526) }), isLimit('max_json_string_value_length'));
    assert.throws(() => checkJsonLimits({ ['k'.repeat(1_048_577)]: 1 }), isLimit('max_json_string_value_length'));
    const error = (() => {
      try {
        checkJsonLimits({ a: { b: ['ok', 'x'.repeat(2_000_000)] } });
      } catch (e) {
        return e as SecretsLimitError;
      }
    })();
    assert.match(error!.message, /\/a\/b\/1/);
  });

  it('SEC-LIMIT-JSON-OBJECT-ENTRIES: 10 000 keys pass, 10 001 are refused', () => {
    const ok = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    assert.doesNotThrow(() => checkJsonLimits(ok));
    assert.throws(() => checkJsonLimits({ ...ok, one: 'more' }), isLimit('max_json_object_entry_count'));
  });

  it('SEC-LIMIT-JSON-ARRAY-ELEMENTS: 10 000 elements pass, 10 001 are refused', () => {
    assert.doesNotThrow(() => checkJsonLimits({ list: new Array(10_000).fill(0) }));
    assert.throws(() => checkJsonLimits({ list: new Array(10_001).fill(0) }), isLimit('max_json_array_element_count'));
  });

  it('SEC-LIMIT-REQUEST-SIZE: the serialized body is measured in bytes against the (configurable) maximum', () => {
    const limits = { ...defaultLimits, maxRequestBytes: 1000 };
    assert.doesNotThrow(() => serializeWithinLimits({ v: 'x'.repeat(900) }, limits));
    assert.throws(() => serializeWithinLimits({ v: 'x'.repeat(1000) }, limits), isLimit('max_request_size'));
    // Multi-byte characters count by their bytes.
    assert.throws(() => serializeWithinLimits({ v: '€'.repeat(340) }, limits), isLimit('max_request_size'));
  });

  it('configured limits replace the defaults', () => {
    const limits = { ...defaultLimits, maxJsonDepth: 3, maxJsonArrayElementCount: 2 };
    assert.throws(() => checkJsonLimits(nested(4), limits), isLimit('max_json_depth'));
    assert.throws(() => checkJsonLimits([1, 2, 3], limits), isLimit('max_json_array_element_count'));
  });
});
