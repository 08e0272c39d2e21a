import { createHash } from 'node:crypto';
import { close, fchmod, open, readFileSync, writev } from 'node:fs';
import { chmod, copyFile, mkdir, rm, symlink } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { hashLines, type HashedEntry } from './hash.js';
import { refuseEscapingLinks } from './links.js';
import { SourceRefusedError, type ExtractLimits } from './limits.js';
import { youngCollector } from './young-collection.js';

/** One archive member as the format readers describe it, before any checks. */
export interface EntryHeader {
  /** The name as stored in the archive. */
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';
  /** The format's own name for the type, for messages (e.g. "CharacterDevice"). */
  rawType: string;
  /** Permission bits as stored (may include setuid/setgid/sticky). */
  mode: number;
  linkTarget?: string;
}

/** Files are written 0644, or 0755 when the archive gave any execute bit; setuid, setgid and sticky are dropped. */
export function normaliseFileMode(mode: number): number {
  return mode & 0o111 ? 0o755 : 0o644;
}

/**
 * Cleans an archive member name into a relative path, refusing absolute paths, drive letters, backslashes, NUL and
 * any `..` segment. Returns '' for the archive root ("./").
 */
export function safeRelativePath(name: string): string {
  if (name.includes('\0')) throw new SourceRefusedError(`the archive entry "${name.replace(/\0/g, '\\0')}" contains a NUL byte`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw new SourceRefusedError(`the archive entry "${name}" has an absolute path`);
  if (name.includes('\\')) throw new SourceRefusedError(`the archive entry "${name}" contains a backslash`);
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new SourceRefusedError(`the archive entry "${name}" climbs out of the archive with ".."`);
  // Checked again once cleaned: "./C:/x" is "C:/x", a drive path to Windows' path.resolve.
  if (/^[A-Za-z]:/.test(parts[0] ?? '')) throw new SourceRefusedError(`the archive entry "${name}" has an absolute path`);
  return parts.join('/');
}

type TreeEntry = { kind: 'file'; sha256: string; mode: number; size: number } | { kind: 'link'; target: string } | { kind: 'dir' };

/**
 * Writes archive members into a fresh folder, enforcing the hardening rules: no escaping names or links, no device
 * files or FIFOs, nothing written through a symbolic link, caps on bytes and entries, normalised modes. It keeps what
 * it wrote (paths, content digests, modes, link targets), so the tree's `h1:` hash needs no second read; with
 * `hashOnly` nothing is written at all and only the hash is computed (pinning). The folder is complete only once
 * `landed()` has resolved: the last writes of a few files finish while later members are read.
 */
export class TreeWriter {
  private bytes = 0;
  private entries = 0;
  private readonly tree = new Map<string, TreeEntry>();
  // Each folder that holds something ('' for the root) to the paths directly in it, members and folders implied by
  // deeper members alike: asking whether a path is a folder, or removing a folder's contents, then looks at that folder
  // only, not at every member (a 100 000-entry archive made that quadratic: seconds of CPU per 20 000 entries).
  private readonly children = new Map<string, Set<string>>();
  // Every member's content is garbage once written and hashed: paced minor collections keep it few (young-collection.ts).
  private readonly pace = youngCollector();
  // Folders this writer made (or found made by an earlier member): each costs a thread-pool round trip otherwise.
  private readonly made = new Set<string>();
  // Files whose content is all read and hashed but whose last writes, mode and close are still on the thread pool: the
  // next member is read meanwhile. Each settles without rejecting; the first failure is kept in `landingFailure`.
  private readonly landing = new Set<Promise<void>>();
  private landingFailure: { error: unknown } | undefined;
  // Read once per extraction: a file whose mode the umask leaves alone needs no fchmod (a thread-pool job per file).
  private readonly umask: number | undefined;

  constructor(
    readonly root: string,
    private readonly limits: ExtractLimits,
    private readonly hashOnly = false,
  ) {
    this.umask = hashOnly ? undefined : currentUmask();
  }

  get totalBytes(): number {
    return this.bytes;
  }

  get totalEntries(): number {
    return this.entries;
  }

  /**
   * Checks the finished tree and returns its `h1:` hash. Run once every member is in: a link's meaning depends on
   * the links around it, which a later member may add.
   */
  seal(): string {
    const links = new Map<string, string>();
    for (const [path, entry] of this.tree) if (entry.kind === 'link') links.set(path, entry.target);
    refuseEscapingLinks(links);
    return this.hash();
  }

  /** The `h1:` hash of what was extracted (the same as hashTree of the written folder). */
  hash(): string {
    const entries: HashedEntry[] = [];
    for (const [path, entry] of this.tree) {
      if (entry.kind === 'file') entries.push({ path, sha256: entry.sha256, mode: entry.mode & 0o111 ? '755' : '644' });
      else if (entry.kind === 'link') entries.push({ path, sha256: createHash('sha256').update(entry.target).digest('hex'), mode: 'link' });
    }
    return hashLines(entries);
  }

  /** The names directly below the root, with whether each is a folder. */
  topLevel(): Array<{ name: string; directory: boolean }> {
    const top = new Map<string, boolean>();
    for (const [path, entry] of this.tree) {
      const slash = path.indexOf('/');
      if (slash === -1) top.set(path, (top.get(path) ?? false) || entry.kind === 'dir');
      else top.set(path.slice(0, slash), true);
    }
    return [...top].map(([name, directory]) => ({ name, directory }));
  }

  /** Whether `relative` is a folder of the extracted tree (declared, or implied by a member below it). */
  isDirectory(relative: string): boolean {
    return this.tree.get(relative)?.kind === 'dir' || (this.children.get(relative)?.size ?? 0) > 0;
  }

  /**
   * Adds one member; `content` must be given for files and is always consumed or destroyed. Resolves once the member
   * is checked and its content read and hashed: a file's last writes may still be landing (see `landed`).
   */
  async add(header: EntryHeader, content?: Readable): Promise<void> {
    try {
      if (this.landingFailure) throw this.landingFailure.error;
      await this.write(header, content);
    } finally {
      if (content && !content.readableEnded) content.resume();
    }
  }

  /**
   * Resolves once every file added is written, its mode set and closed; rejects with the first write that failed. Only
   * then is the folder complete, and only then may anyone remove it.
   */
  async landed(): Promise<void> {
    while (this.landing.size > 0) await Promise.all(this.landing);
    if (this.landingFailure) throw this.landingFailure.error;
  }

  private async write(header: EntryHeader, content?: Readable): Promise<void> {
    const relative = safeRelativePath(header.path);
    if (relative === '') return;
    this.entries += 1;
    if (this.entries > this.limits.maxFiles) {
      throw new SourceRefusedError(
        `the archive has more than ${this.limits.maxFiles} entries`,
        'raise the entry cap (maxFiles) if this module really is that large',
      );
    }
    const parts = relative.split('/');
    for (let i = 1; i < parts.length; i += 1) {
      const prefix = parts.slice(0, i).join('/');
      const kind = this.tree.get(prefix)?.kind;
      if (kind === 'link') throw new SourceRefusedError(`the archive entry "${header.path}" would be written through the symbolic link "${prefix}"`);
      if (kind === 'file') throw new SourceRefusedError(`the archive entry "${header.path}" is inside "${prefix}", which is a file`);
    }
    const target = join(this.root, ...parts);
    switch (header.type) {
      case 'directory':
        await this.replaceExisting(relative, target, true);
        if (!this.hashOnly) await makeFolders(target);
        this.record(relative, { kind: 'dir' });
        return;
      case 'file':
        await this.ensureParent(parts);
        await this.replaceExisting(relative, target, false);
        this.record(relative, { kind: 'file', mode: normaliseFileMode(header.mode), ...(await this.writeFile(target, header, content)) });
        return;
      case 'symlink':
        await this.writeSymlink(relative, target, header);
        return;
      case 'hardlink':
        await this.writeHardlink(relative, target, header);
        return;
      default:
        throw new SourceRefusedError(
          `the archive entry "${header.path}" is a ${header.rawType}, which Gantry never extracts`,
          'modules contain only files, folders and links',
        );
    }
  }

  private async ensureParent(parts: string[]): Promise<void> {
    if (parts.length === 1 || this.hashOnly) return;
    const parent = parts.slice(0, -1).join('/');
    if (this.made.has(parent)) return;
    await makeFolders(join(this.root, ...parts.slice(0, -1)));
    for (let i = 1; i < parts.length; i += 1) this.made.add(parts.slice(0, i).join('/'));
  }

  /** A later member with the same name replaces the earlier one (tar semantics), never following a link. */
  private async replaceExisting(relative: string, target: string, keepDirectory: boolean): Promise<void> {
    const existing = this.tree.get(relative);
    const implied = !existing && this.isDirectory(relative);
    if (!existing && !implied) return;
    if (keepDirectory && (implied || existing?.kind === 'dir')) return;
    if (!this.hashOnly) {
      await this.landed(); // the file or folder removed may still be being written
      await rm(target, { recursive: true, force: true });
    }
    this.forget(relative);
  }

  /** Puts a member in the tree, and it and the folders above it in their folders' lists. */
  private record(path: string, entry: TreeEntry): void {
    this.tree.set(path, entry);
    for (let child = path; child !== ''; child = parentOf(child)) {
      const parent = parentOf(child);
      let inParent = this.children.get(parent);
      if (!inParent) this.children.set(parent, (inParent = new Set()));
      if (inParent.has(child)) return;
      inParent.add(child);
    }
  }

  /** Takes a path and everything below it out of the tree, and out of the folders made (the caller puts a member there). */
  private forget(path: string): void {
    const below = [path];
    for (let next = below.pop(); next !== undefined; next = below.pop()) {
      this.tree.delete(next);
      this.made.delete(next);
      const inside = this.children.get(next);
      if (inside) below.push(...inside);
      this.children.delete(next);
    }
    this.children.get(parentOf(path))?.delete(path);
  }

  /** Writes (or, hash-only, just reads) one file; returns the SHA-256 and size of its content. */
  private async writeFile(target: string, header: EntryHeader, content: Readable | undefined): Promise<{ sha256: string; size: number }> {
    const mode = normaliseFileMode(header.mode);
    const digest = createHash('sha256');
    let size = 0;
    // One pass per chunk: the byte cap (counted as written, never trusted from headers) and the content digest.
    const take = (chunk: Buffer): SourceRefusedError | undefined => {
      this.bytes += chunk.length;
      if (this.bytes > this.limits.maxBytes) {
        return new SourceRefusedError(
          `the archive expands to more than ${this.limits.maxBytes} bytes (at "${header.path}")`,
          'raise the byte cap (maxBytes) if this module really is that large',
        );
      }
      digest.update(chunk);
      size += chunk.length;
      this.pace(chunk.length);
      return undefined;
    };
    if (this.hashOnly) {
      // Nothing to write: read the member directly instead of building a three-stream pipeline for every file.
      if (content) await consume(content, take);
      return { sha256: digest.digest('hex'), size };
    }
    // A few files land behind the reader, no more: each holds at most about two write batches.
    while (this.landing.size >= maxLandingFiles) await Promise.race(this.landing);
    const keepsMode = this.umask !== undefined && (mode & this.umask) === 0;
    const { read, landed } = writeMember(target, mode, !keepsMode, content, take);
    // A failure while the content is read is this member's (add rejects with it); one after is kept for the next.
    let wasRead = false;
    const settled: Promise<void> = landed
      .catch((error: unknown) => {
        if (wasRead) this.landingFailure ??= { error };
      })
      .finally(() => this.landing.delete(settled));
    this.landing.add(settled);
    await read;
    wasRead = true;
    return { sha256: digest.digest('hex'), size };
  }

  private async writeSymlink(relative: string, target: string, header: EntryHeader): Promise<void> {
    const link = header.linkTarget ?? '';
    if (link === '' || link.includes('\0')) throw new SourceRefusedError(`the symbolic link "${header.path}" has an empty or invalid target`);
    if (link.startsWith('/') || /^[A-Za-z]:/.test(link) || link.includes('\\')) {
      throw new SourceRefusedError(`the symbolic link "${header.path}" points at the absolute path "${link}"`);
    }
    const resolved = posix.normalize(posix.join(posix.dirname(relative), link));
    if (resolved === '..' || resolved.startsWith('../')) {
      throw new SourceRefusedError(`the symbolic link "${header.path}" points outside the module ("${link}")`);
    }
    await this.ensureParent(relative.split('/'));
    await this.replaceExisting(relative, target, false);
    if (!this.hashOnly) await symlink(link, target);
    this.record(relative, { kind: 'link', target: link });
  }

  private async writeHardlink(relative: string, target: string, header: EntryHeader): Promise<void> {
    const link = header.linkTarget ?? '';
    let source: string;
    try {
      source = safeRelativePath(link);
    } catch {
      throw new SourceRefusedError(`the hard link "${header.path}" points outside the module ("${link}")`);
    }
    const original = this.tree.get(source);
    if (original?.kind !== 'file') {
      throw new SourceRefusedError(`the hard link "${header.path}" points at "${link}", which is not a file extracted before it`);
    }
    await this.ensureParent(relative.split('/'));
    await this.replaceExisting(relative, target, false);
    const mode = normaliseFileMode(header.mode);
    this.bytes += original.size;
    if (this.bytes > this.limits.maxBytes) throw new SourceRefusedError(`the archive expands to more than ${this.limits.maxBytes} bytes (at "${header.path}")`);
    if (!this.hashOnly) {
      await this.landed(); // the original may still be being written
      // A copy, not a link: the installed tree never shares inodes with anything, so editing one file changes one file.
      await copyFile(join(this.root, ...source.split('/')), target);
      await chmod(target, mode);
    }
    this.record(relative, { kind: 'file', sha256: original.sha256, mode, size: original.size });
  }
}

/**
 * The process's umask, read from /proc/self/status (Linux 4.7+); undefined where that cannot be read. Not
 * `process.umask()`: without an argument it sets the mask to read it, which is deprecated (DEP0139).
 */
export function currentUmask(): number | undefined {
  try {
    const found = /^Umask:\s*([0-7]{1,4})$/m.exec(readFileSync('/proc/self/status', 'latin1'));
    return found ? parseInt(found[1] as string, 8) : undefined;
  } catch {
    return undefined;
  }
}

/** The folder a tree path is in ('' for the root). */
function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

/**
 * Makes `folder` and any missing folder above it, each 0755: mkdir's mode passes through the umask (077 would make them
 * 0700), so each folder it made is set explicitly; one that exists was made here before, and is left alone.
 */
async function makeFolders(folder: string): Promise<void> {
  const first = await mkdir(folder, { recursive: true, mode: 0o755 });
  if (first === undefined) return;
  for (let made = folder; made.length >= first.length; made = dirname(made)) await chmod(made, 0o755);
}

const fchmodFile = promisify(fchmod);
const closeFile = promisify(close);

/** Chunks held while a write is in flight before the member is paused (the file writes' back-pressure). */
const writeBatchBytes = 1024 * 1024;
/** Files whose writes may still be landing while the next member is read (each holds at most ~2 write batches). */
const maxLandingFiles = 4;

/**
 * Writes a member's content to a new file. Reading starts at once, while the file is opened: each chunk goes through
 * `take` (the byte cap, the digest) as it arrives; one write is in flight at a time and what arrives meanwhile goes
 * out in one writev, so a member never holds more than about `writeBatchBytes`. With `setMode` (the umask took bits
 * from the mode the file was created with) the mode is set again beside the writes.
 * `read` settles when the content has all been read (or the member failed); `landed` once the file is complete and
 * closed, or, after a failure, once no write is in flight and the file is closed. A short write is continued; an error
 * or a refusal stops the member.
 */
function writeMember(
  target: string,
  mode: number,
  setMode: boolean,
  content: Readable | undefined,
  take: (chunk: Buffer) => Error | undefined,
): { read: Promise<void>; landed: Promise<void> } {
  let fd: number | undefined;
  let opening = true;
  let writing = false;
  let ended = content === undefined;
  let closing = false;
  let failure: { error: unknown } | undefined;
  let paused = false;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // fchmod runs beside the writes; its outcome (an error or undefined) is read before the close.
  let modeSet: Promise<unknown> = Promise.resolve();
  let readDone!: () => void;
  let readFailed!: (error: unknown) => void;
  const read = new Promise<void>((resolve, reject) => {
    readDone = resolve;
    readFailed = reject;
  });
  let landedDone!: () => void;
  let landedFailed!: (error: unknown) => void;
  const landed = new Promise<void>((resolve, reject) => {
    landedDone = resolve;
    landedFailed = reject;
  });
  // Closed only once no write is in flight, which could otherwise land in whatever file reuses the descriptor's number.
  const settle = () => {
    if (closing || opening || writing || (!failure && (!ended || pendingBytes > 0))) return;
    closing = true;
    const opened = fd;
    if (opened === undefined) return failure ? landedFailed(failure.error) : landedDone();
    void modeSet
      .then(async (modeError) => {
        await closeFile(opened);
        if (modeError) throw modeError;
      })
      .then(
        () => (failure ? landedFailed(failure.error) : landedDone()),
        (error: unknown) => landedFailed(failure ? failure.error : error),
      );
  };
  const fail = (error: unknown) => {
    if (failure) return;
    failure = { error };
    pending = [];
    pendingBytes = 0;
    if (content) {
      content.off('data', onData);
      content.destroy();
    }
    readFailed(error);
    settle();
  };
  const write = (chunks: Buffer[], bytes: number) => {
    writing = true;
    writev(fd as number, chunks, null, (error, written) => {
      writing = false;
      if (failure) return settle();
      if (error) return fail(error);
      if (written < bytes) return write(rest(chunks, written), bytes - written);
      flush();
    });
  };
  const flush = () => {
    if (opening || writing || failure) return;
    if (pendingBytes === 0) return settle();
    const chunks = pending;
    const bytes = pendingBytes;
    pending = [];
    pendingBytes = 0;
    // The write first: a tar member (minipass) resumed emits what it holds, and its end, synchronously, which must
    // find this write in flight, not start another or close the file under it.
    write(chunks, bytes);
    if (paused) {
      paused = false;
      content?.resume();
    }
  };
  const onData = (chunk: Buffer) => {
    const refused = take(chunk);
    if (refused) return fail(refused);
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (!writing && !opening) flush();
    else if (pendingBytes >= writeBatchBytes && !paused) {
      paused = true;
      content?.pause();
    }
  };
  open(target, 'wx', mode, (error, opened) => {
    opening = false;
    if (error) return fail(error);
    fd = opened;
    if (setMode)
      modeSet = fchmodFile(opened, mode).then(
        () => undefined,
        (modeError: unknown) => modeError,
      );
    if (failure) return settle();
    flush();
  });
  if (content === undefined) {
    readDone();
  } else {
    const early = failedAlready(content);
    if (early) {
      fail(early);
    } else {
      content.on('data', onData);
      content.once('end', () => {
        ended = true;
        readDone();
        flush();
      });
      content.once('error', fail);
    }
  }
  return { read, landed };
}

/**
 * The error of a member that failed before its reader started (archive.ts's zip entries can, while the writer opens the
 * file): a destroyed stream would never end, so one without an error is an error too.
 */
function failedAlready(content: Readable): Error | undefined {
  if (content.errored) return content.errored;
  return content.destroyed ? new Error('the member ended before it was read') : undefined;
}

/** What is left of `chunks` after the first `written` bytes (exported for its tests: a short write to a file is rare). */
export function rest(chunks: Buffer[], written: number): Buffer[] {
  let skip = written;
  let index = 0;
  while (index < chunks.length && skip >= (chunks[index] as Buffer).length) skip -= (chunks[index++] as Buffer).length;
  const left = chunks.slice(index);
  if (skip > 0 && left.length > 0) left[0] = (left[0] as Buffer).subarray(skip);
  return left;
}

/** Reads a stream to its end, handing each chunk to `take`; an error `take` returns stops the stream and rejects. */
function consume(content: Readable, take: (chunk: Buffer) => Error | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: unknown) => {
      content.off('data', onData);
      content.off('end', onEnd);
      content.off('error', settle);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      const refused = take(chunk);
      if (!refused) return;
      settle(refused);
      content.destroy();
    };
    const onEnd = () => settle();
    const early = failedAlready(content);
    if (early) return reject(early);
    content.on('data', onData);
    content.once('end', onEnd);
    content.once('error', settle);
  });
}
