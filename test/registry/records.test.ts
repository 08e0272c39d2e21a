import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistryServer } from '../../devserver/registry/index.js';
import { HttpError } from '../../lib/http/index.js';
import { parseModuleAddress } from '../../lib/registry/address.js';
import { RegistryClient } from '../../lib/registry/client.js';
import { parseManifest } from '../../lib/registry/manifest.js';
import { install, pin } from '../../lib/registry/modules.js';
import type { ModulePage } from '../../lib/registry/types.js';
import { fastRegistryPolicy, startRegistry, writeModules } from './fixtures.js';

/** Extra files of acme/network/aws: resources, a module call and required providers in the root and in a submodule. */
const networkFiles = {
  'resources.tf':
    'resource "aws_vpc" "this" {\n  cidr_block = "10.0.0.0/16"\n}\n\nresource "aws_subnet" "private" {\n  vpc_id = aws_vpc.this.id\n}\n\nmodule "logs" {\n  source  = "./modules/flow-logs"\n}\n\nmodule "labels" {\n  source  = "cloudposse/label/null"\n  version = "0.25.0"\n}\n',
  'versions.tf': 'terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = ">= 5.0"\n    }\n  }\n}\n',
  'outputs.tf': 'output "id" { value = 1 }\n',
  'modules/flow-logs/main.tf':
    'variable "x" {}\n\nresource "aws_flow_log" "this" {\n  vpc_id = var.x\n}\n\nmodule "bucket" {\n  source  = "acme/bucket/aws"\n  version = "~> 1.2"\n}\n\nterraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = "~> 5.1"\n    }\n  }\n}\n',
};

