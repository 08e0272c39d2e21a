import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A private working folder next to `dest`, on the same file system so the final rename is atomic. */
export async function makeWorkFolder(dest: string): Promise<string> {
  await mkdir(dirname(dest), { recursive: true });
  const work = join(dirname(dest), `.${basename(dest)}.tmp-${randomBytes(6).toString('hex')}`);
  await mkdir(work, { mode: 0o700 });
  return work;
}

/**
 * Puts the complete tree `ready` at `dest`. The previous content is moved aside first and removed only after the new
 * tree is in place; if the second rename fails the previous content is moved back.
 */
export async function replaceFolder(ready: string, dest: string): Promise<void> {
  const aside = join(dirname(dest), `.${basename(dest)}.old-${randomBytes(6).toString('hex')}`);
  let movedAside = false;
  try {
    await rename(dest, aside);
    movedAside = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    await rename(ready, dest);
  } catch (error) {
    if (movedAside) await rename(aside, dest).catch(() => undefined);
    throw error;
  }
  if (movedAside) await rm(aside, { recursive: true, force: true });
}

/**
 * Removes working folders left by an interrupted run (`.<name>.tmp-*`, `.<name>.old-*`) that are older than
 * `minAgeMs`, so a concurrent install's live folder is never touched.
 */
export async function sweepLeftovers(parent: string, minAgeMs = 15 * 60_000): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  const now = Date.now();
  await Promise.all(
    names
      .filter((name) => /^\..+\.(tmp|old)-[0-9a-f]{12}$/.test(name))
      .map(async (name) => {
        const info = await stat(join(parent, name)).catch(() => undefined);
        if (info && now - info.mtimeMs >= minAgeMs) await rm(join(parent, name), { recursive: true, force: true });
      }),
  );
}
