import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistryServer } from '../../devserver/registry/index.js';
import { RegistryClient } from '../../lib/registry/client.js';
import { formatLockFile, LockFileError, parseLockFile, readLockFile, writeLockFile } from '../../lib/registry/lockfile.js';
import { parseManifest } from '../../lib/registry/manifest.js';
import { install, pin, resolveAddress, verify } from '../../lib/registry/modules.js';
import { LocationError } from '../../lib/registry/location.js';
import { fastRegistryPolicy, startRegistry, writeModules } from './fixtures.js';

describe('modules: resolve, pin, install, verify against the embedded registry', function () {
  this.timeout(60_000);
  let dir: string;
  let server: RegistryServer;
  let client: RegistryClient;
  let work: string;

  const manifestOf = (modules: Record<string, { source: string; version?: string }>) => parseManifest(JSON.stringify(modules), 'gantry.modules.json', {});
  const src = (tail: string) => `${server.host}/${tail}`;
  const versionCalls = () =>
    server
      .requests()
      .filter((r) => r.path.endsWith('/versions'))
      .map((r) => r.path);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-modules-'));
    await writeModules(join(dir, 'registry'), [
      { namespace: 'acme', name: 'network', provider: 'aws', versions: ['1.0.0', '1.1.0', '1.2.0', '2.0.0'], files: { 'modules/vpc/main.tf': 'vpc\n' } },
      { namespace: 'acme', name: 'bucket', provider: 'aws', versions: ['0.1.0', '0.2.0'] },
    ]);
    server = await startRegistry(join(dir, 'registry'), { checksums: true });
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    server.setFaults([]);
    server.clearRequests();
    client = new RegistryClient({ env: {}, retry: fastRegistryPolicy });
    work = await mkdtemp(join(dir, 'work-'));
  });
  afterEach(() => client.close());

  it('REG-PROTO-MINIMAL: resolves the newest allowed version and its location (version resolution plus download)', async () => {
    const resolution = await resolveAddress(client, src('acme/network/aws//modules/vpc'), '~> 1.1', {});
    assert.equal(resolution.version, '1.2.0');
    assert.equal(resolution.location.subdir, 'modules/vpc');
    assert.match(resolution.locationText, /^http:\/\/127\.0\.0\.1:\d+\/.+\/\/modules\/vpc(\?checksum=sha256:[0-9a-f]{64})?$/);
  });

  it('pins with content hashes, installs byte-for-byte, verifies; the lock has stable key order', async () => {
    const manifest = manifestOf({
      net: { source: src('acme/network/aws//modules/vpc'), version: '~> 1.0' },
      bucket: { source: src('acme/bucket/aws'), version: '0.1.0' },
    });
    const pinned = await pin(manifest, { version: 1, modules: {} }, { client });
    assert.deepEqual(
      pinned.modules.map((m) => [m.name, m.version, m.changed]),
      [
        ['net', '1.2.0', true],
        ['bucket', '0.1.0', true],
      ],
    );
    const lockFile = join(work, 'gantry.lock.json');
    await writeLockFile(lockFile, pinned.lock);
    const text = await readFile(lockFile, 'utf8');
    assert.deepEqual(Object.keys(JSON.parse(text).modules), [src('acme/bucket/aws'), src('acme/network/aws//modules/vpc')].sort());
    assert.deepEqual(Object.keys(JSON.parse(text).modules[src('acme/bucket/aws')]), ['constraint', 'version', 'location', 'hash']);
    assert.equal(formatLockFile(parseLockFile(text)), text);

    const events: Array<{ name: string; phase: string; transferred?: number }> = [];
    const installed = await install(manifest, await readLockFile(lockFile), join(work, 'modules'), { client, onEvent: (event) => events.push(event) });
    assert.deepEqual(
      installed.map((i) => i.status),
      ['installed', 'installed'],
    );
    assert.ok(
      events.some((e) => e.name === 'net' && e.phase === 'download' && (e.transferred ?? 0) > 0),
      'downloads report progress',
    );
    assert.deepEqual(
      events
        .filter((e) => e.phase === 'installed')
        .map((e) => e.name)
        .sort(),
      ['bucket', 'net'],
    );
    assert.equal(installed[0]?.path, join(work, 'modules', 'net', 'modules', 'vpc'));
    assert.equal(await readFile(join(installed[0]!.path, 'main.tf'), 'utf8'), 'vpc\n');
    assert.equal(installed[1]?.hash, pinned.lock.modules[src('acme/bucket/aws')]?.hash);

    server.clearRequests();
    const again = await install(manifest, pinned.lock, join(work, 'modules'), { client });
    assert.deepEqual(
      again.map((i) => i.status),
      ['unchanged', 'unchanged'],
    );
    assert.deepEqual(
      again.map((i) => i.path),
      installed.map((i) => i.path),
    );
    assert.deepEqual(server.requests(), [], 'an installed module at the pinned hash needs no registry call');
    assert.ok((await verify(manifest, pinned.lock, join(work, 'modules'))).every((r) => r.ok));

    await writeFile(join(work, 'modules', 'bucket', 'main.tf'), 'tampered\n');
    const checked = await verify(manifest, pinned.lock, join(work, 'modules'));
    assert.deepEqual(
      checked.map((r) => r.ok),
      [true, false],
    );
    assert.equal(checked[1]?.problem, 'content differs from the lock');
  });

  it('changing one constraint re-resolves only that module; --upgrade re-resolves the named one', async () => {
    const first = manifestOf({ net: { source: src('acme/network/aws'), version: '~> 1.0' }, bucket: { source: src('acme/bucket/aws'), version: '0.1.0' } });
    const locked = (await pin(first, { version: 1, modules: {} }, { client })).lock;
    server.clearRequests();
    const unchanged = await pin(first, locked, { client });
    assert.deepEqual(versionCalls(), []);
    assert.deepEqual(unchanged.lock, locked);

    const second = manifestOf({ net: { source: src('acme/network/aws'), version: '~> 1.0' }, bucket: { source: src('acme/bucket/aws'), version: '~> 0.2' } });
    const repinned = await pin(second, locked, { client });
    assert.deepEqual(versionCalls(), ['/v1/modules/acme/bucket/aws/versions']);
    assert.equal(repinned.lock.modules[src('acme/bucket/aws')]?.version, '0.2.0');
    assert.deepEqual(repinned.lock.modules[src('acme/network/aws')], locked.modules[src('acme/network/aws')]);

    server.clearRequests();
    await pin(second, repinned.lock, { client, upgrade: ['net'] });
    assert.deepEqual(versionCalls(), ['/v1/modules/acme/network/aws/versions']);
    await assert.rejects(pin(second, repinned.lock, { client, upgrade: ['nope'] }), /not in the manifest: nope/);
  });

  it('a lock hash mismatch fails the install with exit 1 and replaces nothing', async () => {
    const manifest = manifestOf({ bucket: { source: src('acme/bucket/aws'), version: '0.1.0' } });
    const lock = (await pin(manifest, { version: 1, modules: {} }, { client })).lock;
    const modulesDir = join(work, 'modules');
    await install(manifest, lock, modulesDir, { client });
    await writeFile(join(modulesDir, 'bucket', 'local-note.txt'), 'keep me\n');
    const key = src('acme/bucket/aws');
    const forged = { version: 1 as const, modules: { [key]: { ...lock.modules[key]!, hash: 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' } } };
    // force: the local note makes it a changed folder, which only force replaces — and even then a mismatch replaces nothing.
    await assert.rejects(
      install(manifest, forged, modulesDir, { client, force: true }),
      (error: unknown) => (error as { exitCode?: number }).exitCode === 1 && /lock file pins h1:AAAA/.test((error as Error).message),
    );
    assert.equal(await readFile(join(modulesDir, 'bucket', 'local-note.txt'), 'utf8'), 'keep me\n');
    assert.deepEqual(await readdir(modulesDir), ['.gantry-installed.json', 'bucket']);
  });

  it('a ?checksum= that does not match refuses the install (exit 1) before extracting', async () => {
    const manifest = manifestOf({ bucket: { source: src('acme/bucket/aws'), version: '0.2.0' } });
    const { location } = await client.download(parseManifest(JSON.stringify({ b: { source: src('acme/bucket/aws') } }), 'm', {})[0]!.address, '0.2.0');
    const wrong = location.replace(/checksum=sha256:[0-9a-f]{64}/, `checksum=sha256:${'1'.repeat(64)}`);
    assert.notEqual(wrong, location, 'the registry adds checksums to its locations');
    server.setFaults([{ kind: 'respond', path: '/v1/modules/acme/bucket/aws/0.2.0/download', status: 204, headers: { 'x-registry-get': wrong } }]);
    await assert.rejects(
      pin(manifest, { version: 1, modules: {} }, { client }),
      (error: unknown) => (error as { exitCode?: number }).exitCode === 1 && /checksum is [0-9a-f]{64}, not the 1{64}/.test((error as Error).message),
    );
  });

  it('REG-DL-XGET-SYNTAX: an unknown getter and a file:// location from the registry are clear errors', async () => {
    const manifest = manifestOf({ bucket: { source: src('acme/bucket/aws'), version: '0.2.0' } });
    for (const [value, message] of [
      ['hg::https://example.com/repo', /unknown getter "hg::"/],
      ['file:///etc', /local file/],
    ] as const) {
      server.setFaults([{ kind: 'respond', path: '/v1/modules/acme/bucket/aws/0.2.0/download', status: 204, headers: { 'x-registry-get': value } }]);
      await assert.rejects(
        pin(manifest, { version: 1, modules: {} }, { client }),
        (error: unknown) => error instanceof LocationError && message.test(error.message),
      );
    }
  });

  it('a download that breaks off is tried again; if it keeps failing it is a network failure (exit 3), streamed or not, and nothing is installed', async () => {
    const lock = (await pin(manifestOf({ bucket: { source: src('acme/bucket/aws'), version: '0.2.0' } }), { version: 1, modules: {} }, { client })).lock;
    const manifest = manifestOf({ bucket: { source: src('acme/bucket/aws'), version: '0.2.0' } });
    server.setFaults([{ kind: 'truncate', path: '/_gantry/archives/**', bytes: 20 }]);
    // This registry adds ?checksum=, so the archive is downloaded to disk first; without it, it streams into the extractor.
    await assert.rejects(install(manifest, lock, join(work, 'modules'), { client }), (error: unknown) => (error as { exitCode?: number }).exitCode === 3);
    await assert.rejects(readdir(join(work, 'modules', 'bucket')));
    const plain = await startRegistry(join(dir, 'registry'));
    try {
      plain.setFaults([{ kind: 'truncate', path: '/_gantry/archives/**', bytes: 20 }]);
      const streamed = manifestOf({ bucket: { source: `${plain.host}/acme/bucket/aws`, version: '0.2.0' } });
      await assert.rejects(
        pin(streamed, { version: 1, modules: {} }, { client }),
        (error: unknown) => (error as { exitCode?: number; name?: string }).exitCode === 3 && (error as Error).name === 'NetworkError',
      );
      assert.equal(plain.requests().filter((r) => r.path.startsWith('/_gantry/archives/')).length, 3, 'the whole transfer is tried 3 times');
      // A transfer that breaks off once is simply tried again.
      plain.setFaults([{ kind: 'truncate', path: '/_gantry/archives/**', bytes: 20, times: 1 }]);
      const { lock: again } = await pin(streamed, { version: 1, modules: {} }, { client });
      assert.equal(Object.values(again.modules)[0]?.hash, Object.values(lock.modules)[0]?.hash);
    } finally {
      await plain.stop();
    }
  });

  it('a truncated or corrupt lock file is a clear error and is never rewritten', async () => {
    const manifest = manifestOf({ bucket: { source: src('acme/bucket/aws'), version: '0.1.0' } });
    const text = formatLockFile((await pin(manifest, { version: 1, modules: {} }, { client })).lock);
    const file = join(work, 'gantry.lock.json');
    for (const bad of [
      text.slice(0, text.length / 2),
      '[]',
      '{"version":2,"modules":{}}',
      text.replace(/"hash": "h1:[^"]+"/, '"hash": "md5:x"'),
      text.replace(/"version": "0.1.0"/, '"version": 1'),
    ]) {
      await writeFile(file, bad);
      await assert.rejects(readLockFile(file), (error: unknown) => error instanceof LockFileError && error.exitCode === 2);
      assert.equal(await readFile(file, 'utf8'), bad);
    }
  });

  it('install refuses modules that are not pinned or whose constraint changed', async () => {
    const manifest = manifestOf({ bucket: { source: src('acme/bucket/aws'), version: '0.1.0' } });
    await assert.rejects(install(manifest, { version: 1, modules: {} }, join(work, 'm'), { client }), /not in the lock file/);
    const lock = (await pin(manifest, { version: 1, modules: {} }, { client })).lock;
    await assert.rejects(
      install(manifestOf({ bucket: { source: src('acme/bucket/aws'), version: '0.2.0' } }), lock, join(work, 'm'), { client }),
      /constraint of "bucket" changed/,
    );
  });

  it('the manifest is validated: names, sources, constraints, conflicting constraints for one source', () => {
    assert.throws(() => parseManifest('{"../x": {"source": "a/b/c"}}', 'm', {}), /local name/);
    assert.throws(() => parseManifest('{"x": {"source": "a/b"}}', 'm', {}), /module "x": the module address "a\/b" has 2 parts/);
    assert.throws(() => parseManifest('{"x": {"source": "a/b/c", "version": "=> 1"}}', 'm', {}), /version constraint/);
    assert.throws(
      () => parseManifest('{"x": {"source": "a/b/c", "version": "1.0.0"}, "y": {"source": "a/b/c", "version": "2.0.0"}}', 'm', {}),
      /different constraints/,
    );
    assert.throws(() => parseManifest('[1]', 'm', {}), /must be a JSON object/);
  });
});
