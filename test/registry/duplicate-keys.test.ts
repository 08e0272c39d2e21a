// The class "JSON a person edits loses an entry without a word": JSON.parse keeps the last of two equal keys, so a
// manifest with "x" twice silently installed only the second module, and a lock merged badly kept one of two pins.
// Every file Gantry reads that a person edits is scanned for duplicate keys: exit 2 naming the file, line and key.
import assert from 'node:assert/strict';
import { findDuplicateKey } from '../../lib/json-syntax.js';
import { parseLockFile } from '../../lib/registry/lockfile.js';
import { parseManifest } from '../../lib/registry/manifest.js';
import { UsageError } from '../../lib/errors.js';

const hash = `h1:${'A'.repeat(43)}=`;

describe('duplicate keys in JSON a person edits', () => {
  it('findDuplicateKey finds the second occurrence in the same object, at any depth, and nothing else', () => {
    assert.equal(findDuplicateKey('{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}'), undefined);
    assert.equal(findDuplicateKey('{"a":"\\"a\\":", "b":"a"}'), undefined);
    assert.deepEqual(findDuplicateKey('{\n "x": 1,\n "y": {"k": [1, {"z": 2, "z": 3}]}\n}'), { key: 'z', offset: 36, line: 3, column: 26, firstLine: 3 });
    const found = findDuplicateKey('{\n "x": 1,\n "\\u0078": 2\n}');
    assert.equal(found?.key, 'x', 'keys compare as JSON.parse reads them (escapes decoded)');
    assert.equal(found?.line, 3);
    assert.equal(found?.firstLine, 2);
  });

  it('a manifest with a local name twice is exit 2 naming the file, line and key', () => {
    const text = '{\n  "x": {"source": "acme/network/aws", "version": "~> 1.0"},\n  "x": {"source": "acme/bucket/aws"}\n}\n';
    assert.throws(
      () => parseManifest(text, 'gantry.modules.json', {}),
      (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.equal(error.exitCode, 2);
        assert.match(error.message, /^gantry\.modules\.json: line 3: the key "x" appears again in the same object \(first on line 2\)/);
        return true;
      },
    );
    assert.throws(
      () => parseManifest('{"x": {"source": "acme/network/aws", "source": "acme/bucket/aws"}}', 'm.json', {}),
      /m\.json: line 1: the key "source" appears again/,
    );
  });

  it('a lock with an entry or a field twice is exit 2 naming the file, line and key', () => {
    const entry = (version: string) => `{"constraint": "", "version": "${version}", "location": "https://example.com/a.tgz", "hash": "${hash}"}`;
    const text = `{\n  "version": 1,\n  "modules": {\n    "registry.terraform.io/acme/network/aws": ${entry('1.0.0')},\n    "registry.terraform.io/acme/network/aws": ${entry('1.1.0')}\n  }\n}\n`;
    assert.throws(
      () => parseLockFile(text, 'gantry.lock.json'),
      (error: unknown) => {
        assert.ok(error instanceof Error && 'exitCode' in error);
        assert.equal(error.exitCode, 2);
        assert.match(
          error.message,
          /^gantry\.lock\.json: line 5: the key "registry\.terraform\.io\/acme\/network\/aws" appears again in the same object \(first on line 4\)/,
        );
        return true;
      },
    );
    const field = `{"version": 1, "modules": {"acme/network/aws": {"constraint": "", "version": "1.0.0", "version": "1.1.0", "location": "x", "hash": "${hash}"}}}`;
    assert.throws(() => parseLockFile(field, 'l.json'), /l\.json: line 1: the key "version" appears again/);
  });
});
