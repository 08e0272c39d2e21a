// The folder store: archives on the fly and ready ones, checksums, module.json validation, rescans, TLS.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';
import { extract as extractTar } from 'tar';
import { CatalogError, startRegistryServer, type RegistryServer } from '../../../devserver/registry/index.js';
import { buildFixture } from './fixture.js';
import { get, tempDir, writeModuleJson, writeVersion } from './helpers.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function download(server: RegistryServer, tail: string): Promise<{ location: string; bytes: Buffer; type: string | null }> {
  const response = await fetch(`${server.url}/v1/modules/${tail}/download`);
  assert.equal(response.status, 204);
  const location = response.headers.get('x-registry-get')!;
  const archive = await fetch(location);
  assert.equal(archive.status, 200, location);
  return { location, bytes: Buffer.from(await archive.arrayBuffer()), type: archive.headers.get('content-type') };
}

describe('devserver/registry: folder store', function () {
  this.timeout(20000);
  let fixture: { dir: string; remove(): Promise<void> };
  let server: RegistryServer;

  before(async () => {
    fixture = await buildFixture();
    server = await startRegistryServer({ dir: fixture.dir, checksums: true });
  });
  after(async () => {
    await server?.stop();
    await fixture?.remove();
  });

  it('a version folder is served as a tar.gz holding exactly its files', async () => {
    const { bytes, type } = await download(server, 'acme/storage/aws/1.0.0');
    assert.equal(type, 'application/gzip');
    const out = await tempDir('extract');
    try {
      await writeFile(path.join(out.dir, 'a.tgz'), bytes);
      const names: string[] = [];
      await extractTar({ file: path.join(out.dir, 'a.tgz'), cwd: out.dir, onReadEntry: (e) => void names.push(e.path) });
      assert.deepEqual(names.sort(), ['README.md', 'main.tf', 'modules/', 'modules/replica/', 'modules/replica/main.tf']);
      assert.equal(await readFile(path.join(out.dir, 'README.md'), 'utf8'), '# storage 1.0.0\n');
    } finally {
      await out.remove();
    }
  });

  it('ready archives (.tar.gz, .zip) are served byte for byte with their content type', async () => {
    const tgz = await download(server, 'acme/network/aws/1.0.0');
    assert.deepEqual(tgz.bytes, await readFile(path.join(fixture.dir, 'acme/network/aws/1.0.0.tar.gz')));
    assert.ok(tgz.location.includes('/1.0.0.tar.gz'));
    const zip = await download(server, 'acme/network/aws/1.0.1');
    assert.equal(zip.type, 'application/zip');
    assert.deepEqual(zip.bytes, await readFile(path.join(fixture.dir, 'acme/network/aws/1.0.1.zip')));
    const head = await fetch(zip.location, { method: 'HEAD' });
    assert.equal(Number(head.headers.get('content-length')), zip.bytes.length);
  });

  it('checksums: ?checksum=sha256:<hex> matches the bytes served, for built and ready archives', async () => {
    for (const tail of ['acme/storage/aws/1.1.0', 'acme/network/aws/1.0.1']) {
      const { location, bytes } = await download(server, tail);
      const match = /\?checksum=sha256:([0-9a-f]{64})$/.exec(location);
      assert.ok(match, location);
      assert.equal(match[1], sha256(bytes), tail);
    }
  });

  it('checksums follow an edit inside a version folder (folders are hashed on every download)', async () => {
    const temp = await tempDir('edit');
    try {
      await writeVersion(temp.dir, 'a/b/c', '1.0.0', { 'main.tf': 'one\n' });
      const editable = await startRegistryServer({ dir: temp.dir, checksums: true });
      try {
        const before = await download(editable, 'a/b/c/1.0.0');
        await writeFile(path.join(temp.dir, 'a/b/c/1.0.0/main.tf'), 'two\n');
        const after = await download(editable, 'a/b/c/1.0.0');
        assert.notEqual(sha256(after.bytes), sha256(before.bytes));
        assert.ok(after.location.endsWith(`sha256:${sha256(after.bytes)}`), 'the new checksum matches the new bytes');
      } finally {
        await editable.stop();
      }
    } finally {
      await temp.remove();
    }
  });

  it('archive paths that do not exist are a 404 with {errors}', async () => {
    for (const tail of [
      'acme/storage/aws/9.9.9.tar.gz',
      'acme/storage/aws/1.0.0.zip',
      'acme/storage',
      'x/y/z/1.0.0.tar.gz',
      'acme/external/aws/1.0.0.tar.gz',
    ]) {
      const response = await get(`${server.url}/_gantry/archives/${tail}`);
      assert.equal(response.status, 404, tail);
      assert.ok(Array.isArray(response.body.errors), tail);
    }
  });

  it('hostile archive paths (encoded .., slashes, bad escapes) never reach the file system: 404 with {errors}', async () => {
    for (const tail of [
      '..%2F..%2Foutside.tar.gz',
      '%2e%2e/%2e%2e/%2e%2e/outside.tar.gz',
      'acme/storage/aws/..%2F..%2F..%2F..%2Foutside.tar.gz',
      'acme/storage/aws/%E0%A4%A.tar.gz',
      'acme%2Fstorage/aws/x/1.0.0.tar.gz',
    ]) {
      const response = await get(`${server.url}/_gantry/archives/${tail}`);
      assert.equal(response.status, 404, tail);
      assert.ok(Array.isArray(response.body.errors), tail);
    }
  });

  it('a ready archive wins over a folder of the same version', async () => {
    const temp = await tempDir('both');
    try {
      await writeVersion(temp.dir, 'a/b/c', '1.0.0', { 'main.tf': 'folder\n' });
      await writeFile(path.join(temp.dir, 'a/b/c/1.0.0.tar'), Buffer.alloc(1024));
      const both = await startRegistryServer({ dir: temp.dir });
      try {
        const { location, bytes } = await download(both, 'a/b/c/1.0.0');
        assert.ok(location.endsWith('/1.0.0.tar'));
        assert.equal(bytes.length, 1024);
      } finally {
        await both.stop();
      }
    } finally {
      await temp.remove();
    }
  });

  it('module.json mistakes stop the start with an error naming the file and the field', async () => {
    const temp = await tempDir('badmeta');
    try {
      await writeVersion(temp.dir, 'a/b/c', '1.0.0', { 'main.tf': '' });
      const cases: [unknown, RegExp][] = [
        ['{ not json', /not valid JSON/],
        ['[]', /must be a JSON object/],
        [{ verifed: true }, /unknown field "verifed"/],
        [{ verified: 'yes' }, /"verified" must be a boolean/],
        [{ downloads: -1 }, /"downloads" must be a non-negative integer/],
        [{ downloads: { daily: 1 } }, /"downloads.daily"/],
        [{ versions: { '1.0.0': { published_at: 'yesterday' } } }, /RFC 3339/],
        [{ versions: { '../x': {} } }, /not a usable version name/],
      ];
      for (const [metadata, message] of cases) {
        await writeModuleJson(temp.dir, 'a/b/c', metadata);
        await assert.rejects(startRegistryServer({ dir: temp.dir }), (error: Error) => {
          assert.ok(error instanceof CatalogError, String(error));
          assert.match(error.message, message);
          assert.ok(error.message.includes(path.join(temp.dir, 'a/b/c/module.json')), error.message);
          return true;
        });
      }
    } finally {
      await temp.remove();
    }
  });

  it('start errors: a missing folder, a file instead of a folder, neither or both of dir and s3', async () => {
    await assert.rejects(startRegistryServer({ dir: '/nonexistent/gantry' }), /does not exist/);
    await assert.rejects(startRegistryServer({ dir: path.join(fixture.dir, 'acme/network/aws/1.0.0.tar.gz') }), /is not a directory/);
    await assert.rejects(startRegistryServer({}), /exactly one/);
    await assert.rejects(startRegistryServer({ dir: fixture.dir, s3: { bucket: 'b' } }), /exactly one/);
  });

  it('entries with invalid names are skipped with a warning, not served', async () => {
    const temp = await tempDir('names');
    const lines: string[] = [];
    try {
      await writeVersion(temp.dir, 'good/mod/aws', '1.0.0', { 'main.tf': '' });
      await writeVersion(temp.dir, '-bad/mod/aws', '1.0.0', { 'main.tf': '' });
      await writeVersion(temp.dir, 'good/mod/AWS', '1.0.0', { 'main.tf': '' });
      await writeVersion(temp.dir, 'good/mod/aws', 'v 2', { 'main.tf': '' });
      await writeFile(path.join(temp.dir, 'good/mod/aws/notes.txt'), 'hi');
      const named = await startRegistryServer({ dir: temp.dir, log: (line) => lines.push(line) });
      try {
        const list = await get(`${named.url}/v1/modules`);
        assert.deepEqual(
          list.body.modules.map((m: { id: string }) => m.id),
          ['good/mod/aws/1.0.0'],
        );
        const warnings = lines.filter((l) => l.startsWith('warning:'));
        assert.equal(warnings.length, 4, warnings.join('\n'));
        assert.ok(warnings.some((w) => w.includes('"-bad" is not a valid namespace')));
        assert.ok(warnings.some((w) => w.includes('lowercase')));
      } finally {
        await named.stop();
      }
    } finally {
      await temp.remove();
    }
  });

  it('a new version folder appears after the rescan interval (rescans run in the background); a broken rescan keeps the last good catalog', async () => {
    const temp = await tempDir('rescan');
    const lines: string[] = [];
    /** Asks until the answer satisfies `done` (a background rescan needs a request to start it and a moment to finish). */
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const until = async (url: string, done: (body: any) => boolean) => {
      for (let i = 0; i < 250; i++) {
        const response = await get(url);
        if (done(response.body)) return response;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.fail(`${url} never reached the expected state`);
    };
    try {
      await writeVersion(temp.dir, 'a/b/c', '1.0.0', { 'main.tf': '' });
      const live = await startRegistryServer({ dir: temp.dir, rescanMs: 0, log: (line) => lines.push(line) });
      try {
        await writeVersion(temp.dir, 'a/b/c', '1.1.0', { 'main.tf': '' });
        const versions = `${live.url}/v1/modules/a/b/c/versions`;
        const seen = await until(versions, (body) => body.modules[0].versions.length === 2);
        assert.deepEqual(
          seen.body.modules[0].versions.map((v: { version: string }) => v.version),
          ['1.1.0', '1.0.0'],
        );
        await writeModuleJson(temp.dir, 'a/b/c', '{ broken');
        for (let i = 0; i < 250 && !lines.some((l) => l.includes('serving the previous catalog')); i++) {
          const still = await get(versions);
          assert.equal(still.status, 200);
          assert.equal(still.body.modules[0].versions.length, 2);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.ok(
          lines.some((l) => l.includes('serving the previous catalog') && l.includes('not valid JSON')),
          lines.join('\n'),
        );
        await rm(path.join(temp.dir, 'a/b/c/module.json'));
        await writeVersion(temp.dir, 'a/b/c', '1.2.0', { 'main.tf': '' });
        await live.refresh();
        assert.equal((await get(`${live.url}/v1/modules/a/b/c`)).body.version, '1.2.0', 'refresh() rescans at once');
      } finally {
        await live.stop();
      }
    } finally {
      await temp.remove();
    }
  });

  it('https: with a certificate the registry answers over TLS and names https locations', async () => {
    const temp = await tempDir('tls');
    try {
      const key = path.join(temp.dir, 'key.pem');
      const cert = path.join(temp.dir, 'cert.pem');
      await promisify(execFile)('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ]);
      const ca = await readFile(cert);
      const secure = await startRegistryServer({ dir: fixture.dir, tls: { cert: ca, key: await readFile(key) } });
      try {
        assert.ok(secure.url.startsWith('https://127.0.0.1:'));
        const answer = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
          https
            .get(`${secure.url}/v1/modules/acme/storage/aws/1.0.0/download`, { ca }, (response) => {
              response.resume();
              resolve({ status: response.statusCode ?? 0, location: response.headers['x-registry-get'] as string | undefined });
            })
            .on('error', reject);
        });
        assert.equal(answer.status, 204);
        assert.ok(answer.location?.startsWith(`${secure.url}/_gantry/archives/`), answer.location);
      } finally {
        await secure.stop();
      }
    } finally {
      await temp.remove();
    }
  });
});
