import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistryServer } from '../../devserver/registry/index.js';
import { decideRetry, HttpError, ProtocolError } from '../../lib/http/index.js';
import { parseModuleAddress } from '../../lib/registry/address.js';
import { RegistryClient } from '../../lib/registry/client.js';
import { createFileDiscoveryCache, DiscoveryError, resolveServiceUrl } from '../../lib/registry/discovery.js';
import { parseLocation } from '../../lib/registry/location.js';
import { registryRetryPolicy } from '../../lib/registry/retry.js';
import { parseManifest } from '../../lib/registry/manifest.js';
import { pin } from '../../lib/registry/modules.js';
import { fastRegistryPolicy, startRegistry, writeModules } from './fixtures.js';

describe('registry client against the embedded registry (real sockets)', function () {
  this.timeout(30_000);
  let dir: string;
  let server: RegistryServer;
  let client: RegistryClient;
  const env = () => ({ GANTRY_REGISTRY_HOST: server.host });
  const address = (tail: string) => parseModuleAddress(`${server.host}/${tail}`, {});
  const paths = () => server.requests().map((r) => r.path);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-regclient-'));
    await writeModules(join(dir, 'modules'), [
      {
        namespace: 'acme',
        name: 'network',
        provider: 'aws',
        versions: ['1.0.0', '1.1.0', '1.2.3', '2.0.0-rc.1'],
        verified: true,
        description: 'VPC and subnets',
      },
      { namespace: 'acme', name: 'network', provider: 'google', versions: ['0.3.0'] },
      ...Array.from({ length: 6 }, (_, i) => ({ namespace: 'zeta', name: `mod${i}`, provider: 'null', versions: ['1.0.0'] })),
    ]);
    server = await startRegistry(join(dir, 'modules'), {
      pageLimits: { list: { default: 2, max: 3 }, search: { default: 2, max: 3 }, providers: { default: 1, max: 1 } },
    });
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    server.setFaults([]);
    server.clearRequests();
    client = new RegistryClient({ env: env(), retry: fastRegistryPolicy });
  });
  afterEach(() => client.close());

  describe('service discovery', () => {
    it('REG-SD-SERVICE-ID, REG-SD-TRAILING-SLASH, REG-BASE-V1, REG-BASE-V2: modules.v1 is found, ends in /, v2 derived', async () => {
      const services = await client.services(server.host);
      assert.equal(services.modulesV1, `${server.url}/v1/modules/`);
      assert.equal(services.modulesV2, `${server.url}/v2/modules/`);
    });

    it('discovery runs once per host, also for concurrent resolutions', async () => {
      await Promise.all(Array.from({ length: 8 }, () => client.versions(address('acme/network/aws'))));
      assert.equal(paths().filter((p) => p.startsWith('/.well-known/terraform.json')).length, 1);
    });

    it('a 404 means "this host offers no module registry" (exit 2, not a network error)', async () => {
      server.setFaults([{ kind: 'respond', path: '/.well-known/terraform.json', status: 404, body: 'not found' }]);
      await assert.rejects(
        client.services(server.host),
        (error: unknown) => error instanceof DiscoveryError && /offers no module registry/.test(error.message) && error.exitCode === 2,
      );
    });

    it('an HTML document, a non-object JSON body and a document without modules.v1 are clear errors', async () => {
      const cases: Array<[Record<string, string>, string, RegExp]> = [
        [{ 'content-type': 'text/html' }, '<html>login</html>', /is not JSON \(Content-Type "text\/html"\)/],
        [{ 'content-type': 'application/json' }, '["modules.v1"]', /is not a JSON object/],
        [{ 'content-type': 'application/json' }, '{"modules.v1": 7}', /not a URL string/],
        [{ 'content-type': 'application/json' }, '{"providers.v1": "/v1/providers/"}', /offers no module registry/],
        [{ 'content-type': 'application/json' }, '{"modules.v1": ', /not valid JSON/],
      ];
      for (const [headers, body, message] of cases) {
        server.setFaults([{ kind: 'respond', path: '/.well-known/terraform.json', status: 200, headers, body }]);
        const fresh = new RegistryClient({ env: env(), retry: fastRegistryPolicy });
        await assert.rejects(fresh.services(server.host), (error: unknown) => error instanceof DiscoveryError && message.test(error.message), body);
        fresh.close();
      }
    });

    it('follows at most 3 redirects and reads at most 1 MiB', async () => {
      server.setFaults([{ kind: 'respond', path: '/.well-known/terraform.json', status: 302, headers: { location: '/.well-known/terraform.json' } }]);
      await assert.rejects(client.services(server.host), /redirected more than 3 times/);
      server.setFaults([
        {
          kind: 'respond',
          path: '/.well-known/terraform.json',
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: `{"modules.v1":"/v1/modules/","pad":"${'x'.repeat(1024 * 1024)}"}`,
        },
      ]);
      const fresh = new RegistryClient({ env: env(), retry: fastRegistryPolicy });
      await assert.rejects(fresh.services(server.host), /larger than 1 MiB/);
      fresh.close();
    });

    it('resolves modules.v1 against the final document URL: relative or absolute, http(s) only, no userinfo, fragment dropped', () => {
      const doc = 'https://registry.example.com/.well-known/terraform.json';
      assert.equal(resolveServiceUrl('/v1/modules', doc, 'h', 'modules.v1'), 'https://registry.example.com/v1/modules/');
      assert.equal(resolveServiceUrl('api/modules/#x', doc, 'h', 'modules.v1'), 'https://registry.example.com/.well-known/api/modules/');
      assert.equal(resolveServiceUrl('https://other.example.com/m/v1/', doc, 'h', 'modules.v1'), 'https://other.example.com/m/v1/');
      assert.throws(() => resolveServiceUrl('ftp://x.example.com/m/', doc, 'h', 'modules.v1'), /not http or https/);
      assert.throws(() => resolveServiceUrl('https://u:p@x.example.com/m/', doc, 'h', 'modules.v1'), /carries credentials/);
      assert.throws(() => resolveServiceUrl('http://x.example.com/m/', doc, 'h', 'modules.v1'), /plain http/);
    });

    it('the on-disk cache serves a second process within the TTL and is ignored after it', async () => {
      const cacheDir = join(dir, 'cache');
      const first = new RegistryClient({ env: env(), discoveryCache: createFileDiscoveryCache(cacheDir, 60_000) });
      await first.services(server.host);
      first.close();
      server.clearRequests();
      const second = new RegistryClient({ env: env(), discoveryCache: createFileDiscoveryCache(cacheDir, 60_000) });
      await second.versions(address('acme/network/aws'));
      second.close();
      assert.equal(paths().filter((p) => p.startsWith('/.well-known')).length, 0);
      const expired = new RegistryClient({ env: env(), discoveryCache: createFileDiscoveryCache(cacheDir, -1) });
      await expired.services(server.host);
      expired.close();
      assert.equal(paths().filter((p) => p.startsWith('/.well-known')).length, 1);
    });
  });

  describe('endpoints', () => {
    it('REG-PROTO-MINIMAL, REG-EP-LIST-VERSIONS, REG-VERSIONS-MODULES-ORDER, REG-VERSIONS-VERSION-OBJ: versions of the module asked for', async () => {
      const versions = await client.versions(address('acme/network/aws'));
      assert.deepEqual([...versions].sort(), ['1.0.0', '1.1.0', '1.2.3', '2.0.0-rc.1']);
      const raw = await client.versionsResponse(address('acme/network/aws'));
      assert.ok(raw.modules[0]?.versions.every((v) => typeof v.version === 'string'));
    });

    it('REG-EP-DOWNLOAD, REG-DL-XGET-SYNTAX: 204 with X-Registry-Get gives the location', async () => {
      const result = await client.download(address('acme/network/aws'), '1.2.3');
      assert.equal(result.downloadUrl, `${server.url}/v1/modules/acme/network/aws/1.2.3/download`);
      const location = parseLocation(result.location, { base: result.downloadUrl });
      assert.equal(location.getter, 'http');
    });

    it('REG-DL-XGET-RELATIVE: a relative X-Registry-Get resolves against the download URL', async () => {
      server.setFaults([
        {
          kind: 'respond',
          path: '/v1/modules/acme/network/aws/1.2.3/download',
          status: 204,
          headers: { 'x-registry-get': '../../../../../../archives/net.tgz?archive=tar.gz' },
        },
      ]);
      const result = await client.download(address('acme/network/aws'), '1.2.3');
      assert.equal((parseLocation(result.location, { base: result.downloadUrl }) as { url: string }).url, `${server.url}/archives/net.tgz`);
    });

    it('accepts 200 with a JSON {"location"} body (OpenTofu), preferring the body to the header', async () => {
      server.setFaults([
        {
          kind: 'respond',
          path: '/v1/modules/acme/network/aws/1.2.3/download',
          status: 200,
          headers: { 'content-type': 'application/json', 'x-registry-get': 'https://header.example.com/x.tgz' },
          body: '{"location":"https://body.example.com/x.tgz"}',
        },
      ]);
      assert.equal((await client.download(address('acme/network/aws'), '1.2.3')).location, 'https://body.example.com/x.tgz');
      server.setFaults([
        {
          kind: 'respond',
          path: '/v1/modules/acme/network/aws/1.2.3/download',
          status: 200,
          headers: { 'x-registry-get': 'https://header.example.com/x.tgz' },
          body: 'not json',
        },
      ]);
      assert.equal((await client.download(address('acme/network/aws'), '1.2.3')).location, 'https://header.example.com/x.tgz');
    });

    it('a 204 without X-Registry-Get is a clear protocol error', async () => {
      server.setFaults([{ kind: 'respond', path: '/v1/modules/acme/network/aws/1.2.3/download', status: 204 }]);
      await assert.rejects(
        client.download(address('acme/network/aws'), '1.2.3'),
        (error: unknown) => error instanceof ProtocolError && /without an X-Registry-Get/.test(error.message),
      );
    });

    it("REG-EP-DOWNLOAD-LATEST, REG-STATUS-302-307-LATEST: follows the redirect to the latest version's download", async () => {
      const latest = await client.downloadLatest(address('acme/network/aws'));
      assert.equal(latest.version, '1.2.3');
      assert.match(latest.downloadUrl, /\/acme\/network\/aws\/1\.2\.3\/download$/);
      assert.ok(latest.location.length > 0);
    });

    it('REG-EP-LATEST-ONE-PROVIDER, REG-EP-SPECIFIC-VERSION, REG-MOD-ID, REG-DETAIL-VERSIONS, REG-DETAIL-ROOT: module detail', async () => {
      const latest = await client.latest(address('acme/network/aws'));
      assert.equal(latest.id, 'acme/network/aws/1.2.3');
      assert.equal(latest.verified, true);
      assert.ok(latest.versions?.includes('1.0.0'));
      const one = await client.version(address('acme/network/aws'), '1.1.0');
      assert.equal(one.id, 'acme/network/aws/1.1.0');
      assert.equal(one.version, '1.1.0');
      assert.equal(typeof one.root, 'object');
      assert.match(String(one.published_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$|[+-]\d\d:\d\d$/);
    });

    it('REG-EP-LATEST-ALL-PROVIDERS: latest version for each provider, paginated', async () => {
      const records = [];
      for await (const record of client.latestForAllProviders(server.host, 'acme', 'network')) records.push(record);
      assert.deepEqual(records.map((r) => r.provider).sort(), ['aws', 'google']);
    });

    it('REG-EP-DOWNLOADS-SUMMARY, REG-DLSUM-TYPE, REG-DLSUM-ATTRIBUTES: v2 download metrics', async () => {
      const summary = await client.downloadsSummary(address('acme/network/aws'));
      assert.equal(summary.data.type, 'module-downloads-summary');
      for (const key of ['week', 'month', 'year', 'total'] as const) assert.ok(Number.isInteger(summary.data.attributes[key]));
    });
  });

  describe('pagination as async iterators', () => {
    it('REG-EP-LIST-MODULES, REG-META-NEXT-OFFSET, REG-META-LIMIT, REG-PAGE-MAX-CLAMP: follows next_offset with the applied limit to the last page', async () => {
      const all = [];
      for await (const record of client.listModules({ limit: 50 })) all.push(record.id);
      assert.equal(all.length, 8);
      assert.equal(new Set(all).size, 8);
      const lists = paths().filter((p) => p.startsWith('/v1/modules?') || p === '/v1/modules/' || p.startsWith('/v1/modules/?'));
      assert.equal(lists.length, 3, lists.join(' '));
      assert.match(lists[0] as string, /limit=50/);
      assert.match(lists[1] as string, /offset=3&limit=3|limit=3&offset=3|offset=3.*limit=3/);
    });

    it('REG-PAGE-DEFAULTS: without a limit the registry default page size is used and every item still arrives', async () => {
      const all = [];
      for await (const record of client.listModules({ namespace: 'zeta' })) all.push(record.name);
      assert.deepEqual(all.sort(), ['mod0', 'mod1', 'mod2', 'mod3', 'mod4', 'mod5']);
      // What was asked: no limit and no offset at first (the registry's defaults: list default 2, offset 0), then the
      // limit the registry applied (meta.limit = 2) with each next_offset, to the last page.
      const lists = server.requests().filter((r) => new URL(r.path, server.url).pathname === '/v1/modules/zeta');
      assert.deepEqual(
        lists.map((r) => r.status),
        [200, 200, 200],
      );
      const queries = lists.map((r) => Object.fromEntries(new URL(r.path, server.url).searchParams));
      assert.deepEqual(queries, [{}, { offset: '2', limit: '2' }, { offset: '4', limit: '2' }]);
    });

    it('REG-PARAM-VERIFIED, provider filter: only verified=true filters', async () => {
      const verified = [];
      for await (const record of client.listModules({ verified: true })) verified.push(record.id);
      assert.deepEqual(verified, ['acme/network/aws/1.2.3']);
      const google = [];
      for await (const record of client.listModules({ provider: 'google' })) google.push(record.id);
      assert.deepEqual(google, ['acme/network/google/0.3.0']);
    });

    it('REG-EP-SEARCH: search with q, namespace and the max option stops early', async () => {
      const found = [];
      for await (const record of client.search({ query: 'network' })) found.push(record.provider);
      assert.deepEqual(found.sort(), ['aws', 'google']);
      const limited = [];
      for await (const record of client.search({ query: 'mod', namespace: 'zeta', max: 3 })) limited.push(record.name);
      assert.equal(limited.length, 3);
    });

    it('REG-META-NEXT-URL: a malformed next_url is survived (next_offset is followed)', async () => {
      server.setFaults([
        {
          kind: 'respond',
          path: '/v1/modules/zeta',
          status: 200,
          times: 1,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            meta: { limit: 2, current_offset: 0, next_offset: 2, next_url: '::::not a url' },
            modules: [
              { id: 'zeta/mod0/null/1.0.0', namespace: 'zeta', name: 'mod0', provider: 'null', version: '1.0.0' },
              { id: 'zeta/mod1/null/1.0.0', namespace: 'zeta', name: 'mod1', provider: 'null', version: '1.0.0' },
            ],
          }),
        },
      ]);
      const names = [];
      for await (const record of client.listModules({ namespace: 'zeta' })) names.push(record.name);
      assert.deepEqual(names.sort(), ['mod0', 'mod1', 'mod2', 'mod3', 'mod4', 'mod5']);
    });

    it('a page without a modules array, or a next_offset that does not advance, ends cleanly or errors clearly', async () => {
      server.setFaults([
        {
          kind: 'respond',
          path: '/v1/modules/zeta',
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ meta: { next_offset: 0 }, modules: [{ id: 'a/b/c/1.0.0' }] }),
        },
      ]);
      const items = [];
      for await (const record of client.listModules({ namespace: 'zeta' })) items.push(record);
      assert.equal(items.length, 1);
      server.setFaults([{ kind: 'respond', path: '/v1/modules/zeta', status: 200, headers: { 'content-type': 'application/json' }, body: '{"meta":{}}' }]);
      await assert.rejects(async () => {
        for await (const _ of client.listModules({ namespace: 'zeta' })) void _;
      }, /without a "modules" array/);
    });
  });

  describe('errors and retries', () => {
    it('REG-STATUS-4XX-NO-RETRY, REG-ERR-BODY: a 4xx is never retried and its errors are in the message', async () => {
      server.setFaults([{ kind: 'status', path: '/v1/modules/acme/network/aws/versions', status: 404, message: 'no such module' }]);
      await assert.rejects(
        client.versions(address('acme/network/aws')),
        (error: unknown) => error instanceof HttpError && error.status === 404 && /no such module/.test(error.message) && error.exitCode === 1,
      );
      assert.equal(paths().filter((p) => p.endsWith('/versions')).length, 1);
      server.clearRequests();
      server.setFaults([{ kind: 'status', path: '/v1/modules/acme/network/aws/versions', status: 408 }]);
      await assert.rejects(client.versions(address('acme/network/aws')), (error: unknown) => error instanceof HttpError && error.status === 408);
      assert.equal(paths().filter((p) => p.endsWith('/versions')).length, 1);
    });

    it('REG-STATUS-429-LOAD: a 429 is retried after its Retry-After', async () => {
      server.setFaults([{ kind: 'status', path: '/v1/modules/acme/network/aws/versions', status: 429, retryAfter: 1, times: 1 }]);
      const slow = new RegistryClient({ env: env() });
      const started = Date.now();
      const versions = await slow.versions(address('acme/network/aws'));
      slow.close();
      assert.ok(versions.length > 0);
      assert.ok(Date.now() - started >= 950, `waited only ${Date.now() - started} ms`);
      assert.equal(paths().filter((p) => p.endsWith('/versions')).length, 2);
    });

    it('REG-STATUS-5XX-RETRY: 5xx are retried a bounded number of times, then fail with exit 3', async () => {
      server.setFaults([{ kind: 'status', path: '/v1/modules/acme/network/aws/versions', status: 500, times: 2 }]);
      assert.ok((await client.versions(address('acme/network/aws'))).length > 0);
      server.clearRequests();
      server.setFaults([{ kind: 'status', path: '/v1/modules/acme/network/aws/versions', status: 502 }]);
      await assert.rejects(
        client.versions(address('acme/network/aws')),
        (error: unknown) => error instanceof HttpError && error.status === 502 && error.attempts === registryRetryPolicy.retries + 1 && error.exitCode === 3,
      );
      assert.equal(paths().filter((p) => p.endsWith('/versions')).length, registryRetryPolicy.retries + 1);
    });

    it('REG-STATUS-503-SHEDDING: 503 waits on a gentler schedule than other 5xx', async () => {
      const fixed = () => 0;
      for (let i = 0; i < 3; i += 1) {
        const d503 = decideRetry({ policy: registryRetryPolicy, retryIndex: i, method: 'GET', status: 503, waitedMs: 0, random: fixed });
        const d500 = decideRetry({ policy: registryRetryPolicy, retryIndex: i, method: 'GET', status: 500, waitedMs: 0, random: fixed });
        assert.ok(d503.retry && d500.retry && d503.delayMs >= 4 * d500.delayMs, `retry ${i}`);
      }
      server.setFaults([{ kind: 'status', path: '/v1/modules/acme/network/aws/versions', status: 503, times: 2 }]);
      const started = Date.now();
      assert.ok((await client.versions(address('acme/network/aws'))).length > 0);
      assert.ok(Date.now() - started >= 40 + 80 - 10, 'the fast policy still used its 503 schedule');
    });

    it('REG-ERR-PROXY-NON-JSON: a non-JSON 502 from a proxy is retried, and reported readably when it persists', async () => {
      server.setFaults([{ kind: 'non-json', path: '/v1/modules/acme/network/aws/versions', status: 502, times: 1 }]);
      assert.ok((await client.versions(address('acme/network/aws'))).length > 0);
      server.setFaults([{ kind: 'non-json', path: '/v1/modules/acme/network/aws/versions', status: 502, body: '<html><body>Bad Gateway</body></html>' }]);
      await assert.rejects(
        client.versions(address('acme/network/aws')),
        (error: unknown) => error instanceof HttpError && /non-JSON body: <html><body>Bad Gateway/.test(error.message),
      );
    });

    it('network errors: resets, refusals and timeouts are retried, an unresolvable host name is not', () => {
      const retried = (errorCode: string) => decideRetry({ policy: registryRetryPolicy, retryIndex: 0, method: 'GET', errorCode, waitedMs: 0 }).retry;
      assert.deepEqual(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND'].map(retried), [true, true, true, true, false]);
    });

    it('a connection reset is retried; a 200 that is not JSON is a protocol error', async () => {
      server.setFaults([{ kind: 'reset', path: '/v1/modules/acme/network/aws/versions', times: 1 }]);
      assert.ok((await client.versions(address('acme/network/aws'))).length > 0);
      server.setFaults([
        { kind: 'respond', path: '/v1/modules/acme/network/aws/versions', status: 200, headers: { 'content-type': 'text/html' }, body: '<html/>' },
      ]);
      await assert.rejects(client.versions(address('acme/network/aws')), ProtocolError);
    });
  });

  describe('credentials', () => {
    let secured: RegistryServer;
    before(async () => {
      secured = await startRegistry(join(dir, 'modules'), { token: 'sekret-token-123' });
    });
    after(async () => secured?.stop());

    it('GANTRY_TOKEN_<host> and TF_TOKEN_<host> (Terraform encoding) are sent as Bearer to that registry; none gives 401, not retried', async () => {
      const host = secured.host.replace(/:\d+$/, '');
      const a = parseModuleAddress(`${secured.host}/acme/network/aws`, {});
      for (const variable of [`GANTRY_TOKEN_${host.replace(/\./g, '_')}`, `tf_token_${host.replace(/\./g, '_')}`]) {
        secured.clearRequests();
        const c = new RegistryClient({ env: { [variable]: 'sekret-token-123' }, retry: fastRegistryPolicy });
        assert.ok((await c.versions(a)).length > 0, variable);
        c.close();
        assert.ok(
          secured
            .requests()
            .filter((r) => r.path.endsWith('/versions'))
            .every((r) => r.authorization === 'valid'),
        );
      }
      secured.clearRequests();
      const anonymous = new RegistryClient({ env: {}, retry: fastRegistryPolicy });
      await assert.rejects(anonymous.versions(a), (error: unknown) => error instanceof HttpError && error.status === 401 && !/sekret/.test(error.message));
      anonymous.close();
      assert.equal(secured.requests().filter((r) => r.path.endsWith('/versions')).length, 1);
    });

    it('the token goes to a download location on the registry host itself, never to another host', async () => {
      const host = secured.host.replace(/:\d+$/, '');
      const a = parseModuleAddress(`${secured.host}/acme/network/aws`, {});
      const c = new RegistryClient({ env: { [`GANTRY_TOKEN_${host.replace(/\./g, '_')}`]: 'sekret-token-123' }, retry: fastRegistryPolicy });
      try {
        const { location } = await c.download(a, '1.2.3');
        const manifest = parseManifest(JSON.stringify({ net: { source: `${secured.host}/acme/network/aws`, version: '1.2.3' } }), 'm', {});
        secured.clearRequests();
        await pin(manifest, { version: 1, modules: {} }, { client: c });
        const sameHost = secured.requests().filter((r) => r.path.startsWith('/_gantry/archives/'));
        assert.deepEqual(
          sameHost.map((r) => r.authorization),
          ['valid'],
        );

        const elsewhere = location.replace('//127.0.0.1:', '//localhost:');
        secured.setFaults([{ kind: 'respond', path: '/v1/modules/acme/network/aws/1.2.3/download', status: 204, headers: { 'x-registry-get': elsewhere } }]);
        secured.clearRequests();
        await pin(manifest, { version: 1, modules: {} }, { client: c });
        const otherHost = secured.requests().filter((r) => r.path.startsWith('/_gantry/archives/'));
        assert.deepEqual(
          otherHost.map((r) => r.authorization),
          ['none'],
        );
      } finally {
        secured.setFaults([]);
        c.close();
      }
    });

    it('decodes Terraform env names: "__" is "-", "_" is ".", IDN in punycode; the token goes only to the registry host', () => {
      const c = new RegistryClient({ env: { TF_TOKEN_my__registry_example_com: 't1', GANTRY_TOKEN_xn____bcher_kva_example: 't2' } });
      assert.equal(c.tokens.tokenFor('my-registry.example.com'), 't1');
      assert.equal(c.tokens.tokenFor('xn--bcher-kva.example'), undefined);
      const d = new RegistryClient({ env: { GANTRY_TOKEN_bücher_example: 't3' } });
      assert.equal(d.tokens.tokenFor('xn--bcher-kva.example'), 't3');
      assert.deepEqual(c.headersFor('my-registry.example.com', new URL('https://my-registry.example.com/archives/x.tgz')), { authorization: 'Bearer t1' });
      assert.deepEqual(c.headersFor('my-registry.example.com', new URL('https://cdn.example.com/x.tgz')), {});
      assert.deepEqual(c.headersFor('my-registry.example.com', new URL('https://my-registry.example.com:8443/x.tgz')), {});
      c.close();
      d.close();
    });
  });
});
