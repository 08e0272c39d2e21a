/**
 * Private files: a 0700 folder, files written with mode 0600 under a temporary name in the same folder and renamed
 * into place (a reader sees the old file or the new one, never part of one), and reads that refuse a file other
 * users can read.
 */
import { constants } from 'node:fs';
import { chmod, mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { temporaryWriter, writeFileAtomic, type AtomicWriteOptions } from '../../atomic-write.js';
import { UsageError } from '../../errors.js';

export const checksModes = process.platform !== 'win32';

/** Creates `folder` (and its parents) when missing; the folder itself ends up 0700. */
export async function ensurePrivateFolder(folder: string): Promise<void> {
  await mkdir(dirname(folder), { recursive: true, mode: 0o700 });
  await mkdir(folder, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const info = await stat(folder);
  if (!info.isDirectory()) throw new UsageError(`${folder} is not a folder`, { hint: 'move it away: Gantry keeps its login files there', code: 'AUTH_FILE' });
  if (checksModes && (info.mode & 0o077) !== 0) await chmod(folder, 0o700);
}

export type AtomicWriteHooks = Pick<AtomicWriteOptions, 'beforeRename'>;

/** Writes `text` to `file` with mode 0600: a temporary name in the same folder, fsync, rename. */
export async function writePrivateFile(file: string, text: string, hooks: AtomicWriteHooks = {}): Promise<void> {
  await ensurePrivateFolder(dirname(file));
  await writeFileAtomic(file, text, { mode: 0o600, sync: true, beforeRename: hooks.beforeRename });
  await removeTemporaries(file, staleAfterMs);
}

/** A temporary file older than this was left by a process that died while writing (it holds tokens: removed). */
const staleAfterMs = 60_000;

/** Removes the temporary files of `file` left by writers that died (older than `olderThanMs`; all with 0). */
async function removeTemporaries(file: string, olderThanMs: number): Promise<void> {
  const folder = dirname(file);
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    if (temporaryWriter(file, name) === undefined) continue;
    const path = join(folder, name);
    const info = await stat(path).catch(() => undefined);
    // 0 means every one: a file written this millisecond has an mtime (with its fraction) after Date.now().
    if (info && (olderThanMs === 0 || Date.now() - info.mtimeMs >= olderThanMs)) await unlink(path).catch(() => undefined);
  }
}

/**
 * The text of `file`, or undefined when there is none. Refuses a file that is not a regular file, belongs to another
 * user, or that group or others can read or write: tokens in it may have been seen, and Gantry says how to fix it.
 */
export async function readPrivateFile(file: string, what: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP')
      throw new UsageError(`${what} ${file} is a symbolic link; refusing to follow it`, {
        hint: `replace the link by the file itself, or remove it and log in again`,
        code: 'AUTH_FILE_PERMISSIONS',
      });
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new UsageError(`${what} ${file} is not a regular file`, { hint: 'remove it and log in again', code: 'AUTH_FILE' });
    if (checksModes) {
      const mode = info.mode & 0o777;
      if ((mode & 0o077) !== 0) {
        throw new UsageError(
          `${what} ${file} can be read or written by other users (mode ${mode.toString(8).padStart(4, '0')}); refusing to use the tokens in it`,
          {
            hint: `make it private with \`chmod 600 ${file}\` — and since others could read it, consider the tokens seen: \`gantry auth logout\` revokes them, then log in again`,
            code: 'AUTH_FILE_PERMISSIONS',
          },
        );
      }
      const uid = process.getuid?.();
      if (uid !== undefined && uid !== 0 && info.uid !== uid) {
        throw new UsageError(`${what} ${file} belongs to another user (uid ${info.uid}); refusing to use the tokens in it`, {
          hint: 'remove it and log in again as yourself',
          code: 'AUTH_FILE_PERMISSIONS',
        });
      }
    }
    if (info.size > 1024 * 1024)
      throw new UsageError(`${what} ${file} is larger than 1 MiB, which no login is`, { hint: 'remove it and log in again', code: 'AUTH_FILE' });
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Removes `file` and any temporary copy a dead writer left; false when there was no file. */
export async function removeFile(file: string): Promise<boolean> {
  await removeTemporaries(file, 0);
  try {
    await unlink(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
