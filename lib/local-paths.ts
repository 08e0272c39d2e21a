/**
 * The paths a user gives Gantry — flags, variables, configuration settings — checked before any work is done or
 * anything is sent, every refusal a usage error (exit 2) naming the path and what is wrong:
 *
 * - paths to write (an install folder, a lock file, a report folder, a data file): `ensureFolder` and
 *   `checkWritableFile`. Node's `mkdir(…, { recursive: true })` spins forever on a path whose parent exists but
 *   refuses new entries with ENOENT (`/proc/nope`), so folders are created one level at a time here.
 * - files to read (a CA bundle, a configuration file, a lock file, a data file): `readLocalFile` and
 *   `readLocalFileSync` open the file once, look at the open handle, refuse a folder, a device (`/dev/zero`) or a FIFO
 *   (unless the caller reads pipes) and stop at a cap, so no path can hang Gantry or fill its memory.
 *
 * A root module of lib/: every area and the dev servers may import it.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { access, mkdir, open, rmdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from './errors.js';

/** A path Gantry was given to write that cannot be written: a usage error (exit 2), code PATH_NOT_WRITABLE. */
function pathError(message: string, hint?: string): UsageError {
  return new UsageError(message, { code: 'PATH_NOT_WRITABLE', ...(hint === undefined ? {} : { hint }) });
}

