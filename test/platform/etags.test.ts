// Conditional requests (issue 28, the REST section): PlatformClient keeps the ETag of GET answers and asks
// If-None-Match; a 304 gives the kept body and, on the embedded platform API as on GitHub, spends no primary budget.
import assert from 'node:assert/strict';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { UsageError } from '../../lib/errors.js';
import { silentLogger } from '../../lib/log.js';
import { MemoryBudgetStore, PlatformClient, type PlatformClientOptions } from '../../lib/platform/index.js';
import { AnswerCache, defaultCacheBytes, defaultCacheEntries, resolveCache } from '../../lib/platform/etags.js';
import { startMockPlatform, type MockPlatform } from './helpers/mock-platform.js';
import { VirtualClock } from './helpers/virtual-clock.js';

const clients: PlatformClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

describe('PlatformClient conditional requests against the embedded platform API', function () {
  this.timeout(30_000);
  let server: PlatformServer;
  before(async () => {
    server = await startPlatformServer({});
  });
  after(() => server.stop());
  const client = (options: PlatformClientOptions) => {
    const made = new PlatformClient({ baseUrl: server.url, env: {}, store: new MemoryBudgetStore(), logger: silentLogger, proxy: {}, ...options });
    clients.push(made);
    return made;
  };

  it('a repeated GET asks If-None-Match; the 304 gives the kept body and does not count against the primary limit', async () => {
    const platform = client({ token: server.issueToken({ kind: 'personal', login: 'poller' }) });
    const first = await platform.request<{ full_name: string }>('GET', '/repos/gantry/demo');
    assert.equal(first.status, 200);
    assert.ok(first.headers.etag, 'the platform sends an ETag');
    assert.equal(first.notModified, undefined);
    const second = await platform.request<{ full_name: string }>('GET', '/repos/gantry/demo');
    assert.equal(second.status, 200, "the kept answer's status");
    assert.equal(second.notModified, true);
    assert.deepEqual(second.body, first.body);
    assert.notEqual(second.body, first.body, 'each caller gets its own copy');
    assert.equal(second.headers['x-ratelimit-remaining'], first.headers['x-ratelimit-remaining'], 'the 304 spent no primary budget');
    const third = await platform.request('GET', '/repos/gantry/demo/issues');
    assert.equal(Number(third.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1, 'a new GET does');
  });

  it('cache: false sends every GET as it is, each counted', async () => {
    const platform = client({ token: server.issueToken({ kind: 'personal', login: 'uncached' }), cache: false });
    const first = await platform.request('GET', '/repos/gantry/demo');
    const second = await platform.request('GET', '/repos/gantry/demo');
    assert.equal(second.notModified, undefined);
    assert.equal(Number(second.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1);
  });
});

describe('PlatformClient conditional requests: what is kept, for whom, how many', function () {
  this.timeout(30_000);
  let peer: MockPlatform;
  const clock = new VirtualClock();
  before(async () => {
    // An ETag per path; If-None-Match with it is a 304.
    peer = await startMockPlatform(clock, (seen) => {
      const etag = `W/"${seen.path}"`;
      if (seen.headers['if-none-match'] === etag) return { status: 304, headers: { etag } };
      return { status: 200, body: { path: seen.path, query: seen.url.split('?')[1] ?? '' }, headers: { etag } };
    });
  });
  after(() => peer.close());
  beforeEach(() => {
    peer.seen.length = 0;
  });
  const client = (options: PlatformClientOptions = {}) => {
    const made = new PlatformClient({
      baseUrl: peer.url,
      env: {},
      clock,
      store: new MemoryBudgetStore(),
      logger: silentLogger,
      proxy: {},
      token: 'ghp_one0000000000000000000000000000000000',
      ...options,
    });
    clients.push(made);
    return made;
  };
  const asked = () => peer.seen.map((s) => `${s.url} ${s.headers['if-none-match'] ?? '-'}`);

  it('bounded: the least recently used answer goes first; the query and the Accept header are part of the key', async () => {
    const platform = client({ cache: { maxEntries: 2 } });
    await platform.request('GET', '/a');
    await platform.request('GET', '/b');
    await platform.request('GET', '/a');
    await platform.request('GET', '/c'); // /b goes
    await platform.request('GET', '/b');
    await platform.request('GET', '/c');
    await platform.request('GET', '/c', { query: { page: 2 } });
    await platform.request('GET', '/c', { headers: { accept: 'application/vnd.platform.raw+json' } });
    assert.deepEqual(asked(), ['/a -', '/b -', '/a W/"/a"', '/c -', '/b -', '/c W/"/c"', '/c?page=2 -', '/c -']);
  });

  it("one identity's answers never answer another's; a caller's own If-None-Match goes as it is and its 304 is its own", async () => {
    const one = client();
    const other = client({ token: 'ghp_two0000000000000000000000000000000000' });
    await one.request('GET', '/repos/o/r');
    await other.request('GET', '/repos/o/r');
    await one.request('GET', '/repos/o/r');
    assert.deepEqual(asked(), ['/repos/o/r -', '/repos/o/r -', '/repos/o/r W/"/repos/o/r"']);
    const own = await other.request('GET', '/repos/o/r', { headers: { 'If-None-Match': 'W/"/repos/o/r"' } });
    assert.equal(own.status, 304);
    assert.equal(own.body, undefined);
    assert.equal(own.notModified, undefined);
  });

  it('bounded by bytes too: the body text kept stays within maxBytes (default 16 MiB), oldest out first; a body larger than the bound is not kept', () => {
    const cache = new AnswerCache(100, 25);
    const answer = (text: string) => ({ etag: 'W/"x"', lastModified: undefined, status: 200, headers: {}, text });
    cache.set('a', answer('0123456789'));
    cache.set('b', answer('0123456789'));
    assert.equal(cache.bytes, 20);
    cache.set('c', answer('0123456789')); // 30 > 25: a goes
    assert.deepEqual([cache.get('a'), cache.bytes, cache.size], [undefined, 20, 2]);
    cache.set('b', answer('01234')); // replaced, not added
    assert.equal(cache.bytes, 15);
    cache.set('d', answer('x'.repeat(26)));
    assert.deepEqual([cache.get('d'), cache.bytes], [undefined, 15]);
    cache.delete('c');
    assert.deepEqual([cache.bytes, cache.size], [5, 1]);
    assert.equal(resolveCache('t', undefined)?.maxBytes, defaultCacheBytes);
    assert.equal(resolveCache('t', { maxBytes: 1024 })?.maxEntries, defaultCacheEntries);
  });

  it('the option is checked: true, false or { maxEntries?, maxBytes? } (integers ≥ 1)', () => {
    for (const bad of [{ maxEntries: 0 }, { maxBytes: 0.5 }, {}, { size: 3 }, 'yes', null]) {
      assert.throws(
        () => client({ cache: bad as never }),
        (e: unknown) => e instanceof UsageError && /cache must be/.test(e.message),
      );
    }
  });
});
