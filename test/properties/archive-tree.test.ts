import assert from 'node:assert/strict';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { hashTree } from '../../lib/sources/hash.js';
import { SourceRefusedError, defaultLimits } from '../../lib/sources/limits.js';
import { TreeWriter, type EntryHeader } from '../../lib/sources/tree-writer.js';
import { checkAsync, fc } from './fc.js';

/** Members over a tiny name space, so later ones replace, nest in and sit below earlier ones as often as not. */
const member = fc.record({
  path: fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/')),
  type: fc.constantFrom<EntryHeader['type']>('file', 'file', 'directory', 'symlink'),
});

describe('PROP-ARCHIVE-TREE: what the writer remembers of the tree is what it wrote', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-prop-tree-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('PROP-ARCHIVE-TREE: after any sequence of files, folders and links — replacing, nesting, refused — isDirectory and topLevel answer what the folder on disk shows, and the hash is that of the written tree', async () => {
    await checkAsync(
      fc.array(member, { minLength: 1, maxLength: 14 }),
      async (members) => {
        const root = await mkdtemp(join(dir, 't-'));
        const writer = new TreeWriter(root, defaultLimits);
        for (const { path, type } of members) {
          const header: EntryHeader = { path, type, rawType: type, mode: 0o644, ...(type === 'symlink' ? { linkTarget: 'elsewhere' } : {}) };
          await writer.add(header, type === 'file' ? Readable.from([Buffer.from(path)]) : undefined).catch((error: unknown) => {
            // Below a file or through a link: refused before anything changes, and the next member goes on.
            if (!(error instanceof SourceRefusedError)) throw error;
          });
        }
        await writer.landed();
        const paths = new Set(members.flatMap(({ path }) => path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
        for (const path of paths) {
          const onDisk = await lstat(join(root, path)).then(
            (stats) => stats.isDirectory(),
            () => false,
          );
          assert.equal(writer.isDirectory(path), onDisk, `${path} after ${JSON.stringify(members)}`);
        }
        const top = (await readdir(root, { withFileTypes: true })).map((entry) => `${entry.name}${entry.isDirectory() ? '/' : ''}`).sort();
        assert.deepEqual(
          writer
            .topLevel()
            .map(({ name, directory }) => `${name}${directory ? '/' : ''}`)
            .sort(),
          top,
          JSON.stringify(members),
        );
        assert.equal(writer.seal(), await hashTree(root), JSON.stringify(members));
      },
      60,
    );
  });
});