function kind(info: Stats): string {
  if (info.isFile()) return 'a file';
  if (info.isDirectory()) return 'a folder';
  if (info.isSymbolicLink()) return 'a symbolic link';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a device (a character special file)';
  if (info.isBlockDevice()) return 'a device (a block special file)';
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
  EISDIR: 'it is a folder',
  ENXIO: 'no such device',
  ENODEV: 'no such device',
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
 * Why nothing can be made in `folder`, or undefined when a probe entry was made and removed there. The permission bits
 * do not tell (root passes `access()` in /sys, which refuses every new entry with EPERM), so a real entry is tried.
 */
async function probe(folder: string, kind: 'folder' | 'file'): Promise<string | undefined> {
  const name = join(folder, `.gantry-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    if (kind === 'folder') {
      await mkdir(name, { mode: 0o700 });
      await rmdir(name);
    } else {
      const handle = await open(name, 'wx', 0o600);
      await handle.close();
      await unlink(name);
    }
    return undefined;
  } catch (error) {
    return `${kind === 'folder' ? 'mkdir' : 'creating a file'} in ${folder} failed (${reason(error)})`;
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
      existing === target
        ? `${what} ${target} is ${kind(info)}, not a folder`
        : `${what} ${target} cannot be created: ${existing} is ${kind(info)}, not a folder`,
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
  const refused = await probe(target, 'folder');
  if (refused) throw pathError(`${what} ${target} is not writable: ${refused}`, 'choose a folder on a writable file system that you can write in');
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
  if (present && !present.isFile())
    throw pathError(
      `${what} ${target} is ${kind(present)}, not ${present.isDirectory() ? 'a file' : 'a regular file'}`,
      'give the path of a regular file (it is created when missing)',
    );
  const folder = dirname(target);
  const { existing, info } = await nearestExisting(folder, what);
  if (existing !== folder) throw pathError(`${what} ${target} cannot be written: the folder ${folder} does not exist`);
  if (!info.isDirectory()) throw pathError(`${what} ${target} cannot be written: ${folder} is ${kind(info)}, not a folder`);
  if (!(await writable(folder)))
    throw pathError(`${what} ${target} cannot be written: no permission to write in ${folder}`, "fix the folder's permissions or run where you can write");
  const refused = await probe(folder, 'file');
  if (refused) throw pathError(`${what} ${target} cannot be written: ${refused}`, 'choose a folder on a writable file system that you can write in');
  return target;
}

/**
 * What to say of a path the file system did not find. Node.js decodes argv as UTF-8 and turns the bytes of a name that
 * is not UTF-8 (`caf\xe9.txt`, Latin-1) into U+FFFD, so such a file exists but cannot be reached by the name Gantry
 * received: "does not exist" would send the person looking for a typo.
 */
export function missingPathText(path: string): string {
  return path.includes('\uFFFD')
    ? 'cannot be opened by that name: it holds U+FFFD, which is how Node.js receives a file name whose bytes are not UTF-8 — the file may exist under its original bytes'
    : 'does not exist';
}

/** The hint for a path `missingPathText` explains, or `fallback`. */
export function missingPathHint(path: string, fallback?: string): string | undefined {
  return path.includes('\uFFFD')
    ? 'rename the file to a UTF-8 name (`convmv -f latin1 -t utf8 --notest <file>`), or link it under one (`ln -s <file> upload.bin`) and give that'
    : fallback;
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

/** The caps `readLocalFile` applies unless told otherwise: every file Gantry reads whole is small. */
export const localFileLimits = {
  /** A CA bundle, a client certificate or key, a configuration file, a lock file, a manifest. */
  config: 4 * 1024 * 1024,
  /** A data file (a dev server's state). */
  data: 64 * 1024 * 1024,
} as const;

export interface ReadLocalFileOptions {
  /** How messages name the file and where it came from: "the CA certificate file (--ca-cert)". */
  what: string;
  /** The most bytes read; more is refused. Default `localFileLimits.config`. */
  maxBytes?: number;
  /** Also read FIFOs and sockets (`<(…)`, /dev/stdin on a pipe), up to the cap. Devices and folders stay refused. */
  allowPipe?: boolean;
  /** A missing file gives undefined instead of an error. */
  missingOk?: boolean;
  /** Said with a refusal, e.g. "give the path of a PEM file". */
  hint?: string;
}

/**
 * A refusal of `readLocalFile`. Its cause carries what was wrong as an errno-like `code` (ENOENT, EACCES …, or EISDIR
 * for a folder, ESPECIAL for a device, FIFO or socket, EFBIG for more than the cap, EEMPTY for an empty path), so a
 * caller with wording of its own (`gantry secrets put key=@file`) can say it in its words.
 */
function readError(options: ReadLocalFileOptions, message: string, problem: string, code = 'PATH_NOT_READABLE'): UsageError {
  const cause = Object.assign(new Error(problem), { code: problem });
  return new UsageError(message, { code, cause, ...(options.hint === undefined ? {} : { hint: options.hint }) });
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

// O_NONBLOCK: opening a FIFO for reading blocks until a writer comes; with it the open returns at once and the handle
// is looked at first. It changes nothing for a regular file.
const probeFlags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

function checkPath(path: unknown, options: ReadLocalFileOptions): string {
  if (typeof path !== 'string' || path.trim() === '') throw readError(options, `${options.what}: the path is empty`, 'EEMPTY');
  if (path.includes('\0')) throw readError(options, `${options.what}: the path holds a NUL character`, 'EINVAL');
  return path;
}

/** Why a handle of this kind is refused, or undefined when it may be read. */
function refusal(info: Stats, path: string, options: ReadLocalFileOptions): UsageError | undefined {
  if (info.isFile()) {
    const limit = options.maxBytes ?? localFileLimits.config;
    if (info.size > limit)
      return readError(options, `${options.what} ${path} is ${info.size} bytes, more than the ${sizeText(limit)} it may be`, 'EFBIG', 'FILE_TOO_LARGE');
    return undefined;
  }
  if (options.allowPipe && (info.isFIFO() || info.isSocket())) return undefined;
  if (info.isDirectory()) return readError(options, `${options.what} ${path} is a folder, not a file`, 'EISDIR');
  return readError(options, `${options.what} ${path} is ${kind(info)}, not a regular file${options.allowPipe ? ' or a pipe' : ''}`, 'ESPECIAL');
}

function openError(error: unknown, path: string, options: ReadLocalFileOptions): UsageError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') {
    const hint = missingPathHint(path, options.hint);
    return readError({ ...options, ...(hint === undefined ? {} : { hint }) }, `${options.what} ${path} ${missingPathText(path)}`, code);
  }
  return readError(options, `${options.what} ${path} cannot be read (${reason(error)})`, code ?? 'EIO');
}

function tooLarge(path: string, options: ReadLocalFileOptions, limit: number): UsageError {
  return readError(options, `${options.what} ${path} is more than the ${sizeText(limit)} it may be`, 'EFBIG', 'FILE_TOO_LARGE');
}

/**
 * The chunks of a read capped at `limit` bytes, for the async and the sync reader alike: `next()` gives the buffer to
 * read into (one byte past the cap at most, to see it passed), `took(chunk, bytesRead)` keeps what came and says
 * whether to go on (false at the end of the file), and refuses past the cap.
 */
function cappedRead(path: string, options: ReadLocalFileOptions, limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    next: () => Buffer.alloc(Math.min(64 * 1024, limit + 1 - size)),
    took(chunk: Buffer, bytesRead: number): boolean {
      if (bytesRead === 0) return false;
      size += bytesRead;
      if (size > limit) throw tooLarge(path, options, limit);
      chunks.push(chunk.subarray(0, bytesRead));
      return true;
    },
    bytes: () => Buffer.concat(chunks),
  };
}

/**
 * Reads a file the user named, whole, as bytes: opened once, the open handle looked at (no race between a check and
 * the read), a folder, a device or a FIFO refused (FIFOs and sockets allowed with `allowPipe`), at most `maxBytes`.
 * Every refusal is a usage error naming `what` and the path. A missing file is an error, or undefined with `missingOk`.
 */
export async function readLocalFile(path: string, options: ReadLocalFileOptions & { missingOk: true }): Promise<Buffer | undefined>;
export async function readLocalFile(path: string, options: ReadLocalFileOptions): Promise<Buffer>;
export async function readLocalFile(path: string, options: ReadLocalFileOptions): Promise<Buffer | undefined> {
  checkPath(path, options);
  const limit = options.maxBytes ?? localFileLimits.config;
  let handle: FileHandle;
  try {
    // A FIFO the caller reads (`<(…)`) is opened to wait for its writer, and its data kept: no probe that would
    // take the writer's bytes and close. Anything else is probed without blocking, then looked at through the handle.
    const pipe =
      options.allowPipe === true &&
      (await stat(path).then(
        (info) => info.isFIFO(),
        () => false,
      ));
    handle = await open(path, pipe ? 'r' : probeFlags);
  } catch (error) {
    if (options.missingOk && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw openError(error, path, options);
  }
  try {
    const refused = refusal(await handle.stat(), path, options);
    if (refused) throw refused;
    const capped = cappedRead(path, options, limit);
    for (let chunk = capped.next(); capped.took(chunk, (await handle.read(chunk, 0, chunk.length, null)).bytesRead); chunk = capped.next());
    return capped.bytes();
  } catch (error) {
    throw error instanceof UsageError ? error : openError(error, path, options);
  } finally {
    await handle.close();
  }
}

/** `readLocalFile` for synchronous callers (TLS options, the Terraform CLI configuration). Never reads a pipe. */
export function readLocalFileSync(path: string, options: ReadLocalFileOptions & { missingOk: true }): Buffer | undefined;
export function readLocalFileSync(path: string, options: ReadLocalFileOptions): Buffer;
export function readLocalFileSync(path: string, options: ReadLocalFileOptions): Buffer | undefined {
  checkPath(path, options);
  const limit = options.maxBytes ?? localFileLimits.config;
  let fd: number;
  try {
    fd = openSync(path, probeFlags);
  } catch (error) {
    if (options.missingOk && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw openError(error, path, options);
  }
  try {
    const refused = refusal(fstatSync(fd), path, { ...options, allowPipe: false });
    if (refused) throw refused;
    const capped = cappedRead(path, options, limit);
    for (let chunk = capped.next(); capped.took(chunk, readSync(fd, chunk, 0, chunk.length, null)); chunk = capped.next());
    return capped.bytes();
  } catch (error) {
    throw error instanceof UsageError ? error : openError(error, path, options);
  } finally {
    closeSync(fd);
  }
}

/** `readLocalFile` as UTF-8 text. */
export async function readLocalText(path: string, options: ReadLocalFileOptions & { missingOk: true }): Promise<string | undefined>;
export async function readLocalText(path: string, options: ReadLocalFileOptions): Promise<string>;
export async function readLocalText(path: string, options: ReadLocalFileOptions): Promise<string | undefined> {
  return (await readLocalFile(path, options))?.toString('utf8');
}

/** `readLocalFileSync` as UTF-8 text. */
export function readLocalTextSync(path: string, options: ReadLocalFileOptions & { missingOk: true }): string | undefined;
export function readLocalTextSync(path: string, options: ReadLocalFileOptions): string;
export function readLocalTextSync(path: string, options: ReadLocalFileOptions): string | undefined {
  return readLocalFileSync(path, options)?.toString('utf8');
}
