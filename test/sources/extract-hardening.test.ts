// Archive extraction's edges, in process (the mutation spec of lib/sources/archive.ts and tree-writer.ts; docs/testing.md):
// the caps at their exact limits, every link and name refusal, the in-memory tree against the written one, each
// compression path (parser-inflated slices, staged zlib, the system filters) and how each fails.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { extractArchive, extractTarStream, sniffArchiveType } from '../../lib/sources/archive.js';
import { hashTree } from '../../lib/sources/hash.js';
import { defaultLimits, SourceRefusedError } from '../../lib/sources/limits.js';
import { currentUmask, rest, safeRelativePath, TreeWriter } from '../../lib/sources/tree-writer.js';
import type { ArchiveType } from '../../lib/sources/location.js';
import { tar, tarBz2, tarGz, tarXz, zip, type TarMember } from './archives.js';

type Refusal = { code?: string; exitCode?: number; message: string; hint?: string };

/** Each central-directory record of a zip, for patching what no zip writer lets a test choose. */
function centralRecords(bytes: Buffer): number[] {
  const offsets: number[] = [];
  for (let at = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])); at !== -1; at = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), at + 4))
    offsets.push(at);
  return offsets;
}

/** A download of `whole` that sends its header and first 64 KiB, then breaks (a reset 20 ms later). */
function brokenDownload(whole: Buffer): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (sent) return;
      sent = true;
      this.push(whole.subarray(0, 512 + 64 * 1024));
      setTimeout(() => this.destroy(new Error('connection reset')), 20);
    },
  });
}

