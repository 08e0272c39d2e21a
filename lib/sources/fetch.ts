import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readlink, rename, rm } from 'node:fs/promises';
import { basename, join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { CheckFailedError } from '../errors.js';
import { createHttpClient, type DownloadProgress, type HttpClient } from '../http/index.js';
import type { ArchiveType, Checksum, GitLocation, SourceLocation } from '../registry/location.js';
import { extractArchive, sniffArchiveType } from './archive.js';
import { fetchGit } from './git.js';
import { hashTree, walk } from './hash.js';
import { makeWorkFolder, replaceFolder } from './install.js';
import { resolveLimits, SourceRefusedError, type ExtractLimits } from './limits.js';
import { fetchS3, type S3FetchOptions } from './s3.js';
import { normaliseFileMode } from './tree-writer.js';

export interface FetchProgress extends DownloadProgress {
  phase: 'download' | 'extract';
}

export interface FetchOptions {
  /** The folder the package is installed at; replaced atomically, untouched on any failure. */
  dest: string;
  /** When given, the tree must hash to this (`h1:...`) or nothing is replaced. */
  expectedHash?: string;
  limits?: Partial<ExtractLimits>;
  /** The HTTP client for archive downloads (one is made when absent). */
  http?: HttpClient;
  /** Extra request headers for one download URL, e.g. the registry token for a location on the registry's own host. */
  headersFor?: (url: URL) => Record<string, string> | undefined;
  onProgress?: (progress: FetchProgress) => void;
  s3?: Omit<S3FetchOptions, 'maxBytes' | 'onProgress'>;
  /** Accept file:// and local git repositories: only for locations the user wrote, never for a registry's. */
  trusted?: boolean;
}

export interface FetchResult {
  /** The installed package folder (= dest). */
  dir: string;
  /** The folder the module lives in: dest joined with the resolved sub-directory. */
  path: string;
  /** The resolved sub-directory ('' for the root); `*` replaced by the actual top folder. */
  subdir: string;
  hash: string;
  bytes: number;
}

async function verifyChecksum(file: string, checksum: Checksum): Promise<void> {
  const hash = createHash(checksum.algorithm);
  await pipeline(createReadStream(file), hash);
  const actual = hash.digest('hex');
  if (actual !== checksum.hex) {
    throw new SourceRefusedError(`the download's ${checksum.algorithm} checksum is ${actual}, not the ${checksum.hex} the location requires`, 'the archive changed or was tampered with; nothing was installed');
  }
}

/** Makes a tree written by another program (git) obey the same rules as an extracted archive. */
async function hardenTree(root: string): Promise<void> {
  try {
    await walk(root, '', async (relative, full, kind) => {
      if (kind === 'link') {
        const target = await readlink(full);
        const resolved = posix.normalize(posix.join(posix.dirname(relative), target));
        if (target.startsWith('/') || resolved === '..' || resolved.startsWith('../')) {
          throw new SourceRefusedError(`the symbolic link "${relative}" points outside the module ("${target}")`);
        }
      } else {
        await chmod(full, normaliseFileMode((await lstat(full)).mode));
      }
    });
  } catch (error) {
    if (error instanceof SourceRefusedError) throw error;
    throw new SourceRefusedError(`the fetched tree was refused: ${(error as Error).message}`);
  }
}

/** Resolves `*` (the single top folder) and checks that the sub-directory exists as a real folder. */
async function resolveSubdir(tree: string, subdir: string): Promise<string> {
  let resolved = subdir;
  if (subdir === '*' || subdir.startsWith('*/')) {
    const top = (await readdir(tree, { withFileTypes: true })).filter((entry) => !entry.name.startsWith('.') || entry.isDirectory());
    if (top.length !== 1 || !top[0]?.isDirectory()) {
      throw new SourceRefusedError(`the location's "//*" needs exactly one top-level folder, but the package has ${top.length} top-level entries`);
    }
    resolved = [top[0].name, subdir.slice(2)].filter(Boolean).join('/');
  }
  if (resolved === '') return '';
  const info = await lstat(join(tree, ...resolved.split('/'))).catch(() => undefined);
  if (!info || !info.isDirectory()) throw new SourceRefusedError(`the module package has no folder "${resolved}"`, 'check the //subdir of the address or of the location');
  return resolved;
}

async function fetchArchive(location: Exclude<SourceLocation, GitLocation>, work: string, tree: string, options: FetchOptions, limits: ExtractLimits): Promise<number> {
  const file = join(work, 'download');
  const progress = (p: DownloadProgress) => options.onProgress?.({ ...p, phase: 'download' });
  let name = 'download';
  let bytes: number;
  if (location.getter === 's3') {
    name = basename(location.key);
    bytes = await fetchS3(location, file, { ...options.s3, maxBytes: limits.maxDownloadBytes, onProgress: progress });
  } else {
    const url = new URL(location.url);
    name = basename(decodeURIComponent(url.pathname)) || 'download';
    if (url.protocol === 'file:') {
      await pipeline(createReadStream(url), createWriteStream(file, { flags: 'wx' }));
      bytes = (await lstat(file)).size;
    } else {
      const http = options.http ?? createHttpClient();
      try {
        const result = await http.download({ url, path: file, headers: options.headersFor?.(url) ?? {}, maxBytes: limits.maxDownloadBytes, onProgress: progress });
        bytes = result.bytes;
      } finally {
        if (!options.http) http.close();
      }
    }
  }
  if (location.checksum) await verifyChecksum(file, location.checksum);
  if (location.archive === 'none') {
    await rename(file, join(tree, name));
    await chmod(join(tree, name), 0o644);
    return bytes;
  }
  const type: ArchiveType | undefined = location.archive ?? (await sniffArchiveType(file));
  if (!type) throw new SourceRefusedError('the download is not an archive Gantry knows (tar, tar.gz, tar.bz2, tar.xz, zip)', 'name the type with ?archive=<type>, or archive=false for a single file');
  options.onProgress?.({ phase: 'extract', transferred: bytes, total: bytes });
  await extractArchive(file, type, tree, limits);
  return bytes;
}

/**
 * Fetches a location into `options.dest`: downloads (streamed to disk), checks `?checksum=`, extracts under the
 * hardening rules into a private folder, hashes the tree, compares with `expectedHash`, and only then replaces the
 * destination. Any failure leaves the previous content untouched.
 */
export async function fetchSource(location: SourceLocation, options: FetchOptions): Promise<FetchResult> {
  const limits = resolveLimits(options.limits);
  const work = await makeWorkFolder(options.dest);
  const tree = join(work, 'tree');
  try {
    let bytes = 0;
    if (location.getter === 'git') {
      await fetchGit(location, tree, { allowFile: options.trusted ?? false });
      await hardenTree(tree);
    } else {
      await mkdir(tree, { mode: 0o755 });
      bytes = await fetchArchive(location, work, tree, options, limits);
    }
    await chmod(tree, 0o755);
    const subdir = await resolveSubdir(tree, location.subdir);
    const hash = await hashTree(tree);
    if (options.expectedHash !== undefined && options.expectedHash !== hash) {
      throw new CheckFailedError(`the fetched content hashes to ${hash}, but the lock file pins ${options.expectedHash}`, {
        code: 'HASH_MISMATCH',
        hint: 'the module changed since it was pinned; nothing was replaced. Review the change, then re-pin with `gantry modules pin --upgrade <name>`',
      });
    }
    await replaceFolder(tree, options.dest);
    return { dir: options.dest, path: subdir ? join(options.dest, ...subdir.split('/')) : options.dest, subdir, hash, bytes };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
