import { spawn } from 'node:child_process';
import { expectString } from '../arguments.js';
import { unreadablePath } from '../local-paths.js';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import type { Readable, Transform } from 'node:stream';
import { Parser, type ReadEntry } from 'tar';
import type yauzl from 'yauzl';
import { ExitCode, GantryError } from '../errors.js';
import { missingToolHint } from '../system-packages.js';
import type { ArchiveType } from './location.js';
import { resolveLimits, SourceRefusedError, type ExtractLimits } from './limits.js';

const archiveTypes: readonly string[] = ['tar', 'tar.gz', 'tar.bz2', 'tar.xz', 'zip'];
import { TreeWriter, type EntryHeader } from './tree-writer.js';
import { youngCollector } from './young-collection.js';
import type { SourceErrorCode } from './errors.js';

/** Reads the first bytes of a file to tell the archive type when neither the URL nor `?archive=` says. */
export async function sniffArchiveType(file: string): Promise<ArchiveType | undefined> {
  expectString('sniffArchiveType', 'file', file, 'the path of a downloaded file');
  const handle = await open(file, 'r').catch((error: unknown) => {
    throw unreadablePath(error, file, 'the file');
  });
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await handle.read(head, 0, 512, 0);
    const bytes = head.subarray(0, bytesRead);
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'tar.gz';
    if (bytes.subarray(0, 3).toString('latin1') === 'BZh') return 'tar.bz2';
    if (bytes.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))) return 'tar.xz';
    if (bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04])) || bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x05, 0x06]))) return 'zip';
    if (bytes.length >= 262 && bytes.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
    return undefined;
  } finally {
    await handle.close();
  }
}

/** xz's own memory cap for decoding, so a hostile stream cannot ask for gigabytes of dictionary. */
const xzMemoryLimit = '256MiB';

/**
 * The decompressed bytes of a tar-family archive read from `input`. gzip goes through zlib; bzip2 and xz through the
 * system `bzip2` and `xz` as streaming filters (fast, native, no install-time build; see docs/modules.md).
 */
function decompress(
  input: Readable,
  type: ArchiveType,
  compressedBytes: number | undefined,
): { stream: Readable; done: Promise<void>; stop: () => void; inParser?: boolean; filter?: boolean } {
  if (type === 'tar') return { stream: input, done: Promise.resolve(), stop: () => input.destroy() };
  if (type === 'tar.gz') {
    // A small archive (a pin's module: a few KiB) is inflated by the tar parser itself, synchronously as its bytes
    // come: no zlib stream, output buffer and two thread-pool round trips per module (the largest single item of
    // bench/pin's client profile after the sockets). `relay` hands it the bytes in slices of `parserSliceBytes`.
    if (compressedBytes !== undefined && compressedBytes <= smallArchiveBytes)
      return { stream: input, done: Promise.resolve(), stop: () => input.destroy(), inParser: true };
    // Large output chunks: fewer hops through the parser, the hash and the file writes for every MiB.
    const gunzip = createGunzip({ chunkSize: 256 * 1024 });
    input.on('error', (error) => gunzip.destroy(error));
    feedStaged(input, gunzip);
    return {
      stream: gunzip,
      done: Promise.resolve(),
      stop: () => {
        input.destroy();
        gunzip.destroy();
      },
    };
  }
  const [command, args] = type === 'tar.bz2' ? ['bzip2', ['-dc']] : ['xz', ['-dc', `--memlimit-decompress=${xzMemoryLimit}`]];
  const child = spawn(command, args); // stdin, stdout and stderr are pipes by default
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    if (stderr.length < 2000) stderr += text;
  });
  // The child may exit before reading everything (corrupt input): its stdin then fails with EPIPE, reported below.
  child.stdin.on('error', () => undefined);
  input.on('error', (error) => {
    child.kill('SIGTERM');
    child.stdout.destroy(error);
  });
  input.pipe(child.stdin);
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new GantryError(`reading a ${type} archive needs the "${command}" program, which is not installed`, {
              code: 'MISSING_TOOL' satisfies SourceErrorCode,
              exitCode: ExitCode.usage,
              hint: missingToolHint(command),
            })
          : error,
      );
    });
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new SourceRefusedError(`the ${type} archive is corrupt: ${command} said ${lastWord(command, stderr) || `exit ${code}`}`));
    });
  });
  done.catch(() => undefined);
  return {
    stream: child.stdout,
    done,
    filter: true,
    stop: () => {
      input.destroy();
      child.kill('SIGTERM');
    },
  };
}