/** What the client reads from registry responses: record shapes, pages, trimmed and extra fields, minimal registries. */
describe('registry client: response shapes, pages, moved and minimal registries', function () {
  this.timeout(30_000);
  let dir: string;
  let server: RegistryServer;
  let client: RegistryClient;
  const address = (tail: string, host = server.host) => parseModuleAddress(`${host}/${tail}`, {});

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-records-'));
    await writeModules(join(dir, 'modules'), [
      { namespace: 'acme', name: 'network', provider: 'aws', versions: ['1.0.0', '1.1.0'], verified: true, description: 'VPC', files: networkFiles },
      ...Array.from({ length: 5 }, (_, i) => ({ namespace: 'zeta', name: `m${i}`, provider: 'null', versions: ['1.0.0'] })),
    ]);
    server = await startRegistry(join(dir, 'modules'), { pageLimits: { list: { default: 2, max: 2 } } });
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    server.setFaults([]);
    client = new RegistryClient({ env: {}, retry: fastRegistryPolicy });
  });
  afterEach(() => client.close());

  it('REG-MOD-RECORD-USAGE, REG-MOD-ID, REG-MOD-OWNER, REG-MOD-NAMESPACE, REG-MOD-NAME, REG-MOD-VERSION, REG-MOD-PROVIDER, REG-MOD-DESCRIPTION, REG-MOD-SOURCE, REG-MOD-PUBLISHED-AT, REG-MOD-DOWNLOADS, REG-MOD-VERIFIED: list items are typed module records', async () => {
    const records = [];
    for await (const record of client.listModules({ namespace: 'acme', host: server.host })) records.push(record);
    const [record] = records;
    assert.ok(record);
    assert.equal(record.id, `${record.namespace}/${record.name}/${record.provider}/${record.version}`);
    assert.equal(typeof record.owner, 'string');
    assert.deepEqual([record.namespace, record.name, record.provider, record.version], ['acme', 'network', 'aws', '1.1.0']);
    assert.equal(record.description, 'VPC');
    assert.equal(record.source, 'https://example.com/acme/network');
    assert.ok(!Number.isNaN(Date.parse(String(record.published_at))));
    assert.ok(Number.isInteger(record.downloads));
    assert.equal(record.verified, true);
  });

  it('REG-DETAIL-ROOT, REG-DETAIL-SUBMODULES, REG-DETAIL-PROVIDERS, REG-CONTENT-PATH, REG-CONTENT-README, REG-CONTENT-EMPTY, REG-CONTENT-INPUTS, REG-CONTENT-OUTPUTS, REG-CONTENT-RESOURCES, REG-CONTENT-DEPENDENCIES: module detail content is read', async () => {
    const detail = await client.version(address('acme/network/aws'), '1.1.0');
    assert.equal(detail.root?.path ?? '', '');
    assert.equal(typeof detail.root?.readme, 'string');
    assert.equal(detail.root?.empty, false);
    assert.ok(detail.root?.inputs?.some((input) => input.name === 'name'));
    assert.ok(detail.root?.outputs?.some((output) => output.name === 'id'));
    assert.ok(Array.isArray(detail.root?.resources));
    assert.deepEqual(detail.root?.resources, [
      { name: 'this', type: 'aws_vpc' },
      { name: 'private', type: 'aws_subnet' },
    ]);
    assert.ok(Array.isArray(detail.root?.dependencies));
    assert.deepEqual(detail.root?.dependencies, [
      { name: 'logs', source: './modules/flow-logs', version: '' },
      { name: 'labels', source: 'cloudposse/label/null', version: '0.25.0' },
    ]);
    assert.ok(detail.submodules?.some((sub) => sub.path === 'modules/flow-logs'));
    const flowLogs = detail.submodules?.find((sub) => sub.path === 'modules/flow-logs');
    assert.deepEqual(flowLogs?.resources, [{ name: 'this', type: 'aws_flow_log' }]);
    assert.deepEqual(flowLogs?.dependencies, [{ name: 'bucket', source: 'acme/bucket/aws', version: '~> 1.2' }]);
    assert.ok(Array.isArray(detail.providers));
  });

  it('REG-CONTENT-TRIMMED, REG-VER-UNDOCUMENTED-CHANGE: trimmed content and unknown extra properties are both accepted', async () => {
    server.setFaults([
      {
        kind: 'respond',
        path: '/v1/modules/acme/network/aws/1.1.0',
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'acme/network/aws/1.1.0',
          namespace: 'acme',
          name: 'network',
          provider: 'aws',
          version: '1.1.0',
          root: { path: '' },
          brand_new_field: { x: 1 },
        }),
      },
    ]);
    const detail = await client.version(address('acme/network/aws'), '1.1.0');
    assert.equal(detail.id, 'acme/network/aws/1.1.0');
    assert.equal(detail.root?.readme, undefined);
    server.setFaults([
      {
        kind: 'respond',
        path: '/v1/modules/acme/network/aws/versions',
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          modules: [
            { source: 'acme/network/aws', versions: [{ version: '1.1.0', extra: true }], unknown: 1 },
            { source: 'dep/x/aws', versions: [{ version: '9.9.9' }] },
          ],
        }),
      },
    ]);
    assert.deepEqual(await client.versions(address('acme/network/aws')), ['1.1.0']);
  });

  it('REG-VERSIONS-MODULE-OBJ, REG-VERSIONS-ROOT-OBJ, REG-VERSIONS-SUBMODULE-OBJ: the versions response keeps source, root and submodules', async () => {
    const response = await client.versionsResponse(address('acme/network/aws'));
    const [first] = response.modules;
    assert.equal(typeof first?.source, 'string');
    const version = first?.versions.find((v) => v.version === '1.1.0');
    assert.ok(version);
    assert.ok(Array.isArray(version.root?.providers));
    assert.deepEqual(version.root?.providers, [{ name: 'aws', version: '>= 5.0' }]);
    assert.ok(Array.isArray(version.root?.dependencies));
    assert.deepEqual(version.root?.dependencies, [
      { name: 'logs', source: './modules/flow-logs', version: '' },
      { name: 'labels', source: 'cloudposse/label/null', version: '0.25.0' },
    ]);
    assert.ok(Array.isArray(version.submodules));
    assert.deepEqual(version.submodules, [
      {
        path: 'modules/flow-logs',
        providers: [{ name: 'aws', version: '~> 5.1' }],
        dependencies: [{ name: 'bucket', source: 'acme/bucket/aws', version: '~> 1.2' }],
      },
    ]);
  });

  it('REG-RESULT-KEY-PLURAL, REG-META-CURRENT-OFFSET, REG-META-PREV-OFFSET, REG-PAGE-PARAMS, REG-DLSUM-ID: pages carry meta and the result under "modules"', async () => {
    const pages: ModulePage[] = [];
    for await (const page of client.pages(server.host, 'zeta', {}, 'listing')) pages.push(page);
    assert.equal(pages.length, 3);
    assert.deepEqual(
      pages.map((p) => p.meta.current_offset),
      [0, 2, 4],
    );
    assert.equal(pages[0]?.meta.prev_offset, undefined);
    assert.equal(pages[1]?.meta.prev_offset, 0);
    assert.equal(pages[2]?.meta.next_offset, undefined);
    assert.deepEqual(
      pages.map((p) => p.modules.length),
      [2, 2, 1],
    );
    const summary = await client.downloadsSummary(address('acme/network/aws'));
    assert.equal(typeof summary.data.id, 'string');
  });

  it('REG-ALL-GET-JSON, REG-STATUS-SUCCESS, REG-VER-MODULES-V1: every call is a GET on the v1 base (v2 for metrics) answered 200 or 204', async () => {
    server.clearRequests();
    await client.versions(address('acme/network/aws'));
    await client.download(address('acme/network/aws'), '1.1.0');
    await client.downloadsSummary(address('acme/network/aws'));
    const requests = server.requests().filter((r) => !r.path.startsWith('/.well-known'));
    assert.ok(requests.every((r) => r.method === 'GET'));
    assert.deepEqual(
      requests.map((r) => r.status),
      [200, 204, 200],
    );
    assert.ok(requests.slice(0, 2).every((r) => r.path.startsWith('/v1/modules/')));
    assert.ok(requests[2]?.path.startsWith('/v2/modules/'));
  });

  it('REG-STATUS-301-MOVED: a moved module is followed through its 301', async () => {
    const moved = await startRegistry(join(dir, 'modules'), { aliases: { 'old/network/aws': 'acme/network/aws' } });
    try {
      const versions = await client.versions(address('old/network/aws', moved.host));
      assert.deepEqual([...versions].sort(), ['1.0.0', '1.1.0']);
      assert.ok(moved.requests().some((r) => r.status === 301));
    } finally {
      await moved.stop();
    }
  });

  it('REG-PROTO-MINIMAL, REG-PROTO-EXTENDED, REG-PROTO-EXTENDED-OPTIONAL: a minimal registry (versions and download only) still pins and installs; extended calls fail clearly', async () => {
    const minimal = await startRegistry(join(dir, 'modules'), { minimal: true });
    try {
      const manifest = parseManifest(JSON.stringify({ net: { source: `${minimal.host}/acme/network/aws`, version: '~> 1.0' } }), 'm', {});
      const { lock } = await pin(manifest, { version: 1, modules: {} }, { client });
      const [installed] = await install(manifest, lock, join(dir, 'minimal-install'), { client });
      assert.equal(installed?.version, '1.1.0');
      await assert.rejects(
        async () => {
          for await (const _ of client.search({ query: 'x', host: minimal.host })) void _;
        },
        (error: unknown) => error instanceof HttpError && error.status === 404,
      );
    } finally {
      await minimal.stop();
    }
  });
});
