import { createWriteStream } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, rm, symlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SourceRefusedError, type ExtractLimits } from './limits.js';

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
  return parts.join('/');
}

/**
 * Writes archive members into a fresh folder, enforcing the hardening rules: no escaping names or links, no device
 * files or FIFOs, nothing written through a symbolic link, caps on bytes and entries, normalised modes.
 */
export class TreeWriter {
  private bytes = 0;
  private entries = 0;
  private readonly files = new Set<string>();
  private readonly symlinks = new Set<string>();

  constructor(
    readonly root: string,
    private readonly limits: ExtractLimits,
  ) {}

  get totalBytes(): number {
    return this.bytes;
  }

  get totalEntries(): number {
    return this.entries;
  }

  /** Adds one member; `content` must be given for files and is always consumed or destroyed. */
  async add(header: EntryHeader, content?: Readable): Promise<void> {
    try {
      await this.write(header, content);
    } finally {
      if (content && !content.readableEnded) content.resume();
    }
  }

  private async write(header: EntryHeader, content?: Readable): Promise<void> {
    const relative = safeRelativePath(header.path);
    if (relative === '') return;
    this.entries += 1;
    if (this.entries > this.limits.maxFiles) {
      throw new SourceRefusedError(`the archive has more than ${this.limits.maxFiles} entries`, 'raise the entry cap (maxFiles) if this module really is that large');
    }
    const parts = relative.split('/');
    for (let i = 1; i < parts.length; i += 1) {
      const prefix = parts.slice(0, i).join('/');
      if (this.symlinks.has(prefix)) throw new SourceRefusedError(`the archive entry "${header.path}" would be written through the symbolic link "${prefix}"`);
      if (this.files.has(prefix)) throw new SourceRefusedError(`the archive entry "${header.path}" is inside "${prefix}", which is a file`);
    }
    const target = join(this.root, ...parts);
    switch (header.type) {
      case 'directory':
        await this.replaceExisting(relative, target, true);
        await mkdir(target, { recursive: true, mode: 0o755 });
        await chmod(target, 0o755);
        return;
      case 'file':
        await this.ensureParent(parts);
        await this.replaceExisting(relative, target, false);
        await this.writeFile(target, header, content);
        this.files.add(relative);
        return;
      case 'symlink':
        await this.writeSymlink(relative, target, header);
        return;
      case 'hardlink':
        await this.writeHardlink(relative, target, header);
        return;
      default:
        throw new SourceRefusedError(`the archive entry "${header.path}" is a ${header.rawType}, which Gantry never extracts`, 'modules contain only files, folders and links');
    }
  }

  private async ensureParent(parts: string[]): Promise<void> {
    if (parts.length > 1) await mkdir(join(this.root, ...parts.slice(0, -1)), { recursive: true, mode: 0o755 });
  }

  /** A later member with the same name replaces the earlier one (tar semantics), never following a link. */
  private async replaceExisting(relative: string, target: string, keepDirectory: boolean): Promise<void> {
    const existing = await lstat(target).catch(() => undefined);
    if (!existing) return;
    if (keepDirectory && existing.isDirectory()) return;
    await rm(target, { recursive: true, force: true });
    this.files.delete(relative);
    this.symlinks.delete(relative);
  }

  private countBytes(name: string): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        this.bytes += chunk.length;
        if (this.bytes > this.limits.maxBytes) {
          callback(new SourceRefusedError(`the archive expands to more than ${this.limits.maxBytes} bytes (at "${name}")`, 'raise the byte cap (maxBytes) if this module really is that large'));
          return;
        }
        callback(null, chunk);
      },
    });
  }

  private async writeFile(target: string, header: EntryHeader, content: Readable | undefined): Promise<void> {
    const mode = normaliseFileMode(header.mode);
    const out = createWriteStream(target, { flags: 'wx', mode });
    if (content) await pipeline(content, this.countBytes(header.path), out);
    else await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    await chmod(target, mode);
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
    await symlink(link, target);
    this.symlinks.add(relative);
  }

  private async writeHardlink(relative: string, target: string, header: EntryHeader): Promise<void> {
    const link = header.linkTarget ?? '';
    let source: string;
    try {
      source = safeRelativePath(link);
    } catch {
      throw new SourceRefusedError(`the hard link "${header.path}" points outside the module ("${link}")`);
    }
    if (!this.files.has(source)) {
      throw new SourceRefusedError(`the hard link "${header.path}" points at "${link}", which is not a file extracted before it`);
    }
    const size = (await lstat(join(this.root, ...source.split('/')))).size;
    this.bytes += size;
    if (this.bytes > this.limits.maxBytes) throw new SourceRefusedError(`the archive expands to more than ${this.limits.maxBytes} bytes (at "${header.path}")`);
    await this.ensureParent(relative.split('/'));
    await this.replaceExisting(relative, target, false);
    // A copy, not a link: the installed tree never shares inodes with anything, so editing one file changes one file.
    await copyFile(join(this.root, ...source.split('/')), target);
    await chmod(target, normaliseFileMode(header.mode));
    this.files.add(relative);
  }
}