/**
 * What a filter said: its last line naming the program (bzip2 follows its error with lines of advice), else its last
 * line.
 */
function lastWord(command: string, stderr: string): string {
  const lines = stderr.trim().split('\n');
  return lines.filter((line) => line.startsWith(`${command}: `)).pop() ?? lines.pop() ?? '';
}

/**
 * How much more of a filter's output is read, after the tar parser gave up, to hear whether the filter fails too: a
 * filter writes what it decoded before it checks it, so corrupt input reaches the parser as garbage, or as nothing,
 * before the filter's own, better, message. bzip2 checks every block (at most 900 kB before its run-length stage, about
 * that much of a tar); xz mostly fails where the data breaks. Past this, the parser's refusal stands.
 */
const verdictBytes = 8 * 1024 * 1024;

/** Reads and drops what is left of `stream`, at most `limit` bytes; answers whether it ended within them. */
function drain(stream: Readable, limit: number): Promise<boolean> {
  if (stream.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    let bytes = 0;
    const settle = (ended: boolean) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('close', onClose);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) settle(false);
    };
    const onEnd = () => settle(true);
    const onClose = () => settle(false);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('close', onClose);
    stream.resume();
  });
}

/** The size of each of the two buffers `feedStaged` gathers compressed bytes in. */
const stagingBytes = 1024 * 1024;

/**
 * Writes `input` to `gunzip` in runs of `stagingBytes`, gathered in two buffers used in turn (one fills while zlib
 * inflates the other; a buffer is reused once zlib's write callback says it consumed it). The network's 64 KiB reads
 * otherwise made one thread-pool round trip each and output chunks of ~80 KiB; whole runs make ~16 times fewer round
 * trips and fill zlib's 256 KiB output chunks, so the parser, the hash and the file writes see a quarter of the hops.
 * The copy allocates nothing: the alternative, concatenating, doubled the garbage (and the major collections it
 * triggers). Back-pressure: the input pauses while both buffers are with zlib.
 */
function feedStaged(input: Readable, gunzip: Transform): void {
  const free: Buffer[] = [Buffer.allocUnsafeSlow(stagingBytes), Buffer.allocUnsafeSlow(stagingBytes)];
  let current: Buffer | undefined;
  let filled = 0;
  let waiting: Buffer | undefined;
  let ended = false;
  let finished = false;
  const send = () => {
    const buffer = current as Buffer;
    const length = filled;
    current = undefined;
    filled = 0;
    gunzip.write(buffer.subarray(0, length), (error) => {
      if (error) return;
      free.push(buffer);
      if (waiting) {
        const rest = waiting;
        waiting = undefined;
        put(rest);
        if (waiting) return;
        if (!ended) input.resume();
      }
      if (ended) finish();
    });
  };
  const put = (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length) {
      if (!current) {
        current = free.pop();
        if (!current) {
          waiting = chunk.subarray(at);
          input.pause();
          return;
        }
      }
      const copied = chunk.copy(current, filled, at);
      filled += copied;
      at += copied;
      if (filled === current.length) send();
    }
  };
  const finish = () => {
    if (finished || waiting) return;
    finished = true;
    if (filled > 0) send();
    gunzip.end();
  };
  input.on('data', put);
  input.once('end', () => {
    ended = true;
    finish();
  });
}

