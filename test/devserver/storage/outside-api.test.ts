// A path outside /storage/v2 and /upload/storage/v2 is answered as Google's front end answers one outside its APIs: a
// plain text/html 404 page ("The requested URL /foo was not found on this server."), before credentials, quota or
// faults — not the API's JSON notFound, which stays the answer for an unknown id or path inside the API. A client
// tells a wrong base URL from an unknown file by it.
import assert from 'node:assert/strict';
import { harness, reasonOf, type Harness } from './helpers.js';

describe('devserver/storage: paths outside the API', function () {
  this.timeout(20_000);
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  it('STO-BASE-PREFIX STO-VER-V2: /foo, /, /drive/v2/files, /storage/v3/about, /storagex/v2/about, /foo/storage/v2/about are a plain HTML 404 page, with or without a token, any method', async () => {
    for (const where of ['/foo', '/', '/drive/v2/files', '/storage/v3/about', '/storagex/v2/about', '/foo/storage/v2/about', '/upload/files', '/_gantry']) {
      for (const headers of [{}, { authorization: '' }] as Record<string, string>[]) {
        const res = await h.raw('GET', where, undefined, headers);
        assert.equal(res.status, 404, where);
        assert.match(res.headers.get('content-type') ?? '', /^text\/html/, `${where}: not JSON`);
        const text = await res.text();
        assert.match(text, new RegExp(`The requested URL <code>${where.replace(/[/.]/g, '\\$&')}</code> was not found on this server\\.`), where);
        assert.ok(!text.trim().startsWith('{'), `${where}: no Drive error body`);
      }
    }
    const posted = await h.raw('POST', '/foo/files', '{}', { 'content-type': 'application/json' });
    assert.equal(posted.status, 404);
    assert.match(await posted.text(), /was not found on this server/);
    const head = await h.raw('HEAD', '/foo');
    assert.equal(head.status, 404);
    assert.equal(await head.text(), '');
  });

  it("STO-FILES-GET: inside the API an unknown id and an unknown path stay Drive's JSON notFound; outside paths use no quota and meet no fault", async () => {
    const file = await h.api('GET', '/storage/v2/files/no-such-id');
    assert.equal(file.status, 404);
    assert.match(file.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(reasonOf(file.body), 'notFound');
    for (const where of ['/storage/v2', '/storage/v2/', '/storage/v2/nothing', '/upload/storage/v2/nothing']) {
      const res = await h.api('GET', where);
      assert.equal(res.status, 404, where);
      assert.equal(reasonOf(res.body), 'notFound', where);
    }
    assert.equal((await h.raw('GET', '/storage/v2/about', undefined, { authorization: '' })).status, 401, 'inside the API credentials are still asked for');
    const before = h.server.stats().requests;
    await h.admin('POST', 'faults', { kind: 'status', status: 503, times: 1 });
    assert.equal((await h.raw('GET', '/foo')).status, 404, 'the front end answers before a fault');
    assert.equal(h.server.stats().requests, before, 'not counted as an API request');
    assert.equal((await h.raw('GET', '/storage/v2/about')).status, 503, 'the fault is still armed for the API');
  });
});
