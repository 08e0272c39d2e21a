import assert from 'node:assert/strict';
import { lstat, mkdtemp, readFile, readlink, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { parseLocation } from '../../lib/registry/location.js';
import { extractArchive, extractTarStream } from '../../lib/sources/archive.js';
import { fetchSource } from '../../lib/sources/fetch.js';
import { hashTree } from '../../lib/sources/hash.js';
import { TreeWriter } from '../../lib/sources/tree-writer.js';
import { defaultLimits, SourceRefusedError } from '../../lib/sources/limits.js';
import { tar, tarBz2, tarGz, tarXz, zip, zipWithRawNames, type TarMember } from './archives.js';

describe('sources: hardened extraction and content hash', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-extract-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function archiveFile(name: string, bytes: Buffer): Promise<string> {
    const file = join(dir, name);
    await writeFile(file, bytes);
    return file;
  }

  async function extractInto(name: string, bytes: Buffer, type: Parameters<typeof extractArchive>[1], limits = defaultLimits): Promise<string> {
    const file = await archiveFile(name, bytes);
    const root = join(dir, `out-${name}`);
    await mkdir(root);
    await extractArchive(file, type, root, limits);
    return root;
  }

  const sample: TarMember[] = [
    { name: 'mod/', type: '5' },
    { name: 'mod/main.tf', content: 'resource "x" "y" {}\n' },
    { name: 'mod/run.sh', content: '#!/bin/sh\necho hi\n', mode: 0o755 },
    { name: 'mod/nested/README.md', content: '# readme\n' },
    { name: 'mod/link.tf', type: '2', linkname: 'main.tf' },
  ];

  it('extracts tar, tar.gz, tar.bz2 and tar.xz to the same tree with the same h1: hash', async () => {
    const roots = [
      await extractInto('a.tar', tar(sample), 'tar'),
      await extractInto('a.tgz', tarGz(sample), 'tar.gz'),
      await extractInto('a.tbz2', tarBz2(sample), 'tar.bz2'),
      await extractInto('a.txz', tarXz(sample), 'tar.xz'),
    ];
    const hashes = await Promise.all(roots.map((root) => hashTree(root)));
    assert.match(hashes[0] as string, /^h1:[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(new Set(hashes).size, 1);
    const root = roots[0] as string;
    assert.equal(await readFile(join(root, 'mod/main.tf'), 'utf8'), 'resource "x" "y" {}\n');
    assert.equal((await lstat(join(root, 'mod/run.sh'))).mode & 0o777, 0o755);
    assert.equal((await lstat(join(root, 'mod/main.tf'))).mode & 0o777, 0o644);
    assert.equal(await readlink(join(root, 'mod/link.tf')), 'main.tf');
  });

  it('the h1: hash of a zip equals that of a tar.gz of the same files, and changes when one byte or one mode changes', async () => {
    const fromTar = await extractInto('b.tgz', tarGz(sample), 'tar.gz');
    const zipBytes = await zip([
      { name: 'mod/', directory: true },
      { name: 'mod/main.tf', content: 'resource "x" "y" {}\n' },
      { name: 'mod/run.sh', content: '#!/bin/sh\necho hi\n', mode: 0o100755 },
      { name: 'mod/nested/README.md', content: '# readme\n' },
      { name: 'mod/link.tf', content: 'main.tf', mode: 0o120777 },
    ]);
    const fromZip = await extractInto('b.zip', zipBytes, 'zip');
    assert.equal(await hashTree(fromZip), await hashTree(fromTar));
    assert.equal(await readlink(join(fromZip, 'mod/link.tf')), 'main.tf');

    const changedByte = await extractInto(
      'c.tgz',
      tarGz(sample.map((m) => (m.name === 'mod/main.tf' ? { ...m, content: 'resource "x" "z" {}\n' } : m))),
      'tar.gz',
    );
    const changedMode = await extractInto('d.tgz', tarGz(sample.map((m) => (m.name === 'mod/run.sh' ? { ...m, mode: 0o644 } : m))), 'tar.gz');
    assert.notEqual(await hashTree(changedByte), await hashTree(fromTar));
    assert.notEqual(await hashTree(changedMode), await hashTree(fromTar));
  });

  it('the hash computed while extracting, and in hash-only mode (nothing written), equals the hash of the written tree', async () => {
    const members: TarMember[] = [
      ...sample,
      { name: 'mod/main.tf', content: 'replaced\n' },
      { name: 'mod/hard.tf', type: '1', linkname: 'mod/run.sh' },
      { name: 'mod/nested', content: 'a file replaces a folder' },
    ];
    const file = await archiveFile('parity.tgz', tarGz(members));
    await mkdir(join(dir, 'parity'));
    const written = await extractArchive(file, 'tar.gz', join(dir, 'parity'), defaultLimits);
    assert.equal(written.hash, await hashTree(join(dir, 'parity')));
    const ghost = join(dir, 'never-written');
    const hashOnly = await extractArchive(file, 'tar.gz', ghost, defaultLimits, true);
    assert.equal(hashOnly.hash, written.hash);
    await assert.rejects(lstat(ghost));
    assert.equal(await readFile(join(dir, 'parity', 'mod/nested'), 'utf8'), 'a file replaces a folder');
  });

  it('the h1: hash is SHA-256 over sorted "<sha256>  <mode>  <path>" lines (an independent recomputation agrees)', async () => {
    const root = await extractInto(
      'e.tgz',
      tarGz([
        { name: 'b.txt', content: 'B' },
        { name: 'a.txt', content: 'A', mode: 0o700 },
      ]),
      'tar.gz',
    );
    const line = (content: string, mode: string, path: string) => `${createHash('sha256').update(content).digest('hex')}  ${mode}  ${path}\n`;
    const expected = `h1:${createHash('sha256')
      .update(line('A', '755', 'a.txt') + line('B', '644', 'b.txt'))
      .digest('base64')}`;
    assert.equal(await hashTree(root), expected);
  });

  const refusals: Array<[string, TarMember[], RegExp]> = [
    ['a ".." entry', [{ name: '../evil.txt', content: 'x' }], /climbs out/],
    ['a ".." entry in the middle', [{ name: 'a/../../evil.txt', content: 'x' }], /climbs out/],
    ['an absolute path', [{ name: '/tmp/evil.txt', content: 'x' }], /absolute path/],
    // Found by PROP-ARCHIVE-PATHS: the drive check ran on the raw name only, and "./C:/x" cleans to the drive path "C:/x".
    ['a drive path behind "./"', [{ name: './C:/evil.txt', content: 'x' }], /absolute path/],
    ['a symlink to an absolute path', [{ name: 'l', type: '2', linkname: '/etc/passwd' }], /absolute path/],
    ['a symlink escaping with ..', [{ name: 'a/l', type: '2', linkname: '../../outside' }], /points outside/],
    [
      'a chain of symlinks that escapes though each link alone stays inside',
      [
        { name: 'p/q/x', type: '2', linkname: '../..' },
        { name: 'p/q/l', type: '2', linkname: 'x/../../..' },
      ],
      /"p\/q\/l" \(-> "x\/..\/..\/.."\) is refused: it points outside the module once the links/,
    ],
    [
      'the same chain with the escaping link first',
      [
        { name: 'p/q/l', type: '2', linkname: 'x/../../..' },
        { name: 'p/q/x', type: '2', linkname: '../..' },
      ],
      /"p\/q\/l".*points outside the module once the links/,
    ],
    [
      'a loop of symlinks',
      [
        { name: 'a', type: '2', linkname: 'b' },
        { name: 'b', type: '2', linkname: 'a' },
      ],
      /loop of links/,
    ],
    [
      'a file written through a symlink',
      [
        { name: 'a/', type: '5' },
        { name: 'a/b', type: '2', linkname: '..' },
        { name: 'a/b/c', content: 'x' },
      ],
      /through the symbolic link/,
    ],
    ['a hard link escaping', [{ name: 'h', type: '1', linkname: '../../etc/passwd' }], /points outside/],
    ['a hard link to an absolute path', [{ name: 'h', type: '1', linkname: '/etc/passwd' }], /points outside/],
    ['a hard link to something not extracted', [{ name: 'h', type: '1', linkname: 'nothing' }], /not a file extracted before/],
    ['a character device', [{ name: 'dev', type: '3' }], /CharacterDevice/],
    ['a block device', [{ name: 'dev', type: '4' }], /BlockDevice/],
    ['a FIFO', [{ name: 'fifo', type: '6' }], /FIFO/],
  ];
  for (const [what, members, message] of refusals) {
    it(`refuses ${what} and writes nothing outside the target`, async () => {
      const root = join(dir, 'deep', 'er', 'root');
      await mkdir(root, { recursive: true });
      const file = await archiveFile('hostile.tgz', tarGz(members));
      await assert.rejects(extractArchive(file, 'tar.gz', root, defaultLimits), (error: unknown) => {
        assert.ok(error instanceof SourceRefusedError, String(error));
        assert.match((error as Error).message, message);
        assert.equal((error as SourceRefusedError).exitCode, 1);
        return true;
      });
      assert.deepEqual((await readdir(join(dir, 'deep'))).sort(), ['er']);
      assert.deepEqual((await readdir(join(dir, 'deep', 'er'))).sort(), ['root']);
      await assert.rejects(lstat(join(dir, 'evil.txt')));
    });
  }

  it('keeps a chain of symlinks that stays inside, with its hash', async () => {
    const members: TarMember[] = [
      { name: 'p/q/r', content: 'R' },
      { name: 'p/q/x', type: '2', linkname: '..' },
      { name: 'p/q/l', type: '2', linkname: 'x/q/r' },
    ];
    const root = await extractInto('chain.tgz', tarGz(members), 'tar.gz');
    assert.equal(await readFile(join(root, 'p', 'q', 'l'), 'utf8'), 'R');
    assert.match(await hashTree(root), /^h1:/);
  });

  it('copies a hard link inside the archive as a separate file', async () => {
    const root = await extractInto(
      'h.tgz',
      tarGz([
        { name: 'a.txt', content: 'same' },
        { name: 'b.txt', type: '1', linkname: 'a.txt' },
      ]),
      'tar.gz',
    );
    assert.equal(await readFile(join(root, 'b.txt'), 'utf8'), 'same');
    assert.equal((await lstat(join(root, 'b.txt'))).nlink, 1);
  });

  it('drops setuid, setgid and sticky bits', async () => {
    const root = await extractInto(
      's.tgz',
      tarGz([
        { name: 'suid', content: 'x', mode: 0o4755 },
        { name: 'sgid', content: 'x', mode: 0o2644 },
        { name: 'd/', type: '5', mode: 0o1777 },
      ]),
      'tar.gz',
    );
    assert.equal((await lstat(join(root, 'suid'))).mode & 0o7777, 0o755);
    assert.equal((await lstat(join(root, 'sgid'))).mode & 0o7777, 0o644);
    assert.equal((await lstat(join(root, 'd'))).mode & 0o7777, 0o755);
  });

  it('refuses a decompression bomb past the byte cap (a 64 MiB file of zeros in a tiny tar.gz)', async () => {
    const bomb = tarGz([{ name: 'zeros', content: Buffer.alloc(64 * 1024 * 1024) }]);
    assert.ok(bomb.length < 200_000);
    const file = await archiveFile('bomb.tgz', bomb);
    const root = join(dir, 'bomb');
    await mkdir(root);
    await assert.rejects(extractArchive(file, 'tar.gz', root, { ...defaultLimits, maxBytes: 8 * 1024 * 1024 }), /expands to more than 8388608 bytes/);
  });

  it('refuses an archive with more entries than the cap (tar and zip)', async () => {
    const many = Array.from({ length: 60 }, (_, i) => ({ name: `f${i}`, content: '' }));
    const limits = { ...defaultLimits, maxFiles: 50 };
    const tgz = await archiveFile('many.tgz', tarGz(many));
    await mkdir(join(dir, 'm1'));
    await assert.rejects(extractArchive(tgz, 'tar.gz', join(dir, 'm1'), limits), /more than 50 entries/);
    const z = await archiveFile('many.zip', await zip(many));
    await mkdir(join(dir, 'm2'));
    await assert.rejects(extractArchive(z, 'zip', join(dir, 'm2'), limits), /more than 50 entries/);
  });

  it('refuses hostile zip entries: "..", absolute paths, escaping symlinks and FIFOs', async () => {
    const cases: Array<[Parameters<typeof zipWithRawNames>[0], RegExp]> = [
      [[{ name: '', rawName: '../evil.txt', content: 'x' }], /\.\.|relative path/],
      [[{ name: '', rawName: '/abs/evil.txt', content: 'x' }], /absolute/],
      [[{ name: '', rawName: 'link', content: '../../outside', mode: 0o120777 }], /points outside/],
      [[{ name: '', rawName: 'fifo', content: '', mode: 0o010644 }], /FIFO/],
    ];
    for (const [members, message] of cases) {
      const file = await archiveFile('hostile.zip', await zipWithRawNames(members));
      const root = await mkdtemp(join(dir, 'z-'));
      await assert.rejects(extractArchive(file, 'zip', root, defaultLimits), (error: unknown) => {
        assert.ok(error instanceof SourceRefusedError, String(error));
        assert.match((error as Error).message, message);
        return true;
      });
    }
  });

  it('refuses a truncated or corrupt archive with a clear error', async () => {
    const good = tarGz(sample);
    const file = await archiveFile('cut.tgz', good.subarray(0, Math.floor(good.length / 2)));
    await mkdir(join(dir, 'cut'));
    await assert.rejects(extractArchive(file, 'tar.gz', join(dir, 'cut'), defaultLimits), SourceRefusedError);
    const xz = await archiveFile('bad.txz', Buffer.concat([tarXz(sample).subarray(0, 40), Buffer.from('garbage')]));
    await mkdir(join(dir, 'bad'));
    await assert.rejects(extractArchive(xz, 'tar.xz', join(dir, 'bad'), defaultLimits), /the tar\.xz archive is corrupt: xz said xz: \(stdin\): /);
  });

  it('a small tar.gz of known size (a download with Content-Length, inflated by the parser) extracts and hashes as a file does, and is refused the same way when hostile', async () => {
    const streamed = async (bytes: Buffer, root: string, limits = defaultLimits, hashOnly = false) => {
      const writer = new TreeWriter(root, limits, hashOnly);
      await extractTarStream(Readable.from([bytes.subarray(0, 100), bytes.subarray(100)]), 'tar.gz', writer, bytes.length);
      return writer.seal();
    };
    const good = tarGz(sample);
    assert.ok(good.length <= 64 * 1024);
    const root = join(dir, 'small');
    await mkdir(root);
    const hash = await streamed(good, root);
    assert.equal(hash, await hashTree(root));
    await mkdir(join(dir, 'small-file'));
    assert.equal(hash, (await extractArchive(await archiveFile('small.tgz', good), 'tar.gz', join(dir, 'small-file'), defaultLimits)).hash);
    assert.equal(await streamed(good, join(dir, 'unused'), defaultLimits, true), hash);
    assert.equal(await readFile(join(root, 'mod/main.tf'), 'utf8'), 'resource "x" "y" {}\n');

    // 32 MiB of zeros in ~32 KiB: the byte cap stops it, written or hash-only.
    const bomb = tarGz([{ name: 'zeros', content: Buffer.alloc(32 * 1024 * 1024) }]);
    assert.ok(bomb.length <= 64 * 1024);
    for (const hashOnly of [false, true]) {
      const target = await mkdtemp(join(dir, 'bomb-'));
      await assert.rejects(streamed(bomb, target, { ...defaultLimits, maxBytes: 4 * 1024 * 1024 }, hashOnly), /expands to more than 4194304 bytes/);
    }
    // Cut in half, or not gzip at all: refused as an archive, never half-installed.
    await assert.rejects(streamed(good.subarray(0, Math.floor(good.length / 2)), await mkdtemp(join(dir, 'cut-'))), SourceRefusedError);
    await assert.rejects(streamed(Buffer.concat([good.subarray(0, 20), Buffer.alloc(600, 7)]), await mkdtemp(join(dir, 'bad-'))), SourceRefusedError);
    // Escaping names are refused as from a file.
    await assert.rejects(streamed(tarGz([{ name: '../x', content: 'x' }]), await mkdtemp(join(dir, 'esc-'))), /climbs out/);
  });

  describe('atomic install through fetchSource', () => {
    it('installs, then a failing fetch (hostile archive, bad checksum, hash mismatch) leaves the previous install intact', async () => {
      const dest = join(dir, 'modules', 'vpc');
      const good = await archiveFile('good.tgz', tarGz(sample));
      const first = await fetchSource(parseLocation(pathToFileURL(good).toString() + '//mod', { trusted: true }), { dest, trusted: true });
      assert.equal(first.path, join(dest, 'mod'));
      assert.equal(await readFile(join(dest, 'mod/main.tf'), 'utf8'), 'resource "x" "y" {}\n');

      const hostile = await archiveFile(
        'hostile.tgz',
        tarGz([
          { name: 'mod/main.tf', content: 'evil' },
          { name: '../x', content: 'x' },
        ]),
      );
      await assert.rejects(fetchSource(parseLocation(pathToFileURL(hostile).toString(), { trusted: true }), { dest, trusted: true }), SourceRefusedError);

      const wrongSum = `${pathToFileURL(good).toString()}?checksum=sha256:${'0'.repeat(64)}`;
      await assert.rejects(fetchSource(parseLocation(wrongSum, { trusted: true }), { dest, trusted: true }), /sha256 checksum is [0-9a-f]{64}, not the 0{64}/);

      const other = await archiveFile('other.tgz', tarGz([{ name: 'mod/main.tf', content: 'changed' }]));
      await assert.rejects(
        fetchSource(parseLocation(pathToFileURL(other).toString(), { trusted: true }), { dest, trusted: true, expectedHash: first.hash }),
        (error: unknown) => (error as { code?: string; exitCode?: number }).code === 'HASH_MISMATCH' && (error as { exitCode: number }).exitCode === 1,
      );

      assert.equal(await readFile(join(dest, 'mod/main.tf'), 'utf8'), 'resource "x" "y" {}\n');
      assert.equal(await hashTree(dest), first.hash);
      assert.deepEqual(await readdir(join(dir, 'modules')), ['vpc'], 'no working folders are left behind');
    });

    it('checks a matching ?checksum= (bare hex typed by length) before extracting, and resolves //* to the single top folder', async () => {
      const bytes = tarGz(sample);
      const good = await archiveFile('good.tgz', bytes);
      const sha1 = createHash('sha1').update(bytes).digest('hex');
      const result = await fetchSource(parseLocation(`${pathToFileURL(good).toString()}//*/nested?checksum=${sha1}`, { trusted: true }), {
        dest: join(dir, 'm'),
        trusted: true,
      });
      assert.equal(result.subdir, 'mod/nested');
      assert.equal(await readFile(join(result.path, 'README.md'), 'utf8'), '# readme\n');
    });

    it('sniffs the archive type when neither the extension nor ?archive= names it, and honours archive=false', async () => {
      const file = await archiveFile('blob', gzipSync(tar(sample)));
      const sniffed = await fetchSource(parseLocation(pathToFileURL(file).toString(), { trusted: true }), { dest: join(dir, 's'), trusted: true });
      assert.equal(await readFile(join(sniffed.dir, 'mod/main.tf'), 'utf8'), 'resource "x" "y" {}\n');
      const plain = await archiveFile('main.tf', Buffer.from('variable "a" {}\n'));
      const single = await fetchSource(parseLocation(`${pathToFileURL(plain).toString()}?archive=false`, { trusted: true }), {
        dest: join(dir, 'p'),
        trusted: true,
      });
      assert.equal(await readFile(join(single.dir, 'main.tf'), 'utf8'), 'variable "a" {}\n');
    });
  });
});
