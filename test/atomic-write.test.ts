// The one atomic file write, on a real file system: the content reaches the target whole or not at all, the previous
// file stays intact when a write fails, no temporary is left, and the error thrown is the one that stopped the write —
// never the clean-up's own failure when the temporary cannot be removed in turn.
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { temporaryWriter, writeFileAtomic } from '../lib/atomic-write.js';

const checksModes = process.platform !== 'win32';

/** The error `call` rejects with. */
async function failure(call: () => Promise<unknown>): Promise<NodeJS.ErrnoException> {
  try {
    await call();
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
  assert.fail('expected the write to fail');
}

/** A stream of `chunks`, running `between` after the first one. */
function streamOf(chunks: string[], between: () => Promise<void> = async () => undefined): Readable {
  return Readable.from(
    (async function* () {
      for (const [i, chunk] of chunks.entries()) {
        if (i === 1) await between();
        yield Buffer.from(chunk);
      }
    })(),
  );
}

describe('LAYER-FS: writeFileAtomic, the one way a file is replaced', () => {
  let root: string;
  let folder: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gantry-atomic-'));
  });
  beforeEach(async () => {
    folder = await mkdtemp(join(root, 'case-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Writing `body()` over `name` (which holds "previous") fails with `message`, and leaves `name` as it was, alone. */
  async function failsKeepingPrevious(name: string, body: () => Readable, message: string): Promise<void> {
    const file = join(folder, name);
    await writeFile(file, 'previous');
    assert.equal((await failure(() => writeFileAtomic(file, body()))).message, message);
    assert.equal(await readFile(file, 'utf8'), 'previous');
    assert.deepEqual(await readdir(folder), [name]);
  }

  it('LAYER-FS: writes text, bytes or a stream whole, replaces the previous file, and leaves only the target', async () => {
    const file = join(folder, 'state.json');
    await writeFileAtomic(file, 'first — ünïcode\n');
    assert.equal(await readFile(file, 'utf8'), 'first — ünïcode\n');
    await writeFileAtomic(file, Buffer.from([0, 1, 2, 255]));
    assert.deepEqual(await readFile(file), Buffer.from([0, 1, 2, 255]));
    await writeFileAtomic(file, streamOf(['a'.repeat(100_000), 'b'.repeat(100_000), 'c']));
    assert.equal(await readFile(file, 'utf8'), `${'a'.repeat(100_000)}${'b'.repeat(100_000)}c`);
    await writeFileAtomic(file, '', { sync: true });
    assert.equal(await readFile(file, 'utf8'), '');
    assert.deepEqual(await readdir(folder), ['state.json']);
  });

  it('LAYER-FS: a stream already flowing (a byte counter listening) loses nothing while the temporary is being opened', async () => {
    const file = join(folder, 'counted.bin');
    const chunks = Array.from({ length: 32 }, (_, i) => Buffer.alloc(1024, i));
    const body = Readable.from(chunks);
    let counted = 0;
    body.on('data', (chunk: Buffer) => {
      counted += chunk.length;
    });
    await writeFileAtomic(file, body);
    assert.deepEqual(await readFile(file), Buffer.concat(chunks));
    assert.equal(counted, 32 * 1024);
  });

  it('LAYER-FS: a stream that fails while the temporary is being opened: its error is thrown (not uncaught), nothing is left', async () => {
    const destroyed = () => {
      const body = new PassThrough();
      body.on('data', () => undefined);
      return body.destroy(new Error('the body is larger than allowed'));
    };
    await failsKeepingPrevious('limited.bin', destroyed, 'the body is larger than allowed');
  });

  it('LAYER-FS: writers at the same time each use a name of their own: the target is one of them, whole', async () => {
    const file = join(folder, 'shared.txt');
    const texts = Array.from({ length: 8 }, (_, i) => `${String(i)}`.repeat(50_000));
    await Promise.all(texts.map((text) => writeFileAtomic(file, text)));
    assert.ok(texts.includes(await readFile(file, 'utf8')));
    assert.deepEqual(await readdir(folder), ['shared.txt']);
  });

  it('LAYER-FS: the temporary is complete, in the same folder, named for the target and this process, before the rename', async () => {
    const file = join(folder, 'login.json');
    await writeFile(file, 'previous');
    let seen: string | undefined;
    await writeFileAtomic(file, 'next', {
      beforeRename: async (temporary) => {
        seen = temporary;
        assert.equal(join(temporary, '..'), folder);
        assert.equal(await readFile(temporary, 'utf8'), 'next');
        assert.equal(await readFile(file, 'utf8'), 'previous', 'the target is untouched until the rename');
        assert.equal(temporaryWriter(file, basename(temporary)), process.pid);
      },
    });
    assert.match(basename(seen ?? ''), new RegExp(`^\\.login\\.json\\.${process.pid}\\.[0-9a-f]{12}\\.tmp$`));
    assert.equal(await readFile(file, 'utf8'), 'next');
  });

  it("LAYER-FS: temporaryWriter knows this module's temporaries of a file and nothing else", () => {
    const file = join(folder, 'data.json');
    assert.equal(temporaryWriter(file, '.data.json.4242.0123456789ab.tmp'), 4242);
    for (const name of [
      'data.json',
      '.data.json.4242.0123456789ab',
      '.data.json.4242.0123456789.tmp',
      '.data.json.x.0123456789ab.tmp',
      '.other.json.4242.0123456789ab.tmp',
      '.data.json.4242.0123456789ab.tmp.keep',
      'data.json.4242.0123456789ab.tmp',
    ]) {
      assert.equal(temporaryWriter(file, name), undefined, name);
    }
  });

  it('LAYER-FS: a mode is set exactly whatever the umask (0600 for credentials); without one the file gets 0666 less the umask', async function () {
    if (!checksModes) this.skip();
    const file = join(folder, 'secret.json');
    const mode = async () => (await stat(file)).mode & 0o777;
    const umask = process.umask(0o077);
    try {
      await writeFileAtomic(file, 's3cr3t-Tok_9f2a', { mode: 0o600 });
      assert.equal(await mode(), 0o600);
      await writeFileAtomic(file, 'shared', { mode: 0o644 });
      assert.equal(await mode(), 0o644, 'the umask narrows what open gives; the mode asked for is set after');
      await writeFileAtomic(file, 'plain');
      assert.equal(await mode(), 0o600);
      process.umask(0o022);
      await writeFileAtomic(file, 'plain');
      assert.equal(await mode(), 0o644);
      await writeFileAtomic(file, streamOf(['s3cr3t-', 'Tok_9f2a']), { mode: 0o600, sync: true });
      assert.equal(await mode(), 0o600);
    } finally {
      process.umask(umask);
    }
  });

  it('LAYER-FS: a stream that fails part-way leaves the previous file intact and no temporary; its own error is thrown', async () => {
    const broken = () =>
      Readable.from(
        (async function* () {
          yield Buffer.alloc(64 * 1024, 1);
          throw new Error('the peer went away');
        })(),
      );
    await failsKeepingPrevious('download.bin', broken, 'the peer went away');
  });

  it('LAYER-FS: the folder removed during the write: the rename error is thrown, not the failed removal of the temporary', async () => {
    const inner = join(folder, 'gone');
    await mkdir(inner);
    const file = join(inner, 'record.json');
    const removed = await failure(() => writeFileAtomic(file, 'x', { beforeRename: () => rm(inner, { recursive: true }) }));
    assert.equal(removed.code, 'ENOENT');
    assert.equal(removed.syscall, 'rename', `the clean-up's unlink must not replace the rename's error: ${String(removed)}`);

    // A stream that removes the folder and then fails: its error is thrown, not the clean-up's ENOENT.
    await mkdir(inner);
    const broken = Readable.from(
      (async function* () {
        yield Buffer.from('part');
        await rm(inner, { recursive: true });
        throw new Error('the body broke off');
      })(),
    );
    const streamed = await failure(() => writeFileAtomic(file, broken));
    assert.equal(streamed.message, 'the body broke off');

    // Removed after the first chunk: the write goes on into the unlinked file and the rename fails.
    await mkdir(inner);
    const late = await failure(() =>
      writeFileAtomic(
        file,
        streamOf(['a', 'b'], () => rm(inner, { recursive: true })),
      ),
    );
    assert.equal(late.syscall, 'rename');
  });

  it('LAYER-FS: a name too long to carry the temporary suffix (up to 255 bytes, multi-byte too) is written; its temporary fits, is its own, and is known', async () => {
    const heads = ['n'.repeat(245), 'é'.repeat(120), 'n'.repeat(223)];
    for (const [index, head] of heads.entries()) {
      const file = join(folder, `${head}.${index}.json`);
      await writeFile(file, 'previous');
      let seen = '';
      await writeFileAtomic(file, `next ${index}`, {
        beforeRename: (temporary) => {
          seen = basename(temporary);
        },
      });
      assert.equal(await readFile(file, 'utf8'), `next ${index}`);
      assert.ok(Buffer.byteLength(seen) <= 255, `${seen.length} bytes`);
      assert.equal(temporaryWriter(file, seen), process.pid);
      // Another long name with the same head: its temporaries are not this file's.
      assert.equal(temporaryWriter(join(folder, `${head}.${index}.other`), seen), undefined);
      assert.ok(!seen.includes('\ufffd'), 'cut at a character boundary');
    }
    assert.deepEqual((await readdir(folder)).sort(), heads.map((head, index) => `${head}.${index}.json`).sort());
  });

  it('LAYER-FS: a temporary that cannot be opened (the folder is a file): the open error, and a stream given is released', async () => {
    const blocker = join(folder, 'not-a-folder');
    await writeFile(blocker, 'previous');
    const file = join(blocker, 'data.json');
    const error = await failure(() => writeFileAtomic(file, 'next'));
    assert.equal(error.code, 'ENOTDIR');
    assert.equal(error.syscall, 'open');
    const body = streamOf(['never', 'read']);
    assert.equal((await failure(() => writeFileAtomic(file, body))).code, 'ENOTDIR');
    assert.ok(body.destroyed, 'the stream nobody will read is destroyed (a response body would hold its connection)');
    assert.equal(await readFile(blocker, 'utf8'), 'previous');
    assert.deepEqual(await readdir(folder), ['not-a-folder']);
  });

  it('LAYER-FS: a target that is a folder is never removed: the rename fails, the folder and its content stay, no temporary is left', async () => {
    const file = join(folder, 'taken');
    await mkdir(file);
    await writeFile(join(file, 'keep'), 'theirs');
    const error = await failure(() => writeFileAtomic(file, 'mine'));
    assert.equal(error.syscall, 'rename');
    assert.ok((await lstat(file)).isDirectory());
    assert.equal(await readFile(join(file, 'keep'), 'utf8'), 'theirs');
    assert.deepEqual(await readdir(folder), ['taken']);
  });

  it('LAYER-FS: a path through a link and ".." is written where the link leads, its temporary beside it', async () => {
    const outside = join(folder, 'outside');
    await mkdir(join(outside, 'deep'), { recursive: true });
    const base = join(folder, 'base');
    await mkdir(base);
    await symlink(join(outside, 'deep'), join(base, 'link'));
    let temporary = '';
    await writeFileAtomic(`${base}/link/../target.txt`, 'here', {
      beforeRename: (name) => {
        temporary = name;
      },
    });
    assert.equal(await readFile(join(outside, 'target.txt'), 'utf8'), 'here');
    assert.ok(temporary.startsWith(`${base}/link/../.target.txt.`), temporary);
    assert.deepEqual((await readdir(outside)).sort(), ['deep', 'target.txt']);
    assert.deepEqual(await readdir(base), ['link']);
  });
});
