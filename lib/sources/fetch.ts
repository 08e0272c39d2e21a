import { createHash } from 'node:crypto';
import { expectObject, expectString } from '../arguments.js';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, readdir, readlink, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { CheckFailedError, GantryError } from '../errors.js';
import { createHttpClient, NetworkError, type DownloadProgress, type HttpClient } from '../http/index.js';
import type { ArchiveType, Checksum, GitLocation, SourceLocation } from './location.js';
import { extractArchive, extractTarStream, sniffArchiveType } from './archive.js';
import { fetchGit } from './git.js';
import { hashTree, walk } from './hash.js';
import { removeOnInterrupt } from './cleanup.js';
import { makeWorkFolder, replaceFolder } from './install.js';
import { resolveLimits, SourceRefusedError, type ExtractLimits } from './limits.js';
import type { S3FetchOptions } from './s3.js';
import { refuseEscapingLinks } from './links.js';
import { normaliseFileMode, TreeWriter } from './tree-writer.js';
import type { SourceErrorCode } from './errors.js';

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
  /** Compute the hash only: nothing is written at `dest` (pinning). */
  hashOnly?: boolean;
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
    throw new SourceRefusedError(
      `the download's ${checksum.algorithm} checksum is ${actual}, not the ${checksum.hex} the location requires`,
      'the archive changed or was tampered with; nothing was installed',
    );
  }
}

/** Makes a tree written by another program (git) obey the same rules as an extracted archive. */
async function hardenTree(root: string): Promise<void> {
  try {
    const links = new Map<string, string>();
    await walk(root, '', async (relative, full, kind) => {
      if (kind === 'link') links.set(relative, await readlink(full));
      else await chmod(full, normaliseFileMode((await lstat(full)).mode));
    });
    refuseEscapingLinks(links);
  } catch (error) {
    if (error instanceof SourceRefusedError) throw error;
    throw new SourceRefusedError(`the fetched tree was refused: ${(error as Error).message}`);
  }
}

let hashOnlyRoot: string | undefined;

/** Whole transfers tried when a download breaks off after its response started (the core retries before that). */
const transferAttempts = 3;

interface TreeProbe {
  topLevel(): Promise<Array<{ name: string; directory: boolean }>> | Array<{ name: string; directory: boolean }>;
  isDirectory(relative: string): Promise<boolean> | boolean;
}

function diskProbe(tree: string): TreeProbe {
  return {
    async topLevel() {
      return (await readdir(tree, { withFileTypes: true })).map((entry) => ({ name: entry.name, directory: entry.isDirectory() }));
    },
    async isDirectory(relative) {
      const info = await lstat(join(tree, ...relative.split('/'))).catch(() => undefined);
      return info?.isDirectory() ?? false;
    },
  };
}

/** Resolves `*` (the single top folder) and checks that the sub-directory exists as a real folder. */
async function resolveSubdir(probe: TreeProbe, subdir: string): Promise<string> {
  let resolved = subdir;
  if (subdir === '*' || subdir.startsWith('*/')) {
    const top = await probe.topLevel();
    if (top.length !== 1 || !top[0]?.directory) {
      throw new SourceRefusedError(`the location's "//*" needs exactly one top-level folder, but the package has ${top.length} top-level entries`);
    }
    resolved = [top[0].name, subdir.slice(2)].filter(Boolean).join('/');
  }
  if (resolved === '') return '';
  if (!(await probe.isDirectory(resolved)))
    throw new SourceRefusedError(`the module package has no folder "${resolved}"`, 'check the //subdir of the address or of the location');
  return resolved;
}

interface Fetched {
  bytes: number;
  hash: string;
  probe: TreeProbe;
}

async function fetchArchive(
  location: Exclude<SourceLocation, GitLocation>,
  workFolder: () => Promise<string>,
  tree: string,
  options: FetchOptions,
  limits: ExtractLimits,
): Promise<Fetched> {
  const hashOnly = options.hashOnly ?? false;
  const progress = (p: DownloadProgress) => options.onProgress?.({ ...p, phase: 'download' });
  const http = location.getter === 'http' && !location.url.startsWith('file:') ? (options.http ?? createHttpClient()) : undefined;
  try {
    // Stream straight into the extractor when nothing must be checked first: no checksum, a tar-family type known.
    if (
      http &&
      location.getter === 'http' &&
      !location.checksum &&
      location.archive !== undefined &&
      location.archive !== 'none' &&
      location.archive !== 'zip'
    ) {
      const url = new URL(location.url);
      const response = await http.stream({ url, headers: options.headersFor?.(url) ?? {}, maxBytes: limits.maxDownloadBytes, onProgress: progress });
      let bytes = 0;
      let transferError: unknown;
      response.body.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      response.body.on('error', (error) => {
        transferError ??= error;
      });
      const writer = new TreeWriter(tree, limits, hashOnly);
      const length = Number(response.headers['content-length']);
      await extractTarStream(response.body, location.archive, writer, Number.isFinite(length) ? length : undefined).catch((error: unknown) => {
        response.body.destroy();
        // A transfer that broke off is the network's fault (exit 3), not a corrupt archive.
        if (transferError !== undefined && !(transferError instanceof SourceRefusedError)) {
          if (transferError instanceof GantryError) throw transferError;
          const code = (transferError as NodeJS.ErrnoException).code ?? 'ERR_NETWORK';
          throw new NetworkError({ method: 'GET', url: url.toString(), errorCode: code, cause: transferError });
        }
        throw error;
      });
      return { bytes, hash: writer.seal(), probe: writer };
    }

    const file = join(await workFolder(), 'download');
    let name = 'download';
    let bytes: number;
    if (location.getter === 's3') {
      name = basename(location.key);
      const { fetchS3 } = await import('./s3.js'); // the AWS SDK loads only for s3:: locations
      bytes = await fetchS3(location, file, { ...options.s3, maxBytes: limits.maxDownloadBytes, onProgress: progress });
    } else {
      const url = new URL(location.url);
      name = basename(decodeURIComponent(url.pathname)) || 'download';
      if (!http) {
        await pipeline(createReadStream(url), createWriteStream(file, { flags: 'wx' }));
        bytes = (await lstat(file)).size;
      } else {
        bytes = (await http.download({ url, path: file, headers: options.headersFor?.(url) ?? {}, maxBytes: limits.maxDownloadBytes, onProgress: progress }))
          .bytes;
      }
    }
    if (location.checksum) await verifyChecksum(file, location.checksum);
    if (location.archive === 'none') {
      await mkdir(tree, { recursive: true, mode: 0o755 });
      await rename(file, join(tree, name));
      await chmod(join(tree, name), 0o644);
      return { bytes, hash: await hashTree(tree), probe: diskProbe(tree) };
    }
    const type: ArchiveType | undefined = location.archive ?? (await sniffArchiveType(file));
    if (!type)
      throw new SourceRefusedError(
        'the download is not an archive Gantry knows (tar, tar.gz, tar.bz2, tar.xz, zip)',
        'name the type with ?archive=<type>, or archive=false for a single file',
      );
    options.onProgress?.({ phase: 'extract', transferred: bytes, total: bytes });
    const extracted = await extractArchive(file, type, tree, limits, hashOnly);
    return { bytes, hash: extracted.hash, probe: extracted.writer };
  } finally {
    if (http && !options.http) http.close();
  }
}

