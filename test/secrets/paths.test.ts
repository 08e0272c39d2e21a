import assert from 'node:assert/strict';
import { encodePath, normaliseMount, pathSegments } from '../../lib/secrets/paths.js';
import { SecretsPathError } from '../../lib/secrets/errors.js';
import { fullPath, joinNamespaces, normaliseNamespace, resplit } from '../../lib/secrets/namespace.js';

describe('secrets path rules (local, before sending)', () => {
  it('encodes each segment on its own: spaces, %, ?, #, + and unicode never change the path shape', () => {
    assert.equal(encodePath('app/db password/ü?#%+'), 'app/db%20password/%C3%BC%3F%23%25%2B');
    assert.equal(encodePath('a/b c'), 'a/b%20c');
    // A slash inside a segment cannot exist: "/" always separates.
    assert.deepEqual(pathSegments('x/y/z'), ['x', 'y', 'z']);
  });

  it('SEC-PATH-TRAILING-PERIOD: a segment ending in a period is refused with a clear error', () => {
    for (const bad of ['app/config.', 'app./x', 'a/b/c...']) {
      assert.throws(
        () => encodePath(bad),
        (e: unknown) => e instanceof SecretsPathError && /ends in a period/.test(e.message) && e.exitCode === 2,
        bad,
      );
    }
    // A period inside a name is fine.
    assert.equal(encodePath('app/config.json'), 'app/config.json');
  });

  it('refuses an empty segment ("//") and says which one', () => {
    assert.throws(
      () => encodePath('app//db'),
      (e: unknown) => e instanceof SecretsPathError && /empty segment 2/.test(e.message),
    );
    assert.throws(() => encodePath(''), /empty/);
    assert.throws(() => encodePath('/'), SecretsPathError);
  });

  it('refuses ".." and "." segments', () => {
    assert.throws(
      () => encodePath('app/../sys/seal'),
      (e: unknown) => e instanceof SecretsPathError && /"\.\."/.test(e.message),
    );
    assert.throws(() => encodePath('./app'), SecretsPathError);
    assert.throws(() => encodePath('app/..'), SecretsPathError);
    // Encoded dots are still dots once decoded by the server: refused on the decoded text.
    assert.throws(() => encodePath(decodeURIComponent('app/%2E%2E/x')), SecretsPathError);
  });

  it('refuses control characters in a segment', () => {
    assert.throws(() => encodePath('app/a\u0000b'), /control character/);
    assert.throws(() => encodePath('app/a\nb'), /control character/);
  });

  it('a secret path ending in "/" names a directory: refused for secrets, kept for lists', () => {
    assert.throws(() => encodePath('app/'), /names a directory/);
    assert.equal(encodePath('app/', { directory: true }), 'app/');
    assert.equal(encodePath('app', { directory: true }), 'app/');
    assert.equal(encodePath('', { directory: true }), '');
  });

  it('tolerates one leading slash (as the Vault CLI does) but not two', () => {
    assert.equal(encodePath('/app/db'), 'app/db');
    assert.throws(() => encodePath('//app/db'), /empty segment 1/);
  });

  it('normalises mounts to one trailing slash and checks them', () => {
    assert.equal(normaliseMount('secret'), 'secret/');
    assert.equal(normaliseMount('/secret/'), 'secret/');
    assert.equal(normaliseMount('team/kv'), 'team/kv/');
    assert.throws(() => normaliseMount(''), SecretsPathError);
    assert.throws(() => normaliseMount('team/../kv'), SecretsPathError);
  });
});

describe('secrets namespaces (local normalisation)', () => {
  it('SEC-NS-EQUIVALENCE: namespace spellings normalise to one canonical "ns1/ns2/"', () => {
    for (const spelling of ['ns1/ns2', 'ns1/ns2/', '/ns1/ns2/', ' ns1//ns2 ']) {
      assert.equal(normaliseNamespace(spelling), 'ns1/ns2/', spelling);
    }
    assert.equal(normaliseNamespace(''), undefined);
    assert.equal(normaliseNamespace('/'), undefined);
    assert.equal(normaliseNamespace(undefined), undefined);
    assert.throws(() => normaliseNamespace('ns1/../root'), SecretsPathError);
  });

  it('SEC-NS-SPLIT-PREFIX: every split of namespace and path has the same full path', () => {
    const expected = 'ns1/ns2/secret/foo';
    assert.equal(fullPath('ns1/ns2/', 'secret/foo'), expected);
    assert.equal(fullPath(undefined, 'ns1/ns2/secret/foo'), expected);
    assert.equal(fullPath('ns1', 'ns2/secret/foo'), expected);
    for (let i = 0; i <= 3; i++) {
      const split = resplit('ns1/', 'ns2/secret/foo', i);
      assert.equal(fullPath(split.namespace, split.path), expected, `split at ${i}`);
    }
    assert.deepEqual(resplit(undefined, 'ns1/ns2/secret/foo', 2), { namespace: 'ns1/ns2/', path: 'secret/foo' });
  });

  it('SEC-NS-RELATIVE: a resource namespace is relative to the client namespace', () => {
    assert.equal(joinNamespaces('ns1', 'ns2/'), 'ns1/ns2/');
    assert.equal(joinNamespaces(undefined, 'ns2'), 'ns2/');
    assert.equal(joinNamespaces('ns1/', undefined), 'ns1/');
  });

  it('a segment with half a UTF-16 pair is a SecretsPathError before sending, not a bare URIError from encodeURIComponent (found by PROP-KV-PATHS)', () => {
    for (const path of ['a/\uD800', '\uDC00x', 'app/b\uDBFF']) {
      assert.throws(
        () => encodePath(path),
        (error: unknown) => error instanceof SecretsPathError && /not valid Unicode/.test(error.message),
      );
    }
    assert.equal(encodePath('app/\uD83D\uDE00'), 'app/%F0%9F%98%80');
  });
});
