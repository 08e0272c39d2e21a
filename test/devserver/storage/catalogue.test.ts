// Every method of the spec's storage catalogue (test/fixtures/spec/rules.md, STO-*) is routed to the handler of its
// name, and answers over a real socket with something other than the router's "no such path" or 405.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROUTES, route } from '../../../devserver/storage/routes.js';
import { harness, type Harness } from './helpers.js';

interface Method {
  rule: string;
  name: string;
  method: string;
  path: string;
}

const rules = readFileSync(new URL('../../fixtures/spec/rules.md', import.meta.url), 'utf8');
const METHODS: Method[] = [...rules.matchAll(/^- (STO-[A-Z0-9-]+): `([a-zA-Z]+\.[a-zA-Z]+)` is `([A-Z]+) (\/storage\/v2\/[^`]*)`/gm)].map((m) => ({
  rule: m[1]!,
  name: m[2]!,
  method: m[3]!,
  path: m[4]!,
}));

describe('devserver/storage: the method catalogue', function () {
  this.timeout(30_000);
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  it('STO-RESOURCES STO-BASE-PREFIX: the spec lists 70 methods, each routed to the handler named as the spec names it', () => {
    assert.equal(METHODS.length, 70);
    const resources = new Set(METHODS.map((m) => m.name.split('.')[0]));
    assert.deepEqual([...resources].sort(), [
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
    for (const m of METHODS) {
      const found = route(m.method, m.path.replace(/\{email\}/, 'a@b.test').replace(/\{[A-Za-z]+\}/g, 'X1'));
      assert.ok('route' in found, `${m.rule}: ${m.method} ${m.path} is routed`);
      assert.equal(found.route.name, m.name, `${m.rule}: ${m.method} ${m.path}`);
    }
    assert.equal(new Set(ROUTES.filter((r) => r.template.startsWith('/storage/')).map((r) => r.name)).size, 70);
  });

  it('STO-FILES-INSERT STO-FILES-UPDATE AMB-24: the upload paths /upload/storage/v2/files and /upload/storage/v2/files/{fileId} are files.insert and files.update', () => {
    const insert = route('POST', '/upload/storage/v2/files');
    assert.ok('route' in insert && insert.route.name === 'files.insert');
    const update = route('PUT', '/upload/storage/v2/files/X1');
    assert.ok('route' in update && update.route.name === 'files.update');
  });

  it("STO-VER-V2: over a socket, every method of the catalogue answers (with unknown ids: 404 naming the missing resource, never the router's bare Not Found or 405)", async () => {
    for (const m of METHODS) {
      const path = m.path.replace(/\{email\}/, 'a@b.test').replace(/\{[A-Za-z]+\}/g, 'X1nope');
      const res = await h.raw(
        m.method,
        path,
        m.method === 'GET' || m.method === 'DELETE' ? undefined : '{}',
        m.method === 'GET' || m.method === 'DELETE' ? {} : { 'content-type': 'application/json' },
      );
      const text = await res.text();
      assert.notEqual(res.status, 405, `${m.rule}: ${m.method} ${path}`);
      if (res.status === 404) assert.doesNotMatch(JSON.parse(text).error.message, /^Not Found$/, `${m.rule}: ${m.method} ${path} reached its handler`);
    }
  });
});
