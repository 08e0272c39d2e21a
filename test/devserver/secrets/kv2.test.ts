import assert from 'node:assert/strict';
import { withServer, ENVELOPE_KEYS, type CallOptions, type CallResult } from './helpers.js';
import type { SecretsServer } from '../../../devserver/secrets/index.js';

/**
 * The keys of the `versions` map as the raw response text spells them, in numeric order. Fails unless the text holds
 * `"versions":{` followed only by `"<decimal>":{…}` entries (a version record holds no nested object).
 */
function versionKeysOnTheWire(text: string): string[] {
  const map = /"versions":(\{(?:"[^"]*":\{[^{}]*\},?)*\})/.exec(text);
  assert.ok(map, `a "versions" object in ${text}`);
  const keys = [...map[1]!.matchAll(/(?:^\{|\},)"([^"]*)":\{/g)].map((m) => m[1]!);
  for (const key of keys) assert.match(key, /^[1-9]\d*$/, `the version key "${key}" is a decimal number as a string`);
  return keys.sort((a, b) => Number(a) - Number(b));
}

describe('embedded kv server: kv v2', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  before(async () => ({ server, call } = await withServer()));
  after(() => server.stop());

  it('SEC-KV2-DATA-PATH SEC-KV2-PATH-DATA SEC-EP-WRITE SEC-STATUS-200: a write to <mount>/data/<name> wraps data in `data` and answers 200 with the version metadata', async () => {
    const write = await call('POST', 'secret/data/app/db', { body: { data: { user: 'u', password: 'p' } } });
    assert.equal(write.status, 200);
    for (const key of ENVELOPE_KEYS) assert.ok(key in write.body, `envelope has ${key}`);
    assert.equal(write.body.data.version, 1);
    assert.equal(write.body.data.destroyed, false);
    assert.equal(write.body.data.deletion_time, '');
    assert.ok(!Number.isNaN(Date.parse(write.body.data.created_time)));
    const read = await call('GET', 'secret/data/app/db');
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.data.data, { user: 'u', password: 'p' });
    assert.equal(read.body.data.metadata.version, 1);
    const put = await call('PUT', 'secret/data/app/db', { body: { data: { user: 'v' } } });
    assert.equal(put.status, 200, 'PUT is a synonym of POST');
    assert.equal(put.body.data.version, 2);
  });

  it('SEC-KV2-DATA-PATH: a write without the data wrapper is refused with 400 and stores nothing', async () => {
    const write = await call('POST', 'secret/data/nowrap', { body: { user: 'u' } });
    assert.equal(write.status, 400);
    assert.deepEqual(write.body, { errors: ['no data provided'] });
    assert.equal((await call('GET', 'secret/data/nowrap')).status, 404);
  });

  it('SEC-EP-READ: reads the current version or the one asked with ?version=N', async () => {
    await call('POST', 'secret/data/ver', { body: { data: { n: 1 } } });
    await call('POST', 'secret/data/ver', { body: { data: { n: 2 } } });
    assert.deepEqual((await call('GET', 'secret/data/ver')).body.data.data, { n: 2 });
    const first = await call('GET', 'secret/data/ver?version=1');
    assert.deepEqual(first.body.data.data, { n: 1 });
    assert.equal(first.body.data.metadata.version, 1);
    assert.equal((await call('GET', 'secret/data/ver?version=9')).status, 404);
    assert.equal((await call('GET', 'secret/data/ver?version=x')).status, 400);
  });

  it('SEC-STATUS-400: options.cas must match the current version (400 check-and-set parameter did not match the current version)', async () => {
    assert.equal((await call('POST', 'secret/data/cas', { body: { data: { a: 1 }, options: { cas: 0 } } })).status, 200);
    const stale = await call('POST', 'secret/data/cas', { body: { data: { a: 2 }, options: { cas: 0 } } });
    assert.equal(stale.status, 400);
    assert.deepEqual(stale.body, { errors: ['check-and-set parameter did not match the current version'] });
    const fresh = await call('POST', 'secret/data/cas', { body: { data: { a: 2 }, options: { cas: 1 } } });
    assert.equal(fresh.body.data.version, 2);
  });

  it('SEC-KV2-PATH-METADATA: cas_required on the key refuses writes without cas', async () => {
    await call('POST', 'secret/metadata/casreq', { body: { cas_required: true } });
    const write = await call('POST', 'secret/data/casreq', { body: { data: { a: 1 } } });
    assert.equal(write.status, 400);
    assert.deepEqual(write.body.errors, ['check-and-set parameter required for this call']);
    assert.equal((await call('POST', 'secret/data/casreq', { body: { data: { a: 1 }, options: { cas: 0 } } })).status, 200);
  });

  it('concurrent writers with the same cas: exactly one wins per version', async () => {
    await call('POST', 'secret/data/race', { body: { data: { w: 'seed' } } });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call('POST', 'secret/data/race', { body: { data: { w: i }, options: { cas: 1 } } })),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 1);
    assert.equal(results.filter((r) => r.status === 400).length, 11);
    const meta = await call('GET', 'secret/metadata/race');
    assert.equal(meta.body.data.current_version, 2);
  });

  it('PATCH needs Content-Type application/merge-patch+json (415 otherwise) and merges like RFC 7386', async () => {
    await call('POST', 'secret/data/patchme', { body: { data: { keep: 'k', drop: 'd', nested: { a: 1, b: 2 } } } });
    const wrongType = await call('PATCH', 'secret/data/patchme', { body: { data: { keep: 'x' } }, headers: { 'Content-Type': 'application/json' } });
    assert.equal(wrongType.status, 415);
    assert.ok(Array.isArray(wrongType.body.errors) && wrongType.body.errors.length === 1);
    const patched = await call('PATCH', 'secret/data/patchme', {
      body: { data: { drop: null, nested: { b: null, c: 3 }, added: true } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.data.version, 2);
    assert.deepEqual((await call('GET', 'secret/data/patchme')).body.data.data, { keep: 'k', nested: { a: 1, c: 3 }, added: true });
    const missing = await call('PATCH', 'secret/data/nope', { body: { data: { a: 1 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    assert.equal(missing.status, 404);
  });

  it('SEC-KV2-PATH-DELETE SEC-KV2-PATH-UNDELETE: a soft-deleted version reads 404 with its metadata (data null), undelete brings it back', async () => {
    await call('POST', 'secret/data/soft', { body: { data: { v: 1 } } });
    await call('POST', 'secret/data/soft', { body: { data: { v: 2 } } });
    const del = await call('DELETE', 'secret/data/soft');
    assert.ok(del.status === 204 || del.status === 200);
    const read = await call('GET', 'secret/data/soft');
    assert.equal(read.status, 404);
    assert.equal(read.body.data.data, null);
    assert.equal(read.body.data.metadata.version, 2);
    assert.notEqual(read.body.data.metadata.deletion_time, '');
    assert.equal(read.body.data.metadata.destroyed, false);
    assert.deepEqual(read.body.errors, []);
    assert.deepEqual((await call('GET', 'secret/data/soft?version=1')).body.data.data, { v: 1 }, 'older version untouched');
    await call('POST', 'secret/delete/soft', { body: { versions: [1] } });
    assert.equal((await call('GET', 'secret/data/soft?version=1')).status, 404);
    assert.equal((await call('POST', 'secret/undelete/soft', { body: { versions: [1, 2] } })).status, 204);
    assert.deepEqual((await call('GET', 'secret/data/soft')).body.data.data, { v: 2 });
    assert.deepEqual((await call('GET', 'secret/data/soft?version=1')).body.data.data, { v: 1 });
    const none = await call('POST', 'secret/delete/soft', { body: { versions: [] } });
    assert.equal(none.status, 400);
  });

  it('SEC-KV2-PATH-DESTROY: a destroyed version reads 404 with destroyed=true, and undelete cannot bring it back', async () => {
    await call('POST', 'secret/data/gone', { body: { data: { v: 1 } } });
    assert.equal((await call('PUT', 'secret/destroy/gone', { body: { versions: ['1'] } })).status, 204);
    const read = await call('GET', 'secret/data/gone');
    assert.equal(read.status, 404);
    assert.equal(read.body.data.data, null);
    assert.equal(read.body.data.metadata.destroyed, true);
    await call('POST', 'secret/undelete/gone', { body: { versions: [1] } });
    assert.equal((await call('GET', 'secret/data/gone')).status, 404);
  });

  it('SEC-KV2-VERSION-COUNT: versions beyond max_versions are pruned; 0 means 10; the versions map is keyed by strings', async () => {
    for (let i = 1; i <= 12; i++) await call('POST', 'secret/data/many', { body: { data: { i } } });
    const many = await call('GET', 'secret/metadata/many');
    let meta = many.body.data;
    assert.equal(meta.max_versions, 0);
    assert.deepEqual(
      Object.keys(meta.versions).sort((a, b) => Number(a) - Number(b)),
      ['3', '4', '5', '6', '7', '8', '9', '10', '11', '12'],
    );
    // On the wire (the raw JSON text, not the parsed object): an object whose keys are the version numbers as decimal
    // strings, e.g. "versions":{"3":{…},…} — not an array, and not keys of another form.
    assert.deepEqual(versionKeysOnTheWire(many.text), ['3', '4', '5', '6', '7', '8', '9', '10', '11', '12']);
    assert.match(many.text, /"versions":\{"\d+":\{/);
    assert.equal(meta.oldest_version, 3);
    assert.equal(meta.current_version, 12);
    assert.equal((await call('GET', 'secret/data/many?version=2')).status, 404);

    await call('POST', 'secret/metadata/few', { body: { max_versions: 2 } });
    for (let i = 1; i <= 4; i++) await call('POST', 'secret/data/few', { body: { data: { i } } });
    const few = await call('GET', 'secret/metadata/few');
    meta = few.body.data;
    assert.deepEqual(Object.keys(meta.versions).sort(), ['3', '4']);
    assert.deepEqual(versionKeysOnTheWire(few.text), ['3', '4']);
    assert.equal(meta.max_versions, 2);
    for (const v of Object.values(meta.versions) as Array<Record<string, unknown>>) {
      assert.deepEqual(Object.keys(v).sort(), ['created_time', 'deletion_time', 'destroyed']);
    }
  });

  it('SEC-KV2-PATH-CONFIG: config max_versions applies to every key; config read shows the settings', async () => {
    const { server: s2, call: c2 } = await withServer();
    try {
      assert.equal((await c2('POST', 'secret/config', { body: { max_versions: 3, cas_required: false, delete_version_after: '1h' } })).status, 204);
      const config = await c2('GET', 'secret/config');
      assert.deepEqual(config.body.data, { cas_required: false, delete_version_after: '1h0m0s', max_versions: 3 });
      for (let i = 1; i <= 5; i++) await c2('POST', 'secret/data/k', { body: { data: { i } } });
      const meta = (await c2('GET', 'secret/metadata/k')).body.data;
      assert.deepEqual(Object.keys(meta.versions).sort(), ['3', '4', '5']);
      assert.notEqual(meta.versions['5'].deletion_time, '', 'delete_version_after schedules a deletion time');
    } finally {
      await s2.stop();
    }
  });

  it('SEC-KV2-PATH-METADATA: metadata read/write/delete, custom_metadata and its limits (64 keys, 128-byte keys, 512-byte values)', async () => {
    await call('POST', 'secret/data/meta', { body: { data: { a: 1 } } });
    const write = await call('POST', 'secret/metadata/meta', { body: { custom_metadata: { owner: 'team-a' }, delete_version_after: '90s' } });
    assert.equal(write.status, 204);
    const meta = (await call('GET', 'secret/metadata/meta')).body.data;
    assert.deepEqual(meta.custom_metadata, { owner: 'team-a' });
    assert.equal(meta.delete_version_after, '1m30s');
    assert.equal(meta.cas_required, false);
    assert.deepEqual((await call('GET', 'secret/data/meta')).body.data.metadata.custom_metadata, { owner: 'team-a' });

    const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    const r1 = await call('POST', 'secret/metadata/meta', { body: { custom_metadata: tooMany } });
    assert.equal(r1.status, 400);
    assert.match(r1.body.errors[0], /at most 64 keys, provided 65/);
    const r2 = await call('POST', 'secret/metadata/meta', { body: { custom_metadata: { ['k'.repeat(129)]: 'v' } } });
    assert.equal(r2.status, 400);
    assert.match(r2.body.errors[0], /length of key/);
    const r3 = await call('POST', 'secret/metadata/meta', { body: { custom_metadata: { k: 'v'.repeat(513) } } });
    assert.equal(r3.status, 400);
    assert.match(r3.body.errors[0], /length of value/);
    const ok = await call('POST', 'secret/metadata/meta', {
      body: { custom_metadata: { ...Object.fromEntries(Array.from({ length: 63 }, (_, i) => [`k${i}`, 'v'])), ['k'.repeat(128)]: 'v'.repeat(512) } },
    });
    assert.equal(ok.status, 204, 'exactly at the limits is accepted');

    const patch = await call('PATCH', 'secret/metadata/meta', {
      body: { custom_metadata: { k0: null, extra: 'x' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(patch.status, 204);
    const patched = (await call('GET', 'secret/metadata/meta')).body.data.custom_metadata;
    assert.equal(patched.k0, undefined);
    assert.equal(patched.extra, 'x');

    assert.equal((await call('DELETE', 'secret/metadata/meta')).status, 204);
    assert.equal((await call('GET', 'secret/metadata/meta')).status, 404);
    assert.equal((await call('GET', 'secret/data/meta')).status, 404);
  });

  it('SEC-EP-LIST SEC-LIST-EMPTY-404: lists keys under metadata/ with LIST and GET ?list=true; an empty list is 404 {errors: []}', async () => {
    const { server: s2, call: c2 } = await withServer();
    try {
      await c2('POST', 'secret/data/team/a', { body: { data: { x: 1 } } });
      await c2('POST', 'secret/data/team/sub/b', { body: { data: { x: 1 } } });
      await c2('POST', 'secret/data/top', { body: { data: { x: 1 } } });
      const list = await c2('LIST', 'secret/metadata/team');
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.data.keys, ['a', 'sub/']);
      assert.deepEqual((await c2('GET', 'secret/metadata/?list=true')).body.data.keys, ['team/', 'top']);
      const empty = await c2('LIST', 'secret/metadata/nothing/');
      assert.equal(empty.status, 404);
      assert.deepEqual(empty.body, { errors: [] });
    } finally {
      await s2.stop();
    }
  });

  it('subkeys/<path> shows the key names of a version without the values', async () => {
    await call('POST', 'secret/data/shape', { body: { data: { user: 'u', db: { host: 'h', port: 5432, tls: { on: true } } } } });
    const all = await call('GET', 'secret/subkeys/shape');
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.data.subkeys, { user: null, db: { host: null, port: null, tls: { on: null } } });
    assert.equal(all.body.data.metadata.version, 1);
    assert.ok(!all.text.includes('5432'), 'no values');
    assert.deepEqual((await call('GET', 'secret/subkeys/shape?depth=1')).body.data.subkeys, { user: null, db: null });
  });

  it('a bare path on a v2 mount is 404 with a warning naming the kv command to use', async () => {
    const read = await call('GET', 'secret/app/db');
    assert.equal(read.status, 404);
    assert.equal(read.body.data, null);
    assert.equal(read.body.warnings.length, 1);
    assert.match(read.body.warnings[0], /Invalid path for a versioned K\/V secrets engine.*kv get/);
    const write = await call('POST', 'secret/app/db', { body: { a: 1 } });
    assert.equal(write.status, 404);
    assert.match(write.body.warnings[0], /kv put/);
    assert.equal((await call('GET', 'secret/data/app/db?version=1')).status, 200, 'the bare write stored nothing and broke nothing');
  });
});
