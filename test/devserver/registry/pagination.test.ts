// Pagination, filters and search of the embedded registry, on a folder of synthetic modules.
import assert from 'node:assert/strict';
import { DEFAULT_PAGE_LIMITS, startRegistryServer, writeSyntheticModules, type RegistryServer } from '../../../devserver/registry/index.js';
import { get, tempDir, writeModuleJson, writeVersion } from './helpers.js';

const BENCH_COUNT = 130; // more than the largest maximum page (100)

describe('devserver/registry: pagination, filters and search', function () {
  this.timeout(30000);
  let temp: { dir: string; remove(): Promise<void> };
  let server: RegistryServer;
  let base: string;
  let written: string[];

  before(async () => {
    temp = await tempDir('pages');
    written = await writeSyntheticModules(temp.dir, { count: BENCH_COUNT, versionsPerModule: 2 });
    // Partner modules in another namespace, two providers each.
    for (let i = 0; i < 4; i++) {
      for (const provider of ['aws', 'google']) {
        await writeVersion(temp.dir, `partner/db${i}/${provider}`, '1.0.0', { 'main.tf': '' });
        await writeModuleJson(temp.dir, `partner/db${i}/${provider}`, { verified: i % 2 === 0, description: `Managed database ${i} (${provider})` });
      }
    }
    // One module with more providers than the providers endpoint's maximum page.
    for (let p = 0; p < 30; p++) await writeVersion(temp.dir, `multi/thing/p${String(p).padStart(2, '0')}`, '1.0.0', { 'main.tf': '' });
    server = await startRegistryServer({ dir: temp.dir });
    base = `${server.url}/v1/modules`;
  });
  after(async () => {
    await server?.stop();
    await temp?.remove();
  });

  it('writeSyntheticModules: N modules with the requested versions, listed by the registry', async () => {
    assert.equal(written.length, BENCH_COUNT);
    assert.equal(written[0], 'bench/mod-000/null');
    const versions = await get(`${base}/${written[7]}/versions`);
    assert.deepEqual(
      versions.body.modules[0].versions.map((v: { version: string }) => v.version),
      ['1.1.0', '1.0.0'],
    );
    const detail = await get(`${base}/${written[7]}`);
    assert.equal(detail.body.root.inputs[0].name, 'name');
  });

  it('REG-PAGE-DEFAULTS, REG-META-CURRENT-OFFSET, REG-RESULT-KEY-PLURAL: each list endpoint has its own default limit and offset 0', async () => {
    const list = await get(base);
    assert.equal(list.body.meta.limit, DEFAULT_PAGE_LIMITS.list.default);
    assert.equal(list.body.meta.current_offset, 0);
    assert.equal(list.body.modules.length, DEFAULT_PAGE_LIMITS.list.default);
    const search = await get(`${base}/search?q=mod`);
    assert.equal(search.body.meta.limit, DEFAULT_PAGE_LIMITS.search.default);
    assert.equal(search.body.modules.length, DEFAULT_PAGE_LIMITS.search.default);
    const providers = await get(`${base}/multi/thing`);
    assert.equal(providers.body.meta.limit, DEFAULT_PAGE_LIMITS.providers.default);
    assert.equal(providers.body.modules.length, DEFAULT_PAGE_LIMITS.providers.default);
    assert.notEqual(DEFAULT_PAGE_LIMITS.list.default, DEFAULT_PAGE_LIMITS.search.default, 'defaults differ, so a client must read meta.limit');
  });

  it('REG-PAGE-MAX-CLAMP, REG-META-LIMIT: a limit above the maximum uses the maximum, and meta.limit says so', async () => {
    const list = await get(`${base}?limit=1000`);
    assert.equal(list.body.meta.limit, DEFAULT_PAGE_LIMITS.list.max);
    assert.equal(list.body.modules.length, DEFAULT_PAGE_LIMITS.list.max);
    const search = await get(`${base}/search?q=mod&limit=1000`);
    assert.equal(search.body.meta.limit, DEFAULT_PAGE_LIMITS.search.max);
    assert.equal(search.body.modules.length, DEFAULT_PAGE_LIMITS.search.max);
    const providers = await get(`${base}/multi/thing?limit=1000`);
    assert.equal(providers.body.meta.limit, DEFAULT_PAGE_LIMITS.providers.max);
    assert.equal(providers.body.modules.length, DEFAULT_PAGE_LIMITS.providers.max);
    const small = await get(`${base}?limit=3`);
    assert.equal(small.body.meta.limit, 3);
  });

  it('REG-PAGE-PARAMS, REG-META-NEXT-OFFSET, REG-META-PREV-OFFSET: walking offset/limit returns every module once; next_offset only while more remain, prev_offset only when offset > 0', async () => {
    const seen: string[] = [];
    let offset = 0;
    let pages = 0;
    while (true) {
      const { body } = await get(`${base}?limit=40&offset=${offset}`);
      pages++;
      assert.equal(body.meta.current_offset, offset);
      if (offset === 0) assert.ok(!('prev_offset' in body.meta));
      else assert.equal(body.meta.prev_offset, Math.max(0, offset - 40));
      seen.push(...body.modules.map((m: { id: string }) => m.id));
      if (!('next_offset' in body.meta)) break;
      assert.equal(body.meta.next_offset, offset + 40);
      offset = body.meta.next_offset;
    }
    const total = BENCH_COUNT + 8 + 30;
    assert.equal(seen.length, total);
    assert.equal(new Set(seen).size, total, 'no module twice');
    assert.equal(pages, Math.ceil(total / 40));
    const beyond = await get(`${base}?offset=${total + 5}`);
    assert.equal(beyond.status, 200);
    assert.deepEqual(beyond.body.modules, []);
    assert.ok(!('next_offset' in beyond.body.meta));
  });

  it('REG-META-NEXT-URL: next_url repeats the filters and leads to the next page; it is absent on the last page (AMB-09)', async () => {
    const first = await get(`${base}/search?q=mod&limit=7&provider=null`);
    const nextUrl: string = first.body.meta.next_url;
    assert.equal(typeof nextUrl, 'string');
    const parsed = new URL(nextUrl, base);
    assert.equal(parsed.searchParams.get('q'), 'mod');
    assert.equal(parsed.searchParams.get('provider'), 'null');
    assert.equal(parsed.searchParams.get('offset'), '7');
    const second = await get(new URL(nextUrl, `${base}/search`).href);
    const direct = await get(`${base}/search?q=mod&limit=7&provider=null&offset=7`);
    assert.deepEqual(second.body.modules, direct.body.modules);
    const last = await get(`${base}/search?q=mod&limit=7&offset=${BENCH_COUNT - 3}`);
    assert.equal(last.body.modules.length, 3);
    assert.ok(!('next_url' in last.body.meta));
    assert.equal(typeof last.body.meta.prev_url, 'string');
  });

  it('AMB-07: offset 0 is accepted; limit 0, negative or non-integer values are a 400 with {errors}', async () => {
    assert.equal((await get(`${base}?offset=0`)).status, 200);
    for (const query of ['limit=0', 'limit=-1', 'limit=2.5', 'offset=-1', 'offset=x', 'limit=99999999999999999999']) {
      const response = await get(`${base}?${query}`);
      assert.equal(response.status, 400, query);
      assert.ok(Array.isArray(response.body.errors), query);
    }
  });

  it('REG-EP-LIST-MODULES: <base>/:namespace lists one namespace; provider filters', async () => {
    const partner = await get(`${base}/partner?limit=100`);
    assert.equal(partner.body.modules.length, 8);
    assert.ok(partner.body.modules.every((m: { namespace: string }) => m.namespace === 'partner'));
    const google = await get(`${base}/partner?provider=google`);
    assert.deepEqual(
      google.body.modules.map((m: { id: string }) => m.id),
      ['partner/db0/google/1.0.0', 'partner/db1/google/1.0.0', 'partner/db2/google/1.0.0', 'partner/db3/google/1.0.0'],
    );
    const allGoogle = await get(`${base}?provider=google&limit=100`);
    assert.equal(allGoogle.body.modules.length, 4);
    assert.deepEqual((await get(`${base}/nobody`)).body.modules, []);
  });

  it('REG-PARAM-VERIFIED: only verified=true restricts to partner modules; false, 1, TRUE or nothing return all', async () => {
    const verified = await get(`${base}/partner?verified=true`);
    assert.deepEqual(
      verified.body.modules.map((m: { id: string }) => m.id),
      ['partner/db0/aws/1.0.0', 'partner/db0/google/1.0.0', 'partner/db2/aws/1.0.0', 'partner/db2/google/1.0.0'],
    );
    for (const value of ['false', '1', 'TRUE', 'yes', '']) {
      const response = await get(`${base}/partner?verified=${value}`);
      assert.equal(response.body.modules.length, 8, `verified=${value}`);
    }
  });

  it('REG-EP-SEARCH: q is required; all terms must match name, namespace, provider or description; namespace, provider and verified filter', async () => {
    assert.equal((await get(`${base}/search`)).status, 400);
    const database = await get(`${base}/search?q=managed%20database&limit=50`);
    assert.equal(database.body.modules.length, 8);
    const narrowed = await get(`${base}/search?q=database%20google&verified=true`);
    assert.deepEqual(
      narrowed.body.modules.map((m: { id: string }) => m.id),
      ['partner/db0/google/1.0.0', 'partner/db2/google/1.0.0'],
    );
    const exact = await get(`${base}/search?q=db3`);
    assert.deepEqual(
      exact.body.modules.map((m: { id: string }) => m.id),
      ['partner/db3/aws/1.0.0', 'partner/db3/google/1.0.0'],
    );
    const namespace = await get(`${base}/search?q=1.0&namespace=multi&limit=50`);
    assert.equal(namespace.status, 200);
    assert.deepEqual(namespace.body.modules, [], 'versions are not searched');
    const byNamespace = await get(`${base}/search?q=thing&namespace=multi&limit=50`);
    assert.equal(byNamespace.body.modules.length, 30);
    assert.deepEqual((await get(`${base}/search?q=nothing-like-this`)).body.modules, []);
  });

  it('REG-PAGE-DEFAULTS: page limits are configurable per endpoint', async () => {
    const tight = await startRegistryServer({ dir: temp.dir, pageLimits: { list: { default: 2, max: 3 } } });
    try {
      assert.equal((await get(`${tight.url}/v1/modules`)).body.meta.limit, 2);
      assert.equal((await get(`${tight.url}/v1/modules?limit=50`)).body.meta.limit, 3);
      assert.equal((await get(`${tight.url}/v1/modules/search?q=mod`)).body.meta.limit, DEFAULT_PAGE_LIMITS.search.default);
    } finally {
      await tight.stop();
    }
  });
});
