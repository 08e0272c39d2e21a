// Large archives are extracted with a minor collection every few MiB of their bytes (lib/sources/young-collection.ts),
// and obtaining V8's `gc` for it gives no context a `gc`: not the host program's, not one made later.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import vm from 'node:vm';
import { gzipSync } from 'node:zlib';
import { extractArchive } from '../../lib/sources/archive.js';
import { defaultLimits } from '../../lib/sources/limits.js';
import { collectYoung, pacedCollections, youngCollectionBytes } from '../../lib/sources/young-collection.js';
import { tar, zip, type TarMember } from './archives.js';

const MiB = 1024 * 1024;

/** The pacing's collections while `work` runs. */
async function pacedDuring(work: () => Promise<unknown>): Promise<number> {
  const before = pacedCollections();
  await work();
  return pacedCollections() - before;
}

describe('INSTALL-YOUNG-COLLECTION: a large archive is extracted with minor collections paced by its bytes', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-young-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('INSTALL-YOUNG-COLLECTION: 32 MiB in and 32 MiB out of a tar.gz bring a collection each 8 MiB; no context gains a gc', async () => {
    const members: TarMember[] = [{ name: 'mod/', type: '5' }];
    // Random bytes: gzip cannot shrink them, so what comes in is as large as what decompresses.
    for (let i = 0; i < 4; i += 1) members.push({ name: `mod/blob-${i}.bin`, content: randomBytes(8 * MiB) });
    const file = join(dir, 'big.tar.gz');
    await writeFile(file, gzipSync(tar(members), { level: 1 }));
    const root = join(dir, 'out');
    await mkdir(root);
    const hostGc = typeof (globalThis as { gc?: unknown }).gc;

    const paced = await pacedDuring(() => extractArchive(file, 'tar.gz', root, defaultLimits));

    assert.deepEqual((await readdir(join(root, 'mod'))).sort(), ['blob-0.bin', 'blob-1.bin', 'blob-2.bin', 'blob-3.bin']);
    assert.equal(paced, Math.floor((32 * MiB) / youngCollectionBytes) * 2, 'one for each 8 MiB coming in, one for each 8 MiB of content');
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, hostGc, "the host's context keeps what it had");
    assert.equal(vm.runInNewContext('typeof gc'), 'undefined', 'a context made later has no gc: --expose-gc was set back');
  });

  it('INSTALL-YOUNG-COLLECTION: a 32 MiB zip brings one each 8 MiB of its members; a small module none', async () => {
    const members = [0, 1, 2, 3].map((i) => ({ name: `mod/blob-${i}.bin`, content: randomBytes(8 * MiB) }));
    const file = join(dir, 'big.zip');
    await writeFile(file, await zip(members));
    const root = join(dir, 'zip-out');
    await mkdir(root);
    assert.equal(await pacedDuring(() => extractArchive(file, 'zip', root, defaultLimits)), Math.floor((32 * MiB) / youngCollectionBytes));
    assert.equal((await readdir(join(root, 'mod'))).length, 4);

    const small = join(dir, 'small.tar.gz');
    await writeFile(small, gzipSync(tar([{ name: 'mod/main.tf', content: 'variable "x" {}\n' }])));
    await mkdir(join(dir, 'small-out'));
    assert.equal(await pacedDuring(() => extractArchive(small, 'tar.gz', join(dir, 'small-out'), defaultLimits)), 0);
  });

  it('INSTALL-YOUNG-COLLECTION: what the pacing runs is a real collection, each one seen by V8', async () => {
    let seen = 0;
    // A minor one as asked, or a full one when V8 judges the old generation unable to take the survivors (a mocha
    // worker whose heap earlier files grew, on Node 24): either frees the stream's buffers.
    const kinds = new Set<number>([constants.NODE_PERFORMANCE_GC_MINOR, constants.NODE_PERFORMANCE_GC_MAJOR]);
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>)
        if (entry.detail?.kind !== undefined && kinds.has(entry.detail.kind)) seen += 1;
    });
    observer.observe({ entryTypes: ['gc'] });
    try {
      for (let i = 0; i < 10; i += 1) assert.equal(collectYoung(), true);
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      observer.disconnect();
    }
    assert.ok(seen >= 10, `V8 reported ${seen} collections for 10 asked`);
  });
});
