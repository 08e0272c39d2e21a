import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { removeOnInterrupt } from './cleanup.js';
import { ensureFolder } from '../local-paths.js';
import { processRunning } from '../process-lock.js';

/**
 * Gantry's own working names next to an install: `.<name>.tmp-<pid>-<12 hex>` (being written) and
 * `.<name>.old-<pid>-<12 hex>` (the previous content, moved aside for a moment). Nothing else is ever swept.
 */
const workName = (dest: string, kind: 'tmp' | 'old') => join(dirname(dest), `.${basename(dest)}.${kind}-${process.pid}-${randomBytes(6).toString('hex')}`);
const workPattern = /^\..+\.(?:tmp|old)-(?:(\d+)-)?[0-9a-f]{12}$/;

/**
 * A private working folder next to `dest`, on the same file system so the final rename is atomic. The parent is
 * checked and created first (a usage error when it cannot be); the folder is removed if the process is interrupted.
 * Returns the folder and the function that stops watching it (call it once the folder is gone).
 */
export async function makeWorkFolder(dest: string): Promise<{ work: string; release: () => void }> {
  await ensureFolder(dirname(dest), 'the install folder');
  const work = workName(dest, 'tmp');
  await mkdir(work, { mode: 0o700 });
  return { work, release: removeOnInterrupt(work) };
}

/**
 * Puts the complete tree `ready` at `dest`. The previous content is moved aside first and removed only after the new
 * tree is in place; if the second rename fails the previous content is moved back.
 */
export async function replaceFolder(ready: string, dest: string): Promise<void> {
  const aside = workName(dest, 'old');
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
 * Removes Gantry's own working folders (`.<name>.tmp-…`, `.<name>.old-…`, nothing else) left by an interrupted run:
 * at once when the process that made them is gone, else once older than `minAgeMs` (a process id can be reused; names
 * without one come from older versions), so a concurrent install's live folder is never touched.
 */
export async function sweepLeftovers(parent: string, minAgeMs = 15 * 60_000): Promise<string[]> {
  const names = await readdir(parent).catch(() => [] as string[]);
  const now = Date.now();
  const removed: string[] = [];
  await Promise.all(
    names.map(async (name) => {
      const match = workPattern.exec(name);
      if (!match) return;
      const pid = match[1] === undefined ? undefined : Number(match[1]);
      const info = await stat(join(parent, name)).catch(() => undefined);
      if (!info?.isDirectory()) return;
      const orphan = pid !== undefined && pid !== process.pid && !processRunning(pid);
      if (orphan || now - info.mtimeMs >= minAgeMs) {
        await rm(join(parent, name), { recursive: true, force: true });
        removed.push(name);
      }
    }),
  );
  return removed.sort();
}