function tarHeader(entry: ReadEntry): EntryHeader {
  const common = { path: entry.path, rawType: entry.type, mode: entry.mode ?? 0o644 };
  switch (entry.type) {
    case 'File':
    case 'OldFile':
    case 'ContiguousFile':
      return { ...common, type: 'file' };
    case 'Directory':
      return { ...common, type: 'directory' };
    case 'SymbolicLink':
      return { ...common, type: 'symlink', linkTarget: entry.linkpath ?? '' };
    case 'Link':
      return { ...common, type: 'hardlink', linkTarget: entry.linkpath ?? '' };
    default:
      return { ...common, type: 'other' };
  }
}

/** Compressed archives up to this size are inflated by the tar parser, on the main thread. */
const smallArchiveBytes = 64 * 1024;
/**
 * The parser inflates each write at once; slices this small keep what one write can expand to (deflate's ratio is at
 * most ~1032) to a few MiB before the byte cap and back-pressure see it.
 */
const parserSliceBytes = 4 * 1024;

/**
 * Feeds the decompressed stream to the tar parser one tick after each chunk arrives, instead of `pipe`, which parses,
 * hashes and starts the file writes inside zlib's callback, before zlib may inflate the next chunk on the thread pool:
 * inflating and the main thread's work then alternate instead of overlapping (the main thread sat idle a third of an
 * install, bench/install's profile). Back-pressure as `pipe`: the stream pauses while the parser says it is full.
 * Returns a function that stops the relay.
 */
