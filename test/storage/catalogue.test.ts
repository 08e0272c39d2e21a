// The storage client's method table against the spec's catalogue (rules.md, STO-*): the same 70 methods, each with
// the spec's HTTP method and path, in namespaces named as the spec names them; and every STO-* rule is named in a
// test title of test/storage/.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { STORAGE_METHODS, StorageClient } from '../../lib/storage/index.js';
import { TOKEN } from './helpers.js';

const rules = readFileSync(new URL('../fixtures/spec/rules.md', import.meta.url), 'utf8');
const catalogue = [...rules.matchAll(/^- (STO-[A-Z0-9-]+): `([a-zA-Z]+\.[a-zA-Z]+)` is `([A-Z]+) (\/storage\/v2\/[^`]*)`/gm)].map((m) => ({
  rule: m[1]!,
  name: m[2]!,
  method: m[3]!,
  path: m[4]!,
}));

describe('storage client: the method catalogue', () => {
  it('STO-RESOURCES STO-BASE-PREFIX STO-VER-V2: the client has the 70 methods of the spec, each with its HTTP method and path under /storage/v2, and no other', () => {
    assert.equal(catalogue.length, 70);
    const table = Object.entries(STORAGE_METHODS).map(([name, spec]) => ({ name, method: spec.http, path: `/storage/v2/${spec.path}` }));
    assert.deepEqual(table.map((m) => `${m.name} ${m.method} ${m.path}`).sort(), catalogue.map((m) => `${m.name} ${m.method} ${m.path}`).sort());
  });

  it("STO-RESOURCES: the client's namespaces are the 13 resources, each method a function; list methods have .all()", () => {
    const client = new StorageClient({ baseUrl: 'http://127.0.0.1:9', token: TOKEN });
    try {
      const resources = [...new Set(catalogue.map((m) => m.name.split('.')[0]!))].sort();
      assert.deepEqual(resources, [
        'about',
        'apps',
        'changes',
        'channels',
        'children',
        'comments',
        'drives',
        'files',
        'parents',
        'permissions',
        'properties',
        'replies',
        'revisions',
      ]);
      for (const { name } of catalogue) {
        const [resource, method] = name.split('.') as [string, string];
        const fn = (client as unknown as Record<string, Record<string, unknown>>)[resource]![method] as { all?: unknown };
        assert.equal(typeof fn, 'function', name);
        assert.equal(typeof fn.all, /^list/.test(method) ? 'function' : 'undefined', `${name}.all`);
      }
    } finally {
      client.close();
    }
  });

  it('every STO-* rule of the spec is named in a test title of test/storage/', () => {
    const all = [...rules.matchAll(/^- (STO-[A-Z0-9-]+):/gm)].map((m) => m[1]!);
    assert.equal(all.length, 73);
    const titles = readdirSync(new URL('.', import.meta.url))
      .filter((name) => name.endsWith('.test.ts'))
      .flatMap((name) => [...readFileSync(new URL(name, import.meta.url), 'utf8').matchAll(/\bit\(\s*(['"`])(.*?)\1/g)].map((m) => m[2]!));
    const named = new Set(titles.flatMap((title) => title.match(/STO-[A-Z0-9-]+/g) ?? []));
    assert.deepEqual(
      all.filter((rule) => !named.has(rule)),
      [],
    );
  });
});