describe('MUTATION-ARCHIVE: archive extraction at its edges', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-extract-edges-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function file(name: string, bytes: Buffer): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return path;
  }

  /** Extracts `bytes` as a file into a fresh folder; answers the folder and what extractArchive returned. */
  async function extract(bytes: Buffer, type: ArchiveType, limits = defaultLimits, hashOnly = false) {
    const root = await mkdtemp(join(dir, 'out-'));
    const result = await extractArchive(await file(`in.${type}`, bytes), type, root, limits, hashOnly);
    return { root, ...result };
  }

  /** Extracts from a stream, as a download does; answers the writer once sealed. */
  async function extractStream(input: Readable, type: ArchiveType, compressedBytes?: number, limits = defaultLimits) {
    const writer = new TreeWriter(await mkdtemp(join(dir, 'stream-')), limits);
    await extractTarStream(input, type, writer, compressedBytes);
    return { writer, hash: writer.seal() };
  }

  async function refused(promise: Promise<unknown>, message: RegExp): Promise<void> {
    await assert.rejects(promise, (error: unknown) => {
      assert.ok(error instanceof SourceRefusedError, String(error));
      assert.match(error.message, message);
      return true;
    });
  }

  describe('sniffArchiveType', () => {
    it('MUTATION-ARCHIVE: tells gzip, bzip2, xz, zip (local and empty) and ustar tar from their first bytes, and nothing else', async () => {
      const members: TarMember[] = [{ name: 'a.tf', content: 'x' }];
      const cases: Array<[Buffer, ArchiveType | undefined]> = [
        [tarGz(members), 'tar.gz'],
        [Buffer.concat([Buffer.from('BZh91AY&SY'), Buffer.alloc(20)]), 'tar.bz2'],
        [tarXz(members), 'tar.xz'],
        [await zip([{ name: 'a.tf', content: 'x' }]), 'zip'],
        [Buffer.concat([Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(18)]), 'zip'],
        [tar(members), 'tar'],
        // Exactly as long as the magic needs: "ustar" ending at byte 262.
        [Buffer.concat([Buffer.alloc(257), Buffer.from('ustar')]), 'tar'],
        [Buffer.concat([Buffer.alloc(257), Buffer.from('ustaR\0')]), undefined],
        [Buffer.from([0x1f, 0x8c, 0, 0]), undefined],
        [Buffer.from([0x00, 0x8b, 0, 0]), undefined],
        [Buffer.from('BZ'), undefined],
        [Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x01]), undefined],
        [Buffer.from([0x50, 0x4b, 0x03, 0x05]), undefined],
        [Buffer.from('variable "a" {}\n'), undefined],
        [Buffer.alloc(0), undefined],
      ];
      for (const [index, [bytes, type]] of cases.entries()) assert.equal(await sniffArchiveType(await file(`sniff-${index}`, bytes)), type, `case ${index}`);
    });

    it('MUTATION-ARCHIVE: a missing file or a non-string path is a usage error (exit 2) naming what was wrong', async () => {
      await assert.rejects(sniffArchiveType(join(dir, 'absent')), (error: Refusal) => {
        assert.equal(error.exitCode, 2);
        assert.match(error.message, /^the file .*absent cannot be read \(ENOENT/);
        return true;
      });
      await assert.rejects(sniffArchiveType(42 as unknown as string), (error: Refusal) => {
        assert.equal(error.exitCode, 2);
        assert.equal(error.message, 'sniffArchiveType: file must be the path of a downloaded file, got a number');
        return true;
      });
    });
  });

  describe('extractArchive arguments and result', () => {
    it('MUTATION-ARCHIVE: refuses a non-string file or root and an unknown type with usage errors, and a missing archive as unreadable', async () => {
      const good = await file('good.tar', tar([{ name: 'a', content: 'A' }]));
      const usage = async (promise: Promise<unknown>, message: string | RegExp) =>
        assert.rejects(promise, (error: Refusal) => {
          assert.equal(error.exitCode, 2);
          if (typeof message === 'string') assert.equal(error.message, message);
          else assert.match(error.message, message);
          return true;
        });
      await usage(extractArchive(7 as unknown as string, 'tar', dir, defaultLimits), 'extractArchive: file must be the path of an archive, got a number');
      await usage(
        extractArchive(good, 'rar' as ArchiveType, dir, defaultLimits),
        /^extractArchive: type must be one of tar, tar\.gz, tar\.bz2, tar\.xz, zip, got /,
      );
      await usage(extractArchive(good, 'tar', '', defaultLimits), /^extractArchive: root must be the path of an empty folder, got /);
      await usage(extractArchive(join(dir, 'absent.tar'), 'tar', dir, defaultLimits), /^the archive .*absent\.tar cannot be read/);
    });

    it('MUTATION-ARCHIVE: limits left out or null are the defaults; the result counts entries (not "./") and content bytes', async () => {
      const bytes = tar([
        { name: './', type: '5' },
        { name: 'd/', type: '5' },
        { name: 'd/a', content: '12345' },
        { name: 'd/b', type: '1', linkname: 'd/a' },
        { name: 'd/l', type: '2', linkname: 'a' },
      ]);
      for (const limits of [undefined, null]) {
        const { bytes: total, entries, hash, root } = await extract(bytes, 'tar', limits as unknown as typeof defaultLimits);
        assert.equal(entries, 4);
        assert.equal(total, 10, 'the hard link copies its five bytes');
        assert.equal(hash, await hashTree(root));
      }
    });
  });

  describe('caps at their exact limits', () => {
    const members = (count: number): TarMember[] => Array.from({ length: count }, (_, i) => ({ name: `f${i}`, content: 'ab' }));

    it('MUTATION-ARCHIVE: exactly maxFiles entries extract (tar and zip); one more is refused with the hint', async () => {
      const limits = { ...defaultLimits, maxFiles: 3 };
      assert.equal((await extract(tar(members(3)), 'tar', limits)).entries, 3);
      assert.equal((await extract(await zip(members(3)), 'zip', limits)).entries, 3);
      for (const [bytes, type] of [
        [tar(members(4)), 'tar'],
        [await zip(members(4)), 'zip'],
      ] as const) {
        await assert.rejects(extract(bytes, type, limits), (error: Refusal) => {
          assert.ok(error instanceof SourceRefusedError);
          assert.equal(error.message, 'the archive has more than 3 entries');
          assert.equal(error.hint, 'raise the entry cap (maxFiles) if this module really is that large');
          return true;
        });
      }
    });

    it('MUTATION-ARCHIVE: exactly maxBytes of content extracts, written or hash-only; one byte more is refused naming the member', async () => {
      for (const hashOnly of [false, true]) {
        assert.equal((await extract(tar(members(3)), 'tar', { ...defaultLimits, maxBytes: 6 }, hashOnly)).bytes, 6);
        await assert.rejects(extract(tar(members(3)), 'tar', { ...defaultLimits, maxBytes: 5 }, hashOnly), (error: Refusal) => {
          assert.ok(error instanceof SourceRefusedError);
          assert.equal(error.message, 'the archive expands to more than 5 bytes (at "f2")');
          assert.equal(error.hint, 'raise the byte cap (maxBytes) if this module really is that large');
          return true;
        });
      }
    });

    it('MUTATION-ARCHIVE: a hard link counts its copy against maxBytes', async () => {
      const bytes = tar([
        { name: 'a', content: '0123456789' },
        { name: 'b', type: '1', linkname: 'a' },
      ]);
      assert.equal((await extract(bytes, 'tar', { ...defaultLimits, maxBytes: 20 })).bytes, 20);
      const chained = tar([
        { name: 'a', content: '0123456789' },
        { name: 'b', type: '1', linkname: 'a' },
        { name: 'c', type: '1', linkname: 'b' },
      ]);
      assert.equal((await extract(chained, 'tar')).bytes, 30, 'a link to a link copies the same ten bytes');
      await refused(extract(chained, 'tar', { ...defaultLimits, maxBytes: 29 }), /more than 29 bytes \(at "c"\)/);
      await refused(extract(bytes, 'tar', { ...defaultLimits, maxBytes: 19 }), /^the archive expands to more than 19 bytes \(at "b"\)$/);
    });
  });

  describe('names and links', () => {
    it('MUTATION-ARCHIVE: a drive letter is refused in any case; a colon later in a name is kept; a NUL is shown escaped', () => {
      for (const name of ['C:/x', 'z:x', 'a:', './Q:']) assert.throws(() => safeRelativePath(name), /has an absolute path/, name);
      assert.equal(safeRelativePath('mod/a:b.tf'), 'mod/a:b.tf');
      assert.equal(safeRelativePath('1:x'), '1:x');
      assert.equal(safeRelativePath('ab:c/d'), 'ab:c/d');
      // A Windows path is called what it is, not refused for its backslash or its "..".
      for (const name of ['C:\\evil.txt', 'c:/../evil.txt']) assert.throws(() => safeRelativePath(name), /has an absolute path/, name);
      assert.equal(safeRelativePath('./'), '');
      assert.throws(
        () => safeRelativePath('a\0b'),
        (error: Error) => error.message === 'the archive entry "a\\0b" contains a NUL byte',
      );
      assert.throws(
        () => safeRelativePath('a\\b'),
        (error: Error) => error.message === 'the archive entry "a\\b" contains a backslash',
      );
      assert.throws(
        () => safeRelativePath('a/../b'),
        (error: Error) => error.message === 'the archive entry "a/../b" climbs out of the archive with ".."',
      );
    });

    it('MUTATION-ARCHIVE: symbolic links with an empty, NUL, drive, backslash or ".." target are refused; "..name" inside is kept', async () => {
      const cases: Array<[string, RegExp]> = [
        ['', /^the symbolic link "l" has an empty or invalid target$/],
        ['a\0b', /has an empty or invalid target/],
        ['C:/x', /^the symbolic link "l" points at the absolute path "C:\/x"$/],
        ['q:', /points at the absolute path/],
        ['a\\b', /points at the absolute path/],
        ['..', /^the symbolic link "l" points outside the module \("\.\."\)$/],
        ['d/../..', /points outside the module/],
        // Refused as it is added, not only when the finished tree is sealed.
        ['../x', /^the symbolic link "l" points outside the module \("\.\.\/x"\)$/],
        [undefined as unknown as string, /^the symbolic link "l" has an empty or invalid target$/],
      ];
      for (const [linkname, message] of cases) {
        const writer = new TreeWriter(await mkdtemp(join(dir, 'l-')), defaultLimits);
        await refused(writer.add({ path: 'l', type: 'symlink', rawType: 'SymbolicLink', mode: 0o777, linkTarget: linkname }), message);
      }
      const { root } = await extract(
        tar([
          { name: '..x', content: 'sibling' },
          { name: 'link', type: '2', linkname: '..x' },
          { name: 'd/m', type: '2', linkname: '../..x' },
          { name: 'd/n', type: '2', linkname: 'ab:c' },
        ]),
        'tar',
      );
      assert.deepEqual((await readdir(root)).sort(), ['..x', 'd', 'link']);
      assert.equal(await readlink(join(root, 'd/n')), 'ab:c');
      assert.equal(await readFile(join(root, 'link'), 'utf8'), 'sibling');
      assert.equal(await readFile(join(root, 'd/m'), 'utf8'), 'sibling');
    });

    it('MUTATION-ARCHIVE: a member below a file is refused; hard links only to files extracted before, with their own normalised mode', async () => {
      await refused(
        extract(
          tar([
            { name: 'a', content: 'x' },
            { name: 'a/b', content: 'y' },
          ]),
          'tar',
        ),
        /^the archive entry "a\/b" is inside "a", which is a file$/,
      );
      for (const target of [
        [{ name: 'd/', type: '5' }],
        [
          { name: 'f', content: 'x' },
          { name: 'd', type: '2', linkname: 'f' },
        ],
      ] as TarMember[][]) {
        await refused(
          extract(tar([...target, { name: 'h', type: '1', linkname: 'd' }]), 'tar'),
          /^the hard link "h" points at "d", which is not a file extracted before it$/,
        );
      }
      await refused(extract(tar([{ name: 'h', type: '1', linkname: 'C:/x' }]), 'tar'), /^the hard link "h" points outside the module \("C:\/x"\)$/);
      const writer = new TreeWriter(await mkdtemp(join(dir, 'h-')), defaultLimits);
      await refused(
        writer.add({ path: 'h', type: 'hardlink', rawType: 'Link', mode: 0o644 }),
        /^the hard link "h" points at "", which is not a file extracted before it$/,
      );
      const { root, hash } = await extract(
        tar([
          { name: 'a', content: 'same', mode: 0o644 },
          { name: 'sub/b', type: '1', linkname: 'a', mode: 0o4755 },
        ]),
        'tar',
      );
      assert.equal((await lstat(join(root, 'sub/b'))).mode & 0o7777, 0o755);
      assert.equal((await lstat(join(root, 'a'))).mode & 0o7777, 0o644);
      assert.equal(await readFile(join(root, 'sub/b'), 'utf8'), 'same');
      assert.equal(hash, await hashTree(root));
    });

    it('MUTATION-ARCHIVE: never writes through a link already in the target folder (a file is created, never opened)', async () => {
      const root = await mkdtemp(join(dir, 'pre-'));
      const outside = join(dir, 'outside.txt');
      await writeFile(outside, 'untouched');
      await symlink(outside, join(root, 'main.tf'));
      await assert.rejects(extractArchive(await file('m.tar', tar([{ name: 'main.tf', content: 'evil' }])), 'tar', root, defaultLimits), /EEXIST/);
      assert.equal(await readFile(outside, 'utf8'), 'untouched');
    });

    it('MUTATION-ARCHIVE: the umask is read as the process has it, not by setting it (a file whose mode it keeps needs no fchmod)', () => {
      const saved = process.umask(0o027);
      try {
        assert.equal(currentUmask(), 0o027);
        process.umask(0o7);
        assert.equal(currentUmask(), 0o7);
      } finally {
        process.umask(saved);
      }
      assert.equal(currentUmask(), saved);
    });

    it('MUTATION-ARCHIVE: folders are 0755 and files 0644 or 0755 whatever the umask: declared, implied by a member, or above a declared one (tar and zip)', async () => {
      const saved = process.umask(0o077);
      try {
        const inputs: Array<[Buffer, ArchiveType]> = [
          [
            tar([
              { name: 'declared/', type: '5', mode: 0o700 },
              { name: 'implied/deeper/x', content: 'x', mode: 0o600 },
              { name: 'p/q/', type: '5' },
              { name: 'run', content: 'r', mode: 0o700 },
            ]),
            'tar',
          ],
          [
            await zip([
              { name: 'declared/', directory: true, mode: 0o40700 },
              { name: 'implied/deeper/x', content: 'x', mode: 0o100600 },
              { name: 'p/q/', directory: true },
              { name: 'run', content: 'r', mode: 0o100700 },
            ]),
            'zip',
          ],
        ];
        for (const [bytes, type] of inputs) {
          const { root } = await extract(bytes, type);
          const modes: Record<string, string> = {};
          for (const name of ['declared', 'implied', 'implied/deeper', 'implied/deeper/x', 'p', 'p/q', 'run'])
            modes[name] = ((await lstat(join(root, name))).mode & 0o7777).toString(8);
          assert.deepEqual(
            modes,
            { declared: '755', implied: '755', 'implied/deeper': '755', 'implied/deeper/x': '644', p: '755', 'p/q': '755', run: '755' },
            type,
          );
        }
      } finally {
        process.umask(saved);
      }
    });
  });

  describe('later members replace earlier ones, and the in-memory tree matches the written one', () => {
    const cases: Array<[string, TarMember[], Record<string, string | 'dir' | `-> ${string}`>]> = [
      [
        'a folder named again keeps what is inside it, declared or implied',
        [
          { name: 'd/', type: '5' },
          { name: 'd/a', content: 'A' },
          { name: 'd/', type: '5' },
          { name: 'e/b', content: 'B' },
          { name: 'e/', type: '5' },
        ],
        { d: 'dir', 'd/a': 'A', e: 'dir', 'e/b': 'B' },
      ],
      [
        'a folder replaces a file, a file a folder with its contents, a file a link and a link a file',
        [
          { name: 'x', content: 'was a file' },
          { name: 'x/', type: '5' },
          { name: 'y/z', content: 'gone' },
          { name: 'y', content: 'now a file' },
          { name: 'l', type: '2', linkname: 'x' },
          { name: 'l', content: 'now a file too' },
          { name: 'f', content: 'was a file' },
          { name: 'f', type: '2', linkname: 'y' },
          { name: 'g/h', content: 'H' },
          { name: 'g', type: '2', linkname: 'y' },
          { name: 'k/z', content: 'Z' },
          { name: 'k', type: '1', linkname: 'y' },
        ],
        { x: 'dir', y: 'now a file', l: 'now a file too', f: '-> y', g: '-> y', k: 'now a file' },
      ],
      [
        'a folder replaced drops what was inside it, and nothing whose name only starts the same',
        [
          { name: 'y/z', content: 'gone' },
          { name: 'yy', content: 'kept' },
          { name: 'y.tf', content: 'kept too' },
          { name: 'y', content: 'now a file' },
        ],
        { y: 'now a file', yy: 'kept', 'y.tf': 'kept too' },
      ],
      [
        'a folder made again after a file replaced it is made again below too (the writer remembers the folders it made)',
        [
          { name: 'd/e/a', content: 'gone' },
          { name: 'd', content: 'a file for a while' },
          { name: 'd/', type: '5' },
          { name: 'd/e/b', content: 'B' },
          { name: 'm/n/a', content: 'gone too' },
          { name: 'm/n', content: 'a file for a while' },
          { name: 'm/n/', type: '5' },
          { name: 'm/n/o/b', content: 'O' },
        ],
        { d: 'dir', 'd/e': 'dir', 'd/e/b': 'B', m: 'dir', 'm/n': 'dir', 'm/n/o': 'dir', 'm/n/o/b': 'O' },
      ],
    ];
    for (const [what, members, expected] of cases) {
      it(`MUTATION-ARCHIVE: ${what}`, async () => {
        const { root, hash, writer } = await extract(tar(members), 'tar');
        const found: Record<string, string> = {};
        const walk = async (relative: string): Promise<void> => {
          for (const entry of await readdir(join(root, relative), { withFileTypes: true })) {
            const path = relative ? `${relative}/${entry.name}` : entry.name;
            if (entry.isDirectory()) {
              found[path] = 'dir';
              await walk(path);
            } else if (entry.isSymbolicLink()) found[path] = `-> ${await readlink(join(root, path))}`;
            else found[path] = await readFile(join(root, path), 'utf8');
          }
        };
        await walk('');
        assert.deepEqual(found, expected);
        assert.equal(hash, await hashTree(root));
        assert.equal((await extract(tar(members), 'tar', defaultLimits, true)).hash, hash, 'hash-only agrees');
        const top = (await readdir(root, { withFileTypes: true })).map((entry) => ({ name: entry.name, directory: entry.isDirectory() }));
        const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
        assert.deepEqual(writer.topLevel().sort(byName), top.sort(byName));
        for (const path of Object.keys(expected)) assert.equal(writer.isDirectory(path), expected[path] === 'dir', path);
      });
    }

    it('MUTATION-ARCHIVE: topLevel and isDirectory answer from memory what the written tree shows (pinning writes nothing)', async () => {
      const members: TarMember[] = [
        { name: 'a.txt', content: 'A' },
        { name: 'd/', type: '5' },
        { name: 'e/f/g', content: 'G' },
        { name: 'l', type: '2', linkname: 'd' },
      ];
      const ghost = join(dir, 'ghost');
      const { writer } = await extractArchive(await file('t.tar', tar(members)), 'tar', ghost, defaultLimits, true);
      await assert.rejects(lstat(ghost));
      const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
      assert.deepEqual(writer.topLevel().sort(byName), [
        { name: 'a.txt', directory: false },
        { name: 'd', directory: true },
        { name: 'e', directory: true },
        { name: 'l', directory: false },
      ]);
      for (const [path, directory] of Object.entries({
        d: true,
        e: true,
        'e/f': true,
        'e/f/g': false,
        'a.txt': false,
        a: false,
        l: false,
        absent: false,
        'e/': false,
      })) {
        assert.equal(writer.isDirectory(path), directory, path);
      }
    });
  });

  describe('tar formats and compression paths', () => {
    it('MUTATION-ARCHIVE: old-style (NUL type) and contiguous members are files', async () => {
      // The builder writes type '0'; each header is retyped in place and its checksum recomputed.
      const bytes = tar([
        { name: 'old', content: 'O' },
        { name: 'contiguous', content: 'C' },
      ]);
      for (const [at, type] of [
        [0, 0],
        [1024, '7'.charCodeAt(0)],
      ] as const) {
        bytes[at + 156] = type;
        bytes.fill(' ', at + 148, at + 156);
        let sum = 0;
        for (const byte of bytes.subarray(at, at + 512)) sum += byte;
        bytes.write(`${sum.toString(8).padStart(6, '0')}\0 `, at + 148, 'latin1');
      }
      const { root, hash } = await extract(bytes, 'tar');
      assert.equal(await readFile(join(root, 'old'), 'utf8'), 'O');
      assert.equal(await readFile(join(root, 'contiguous'), 'utf8'), 'C');
      assert.equal(hash, await hashTree(root));
    });

    it('MUTATION-ARCHIVE: a tar with a bad header checksum, or compressed with brotli, is refused as not a readable tar', async () => {
      const bytes = tar([
        { name: 'a', content: 'A' },
        { name: 'b', content: 'B' },
      ]);
      const corrupt = Buffer.from(bytes);
      corrupt[1024] = 'c'.charCodeAt(0); // the second header's name, after its checksum was computed
      await refused(extract(corrupt, 'tar'), /^the tar archive is not a readable tar: /);
      await refused(extract(brotliCompressSync(bytes), 'tar'), /^the tar archive is not a readable tar: /);
    });

    it('MUTATION-ARCHIVE: several MiB of tar.gz (zlib fed in staged runs) extract byte for byte, from a file and from a stream', async () => {
      const big = randomBytes(5 * 1024 * 1024 + 123);
      const members: TarMember[] = [
        { name: 'big.bin', content: big },
        { name: 'after.txt', content: 'after' },
      ];
      const bytes = tarGz(members);
      const { root, hash } = await extract(bytes, 'tar.gz');
      assert.equal(
        createHash('sha256')
          .update(await readFile(join(root, 'big.bin')))
          .digest('hex'),
        createHash('sha256').update(big).digest('hex'),
      );
      assert.equal(await readFile(join(root, 'after.txt'), 'utf8'), 'after');
      assert.equal(hash, await hashTree(root));
      // A download: odd-sized chunks, with and without a length (above the parser-inflated size either way).
      const chunks = (size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
      assert.equal((await extractStream(Readable.from(chunks(300_001)), 'tar.gz')).hash, hash);
      assert.equal((await extractStream(Readable.from(chunks(65_536)), 'tar.gz', bytes.length)).hash, hash);
    });

    it('MUTATION-ARCHIVE: a small tar.gz of known size arriving in one chunk larger than a parser slice extracts whole', async () => {
      const members: TarMember[] = [
        { name: 'noise', content: randomBytes(40 * 1024) },
        { name: 'tail.txt', content: 'tail' },
      ];
      const bytes = tarGz(members);
      assert.ok(bytes.length > 8 * 1024 && bytes.length <= 64 * 1024, String(bytes.length));
      const { hash } = await extract(bytes, 'tar.gz');
      const streamed = await extractStream(Readable.from([bytes]), 'tar.gz', bytes.length);
      assert.equal(streamed.hash, hash);
      assert.equal(streamed.writer.totalBytes, 40 * 1024 + 4);
    });

    it('MUTATION-ARCHIVE: a small tar.gz that inflates more than a thousandfold (a module of repetitive files) is not refused for its ratio', async () => {
      const bytes = tarGz([{ name: 'zeros', content: Buffer.alloc(24 * 1024 * 1024) }]);
      assert.ok(bytes.length <= 64 * 1024 && (24 * 1024 * 1024) / bytes.length > 1000, String(bytes.length));
      const { writer } = await extractStream(Readable.from([bytes]), 'tar.gz', bytes.length);
      assert.equal(writer.totalBytes, 24 * 1024 * 1024);
    });

    it('MUTATION-ARCHIVE: an input that fails mid-download is refused as a corrupt archive, for every compression', async () => {
      const bytes = {
        tar: tar([{ name: 'a', content: randomBytes(4096) }]),
        'tar.gz': tarGz([{ name: 'a', content: randomBytes(4096) }]),
        'tar.xz': tarXz([{ name: 'a', content: randomBytes(4096) }]),
      };
      for (const [type, whole] of Object.entries(bytes) as Array<[ArchiveType, Buffer]>) {
        // The first bytes, then the connection drops: only once extraction reads, so its listeners are in place.
        let sent = false;
        const input = new Readable({
          read() {
            if (sent) return;
            sent = true;
            this.push(whole.subarray(0, 600));
            setTimeout(() => this.destroy(new Error('connection reset')), 20);
          },
        });
        await refused(extractStream(input, type), new RegExp(`^the ${type.replace('.', '\\.')} archive is corrupt: connection reset$`));
      }
    });

    it('MUTATION-ARCHIVE: a refused archive stops reading its input (the download is abandoned, the filter killed)', async () => {
      for (const type of ['tar', 'tar.gz', 'tar.xz'] as const) {
        // More than one staging run of zlib's input, so the refusal comes while the input is still open (the xz
        // builder's output is capped at 1 MiB).
        const members: TarMember[] = [
          { name: '../x', content: 'x' },
          { name: 'rest', content: randomBytes((type === 'tar.xz' ? 768 : 1536) * 1024) },
        ];
        const bytes = type === 'tar' ? tar(members) : type === 'tar.gz' ? tarGz(members) : tarXz(members);
        // Never ends by itself: only a refusal that stops the input lets it go.
        let sent = false;
        const input = new Readable({
          read() {
            if (!sent) this.push(bytes);
            sent = true;
          },
        });
        await refused(extractStream(input, type), /climbs out/);
        assert.ok(input.destroyed, type);
      }
    });
  });

  describe('after a refusal nothing more is written', () => {
    /** Every path under `root` with its size and modification time, to compare across a pause. */
    async function snapshot(root: string): Promise<string[]> {
      const names = (await readdir(root, { recursive: true })).sort();
      return Promise.all(
        names.map(async (name) => {
          const info = await lstat(join(root, name));
          return `${name} ${info.size} ${info.mtimeMs}`;
        }),
      );
    }
    /** The paths under `root` this process still holds open. */
    async function openBelow(root: string): Promise<string[]> {
      const held: string[] = [];
      for (const fd of await readdir('/proc/self/fd')) {
        const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
        if (target.startsWith(`${root}/`)) held.push(target);
      }
      return held;
    }
    const pause = () => new Promise((resolve) => setTimeout(resolve, 100));

    it('MUTATION-ARCHIVE: members the parser read before a refused one are dropped, for every compression path; nothing appears or changes later', async () => {
      const members: TarMember[] = [
        ...Array.from({ length: 60 }, (_, i): TarMember => ({ name: `before/f${i}`, content: `b${i}` })),
        { name: 'before/evil', type: '2', linkname: '../../outside' },
        ...Array.from({ length: 60 }, (_, i): TarMember => ({ name: `after/d${i}/`, type: '5' })),
        ...Array.from({ length: 60 }, (_, i): TarMember => ({ name: `after/f${i}`, content: `a${i}` })),
      ];
      const gz = tarGz(members);
      const inputs: Array<[ArchiveType, Buffer, number | undefined]> = [
        ['tar', tar(members), undefined],
        ['tar.gz', gz, undefined],
        ['tar.gz', gz, gz.length],
        ['tar.xz', tarXz(members), undefined],
      ];
      for (const [type, bytes, compressedBytes] of inputs) {
        const what = `${type}${compressedBytes === undefined ? '' : ' inflated by the parser'}`;
        const parent = await mkdtemp(join(dir, 'parent-'));
        const root = join(parent, 'root');
        await mkdir(root);
        await refused(extractTarStream(Readable.from([bytes]), type, new TreeWriter(root, defaultLimits), compressedBytes), /points outside the module/);
        const then = await snapshot(root);
        await pause();
        assert.deepEqual(await snapshot(root), then, `${what}: written after the refusal`);
        assert.equal(then.filter((line) => line.startsWith('before/f')).length, 60, what);
        assert.ok(!then.some((line) => line.startsWith('after')), `${what}: ${then.filter((line) => line.startsWith('after')).join(', ')}`);
        assert.deepEqual(await readdir(parent), ['root'], what);
      }
    });

    it('MUTATION-ARCHIVE: a member being written when the download breaks is stopped, and its file closed, before the promise rejects', async () => {
      const whole = tar([{ name: 'big', content: randomBytes(256 * 1024) }]);
      const root = await mkdtemp(join(dir, 'cut-'));
      const input = brokenDownload(whole);
      // The real writer, counting the members it is still busy with: none may be when the promise rejects.
      class Watched extends TreeWriter {
        busy = 0;
        override async add(...args: Parameters<TreeWriter['add']>): Promise<void> {
          this.busy += 1;
          try {
            await super.add(...args);
          } finally {
            this.busy -= 1;
          }
        }
      }
      const writer = new Watched(root, defaultLimits);
      await refused(extractTarStream(input, 'tar', writer), /^the tar archive is corrupt: connection reset$/);
      assert.equal(writer.busy, 0, 'rejected while the writer was still busy');
      assert.deepEqual(await openBelow(root), [], 'the partial file is still open');
      const then = await snapshot(root);
      await pause();
      assert.deepEqual(await snapshot(root), then);
    });
  });

  describe('the bzip2 and xz filters', () => {
    let savedPath: string | undefined;
    let bin: string;
    beforeEach(async () => {
      savedPath = process.env.PATH;
      bin = await mkdtemp(join(dir, 'bin-'));
    });
    afterEach(() => {
      process.env.PATH = savedPath;
    });

    async function fakeTool(name: string, script: string, mode = 0o755): Promise<void> {
      await writeFile(join(bin, name), `#!/bin/sh\n${script}\n`);
      await chmod(join(bin, name), mode);
      process.env.PATH = bin;
    }

    it('MUTATION-ARCHIVE: a filter that fails after writing a readable tar (xz checks integrity last) is refused with its last line of stderr, or its exit code when silent', async () => {
      const good = await file('good.tar', tar([{ name: 'a', content: 'A' }]));
      const input = randomBytes(1024 * 1024); // more than a pipe holds: the filter exits before reading it all
      await fakeTool('xz', `/bin/cat '${good}'\necho "first line" >&2\necho "xz: (stdin): Compressed data is corrupt" >&2\nexit 1`);
      await refused(extract(input, 'tar.xz'), /^the tar\.xz archive is corrupt: xz said xz: \(stdin\): Compressed data is corrupt$/);
      await fakeTool('bzip2', `/bin/cat '${good}'\nexit 3`);
      await refused(extract(input, 'tar.bz2'), /^the tar\.bz2 archive is corrupt: bzip2 said exit 3$/);
      // The arguments: decompress to stdout, and xz under a memory cap.
      await fakeTool('xz', `/bin/cat '${good}'\necho "$*" >&2\nexit 1`);
      await refused(extract(input, 'tar.xz'), /xz said -dc --memlimit-decompress=256MiB$/);
      await fakeTool('bzip2', `/bin/cat '${good}'\necho "$*" >&2\nexit 1`);
      await refused(extract(input, 'tar.bz2'), /bzip2 said -dc$/);
    });

    it('MUTATION-ARCHIVE: corrupt input is refused with the real bzip2 or xz message, never as an unreadable tar (whether the filter writes nothing or garbage first)', async () => {
      // Fixed content, so the flipped byte lands in the same place every run.
      const content = Buffer.from(Array.from({ length: 4000 }, (_, i) => `line ${i} ${(i * 7919) % 10007}\n`).join(''));
      const flip = (bytes: Buffer) => {
        const copy = Buffer.from(bytes);
        copy[copy.length >> 1] = (copy[copy.length >> 1] as number) ^ 0xff;
        return copy;
      };
      const noise = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 131 + 7) % 256));
      const cases: Array<[Buffer, ArchiveType, RegExp]> = [
        [noise, 'tar.bz2', /^the tar\.bz2 archive is corrupt: bzip2 said bzip2: \(stdin\) is not a bzip2 file\.$/],
        [noise, 'tar.xz', /^the tar\.xz archive is corrupt: xz said xz: \(stdin\): File format not recognized$/],
        // bzip2 writes a block before checking it, and ends its message with advice: the line naming the program is shown.
        [flip(tarBz2([{ name: 'a', content }])), 'tar.bz2', /^the tar\.bz2 archive is corrupt: bzip2 said bzip2: Data integrity error when decompressing\.$/],
        [flip(tarXz([{ name: 'a', content }])), 'tar.xz', /^the tar\.xz archive is corrupt: xz said xz: \(stdin\): Compressed data is corrupt$/],
      ];
      for (const [bytes, type, message] of cases) await refused(extract(bytes, type), message);
      // A filter that succeeds on what is not a tar: then the tar is what is wrong.
      await refused(extract(execFileSync('bzip2', ['-c'], { input: noise }), 'tar.bz2'), /^the tar\.bz2 archive is not a readable tar: /);
    });

    it('MUTATION-ARCHIVE: a readable tar from a filter that fails after closing its output is refused: the end of the tar waits for the filter', async () => {
      const good = await file('late.tar', tar([{ name: 'a', content: 'A' }]));
      await fakeTool('xz', `/bin/cat '${good}'\nexec 1>&-\n/bin/sleep 0.3\necho "xz: (stdin): Compressed data is corrupt" >&2\nexit 1`);
      await refused(extract(Buffer.alloc(64), 'tar.xz'), /^the tar\.xz archive is corrupt: xz said xz: \(stdin\): Compressed data is corrupt$/);
    });

    it('MUTATION-ARCHIVE: the filter is heard even when it fails long after its output ended; one that never ends is not waited for past a cap', async () => {
      await fakeTool('xz', 'exec 1>&-\n/bin/sleep 0.3\necho "xz: (stdin): Unexpected end of input" >&2\nexit 1');
      await refused(extract(Buffer.alloc(64), 'tar.xz'), /^the tar\.xz archive is corrupt: xz said xz: \(stdin\): Unexpected end of input$/);
      // Garbage, endlessly: the parser's refusal stands once the cap of further output is read, and the filter is killed.
      await fakeTool('bzip2', 'exec /usr/bin/yes garbage');
      await refused(extract(Buffer.alloc(64), 'tar.bz2'), /^the tar\.bz2 archive is not a readable tar: /);
    });

    it("MUTATION-ARCHIVE: a filter's stderr is kept to its first 2000 characters: a line after them is not shown", async () => {
      // 2000 characters in one write, then, later, a line naming the program: only the first run is kept.
      await fakeTool('xz', `exec 1>&-\nprintf '%1999s\\n' first >&2\n/bin/sleep 0.1\necho "xz: too late" >&2\nexit 1`);
      await refused(extract(Buffer.alloc(64), 'tar.xz'), /^the tar\.xz archive is corrupt: xz said first$/);
    });

    it('MUTATION-ARCHIVE: after the tar parser gives up, what the filter still writes is read to its end (up to exactly the cap) and the filter is heard', async () => {
      // Garbage the parser refuses, a pause, more output, then the filter's own failure.
      await fakeTool(
        'bzip2',
        '/usr/bin/yes garbage | /usr/bin/head -c 1024\n/bin/sleep 0.2\n/usr/bin/yes more | /usr/bin/head -c 4096\necho "bzip2: late failure" >&2\nexit 2',
      );
      await refused(extract(Buffer.alloc(64), 'tar.bz2'), /^the tar\.bz2 archive is corrupt: bzip2 said bzip2: late failure$/);
      // Exactly the 8 MiB cap after the refusal: still within it.
      await fakeTool(
        'bzip2',
        '/usr/bin/yes garbage | /usr/bin/head -c 1024\n/bin/sleep 0.2\n/usr/bin/head -c 8388608 /dev/zero\necho "bzip2: at the cap" >&2\nexit 2',
      );
      await refused(extract(Buffer.alloc(64), 'tar.bz2'), /^the tar\.bz2 archive is corrupt: bzip2 said bzip2: at the cap$/);
    });

    it('MUTATION-ARCHIVE: while the filter is heard, nothing more reaches the tar parser: members after the garbage are never written', async () => {
      const late = await file('late.tar', tar([{ name: 'late', content: 'L' }]));
      await fakeTool('bzip2', `/usr/bin/yes garbage | /usr/bin/head -c 1024\n/bin/sleep 0.2\n/bin/cat '${late}'\necho "bzip2: late failure" >&2\nexit 2`);
      const root = await mkdtemp(join(dir, 'heard-'));
      await refused(
        extractArchive(await file('in.tar.bz2', Buffer.alloc(64)), 'tar.bz2', root, defaultLimits),
        /^the tar\.bz2 archive is corrupt: bzip2 said bzip2: late failure$/,
      );
      assert.deepEqual(await readdir(root), []);
    });

    it('MUTATION-ARCHIVE: a missing filter is MISSING_TOOL (exit 2, with the install hint); one that cannot run is not called missing', async () => {
      process.env.PATH = bin;
      await assert.rejects(extract(Buffer.alloc(64), 'tar.bz2'), (error: Refusal) => {
        assert.equal(error.code, 'MISSING_TOOL');
        assert.equal(error.exitCode, 2);
        assert.equal(error.message, 'reading a tar.bz2 archive needs the "bzip2" program, which is not installed');
        assert.match(error.hint ?? '', /bzip2/);
        return true;
      });
      await fakeTool('xz', 'exit 0', 0o644);
      await assert.rejects(extract(Buffer.alloc(64), 'tar.xz'), (error: Refusal) => {
        assert.notEqual(error.code, 'MISSING_TOOL');
        assert.equal(error.code, 'EACCES');
        return true;
      });
    });
  });

  describe('zip members', () => {
    it('MUTATION-ARCHIVE: zip entries without unix modes are files (0644) or folders by their name; a unix mode of 0 is 0644', async () => {
      const bytes = await zip([
        { name: 'd/', directory: true },
        { name: 'd/run.sh', content: 'x', mode: 0o100755 },
        { name: 'zero', content: 'z', mode: 0 },
      ]);
      const zeroModeRoot = (await extract(bytes, 'zip')).root;
      assert.equal((await lstat(join(zeroModeRoot, 'zero'))).mode & 0o777, 0o644);
      assert.equal((await lstat(join(zeroModeRoot, 'd/run.sh'))).mode & 0o777, 0o755);
      const dos = Buffer.from(bytes);
      for (const at of centralRecords(dos)) dos[at + 5] = 0; // "made by" MS-DOS: the external attributes mean nothing unix
      const { root, hash } = await extract(dos, 'zip');
      assert.ok((await lstat(join(root, 'd'))).isDirectory());
      assert.equal((await lstat(join(root, 'd/run.sh'))).mode & 0o777, 0o644);
      assert.equal(hash, await hashTree(root));
    });

    it('MUTATION-ARCHIVE: zip devices, sockets and unknown types are refused by name; a link target over 4 KiB is refused', async () => {
      const cases: Array<[number, RegExp]> = [
        [0o020644, /^the archive entry "e" is a CharacterDevice, which Gantry never extracts$/],
        [0o060644, /is a BlockDevice,/],
        [0o140644, /is a Socket,/],
        [0o030644, /is a type 030000,/],
      ];
      for (const [mode, message] of cases) await refused(extract(await zip([{ name: 'e', content: '', mode }]), 'zip'), message);
      await refused(
        extract(await zip([{ name: 'l', content: 'a'.repeat(4097), mode: 0o120777 }]), 'zip'),
        /^the symbolic link "l" has a target longer than 4096 bytes$/,
      );
      const { root } = await extract(
        await zip([
          { name: 'a', content: 'A' },
          { name: 'l', content: 'a', mode: 0o120777 },
        ]),
        'zip',
      );
      assert.equal(await readlink(join(root, 'l')), 'a');
    });

    it('MUTATION-ARCHIVE: a zip that is not one, or whose entry does not hold the size it declares, is refused', async () => {
      await refused(extract(Buffer.from('PK\u0003\u0004 not really a zip'), 'zip'), /^the zip archive is not readable: /);
      const bytes = Buffer.from(await zip([{ name: 'a', content: 'hello hello hello' }]));
      const [record] = centralRecords(bytes);
      bytes.writeUInt32LE(bytes.readUInt32LE((record as number) + 24) + 1, (record as number) + 24); // uncompressed size
      await refused(extract(bytes, 'zip'), /^the zip archive was refused: /);
    });

    it('MUTATION-ARCHIVE: a member whose stream failed before the writer reads it (a small zip member fails its size check while the file is opened) is refused with that error, writing or hashing, never a hang', async () => {
      for (const hashOnly of [false, true]) {
        const root = await mkdtemp(join(dir, 'errored-'));
        const member = new Readable({ read() {} });
        member.on('error', () => undefined); // as archive.ts's openZipEntry listens from the start
        member.destroy(new Error('not enough bytes in the stream. expected 18. got only 17'));
        await new Promise((resolve) => setImmediate(resolve));
        const writing = new TreeWriter(root, defaultLimits, hashOnly).add({ path: 'a', type: 'file', rawType: 'File', mode: 0o644 }, member);
        const outcome = await Promise.race([
          writing.then(
            () => 'resolved',
            (error: Error) => error.message,
          ),
          new Promise((resolve) => setTimeout(() => resolve('still waiting after 2 s'), 2_000)),
        ]);
        assert.equal(outcome, 'not enough bytes in the stream. expected 18. got only 17', `hashOnly ${hashOnly}`);
      }
    });
  });

  describe('what the first measurement of the whole area left (docs/testing.md)', () => {
    it("MUTATION-ARCHIVE: after a short write, rest() drops the chunks written whole, cuts into the one written in part, and leaves the caller's array alone", () => {
      const chunks = [Buffer.from('abc'), Buffer.from('de'), Buffer.from('fgh')];
      for (let written = 0; written <= 8; written++)
        assert.equal(Buffer.concat(rest(chunks, written)).toString(), 'abcdefgh'.slice(written), `written ${written}`);
      assert.deepEqual(rest(chunks, 0).map(String), ['abc', 'de', 'fgh']);
      assert.deepEqual(rest(chunks, 1).map(String), ['bc', 'de', 'fgh']);
      assert.deepEqual(rest(chunks, 3).map(String), ['de', 'fgh'], 'no empty slice left where a chunk was written exactly');
      assert.deepEqual(rest(chunks, 4).map(String), ['e', 'fgh']);
      assert.deepEqual(rest(chunks, 8), []);
      assert.deepEqual(rest(chunks, 9), [], 'more than was given leaves nothing');
      assert.deepEqual(chunks.map(String), ['abc', 'de', 'fgh']);
    });

    it('MUTATION-ARCHIVE: a zip with more entries than the cap is refused before any entry is written', async () => {
      const root = await mkdtemp(join(dir, 'many-'));
      const many = await zip(Array.from({ length: 4 }, (_, i) => ({ name: `f${i}`, content: 'x' })));
      await refused(extractArchive(await file('many.zip', many), 'zip', root, { ...defaultLimits, maxFiles: 3 }), /^the archive has more than 3 entries$/);
      assert.deepEqual(await readdir(root), []);
    });

    it('MUTATION-ARCHIVE: a unix zip entry with permission bits but no file type is a file with those bits', async () => {
      const { root, hash } = await extract(await zip([{ name: 'run.sh', content: 'x', mode: 0o755 }]), 'zip');
      assert.equal((await lstat(join(root, 'run.sh'))).mode & 0o777, 0o755);
      assert.equal(hash, await hashTree(root));
    });

    it('MUTATION-ARCHIVE: a zip link target of exactly 4096 bytes is kept (the cap refuses only more)', async () => {
      const target = 'a'.repeat(4096);
      const { entries, writer } = await extract(await zip([{ name: 'l', content: target, mode: 0o120777 }]), 'zip', defaultLimits, true);
      assert.equal(entries, 1);
      assert.equal(writer.totalEntries, 1);
    });

    it('MUTATION-ARCHIVE: a refused entry type carries the hint that modules hold only files, folders and links', async () => {
      await assert.rejects(extract(await zip([{ name: 'e', content: '', mode: 0o020644 }]), 'zip'), (error: Refusal) => {
        assert.equal(error.hint, 'modules contain only files, folders and links');
        return true;
      });
    });

    it("MUTATION-ARCHIVE: a zip that is not one is refused with the zip reader's own reason", async () => {
      await refused(
        extract(Buffer.from('PK\u0003\u0004 not really a zip'), 'zip'),
        /^the zip archive is not readable: End of central directory record signature not found\./,
      );
    });

    it('MUTATION-ARCHIVE: hash-only extraction of a member that replaces an earlier one removes nothing from the folder', async () => {
      const root = await mkdtemp(join(dir, 'hash-only-'));
      await writeFile(join(root, 'a'), 'kept');
      const archive = await file(
        'twice.tar',
        tar([
          { name: 'a', content: '1' },
          { name: 'a', content: '2' },
        ]),
      );
      const { entries } = await extractArchive(archive, 'tar', root, defaultLimits, true);
      assert.equal(entries, 2, 'each member counts');
      assert.equal(await readFile(join(root, 'a'), 'utf8'), 'kept');
    });

    it('MUTATION-ARCHIVE: a zip device entry is refused as a device even when it holds more than a link target may', async () => {
      await refused(
        extract(await zip([{ name: 'e', content: 'x'.repeat(5000), mode: 0o020644 }]), 'zip'),
        /^the archive entry "e" is a CharacterDevice, which Gantry never extracts$/,
      );
    });

    it('MUTATION-ARCHIVE: sniffing a file and extracting a zip leave no file descriptor open', async function () {
      if (process.platform !== 'linux') this.skip();
      // What this process holds open on the two files (not a count: other files' sockets may close meanwhile).
      const holding = async (paths: string[]) => {
        const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
        return targets.filter((target) => paths.some((path) => target.startsWith(path)));
      };
      const sniffed = await file('sniffed.tar', tar([{ name: 'a', content: 'A' }]));
      const archive = await file('closed.zip', await zip([{ name: 'a', content: 'A' }]));
      for (let i = 0; i < 5; i++) {
        assert.equal(await sniffArchiveType(sniffed), 'tar');
        await extract(await readFile(archive), 'zip');
      }
      assert.deepEqual(await holding([dir]), []);
    });

    it('MUTATION-ARCHIVE: a small tar.gz arriving in many pieces over many ticks is parsed whole, the parser ended only after the last', async () => {
      const members: TarMember[] = Array.from({ length: 8 }, (_, i) => ({ name: `f${i}`, content: randomBytes(3000).toString('hex') }));
      const bytes = tarGz(members);
      const trickle = async function* () {
        for (let at = 0; at < bytes.length; at += 500) {
          await new Promise((resolve) => setImmediate(resolve));
          yield bytes.subarray(at, at + 500);
        }
      };
      const { writer, hash } = await extractStream(Readable.from(trickle()), 'tar.gz', bytes.length);
      assert.equal(writer.totalEntries, 8);
      assert.equal(writer.totalBytes, 8 * 6000);
      assert.equal(hash, (await extract(bytes, 'tar.gz')).hash);
    });

    it('MUTATION-ARCHIVE: a member arriving faster than its file is written is paused each time 1 MiB is held and resumed by the next write, whole on disk', async () => {
      const chunks = Array.from({ length: 128 }, () => randomBytes(64 * 1024));
      let pushed = 0;
      const content = new Readable({
        read() {
          pushed += 1;
          this.push(chunks[pushed - 1] ?? null);
        },
      });
      const pushedAtPause: number[] = [];
      content.on('pause', () => pushedAtPause.push(pushed));
      const root = await mkdtemp(join(dir, 'paced-'));
      const writer = new TreeWriter(root, defaultLimits);
      await writer.add({ path: 'big', type: 'file', rawType: 'File', mode: 0o644 }, content);
      await writer.landed();
      assert.ok((await readFile(join(root, 'big'))).equals(Buffer.concat(chunks)));
      // Paused each time 16 chunks (1 MiB) are held behind the open or the write in flight; \`read\` runs one chunk ahead.
      assert.deepEqual(pushedAtPause, [17, 33, 49, 65, 81, 97, 113, 129]);
    });

    it('MUTATION-ARCHIVE: tar members paused while their files open, and resumed as the first write starts, are written whole and in order (a tar member resumed emits what it holds, and its end, at once)', async () => {
      const contents = Array.from({ length: 6 }, () => randomBytes(3 * 1024 * 1024 + 512));
      const archive = tar(contents.map((content, i) => ({ name: `m${i}`, content })));
      const pieces = Array.from({ length: Math.ceil(archive.length / 65536) }, (_, i) => archive.subarray(i * 65536, (i + 1) * 65536));
      const root = await mkdtemp(join(dir, 'resumed-'));
      const writer = new TreeWriter(root, defaultLimits);
      await extractTarStream(Readable.from(pieces), 'tar', writer);
      for (const [i, content] of contents.entries()) assert.ok((await readFile(join(root, `m${i}`))).equals(content), `m${i}`);
      assert.equal(writer.seal(), await hashTree(root));
    });

    it('MUTATION-ARCHIVE: the content of a member the writer refuses is still read to its end, so the archive reader behind it is not stalled', async () => {
      const writer = new TreeWriter(await mkdtemp(join(dir, 'drained-')), defaultLimits);
      const content = Readable.from([Buffer.from('x'.repeat(100)), Buffer.from('y'.repeat(100))]);
      const ended = new Promise<string>((resolve) => content.once('end', () => resolve('ended')));
      await refused(writer.add({ path: 'e', type: 'other', rawType: 'CharacterDevice', mode: 0o644 }, content), /is a CharacterDevice/);
      const late = new Promise<string>((resolve) => setTimeout(() => resolve('still paused'), 1000).unref());
      assert.equal(await Promise.race([ended, late]), 'ended');
    });
  });

  describe('what the second measurement of the whole area left (docs/testing.md)', () => {
    const settles = <T>(promise: Promise<T>, ms: number) =>
      Promise.race([
        promise.then(
          () => 'settled',
          () => 'settled',
        ),
        new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), ms).unref()),
      ]);

    it('MUTATION-ARCHIVE: a tar.gz of known size up to 64 KiB is inflated by the tar parser, a larger or unknown one by zlib (their refusals differ)', async () => {
      const bytes = tarGz([{ name: 'a', content: 'hello' }]);
      bytes[bytes.length - 6] = (bytes[bytes.length - 6] as number) ^ 0xff; // the CRC
      const parser = /^the tar\.gz archive is not a readable tar: zlib: incorrect data check$/;
      const zlib = /^the tar\.gz archive is corrupt: incorrect data check$/;
      await refused(extractStream(Readable.from([bytes]), 'tar.gz', 64 * 1024), parser);
      await refused(extractStream(Readable.from([bytes]), 'tar.gz', 64 * 1024 + 1), zlib);
      await refused(extractStream(Readable.from([bytes]), 'tar.gz'), zlib);
    });

    it('MUTATION-ARCHIVE: a tar that is not readable is refused at once, uncompressed or through zlib: only a filter is waited for', async () => {
      // More than one staging run of zlib's input, so zlib passes some on while the input is still open.
      const corrupt = tar([
        { name: 'a', content: 'A' },
        { name: 'rest', content: randomBytes(1536 * 1024) },
      ]);
      corrupt[0] = 'b'.charCodeAt(0); // the name, after its checksum was computed
      const small = tar([{ name: 'a', content: 'A' }]);
      small[0] = 'b'.charCodeAt(0);
      const inputs: Array<[ArchiveType, Buffer, number | undefined]> = [
        ['tar', corrupt, undefined],
        ['tar.gz', gzipSync(corrupt), undefined],
        ['tar.gz', gzipSync(small), gzipSync(small).length],
      ];
      for (const [type, bytes, compressedBytes] of inputs) {
        // Never ends by itself: waiting for its end would never refuse.
        let sent = false;
        const input = new Readable({
          read() {
            if (!sent) this.push(bytes);
            sent = true;
          },
        });
        const extraction = extractStream(input, type, compressedBytes);
        assert.equal(await settles(extraction, 1000), 'settled', `${type} ${compressedBytes}`);
        await refused(extraction, /archive is not a readable tar: /);
        assert.ok(input.destroyed);
      }
    });

    it('MUTATION-ARCHIVE: the tar parser never guesses zstd: a zstd-compressed tar is not a readable tar', async () => {
      // A zstd frame holding the tar in one raw block (RFC 8878 §3.1.1: single segment, a 2-byte content size), made
      // here rather than by a zstd program, which the set-up does not install. `zstd -d` reads it back.
      const plain = tar([{ name: 'a', content: 'A' }]);
      const blockHeader = (plain.length << 3) | 1;
      const bytes = Buffer.concat([
        Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x60, (plain.length - 256) & 0xff, (plain.length - 256) >> 8]),
        Buffer.from([blockHeader & 0xff, (blockHeader >> 8) & 0xff, blockHeader >> 16]),
        plain,
      ]);
      await refused(extract(bytes, 'tar'), /^the tar archive is not a readable tar: TAR_(BAD_ARCHIVE|ENTRY_INVALID): /);
    });

    it("MUTATION-ARCHIVE: gzip inside an archive named tar keeps the parser's ratio limit", async () => {
      const bomb = gzipSync(tar([{ name: 'z', content: Buffer.alloc(8 * 1024 * 1024) }]));
      await refused(extract(bomb, 'tar'), /^the tar archive is not a readable tar: max decompression ratio exceeded: /);
    });

    it("MUTATION-ARCHIVE: zlib's output reaches the writer in runs of up to 256 KiB, an uncompressed tar in the reader's chunks (neither cut into parser slices)", async () => {
      class Sized extends TreeWriter {
        largest = 0;
        override async add(header: Parameters<TreeWriter['add']>[0], content?: Readable): Promise<void> {
          if (!content) return super.add(header);
          const seen = new Transform({
            transform: (chunk: Buffer, _encoding, done) => {
              this.largest = Math.max(this.largest, chunk.length);
              done(null, chunk);
            },
          });
          content.pipe(seen);
          return super.add(header, seen);
        }
      }
      const members: TarMember[] = [{ name: 'big', content: randomBytes(3 * 1024 * 1024) }];
      for (const [type, bytes, least] of [
        ['tar.gz', tarGz(members), 128 * 1024],
        ['tar', tar(members), 32 * 1024],
      ] as const) {
        const writer = new Sized(await mkdtemp(join(dir, 'sized-')), defaultLimits);
        await extractTarStream(createReadStream(await file(`sized.${type}`, bytes)), type, writer);
        assert.equal(writer.totalBytes, 3 * 1024 * 1024);
        assert.ok(writer.largest > least, `${type}: ${writer.largest}`);
      }
    });

    it('MUTATION-ARCHIVE: an empty tar.gz download is refused as corrupt', async () => {
      await refused(extractStream(Readable.from([]), 'tar.gz'), /^the tar\.gz archive is corrupt: unexpected end of file$/);
    });

    it('MUTATION-ARCHIVE: a tar.gz arriving in chunks larger than both staging buffers together extracts byte for byte', async () => {
      const bytes = tarGz([{ name: 'big', content: randomBytes(11 * 1024 * 1024) }]);
      const size = 5 * 1024 * 1024;
      const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
      assert.equal((await extractStream(Readable.from(chunks), 'tar.gz')).hash, (await extract(bytes, 'tar.gz')).hash);
    });

    it("MUTATION-ARCHIVE: a zip entry whose local header is broken is refused naming the entry and the zip reader's reason", async () => {
      const bytes = Buffer.from(await zip([{ name: 'a', content: 'hello hello' }]));
      bytes.writeUInt32LE(0x12345678, 0);
      await refused(extract(bytes, 'zip'), /^the zip entry "a" is not readable: invalid local file header signature: 0x12345678$/);
    });

    it('MUTATION-ARCHIVE: a member being hashed (pinning) when the download breaks is stopped, and the promise rejects', async () => {
      const whole = tar([{ name: 'big', content: randomBytes(256 * 1024) }]);
      const input = brokenDownload(whole);
      const writer = new TreeWriter(await mkdtemp(join(dir, 'hash-cut-')), defaultLimits, true);
      const extraction = extractTarStream(input, 'tar', writer);
      assert.equal(await settles(extraction, 1000), 'settled');
      await refused(extraction, /^the tar archive is corrupt: connection reset$/);
    });

    it('MUTATION-ARCHIVE: a member refused while its first chunk is being written is refused for the cap, not for a later error of its stream', async () => {
      const content = new Readable({
        read() {
          this.push(Buffer.from('x'.repeat(8)));
          this.push(Buffer.from('y'.repeat(8)));
          this.push(null);
        },
        destroy(_error, done) {
          done(new Error('torn down'));
        },
      });
      const writer = new TreeWriter(await mkdtemp(join(dir, 'first-reason-')), { ...defaultLimits, maxBytes: 10 });
      await refused(writer.add({ path: 'f', type: 'file', rawType: 'File', mode: 0o644 }, content), /^the archive expands to more than 10 bytes \(at "f"\)$/);
    });

    it("MUTATION-ARCHIVE: landed() settles only once the writes in flight have landed, whether their member ended or was refused meanwhile (its refusal is its own add's)", async () => {
      const big = Buffer.alloc(32 * 1024 * 1024, 1);
      const root = await mkdtemp(join(dir, 'landed-'));
      const writer = new TreeWriter(root, { ...defaultLimits, maxBytes: 2 * big.length });
      await writer.add({ path: 'whole', type: 'file', rawType: 'File', mode: 0o644 }, Readable.from([big]));
      await writer.landed();
      assert.equal((await lstat(join(root, 'whole'))).size, big.length);
      await refused(writer.add({ path: 'cut', type: 'file', rawType: 'File', mode: 0o644 }, Readable.from([big, Buffer.alloc(1)])), /more than/);
      await writer.landed();
      assert.equal((await lstat(join(root, 'cut'))).size, big.length);
    });

    it('MUTATION-ARCHIVE: a file member given no content lands as an empty file, hashed as one', async () => {
      const root = await mkdtemp(join(dir, 'no-content-'));
      const writer = new TreeWriter(root, defaultLimits);
      await writer.add({ path: 'empty', type: 'file', rawType: 'File', mode: 0o644 });
      await writer.landed();
      assert.equal((await lstat(join(root, 'empty'))).size, 0);
      assert.equal(writer.seal(), await hashTree(root));
    });

    it('MUTATION-ARCHIVE: an extraction that fails after a large member rejects only once that member is on disk and closed', async () => {
      const root = await mkdtemp(join(dir, 'late-write-'));
      const big = Buffer.alloc(32 * 1024 * 1024, 2);
      const archive = tar([
        { name: 'big', content: big },
        { name: '../escape', content: 'x' },
      ]);
      await refused(extractTarStream(Readable.from([archive]), 'tar', new TreeWriter(root, defaultLimits)), /climbs out of the archive/);
      assert.equal((await lstat(join(root, 'big'))).size, big.length);
      const open = await readdir('/proc/self/fd').then((fds) => Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => ''))));
      assert.deepEqual(
        open.filter((path) => path.startsWith(root)),
        [],
      );
    });

    it("MUTATION-ARCHIVE: a file the size limit cuts short after its content was read fails landed() and the next add with the write's error, never left unsaid", async function () {
      if (process.platform !== 'linux') this.skip();
      const writer = new TreeWriter(await mkdtemp(join(dir, 'fsize-')), defaultLimits);
      // The kernel writes up to the limit (a short write), then refuses the rest (EFBIG; Node ignores SIGXFSZ). The
      // member's one chunk and its end arrive while the file is still being opened, so the failure comes after its add.
      execFileSync('prlimit', ['--pid', String(process.pid), '--fsize=65536:']);
      try {
        await writer.add({ path: 'f', type: 'file', rawType: 'File', mode: 0o644 }, Readable.from([randomBytes(100 * 1024)]));
        await assert.rejects(writer.landed(), { code: 'EFBIG' });
        await assert.rejects(writer.add({ path: 'g', type: 'file', rawType: 'File', mode: 0o644 }, Readable.from([Buffer.from('g')])), { code: 'EFBIG' });
      } finally {
        execFileSync('prlimit', ['--pid', String(process.pid), '--fsize=unlimited:']);
      }
    });
  });
});