function relay(stream: Readable, parser: Parser, sliceBytes?: number): () => void {
  const queue: Buffer[] = [];
  let scheduled = false;
  let ended = false;
  let blocked = false;
  let stopped = false;
  const onDrain = () => {
    blocked = false;
    stream.resume();
    feed();
  };
  const feed = () => {
    scheduled = false;
    while (queue.length > 0 && !blocked && !stopped) {
      if (!parser.write(queue.shift() as Buffer)) {
        blocked = true;
        stream.pause();
        parser.once('drain', onDrain);
      }
    }
    if (ended && queue.length === 0 && !blocked && !stopped) {
      ended = false;
      parser.end();
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    process.nextTick(feed);
  };
  const onData = (chunk: Buffer) => {
    if (sliceBytes === undefined || chunk.length <= sliceBytes) queue.push(chunk);
    else for (let at = 0; at < chunk.length; at += sliceBytes) queue.push(chunk.subarray(at, at + sliceBytes));
    schedule();
  };
  const onEnd = () => {
    ended = true;
    schedule();
  };
  stream.on('data', onData);
  stream.once('end', onEnd);
  return () => {
    stopped = true;
    queue.length = 0;
    stream.off('data', onData);
    stream.off('end', onEnd);
    parser.off('drain', onDrain);
  };
}

/**
 * Extracts a tar-family archive from a stream (a file, or a download in flight). `compressedBytes`, when known (a
 * Content-Length, a file size), only tunes buffer sizes; limits are enforced on the bytes as they come.
 */
export async function extractTarStream(input: Readable, type: ArchiveType, writer: TreeWriter, compressedBytes?: number): Promise<void> {
  const { stream, done, stop, inParser = false, filter = false } = decompress(input, type, compressedBytes);
  // The compressed bytes are garbage too; the decompressed ones are the writer's to count (TreeWriter paces its members).
  if (stream !== input) {
    const pace = youngCollector();
    input.on('data', (chunk: Buffer) => pace(chunk.length));
  }
  // Only the compression named by the type: never brotli or zstd guessed from the bytes. When the parser inflates,
  // the byte cap (TreeWriter) guards against bombs, not tar's ratio limit, which could refuse a legitimate module of
  // highly repetitive files.
  const parser = new Parser({ strict: true, brotli: false, zstd: false, ...(inParser ? { maxDecompressionRatio: Number.POSITIVE_INFINITY } : {}) });
  let chain: Promise<void> = Promise.resolve();
  let failure: unknown;
  // Set while the tar parser's refusal waits for the filter's verdict: the archive can no longer succeed.
  let hearing = false;
  // The member the writer is busy with: stopped on a failure, so its write ends instead of waiting for bytes that
  // will never come (and its file is closed).
  let current: ReadEntry | undefined;
  let detach = () => {};
  await new Promise<void>((resolve, reject) => {
    // After a failure nothing more is written: members already read are dropped, the one in progress is stopped, and
    // the promise rejects only once the writer is idle, so a caller removing the folder never races a late write.
    const fail = (error: unknown) => {
      if (failure !== undefined) return;
      failure = error;
      detach();
      stop();
      stream.destroy();
      current?.destroy(error instanceof Error ? error : new Error(String(error)));
      const rejectNow = () => reject(error);
      void chain.then(() => writer.landed()).then(rejectNow, rejectNow);
    };
    parser.on('entry', (entry: ReadEntry) => {
      // Errors reach the writer through destroy(); this listener only keeps an unwatched member from throwing.
      entry.on('error', () => undefined);
      if (failure !== undefined) {
        entry.resume();
        return;
      }
      const header = tarHeader(entry);
      chain = chain
        .then(() => {
          if (failure !== undefined) {
            entry.resume();
            return;
          }
          current = entry;
          return writer.add(header, header.type === 'file' ? (entry as unknown as Readable) : undefined);
        })
        .then(() => {
          current = undefined;
          if (header.type !== 'file') entry.resume();
        })
        .catch((error) => {
          current = undefined;
          entry.resume();
          fail(error);
        });
    });
    parser.on('error', (error: Error) => {
      const unreadable = new SourceRefusedError(`the ${type} archive is not a readable tar: ${error.message}`);
      if (!filter) return fail(unreadable);
      // Corrupt input makes a filter write garbage or nothing, then fail: its message comes first whatever the timing
      // (done.catch below), the parser's only once the filter ended well or wrote `verdictBytes` more.
      if (hearing || failure !== undefined) return;
      hearing = true;
      detach();
      void drain(stream, verdictBytes)
        .then((ended) => (ended ? done : undefined))
        .then(() => fail(unreadable), fail);
    });
    parser.on('end', () => {
      chain
        .then(() => writer.landed())
        .then(() => done)
        .then(() => {
          if (!hearing) resolve();
        }, fail);
    });
    stream.on('error', (error: Error) => {
      fail(error instanceof GantryError ? error : new SourceRefusedError(`the ${type} archive is corrupt: ${error.message}`));
    });
    done.catch(fail);
    detach = relay(stream, parser, inParser ? parserSliceBytes : undefined);
  });
}

const S_IFMT = 0o170000;
const zipTypes: Record<number, EntryHeader['type']> = { 0o100000: 'file', 0o040000: 'directory', 0o120000: 'symlink' };
const zipTypeNames: Record<number, string> = { 0o010000: 'FIFO', 0o020000: 'CharacterDevice', 0o060000: 'BlockDevice', 0o140000: 'Socket' };

function zipHeader(entry: yauzl.Entry): EntryHeader {
  const fromUnix = entry.versionMadeBy >> 8 === 3;
  const attributes = fromUnix ? entry.externalFileAttributes >>> 16 : 0;
  const format = attributes & S_IFMT;
  const isDirectoryName = entry.fileName.endsWith('/');
  const mode = attributes & 0o7777;
  if (format === 0)
    return { path: entry.fileName, type: isDirectoryName ? 'directory' : 'file', rawType: isDirectoryName ? 'Directory' : 'File', mode: mode || 0o644 };
  const type = zipTypes[format] ?? 'other';
  return { path: entry.fileName, type, rawType: zipTypeNames[format] ?? (type === 'other' ? `type 0${format.toString(8)}` : type), mode };
}

async function openZip(file: string): Promise<yauzl.ZipFile> {
  const { open } = (await import('yauzl')).default; // loaded for zip archives only: most modules are tarballs
  return new Promise((resolve, reject) => {
    open(file, { lazyEntries: true, autoClose: true, validateEntrySizes: true, decodeStrings: true }, (error, zip) => {
      if (error || !zip) reject(new SourceRefusedError(`the zip archive is not readable: ${error?.message ?? 'unknown error'}`));
      else resolve(zip);
    });
  });
}

function openZipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error || !stream) return reject(new SourceRefusedError(`the zip entry "${entry.fileName}" is not readable: ${error?.message ?? 'unknown error'}`));
      // A small member is decompressed while the writer is still opening its file, and yauzl's size check can fail it
      // before anyone listens (an uncaught 'error'): this listener keeps the process alive, and the writer reads such
      // an error from `stream.errored` when it starts (tree-writer.ts), or hears it like any later one.
      stream.on('error', () => undefined);
      resolve(stream);
    });
  });
}