/**
 * Fetches a location into `options.dest`: downloads (streamed; straight into the extractor when there is no checksum
 * to check first), checks `?checksum=` before extracting, extracts under the hardening rules into a private folder,
 * hashes the tree as it is written, compares with `expectedHash`, and only then replaces the destination. Any failure
 * leaves the previous content untouched. With `hashOnly`, nothing is installed: only the hash is computed.
 */
export async function fetchSource(location: SourceLocation, options: FetchOptions): Promise<FetchResult> {
  expectObject('fetchSource', 'location', location, 'a location from parseLocation');
  if (!['http', 's3', 'git'].includes(location.getter as string) || typeof location.subdir !== 'string')
    expectObject('fetchSource', 'location', null, 'a location from parseLocation');
  expectObject('fetchSource', 'options', options, 'an object with dest');
  expectString('fetchSource', 'options.dest', options.dest, 'the path of the install folder');
  const limits = resolveLimits(options.limits);
  const hashOnly = options.hashOnly ?? false;
  // Hash-only fetches that stream need no folder at all; the others get a private one, made on first use.
  const releases: Array<() => void> = [];
  let work: string | undefined;
  if (!hashOnly) {
    const made = await makeWorkFolder(options.dest);
    work = made.work;
    releases.push(made.release);
  }
  const workFolder = async () => {
    if (work === undefined) {
      work = await mkdtemp(join(tmpdir(), 'gantry-fetch-'));
      releases.push(removeOnInterrupt(work));
    }
    return work;
  };
  // In hash-only mode the tree writer never touches its root; the name only appears in messages. Computed once:
  // os.tmpdir() reads the environment on every call, a visible cost when pin hashes hundreds of modules.
  const tree = hashOnly ? (hashOnlyRoot ??= join(tmpdir(), 'gantry-hash-only')) : join(work as string, 'tree');
  try {
    let fetched!: Fetched;
    if (location.getter === 'git') {
      const gitTree = join(await workFolder(), 'tree');
      await fetchGit(location, gitTree, { allowFile: options.trusted ?? false });
      await hardenTree(gitTree);
      fetched = { bytes: 0, hash: await hashTree(gitTree), probe: diskProbe(gitTree) };
    } else {
      const target = hashOnly && location.archive === 'none' ? join(await workFolder(), 'tree') : tree;
      for (let attempt = 1; ; attempt += 1) {
        if (!hashOnly) await mkdir(tree, { mode: 0o755 });
        try {
          fetched = await fetchArchive(location, workFolder, target, options, limits);
          break;
        } catch (error) {
          // The HTTP core retries until a response starts; a body that breaks off later is retried here, from scratch.
          if (!(error instanceof NetworkError) || attempt >= transferAttempts) throw error;
          await rm(target, { recursive: true, force: true });
          if (work !== undefined) await rm(join(work, 'download'), { force: true });
          await sleep(250 * attempt);
        }
      }
    }
    const subdir = await resolveSubdir(fetched.probe, location.subdir);
    const { hash } = fetched;
    if (options.expectedHash !== undefined && options.expectedHash !== hash) {
      throw new CheckFailedError(`the fetched content hashes to ${hash}, but the lock file pins ${options.expectedHash}`, {
        code: 'HASH_MISMATCH' satisfies SourceErrorCode,
        hint: 'the module changed since it was pinned; nothing was replaced. Review the change, then pin the module again to accept it',
      });
    }
    if (!hashOnly) {
      await chmod(tree, 0o755);
      await replaceFolder(tree, options.dest);
    }
    return { dir: options.dest, path: subdir ? join(options.dest, ...subdir.split('/')) : options.dest, subdir, hash, bytes: fetched.bytes };
  } finally {
    if (work !== undefined) await rm(work, { recursive: true, force: true });
    for (const release of releases) release();
  }
}
