// Conformance of the embedded registry to spec §B, over real sockets with Node's fetch as the client.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { startRegistryServer, type RegistryServer } from '../../../devserver/registry/index.js';
import { buildFixture, STORAGE_META } from './fixture.js';
import { get, RFC3339_FRACTIONAL } from './helpers.js';

describe('devserver/registry: protocol (spec §B)', function () {
  let fixture: { dir: string; remove(): Promise<void> };
  let server: RegistryServer;
  let base: string;

  before(async () => {
    fixture = await buildFixture();
    server = await startRegistryServer({ dir: fixture.dir });
    base = `${server.url}/v1/modules`;
  });
  after(async () => {
    await server?.stop();
    await fixture?.remove();
  });

  function assertRecord(record: Record<string, unknown>) {
    for (const key of ['id', 'owner', 'namespace', 'name', 'version', 'provider', 'description', 'source', 'published_at']) {
      assert.equal(typeof record[key], 'string', `${key} is a string`);
    }
    assert.ok(Number.isInteger(record.downloads), 'downloads is an integer');
    assert.equal(typeof record.verified, 'boolean');
    assert.equal(record.id, `${record.namespace}/${record.name}/${record.provider}/${record.version}`);
    assert.match(record.published_at as string, RFC3339_FRACTIONAL);
  }

  describe('discovery', () => {
    it('REG-SD-SERVICE-ID, REG-SD-TRAILING-SLASH, REG-BASE-V1, REG-VER-MODULES-V1: /.well-known/terraform.json names modules.v1 ending in /v1/modules/', async () => {
      const response = await get(`${server.url}/.well-known/terraform.json`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
      const value = response.body['modules.v1'];
      assert.equal(typeof value, 'string');
      assert.ok(value.endsWith('/v1/modules/'), value);
      const resolved = new URL(value, `${server.url}/.well-known/terraform.json`).href;
      const list = await get(resolved);
      assert.equal(list.status, 200);
      assert.ok(Array.isArray(list.body.modules));
    });

    it('REG-SD-TRAILING-SLASH: an absolute discovery value (discovery: absolute) is a full URL ending in a slash', async () => {
      const absolute = await startRegistryServer({ dir: fixture.dir, discovery: 'absolute', basePath: '/api/registry/v1/modules/' });
      try {
        const response = await get(`${absolute.url}/.well-known/terraform.json`);
        assert.equal(response.body['modules.v1'], `${absolute.url}/api/registry/v1/modules/`);
        const versions = await get(`${response.body['modules.v1']}acme/storage/aws/versions`);
        assert.equal(versions.status, 200);
        const summary = await get(`${absolute.url}/api/registry/v2/modules/acme/storage/aws/downloads/summary`);
        assert.equal(summary.status, 200, 'the v2 base follows the v1 base');
      } finally {
        await absolute.stop();
      }
    });
  });

  describe('module records', () => {
    it('REG-MOD-RECORD-USAGE, REG-MOD-ID, REG-MOD-NAMESPACE, REG-MOD-NAME, REG-MOD-VERSION, REG-MOD-PROVIDER, REG-MOD-DESCRIPTION, REG-MOD-SOURCE, REG-MOD-PUBLISHED-AT, REG-MOD-DOWNLOADS, REG-MOD-VERIFIED: every listed record has every field with its type', async () => {
      const response = await get(`${base}?limit=100`);
      assert.equal(response.status, 200);
      const ids = response.body.modules.map((m: { id: string }) => m.id);
      assert.deepEqual(ids.sort(), [
        'acme/external/aws/1.0.0',
        'acme/network/aws/1.0.1',
        'acme/storage/aws/1.1.0',
        'acme/storage/google/0.9.0',
        'acme/weird/aws/1.0.0',
        'other/storage/aws/3.0.0',
      ]);
      for (const record of response.body.modules) assertRecord(record);
      const storage = response.body.modules.find((m: { id: string }) => m.id.startsWith('acme/storage/aws/'));
      assert.equal(storage.owner, STORAGE_META.owner);
      assert.equal(storage.description, STORAGE_META.description);
      assert.equal(storage.source, STORAGE_META.source);
      assert.equal(storage.verified, true);
    });

    it('REG-MOD-OWNER: owner may be empty; module.json absent gives empty strings, verified false and 0 downloads', async () => {
      const response = await get(`${base}/other/storage/aws`);
      assert.equal(response.body.owner, '');
      assert.equal(response.body.description, '');
      assert.equal(response.body.verified, false);
      assert.equal(response.body.downloads, 0);
    });

    it('REG-MOD-PUBLISHED-AT: published_at comes from module.json when given, with fractional seconds kept', async () => {
      const response = await get(`${base}/acme/storage/aws/1.0.0`);
      assert.equal(response.body.published_at, '2026-01-02T03:04:05.678Z');
      const external = await get(`${base}/acme/external/aws/1.0.0`);
      assert.equal(external.body.published_at, '2025-12-01T00:00:00.5Z');
    });
  });

  describe('module detail', () => {
    it('REG-EP-LATEST-ONE-PROVIDER: <base>/:namespace/:name/:provider is the detail of the newest release (a pre-release is not "latest")', async () => {
      const response = await get(`${base}/acme/storage/aws`);
      assert.equal(response.status, 200);
      assertRecord(response.body);
      assert.equal(response.body.version, '1.1.0');
    });

    it('REG-EP-SPECIFIC-VERSION: <base>/:namespace/:name/:provider/:version is the detail of that version, pre-releases included', async () => {
      const response = await get(`${base}/acme/storage/aws/2.0.0-rc.1`);
      assert.equal(response.status, 200);
      assert.equal(response.body.id, 'acme/storage/aws/2.0.0-rc.1');
      const missing = await get(`${base}/acme/storage/aws/9.9.9`);
      assert.equal(missing.status, 404);
      assert.ok(Array.isArray(missing.body.errors) && missing.body.errors.every((e: unknown) => typeof e === 'string'));
    });

    it('REG-DETAIL-ROOT, REG-DETAIL-SUBMODULES, REG-DETAIL-PROVIDERS, REG-DETAIL-VERSIONS: the detail adds root, submodules, providers and versions', async () => {
      const { body } = await get(`${base}/acme/storage/aws/1.1.0`);
      assert.equal(typeof body.root, 'object');
      assert.deepEqual(
        body.submodules.map((s: { path: string }) => s.path),
        ['modules/replica'],
      );
      assert.deepEqual(body.providers, ['aws', 'google'], 'every provider of acme/storage');
      assert.deepEqual(body.versions, ['2.0.0-rc.1', '1.1.0', '1.0.0']);
    });

    it('REG-CONTENT-PATH, REG-CONTENT-README, REG-CONTENT-EMPTY, REG-CONTENT-INPUTS, REG-CONTENT-OUTPUTS, REG-CONTENT-DEPENDENCIES, REG-CONTENT-RESOURCES: module-content read from the .tf files', async () => {
      const { body } = await get(`${base}/acme/storage/aws/1.0.0`);
      const root = body.root;
      assert.equal(root.path, '');
      assert.equal(root.readme, '# storage 1.0.0\n');
      assert.equal(root.empty, false);
      assert.deepEqual(
        root.inputs.map((i: Record<string, unknown>) => [i.name, i.description, i.default]),
        [
          ['name', 'Name of the thing', ''],
          ['size', 'How big', '3'],
        ],
      );
      for (const input of root.inputs) for (const key of ['name', 'description', 'default']) assert.equal(typeof input[key], 'string');
      assert.deepEqual(root.outputs, [{ name: 'arn', description: 'ARN of the bucket' }]);
      assert.ok(Array.isArray(root.dependencies));
      assert.deepEqual(
        root.dependencies.map((d: { source: string }) => d.source),
        ['cloudposse/label/null'],
      );
      assert.deepEqual(root.resources, [{ name: 'this', type: 'aws_s3_bucket' }]);
      const replica = body.submodules[0];
      assert.equal(replica.path, 'modules/replica');
      assert.equal(replica.empty, false);
      assert.deepEqual(
        replica.inputs.map((i: { name: string }) => i.name),
        ['region'],
      );
    });

    it('REG-CONTENT-TRIMMED: content the server cannot read (a declared external location) is trimmed to path and empty', async () => {
      const { body } = await get(`${base}/acme/external/aws/1.0.0`);
      assert.deepEqual(body.root, { path: '', empty: false });
      assert.deepEqual(body.submodules, []);
    });

    it('REG-DETAIL-ROOT: content of ready archives is read too (tar.gz and zip)', async () => {
      const tgz = await get(`${base}/acme/network/aws/1.0.0`);
      assert.deepEqual(tgz.body.root.outputs, [{ name: 'from_archive', description: '' }]);
      assert.equal(tgz.body.root.readme, '# network\n');
      const zip = await get(`${base}/acme/network/aws/1.0.1`);
      assert.deepEqual(zip.body.root.outputs, [{ name: 'from_zip', description: '' }]);
    });

    it('REG-EP-LATEST-ALL-PROVIDERS: <base>/:namespace/:name lists the latest version of each provider as {meta, modules}', async () => {
      const response = await get(`${base}/acme/storage`);
      assert.equal(response.status, 200);
      assert.equal(response.body.meta.current_offset, 0);
      assert.deepEqual(
        response.body.modules.map((m: { id: string }) => m.id),
        ['acme/storage/aws/1.1.0', 'acme/storage/google/0.9.0'],
      );
      for (const record of response.body.modules) assertRecord(record);
      assert.equal((await get(`${base}/acme/nothing`)).status, 404);
    });
  });

  describe('versions', () => {
    it('REG-EP-LIST-VERSIONS, REG-VERSIONS-MODULES-ORDER, REG-VERSIONS-MODULE-OBJ: the first module is the one asked for, with source and versions', async () => {
      const response = await get(`${base}/acme/storage/aws/versions`);
      assert.equal(response.status, 200);
      const [first] = response.body.modules;
      assert.equal(first.source, 'acme/storage/aws');
      assert.deepEqual(
        first.versions.map((v: { version: string }) => v.version),
        ['2.0.0-rc.1', '1.1.0', '1.0.0'],
      );
    });

    it('REG-VERSIONS-VERSION-OBJ, REG-VERSIONS-SUBMODULE-OBJ, REG-VERSIONS-ROOT-OBJ: versions[] carry version, submodules and root with providers {name, version}', async () => {
      const { body } = await get(`${base}/acme/storage/aws/versions`);
      const version = body.modules[0].versions.find((v: { version: string }) => v.version === '1.0.0');
      assert.deepEqual(version.root.providers, [{ name: 'aws', version: '>= 5.0' }]);
      assert.ok(Array.isArray(version.root.dependencies));
      assert.equal(version.submodules[0].path, 'modules/replica');
      for (const provider of version.submodules[0].providers) {
        assert.equal(typeof provider.name, 'string');
        assert.equal(typeof provider.version, 'string');
      }
      assert.ok(Array.isArray(version.submodules[0].dependencies));
    });

    it('REG-EP-LIST-VERSIONS: names that are not semver are listed as they are, after the semver ones (a client must skip them)', async () => {
      const { body } = await get(`${base}/acme/weird/aws/versions`);
      assert.deepEqual(
        body.modules[0].versions.map((v: { version: string }) => v.version),
        ['1.0.0', 'latest-build', 'versions'],
      );
    });

    it('AMB-11: the literal "versions" wins over a version named "versions"; "search" wins over a namespace named "search"', async () => {
      const versions = await get(`${base}/acme/weird/aws/versions`);
      assert.ok(Array.isArray(versions.body.modules[0].versions), 'the versions response, not a module detail');
      const search = await get(`${base}/search`);
      assert.equal(search.status, 400, 'search without q, not a namespace listing');
      assert.match(search.body.errors[0], /q is required/);
    });

    it('namespace and name are matched case-insensitively and answered in their canonical case', async () => {
      const { status, body } = await get(`${base}/ACME/Storage/aws/versions`);
      assert.equal(status, 200);
      assert.equal(body.modules[0].source, 'acme/storage/aws');
    });
  });

  describe('downloads', () => {
    it('REG-EP-DOWNLOAD, REG-STATUS-SUCCESS: 204 without a body and X-Registry-Get naming a tar.gz of the version', async () => {
      const response = await fetch(`${base}/acme/storage/aws/1.0.0/download`);
      assert.equal(response.status, 204);
      assert.equal((await response.arrayBuffer()).byteLength, 0);
      const location = response.headers.get('x-registry-get');
      assert.ok(location && /^http:\/\/127\.0\.0\.1:\d+\/.+1\.0\.0\.tar\.gz$/.test(location), location ?? 'no header');
      const archive = await fetch(location);
      assert.equal(archive.status, 200);
      const bytes = Buffer.from(await archive.arrayBuffer());
      assert.equal(bytes[0], 0x1f, 'gzip magic');
      assert.equal(bytes[1], 0x8b, 'gzip magic');
    });

    it('REG-STATUS-SUCCESS: downloadResponse: json answers 200 with {"location"} and no header, as OpenTofu\'s registry does', async () => {
      const tofu = await startRegistryServer({ dir: fixture.dir, downloadResponse: 'json' });
      try {
        const response = await get(`${tofu.url}/v1/modules/acme/storage/aws/1.0.0/download`);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('x-registry-get'), null);
        assert.ok(response.body.location.endsWith('/acme/storage/aws/1.0.0.tar.gz'));
        assert.equal((await fetch(response.body.location)).status, 200);
      } finally {
        await tofu.stop();
      }
    });

    it('REG-DL-XGET-SYNTAX: a location declared in module.json is answered verbatim (source-address syntax for the client)', async () => {
      const response = await fetch(`${base}/acme/external/aws/1.0.0/download`);
      assert.equal(response.status, 204);
      assert.equal(response.headers.get('x-registry-get'), 'git::https://git.example.com/acme/external.git?ref=v1.0.0');
    });

    it('REG-DL-XGET-RELATIVE: with locations: relative the value starts with / and resolves against the download URL', async () => {
      const relative = await startRegistryServer({ dir: fixture.dir, locations: 'relative' });
      try {
        const downloadUrl = `${relative.url}/v1/modules/acme/network/aws/1.0.0/download`;
        const response = await fetch(downloadUrl);
        const location = response.headers.get('x-registry-get') ?? '';
        assert.ok(location.startsWith('/'), location);
        const archive = await fetch(new URL(location, downloadUrl));
        assert.equal(archive.status, 200);
        assert.ok((await archive.arrayBuffer()).byteLength > 0);
      } finally {
        await relative.stop();
      }
    });

    it('REG-EP-DOWNLOAD-LATEST, REG-STATUS-302-307-LATEST: 302 to the download endpoint of the latest version, with a short HTML link body', async () => {
      const response = await get(`${base}/acme/storage/aws/download`);
      assert.equal(response.status, 302);
      const location = response.headers.get('location') ?? '';
      assert.equal(location, '/v1/modules/acme/storage/aws/1.1.0/download');
      assert.match(response.headers.get('content-type') ?? '', /text\/html/);
      assert.match(response.text, /<a href="\/v1\/modules\/acme\/storage\/aws\/1\.1\.0\/download">/);
      const followed = await fetch(new URL(location, `${base}/acme/storage/aws/download`));
      assert.equal(followed.status, 204);
      assert.ok(followed.headers.get('x-registry-get')?.endsWith('/1.1.0.tar.gz'));
    });

    it('REG-EP-DOWNLOADS-SUMMARY, REG-DLSUM-TYPE, REG-DLSUM-ID, REG-DLSUM-ATTRIBUTES, REG-BASE-V2: the v2 summary counts module.json figures plus live downloads', async () => {
      const url = `${server.url}/v2/modules/acme/storage/aws/downloads/summary`;
      const before = await get(url);
      assert.equal(before.status, 200);
      assert.equal(before.body.data.type, 'module-downloads-summary');
      assert.equal(before.body.data.id, 'acme/storage/aws');
      for (const key of ['week', 'month', 'year', 'total']) assert.ok(Number.isInteger(before.body.data.attributes[key]), key);
      await fetch(`${base}/acme/storage/aws/1.0.0/download`);
      const after = await get(url);
      for (const key of ['week', 'month', 'year', 'total']) assert.equal(after.body.data.attributes[key], before.body.data.attributes[key] + 1, key);
      const record = await get(`${base}/acme/storage/aws`);
      assert.equal(record.body.downloads, after.body.data.attributes.total, 'the record shows the same total');
      assert.equal((await get(`${server.url}/v2/modules/acme/none/aws/downloads/summary`)).status, 404);
    });
  });

  describe('errors and methods', () => {
    it('REG-ERR-BODY, REG-STATUS-4XX-NO-RETRY: unknown modules, paths and bad parameters get the relevant 4xx with {errors: [string]}', async () => {
      const cases: [string, number][] = [
        [`${base}/acme/missing/aws/versions`, 404],
        [`${base}/acme/storage/aws/1.0.0/download/extra`, 404],
        [`${server.url}/v1/other`, 404],
        [`${base}?limit=abc`, 400],
        [`${base}/search?q=`, 400],
        [`${base}/%E0%A4%A/storage/aws`, 404],
      ];
      for (const [url, status] of cases) {
        const response = await get(url);
        assert.equal(response.status, status, url);
        assert.match(response.headers.get('content-type') ?? '', /application\/json/, url);
        assert.ok(Array.isArray(response.body.errors) && response.body.errors.length > 0, url);
        for (const error of response.body.errors) assert.equal(typeof error, 'string');
      }
    });

    it('request targets: //x stays a path (404), absolute-form targets use their path, garbage is a 400', async () => {
      const raw = (target: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const { port } = new URL(server.url);
          const request = http.request({ host: '127.0.0.1', port, path: target, method: 'GET', agent: false }, (response) => {
            let body = '';
            response.on('data', (c: Buffer) => (body += c.toString()));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          });
          request.on('error', reject);
          request.end();
        });
      assert.equal((await raw('//v1/modules/acme/storage/aws/versions')).status, 404);
      assert.equal((await raw('http://elsewhere.example/v1/modules/acme/storage/aws/versions')).status, 200);
      const star = await raw('*');
      assert.equal(star.status, 400);
      assert.deepEqual(JSON.parse(star.body), { errors: ['malformed request target'] });
    });

    it('REG-ALL-GET-JSON: endpoints answer GET with application/json; other methods get 405 with Allow (AMB-06: download is 204, download-latest HTML)', async () => {
      for (const path of ['/acme/storage/aws/versions', '', '/acme/storage/aws', '/search?q=storage']) {
        const response = await get(`${base}${path}`);
        assert.equal(response.status, 200, path);
        assert.equal(response.headers.get('content-type'), 'application/json', path);
      }
      const post = await get(`${base}/acme/storage/aws/versions`, { method: 'POST', body: '{}' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get('allow'), 'GET, HEAD');
      assert.ok(Array.isArray(post.body.errors));
    });

    it('REG-STATUS-SUCCESS: HEAD is answered like GET without a body', async () => {
      const head = await fetch(`${base}/acme/storage/aws/versions`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal((await head.arrayBuffer()).byteLength, 0);
      assert.ok(Number(head.headers.get('content-length')) > 0);
    });
  });

  describe('minimal and extended protocol', () => {
    it('REG-PROTO-EXTENDED: by default the extended API (list, search, detail, metrics) answers', async () => {
      for (const path of ['/v1/modules', '/v1/modules/search?q=storage', '/v1/modules/acme/storage/aws', '/v2/modules/acme/storage/aws/downloads/summary']) {
        assert.equal((await get(server.url + path)).status, 200, path);
      }
    });

    it('REG-PROTO-MINIMAL, REG-PROTO-EXTENDED-OPTIONAL: with minimal: true only versions and download answer; the rest is a 404 with {errors}', async () => {
      const minimal = await startRegistryServer({ dir: fixture.dir, minimal: true });
      try {
        const versions = await get(`${minimal.url}/v1/modules/acme/storage/aws/versions`);
        assert.equal(versions.status, 200);
        const download = await fetch(`${minimal.url}/v1/modules/acme/storage/aws/1.0.0/download`);
        assert.equal(download.status, 204);
        const archive = await fetch(download.headers.get('x-registry-get')!);
        assert.equal(archive.status, 200);
        for (const path of [
          '/v1/modules',
          '/v1/modules/acme',
          '/v1/modules/search?q=x',
          '/v1/modules/acme/storage',
          '/v1/modules/acme/storage/aws',
          '/v1/modules/acme/storage/aws/1.0.0',
          '/v1/modules/acme/storage/aws/download',
          '/v2/modules/acme/storage/aws/downloads/summary',
        ]) {
          const response = await get(minimal.url + path);
          assert.equal(response.status, 404, path);
          assert.match(response.body.errors[0], /minimal protocol/, path);
        }
      } finally {
        await minimal.stop();
      }
    });
  });

  describe('moved modules and host names', () => {
    it('REG-STATUS-301-MOVED: an aliased (moved) module answers every v1 path with 301 to the same path under its new address', async () => {
      const moved = await startRegistryServer({ dir: fixture.dir, aliases: { 'old-team/blob/aws': 'acme/storage/aws' } });
      try {
        for (const [path, target] of [
          ['/old-team/blob/aws/versions', '/v1/modules/acme/storage/aws/versions'],
          ['/Old-Team/blob/aws/1.0.0/download', '/v1/modules/acme/storage/aws/1.0.0/download'],
          ['/old-team/blob/aws', '/v1/modules/acme/storage/aws'],
        ]) {
          const response = await get(`${moved.url}/v1/modules${path}`);
          assert.equal(response.status, 301, path);
          assert.equal(response.headers.get('location'), target, path);
          const followed = await fetch(new URL(target, moved.url), { redirect: 'manual' });
          assert.ok([200, 204].includes(followed.status), target);
        }
        assert.equal((await get(`${moved.url}/v1/modules/acme/storage/aws/versions`)).status, 200);
      } finally {
        await moved.stop();
      }
      await assert.rejects(startRegistryServer({ dir: fixture.dir, aliases: { 'a/b': 'c/d/e' } }), /aliases map/);
    });

    it('absolute locations use the host name the client connected by', async () => {
      const port = new URL(server.url).port;
      const response = await fetch(`http://localhost:${port}/v1/modules/acme/storage/aws/1.0.0/download`);
      assert.equal(response.status, 204);
      assert.ok(response.headers.get('x-registry-get')?.startsWith(`http://localhost:${port}/_gantry/archives/`));
    });
  });

  describe('tokens', () => {
    it('with a token, the API needs Authorization: Bearer; discovery and archives stay open; the log keeps no token', async () => {
      const guarded = await startRegistryServer({ dir: fixture.dir, token: 'dev-token-123' });
      try {
        assert.deepEqual(guarded.credentials, { token: 'dev-token-123' });
        assert.equal((await get(`${guarded.url}/.well-known/terraform.json`)).status, 200);
        const anonymous = await get(`${guarded.url}/v1/modules/acme/storage/aws/versions`);
        assert.equal(anonymous.status, 401);
        assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer');
        assert.ok(Array.isArray(anonymous.body.errors));
        const wrong = await get(`${guarded.url}/v1/modules/acme/storage/aws/versions`, { headers: { authorization: 'Bearer nope' } });
        assert.equal(wrong.status, 401);
        const right = await fetch(`${guarded.url}/v1/modules/acme/storage/aws/1.0.0/download`, { headers: { authorization: 'Bearer dev-token-123' } });
        assert.equal(right.status, 204);
        const archive = await fetch(right.headers.get('x-registry-get')!);
        assert.equal(archive.status, 200, 'archives need no token: the client must not send it elsewhere anyway');
        await archive.arrayBuffer();
        const log = guarded.requests();
        assert.deepEqual(
          log.map((r) => [r.status, r.authorization]),
          [
            [200, 'none'],
            [401, 'none'],
            [401, 'invalid'],
            [204, 'valid'],
            [200, 'none'],
          ],
        );
        assert.ok(!JSON.stringify(log).includes('dev-token-123'));
      } finally {
        await guarded.stop();
      }
    });
  });

  it('archives are the same bytes on every download (deterministic tar.gz)', async () => {
    const location = (await fetch(`${base}/acme/storage/aws/1.1.0/download`)).headers.get('x-registry-get')!;
    const digest = async () =>
      createHash('sha256')
        .update(Buffer.from(await (await fetch(location)).arrayBuffer()))
        .digest('hex');
    assert.equal(await digest(), await digest());
  });
});