async function readSmall(stream: Readable, limit: number, name: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new SourceRefusedError(`the symbolic link "${name}" has a target longer than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function extractZip(file: string, writer: TreeWriter, limits: ExtractLimits): Promise<void> {
  const zip = await openZip(file);
  if (zip.entryCount > limits.maxFiles) {
    zip.close();
    throw new SourceRefusedError(`the archive has more than ${limits.maxFiles} entries`, 'raise the entry cap (maxFiles) if this module really is that large');
  }
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      zip.close();
      const message = error instanceof Error ? error.message : String(error);
      const refusal = error instanceof GantryError ? error : new SourceRefusedError(`the zip archive was refused: ${message}`);
      // Once no file is still being written: a caller removing the folder never races a late write.
      const rejectNow = () => reject(refusal);
      void writer.landed().then(rejectNow, rejectNow);
    };
    zip.on('error', fail);
    zip.on('end', () => {
      if (!settled)
        writer.landed().then(() => {
          if (settled) return;
          settled = true;
          resolve();
        }, fail);
    });
    zip.on('entry', (entry: yauzl.Entry) => {
      const header = zipHeader(entry);
      const run = async () => {
        if (header.type === 'file') {
          await writer.add(header, await openZipEntry(zip, entry));
        } else if (header.type === 'symlink') {
          const target = await readSmall(await openZipEntry(zip, entry), 4096, entry.fileName);
          await writer.add({ ...header, linkTarget: target });
        } else {
          await writer.add(header);
        }
      };
      run().then(() => zip.readEntry(), fail);
    });
    zip.readEntry();
  });
}

export interface Extracted {
  bytes: number;
  entries: number;
  /** `h1:` hash of the extracted tree. */
  hash: string;
  writer: TreeWriter;
}

/**
 * Extracts an archive file into `root` (an empty folder) under the hardening rules; with `hashOnly`, writes nothing and
 * only computes the tree's hash.
 */
export async function extractArchive(file: string, type: ArchiveType, root: string, limits: ExtractLimits, hashOnly = false): Promise<Extracted> {
  expectString('extractArchive', 'file', file, 'the path of an archive');
  if (!archiveTypes.includes(type)) expectString('extractArchive', 'type', null, `one of ${archiveTypes.join(', ')}`);
  expectString('extractArchive', 'root', root, 'the path of an empty folder');
  limits = resolveLimits(limits); // spreading null, undefined or a primitive adds nothing: the defaults stand
  await stat(file).catch((error: unknown) => {
    throw unreadablePath(error, file, 'the archive');
  });
  const writer = new TreeWriter(root, limits, hashOnly);
  if (type === 'zip') await extractZip(file, writer, limits);
  else await extractTarStream(createReadStream(file), type, writer);
  return { bytes: writer.totalBytes, entries: writer.totalEntries, hash: writer.seal(), writer };
}
