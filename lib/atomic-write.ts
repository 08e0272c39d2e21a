/**
 * The one way Gantry replaces a file: the content goes to a temporary name in the target's folder (the same file
 * system, so the rename is atomic), then the temporary is renamed over the target. A reader sees the old file or the
 * new one, never part of one. When anything fails the temporary is removed and the ORIGINAL error is thrown: a
 * clean-up that fails in turn (the folder gone, a name too long to exist) never replaces it, and nothing but the
 * temporary this call created is ever removed.
 *
 * Temporary names are `.<name>.<pid>.<12 hex>.tmp` beside the target (a name too long for that: its head and a hash),
 * so a sweep can tell its own leftovers and the process that left them (`temporaryWriter`).
 *
 * A root module of lib/: every area and the dev servers may import it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface AtomicWriteOptions {
  /**
   * The file's mode, set exactly whatever the umask (0o600 for credentials and session files). Without it the file
   * gets what `writeFile` gives: 0o666 less the umask.
   */
  mode?: number;
  /** fsync the file before the rename and its folder after it: state that must survive a crash of the machine. */
  sync?: boolean;
  /** Called once the temporary file is complete and closed, before the rename (tests make a write fail here). */
  beforeRename?: (temporary: string) => void | Promise<void>;
}

const setsModes = process.platform !== 'win32';
// O_EXCL: a name that exists (another writer's, or a link planted there) is never opened, so never removed either.
const createFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

// A file name's limit on every file system Gantry writes to (NAME_MAX), and what a temporary adds to its stem: the
// pid (10 digits at most, whichever process wrote it, so the stem never depends on it), the random part and `.tmp`.
const nameMaxBytes = 255;
const addedBytes = '.'.length + 10 + '.'.length + 12 + '.tmp'.length;

/**
 * What every temporary of `file` starts with: `.` and its name, or, for a name too long to carry the rest (a Drive
 * title of 230 bytes can be a file's name), a head of it cut at a character boundary and a hash of the whole, so the
 * temporary still fits, stays unique to the file, and `temporaryWriter` still recognises it.
 */
function stemOf(file: string): string {
  const name = basename(file);
  if (1 + Buffer.byteLength(name) + addedBytes <= nameMaxBytes) return `.${name}`;
  let head = '';
  for (const character of name) {
    if (Buffer.byteLength(head + character) > 64) break;
    head += character;
  }
  return `.${head}~${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
}

/**
 * The temporary name for `file`. Built on the path as given, not normalised: `a/link/../f` is written where the link
 * leads, as the final rename resolves it, so both stay in one folder.
 */
function temporaryFor(file: string): string {
  const folder = dirname(file);
  return `${folder.endsWith(sep) ? folder : folder + sep}${stemOf(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * The process id of the writer that left `name` (an entry of `file`'s folder) when it is a temporary of `file` made
 * here; undefined for any other name.
 */
export function temporaryWriter(file: string, name: string): number | undefined {
  const prefix = `${stemOf(file)}.`;
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d+)\.[0-9a-f]{12}\.tmp$/.exec(name.slice(prefix.length));
  return match ? Number(match[1]) : undefined;
}

const isStream = (content: string | Uint8Array | Readable): content is Readable => typeof content !== 'string' && !(content instanceof Uint8Array);

/**
 * Holds a stream while its temporary is being opened: paused, so a stream a caller's 'data' listener set flowing
 * loses nothing meanwhile, and listened to, so an error it raises meanwhile (a body over its limit) is not uncaught:
 * the stream keeps it and the pipeline throws it. Returns the function that lets go.
 */
function hold(stream: Readable): () => void {
  stream.pause();
  const kept = () => undefined;
  stream.on('error', kept);
  return () => stream.off('error', kept);
}

async function fill(handle: FileHandle, content: string | Uint8Array | Readable, options: AtomicWriteOptions): Promise<void> {
  // The umask may have narrowed the mode given to open, never widened it; chmod makes it exact.
  if (options.mode !== undefined && setsModes) await handle.chmod(options.mode);
  if (isStream(content)) {
    // The stream closes the handle when done (with autoClose off it keeps a reference and the handle never closes).
    await pipeline(content, handle.createWriteStream({ flush: options.sync === true }));
    return;
  }
  await handle.writeFile(content);
  if (options.sync) await handle.sync();
}

/** Makes the rename itself durable; a file system that refuses to fsync a folder still renamed atomically. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close().catch(() => undefined);
}

/**
 * Replaces `file` by `content` (text as UTF-8, bytes, or a stream read to its end) atomically. Throws the error of
 * the step that failed, as Node gave it (callers word it); `file` is then as it was and no temporary is left. A
 * stream is destroyed when the write fails (a response body holds its connection).
 */
export async function writeFileAtomic(file: string, content: string | Uint8Array | Readable, options: AtomicWriteOptions = {}): Promise<void> {
  const temporary = temporaryFor(file);
  const release = isStream(content) ? hold(content) : undefined;
  try {
    let handle: FileHandle;
    try {
      handle = await open(temporary, createFlags, options.mode ?? 0o666);
    } catch (error) {
      if (isStream(content)) content.destroy();
      throw error; // nothing was created
    }
    try {
      try {
        await fill(handle, content, options);
      } catch (error) {
        if (isStream(content)) content.destroy();
        await handle.close().catch(() => undefined);
        throw error;
      }
      await handle.close(); // at once when a stream closed it
      await options.beforeRename?.(temporary);
      await rename(temporary, file);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  } finally {
    release?.();
  }
  if (options.sync) await syncFolder(dirname(file));
}
