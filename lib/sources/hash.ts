import { createHash } from 'node:crypto';
import { expectString } from '../arguments.js';
import { unreadablePath } from '../local-paths.js';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

/**
 * The `h1:` content hash of an installed tree: SHA-256 over one line per file or symbolic link, sorted by the bytes
 * of the relative path (`/`-separated):
 *
 *   <sha256 hex of the content, or of the link target>  <mode: 644, 755 or link>  <path>\n
 *
 * written as `h1:` + base64. Folders are not hashed (an empty folder changes nothing). Modes are the normalised ones
 * Gantry writes, so a tar.gz and a zip of the same files hash the same, whatever the umask.
 */
export async function hashTree(root: string): Promise<string> {
  expectString('hashTree', 'root', root, 'the path of a folder');
  const entries: HashedEntry[] = [];
  await walk(root, '', async (relative, full, kind) => {
    if (kind === 'link') entries.push({ path: relative, sha256: sha256(Buffer.from(await readlink(full))), mode: 'link' });
    else entries.push({ path: relative, sha256: await sha256File(full), mode: (await lstat(full)).mode & 0o111 ? '755' : '644' });
  }).catch((error: unknown) => {
    throw unreadablePath(error, root, 'the folder');
  });
  return hashLines(entries);
}

export interface HashedEntry {
  /** `/`-separated relative path. */
  path: string;
  /** Hex SHA-256 of the content, or of the link target. */
  sha256: string;
  mode: '644' | '755' | 'link';
}

/** The `h1:` hash of a list of entries (any order). */
export function hashLines(entries: HashedEntry[]): string {
  const lines = entries.map((entry) => ({ key: Buffer.from(entry.path), line: `${entry.sha256}  ${entry.mode}  ${entry.path}\n` }));
  lines.sort((a, b) => Buffer.compare(a.key, b.key));
  const summary = createHash('sha256');
  for (const { line } of lines) summary.update(line);
  return `h1:${summary.digest('base64')}`;
}

type Visit = (relative: string, full: string, kind: 'file' | 'link') => Promise<void>;

/** Visits files and links below `root`; anything else (device, FIFO, socket) makes it throw. */
export async function walk(root: string, prefix: string, visit: Visit): Promise<void> {
  const dir = prefix ? join(root, prefix) : root;
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) await walk(root, relative, visit);
    else if (entry.isSymbolicLink()) await visit(relative, full, 'link');
    else if (entry.isFile()) await visit(relative, full, 'file');
    else throw new Error(`"${relative}" is neither a file, a folder nor a link`);
  }
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}
