// Large archives are extracted with a minor collection every few MiB of their streams (lib/sources/young-collection.ts),
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
import { youngCollectionBytes } from '../../lib/sources/young-collection.js';
import { tar, zip, type TarMember } from './archives.js';

/** Minor collections while `work` runs (the observer's entries arrive after it, on a later turn). */
async function minorCollectionsDuring(work: () => Promise<void>): Promise<number> {
  let minors = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>)
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minors += 1;
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    observer.disconnect();
  }
  return minors;
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

  it('INSTALL-YOUNG-COLLECTION: 32 MiB in and 32 MiB out of a tar.gz bring a minor collection each 8 MiB; no context gains a gc', async () => {
    const members: TarMember[] = [{ name: 'mod/', type: '5' }];
    // Random bytes: gzip cannot shrink them, so what comes in is as large as what decompresses.
    for (let i = 0; i < 4; i += 1) members.push({ name: `mod/blob-${i}.bin`, content: randomBytes(8 * 1024 * 1024) });
    const file = join(dir, 'big.tar.gz');
    await writeFile(file, gzipSync(tar(members), { level: 1 }));
    const root = join(dir, 'out');
    await mkdir(root);
    const hostGc = typeof (globalThis as { gc?: unknown }).gc;

    const minors = await minorCollectionsDuring(() => extractArchive(file, 'tar.gz', root, defaultLimits).then(() => undefined));

    assert.deepEqual((await readdir(join(root, 'mod'))).sort(), ['blob-0.bin', 'blob-1.bin', 'blob-2.bin', 'blob-3.bin']);
    const paced = Math.floor((64 * 1024 * 1024) / youngCollectionBytes);
    assert.ok(minors >= paced - 1, `${minors} minor collections for 64 MiB of streams; the pace gives ${paced}`);
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, hostGc, "the host's context keeps what it had");
    assert.equal(vm.runInNewContext('typeof gc'), 'undefined', 'a context made later has no gc: --expose-gc was set back');
  });

  it('INSTALL-YOUNG-COLLECTION: a 32 MiB zip brings a minor collection each 8 MiB of its members', async () => {
    const members = [0, 1, 2, 3].map((i) => ({ name: `mod/blob-${i}.bin`, content: randomBytes(8 * 1024 * 1024) }));
    const file = join(dir, 'big.zip');
    await writeFile(file, await zip(members));
    const root = join(dir, 'zip-out');
    await mkdir(root);

    const minors = await minorCollectionsDuring(() => extractArchive(file, 'zip', root, defaultLimits).then(() => undefined));

    assert.equal((await readdir(join(root, 'mod'))).length, 4);
    const paced = Math.floor((32 * 1024 * 1024) / youngCollectionBytes);
    assert.ok(minors >= paced - 1, `${minors} minor collections for 32 MiB of members; the pace gives ${paced}`);
  });
});
