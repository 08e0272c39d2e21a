/**
 * Checks of the paths Gantry is asked to write — an install folder, a lock file — before anything is written or sent,
 * and a folder creation that never loops. Node's `mkdir(…, { recursive: true })` spins forever on a path whose parent
 * exists but refuses new entries with ENOENT (`/proc/nope`), so folders are created one level at a time here and every
 * refusal is a usage error (exit 2) naming the path.
 */
import { constants, type Stats } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../errors.js';

/** A path Gantry was given to write that cannot be written: a usage error (exit 2), code PATH_NOT_WRITABLE. */
function pathError(message: string, hint?: string): UsageError {
  return new UsageError(message, { code: 'PATH_NOT_WRITABLE', ...(hint === undefined ? {} : { hint }) });
}

function kind(info: Stats): string {
  if (info.isFile()) return 'a file';
  if (info.isDirectory()) return 'a folder';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'a special file';
}

const reasons: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOENT: 'the file system refuses new entries there',
  ENOTDIR: 'a part of the path is not a folder',
  ENOSPC: 'no space left on the device',
  ENAMETOOLONG: 'the name is too long',
  ELOOP: 'too many symbolic links',
};

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return reasons[code] ? `${code}: ${reasons[code]}` : code;
}

/** The nearest existing ancestor of `path` (or `path` itself) and the missing names below it, top first. */
async function nearestExisting(path: string, what: string): Promise<{ existing: string; info: Stats; missing: string[] }> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return { existing: current, info: await stat(current), missing };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw pathError(`${what} ${path} cannot be checked: ${current} cannot be read (${reason(error)})`);
      const parent = dirname(current);
      if (parent === current) throw pathError(`${what} ${path} has no existing folder above it`);
      missing.unshift(current);
      current = parent;
    }
  }
}

async function writable(folder: string): Promise<boolean> {
  try {
    await access(folder, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure `path` is a folder Gantry can write in, creating it (and missing parents) one level at a time. `what`
 * names it in messages ("the install folder"). Returns the absolute path.
 */
export async function ensureFolder(path: string, what = 'the folder'): Promise<string> {
  if (typeof path !== 'string' || path.trim() === '') throw pathError(`${what} is empty`);
  const target = resolve(path);
  const { existing, info, missing } = await nearestExisting(target, what);
  if (!info.isDirectory()) {
    throw pathError(
      existing === target ? `${what} ${target} is ${kind(info)}, not a folder` : `${what} ${target} cannot be created: ${existing} is ${kind(info)}, not a folder`,
      'give the path of a folder (it is created when missing)',
    );
  }
  if (!(await writable(existing))) {
    throw pathError(`${what} ${target} is not writable: no permission to write in ${existing}`, 'choose a folder you can write in, or fix its permissions');
  }
  for (const folder of missing) {
    try {
      await mkdir(folder, { mode: 0o755 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && (await stat(folder).catch(() => undefined))?.isDirectory()) continue;
      throw pathError(`${what} ${target} cannot be created: mkdir ${folder} failed (${reason(error)})`, 'choose a folder on a writable file system');
    }
  }
  return target;
}

/**
 * Checks, before any work, that `file` can be written atomically: its folder exists and is writable, and the file,
 * if present, is a regular file. Returns the absolute path.
 */
export async function checkWritableFile(file: string, what = 'the file'): Promise<string> {
  if (typeof file !== 'string' || file.trim() === '') throw pathError(`${what} path is empty`);
  const target = resolve(file);
  const present = await stat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    if (error.code === 'ENOTDIR') return undefined; // reported below, through the folder
    throw pathError(`${what} ${target} cannot be read (${reason(error)})`);
  });
  if (present && !present.isFile()) throw pathError(`${what} ${target} is ${kind(present)}, not a file`);
  const folder = dirname(target);
  const { existing, info } = await nearestExisting(folder, what);
  if (existing !== folder) throw pathError(`${what} ${target} cannot be written: the folder ${folder} does not exist`);
  if (!info.isDirectory()) throw pathError(`${what} ${target} cannot be written: ${folder} is ${kind(info)}, not a folder`);
  if (!(await writable(folder))) throw pathError(`${what} ${target} cannot be written: no permission to write in ${folder}`, 'fix the folder\'s permissions or run where you can write');
  return target;
}

/**
 * A file-system failure on a path a caller gave (`hashTree('missing')`) as a usage error naming it; anything that is
 * not such a failure is returned as it is.
 */
export function unreadablePath(error: unknown, path: string, what = 'the path'): unknown {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  if (typeof code === 'string' && typeof syscall === 'string') return pathError(`${what} ${path} cannot be read (${reason(error)})`);
  return error;
}

/** Turns a failed write of `file` into a usage error naming it (permissions, read-only file systems …). */
export function writeFailure(error: unknown, file: string, what = 'the file'): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code && ['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR', 'EISDIR', 'ENOSPC', 'ENAMETOOLONG'].includes(code)) {
    return pathError(`${what} ${file} could not be written (${reason(error)})`);
  }
  return error;
}
