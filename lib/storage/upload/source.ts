/**
 * What an upload sends: a file on disk (read a range at a time, never whole unless it is small), a Buffer, or a
 * Readable of a size the caller states (read a chunk at a time; the chunk in flight is kept so that it can be sent
 * again after a break). And the cheap identity of a file that a session file records, so that a resumed upload
 * knows the file is still the one it began with.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { UsageError } from '../../errors.js';
import { ProtocolError } from '../../http/index.js';

/**
 * How much of a file is read per step when it is streamed (`whole`, `range`): 64 KiB, Node's own default. Each step's
 * buffer is new; at this size the allocator hands back memory it already has, while 128 KiB and above are mapped afresh
 * for every read (glibc's mmap threshold) and each of their pages faults in — a 256 KiB step cost a page fault per 4 KiB
 * sent and twice the CPU of the upload (measured with perf stat: 64 k faults for 256 MiB against 23 k).
 */
const READ_STEP = 64 * 1024;
/**
 * What `chunks` reads per step into each of its two buffers, which it refills rather than allocating one per read: a
 * new buffer per 64 KiB, held a little longer by an upload's pipeline than by a bare pipe, reached V8's old space and
 * was freed only by full collections (25 per 512 MiB), and with the allocator's work and page faults took half the
 * upload's CPU. Two buffers of 1 MiB (2 MiB of memory): 0.6 s of CPU per 512 MiB sent (256 KiB: 0.8–0.9 s), against
 * 1.5–2.4 s for one streamed `node:http` POST of the file and 4.2–5.3 s for the stream pipeline before (docs/performance.md).
 */
const SEND_STEP = 1024 * 1024;

export interface UploadSource {
  readonly kind: 'path' | 'buffer' | 'stream';
  readonly size: number;
  /** For log lines: the file's name, or a word for a Buffer or stream. */
  readonly label: string;
  /** The absolute path, for a file. */
  readonly path?: string;
  /** Bytes `start`..`end` (inclusive) as a stream; a stream source can only go forward past a range it has confirmed. */
  range(start: number, end: number): Promise<Readable>;
  /**
   * The same bytes as `range`, for sending as an async iterable body (lib/http writes each chunk before it asks for the
   * next): a file's chunks are views of buffers that are refilled, so a chunk is valid only until the next is asked for.
   */
  chunks(start: number, end: number): AsyncGenerator<Buffer>;
  /** The whole content in memory (only for sizes up to the simple-upload limit). */
  readAll(): Promise<Buffer>;
  /** The whole content as one stream, checked to be exactly `size` bytes. */
  whole(): Readable;
  /** Releases a stream source that was not read to its end. */
  close(): void;
}

/** Passes a stream on, failing it when it carries more or fewer bytes than it should. */
export function exactly(size: number, what: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > size) callback(new UsageError(`${what} is longer than the ${size} bytes it was said to be`));
      else callback(null, chunk);
    },
    flush(callback) {
      callback(seen === size ? null : new UsageError(`${what} ended after ${seen} of the ${size} bytes it was said to be`));
    },
  });
}

/**
 * Bytes `start`..`end` of a file, read into two buffers in turn: while one is being sent, the next step is read into
 * the other (the one the sender was done with when it asked for this chunk).
 */
async function* fileChunks(path: string, start: number, end: number, what: string): AsyncGenerator<Buffer> {
  const size = end - start + 1;
  const buffers = [Buffer.allocUnsafeSlow(Math.min(SEND_STEP, size)), Buffer.allocUnsafeSlow(Math.min(SEND_STEP, size))];
  const handle = await open(path, 'r');
  const readAt = (buffer: Buffer, at: number) => {
    const read = handle.read(buffer, 0, Math.min(buffer.length, size - at), start + at).then(({ bytesRead }) => bytesRead);
    // Awaited only when the sender asks for the chunk: a failure until then is not an unhandled rejection.
    read.catch(() => undefined);
    return read;
  };
  let next: Promise<number> | undefined = readAt(buffers[0]!, 0);
  try {
    for (let at = 0, turn = 0; at < size; turn ^= 1) {
      const bytesRead = await next!;
      next = undefined;
      // A file that shrinks while it is sent would leave the request short of its Content-Length, waiting forever.
      if (bytesRead === 0) throw new UsageError(`${what} ended after ${at} of the ${size} bytes it was said to be`);
      const chunk = buffers[turn]!.subarray(0, bytesRead);
      at += bytesRead;
      if (at < size) next = readAt(buffers[turn ^ 1]!, at);
      yield chunk;
    }
  } finally {
    // A read still under way when the request ended must finish before its file is closed.
    await next?.catch(() => undefined);
    await handle.close();
  }
}

/** A Readable's chunks as Buffers (a stream source may give strings). */
async function* chunksOf(stream: Readable): AsyncGenerator<Buffer> {
  for await (const chunk of stream) yield typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
}

async function fileSource(where: string, path: string): Promise<UploadSource> {
  const absolute = resolve(path);
  const info = await stat(absolute).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`${where}: the source ${absolute} cannot be read (${error.code ?? error.message})`, { hint: 'give the path of a regular file' });
  });
  if (!info.isFile())
    throw new UsageError(`${where}: the source ${absolute} is not a regular file`, {
      hint: 'give the path of a regular file; a stream of known size can be given as { source: stream, size }',
    });
  const label = basename(absolute);
  return {
    kind: 'path',
    size: info.size,
    label,
    path: absolute,
    // A file that shrinks while it is sent would leave the request short of its Content-Length, waiting forever.
    range: async (start, end) => {
      const file = createReadStream(absolute, { start, end, highWaterMark: READ_STEP });
      const check = exactly(end - start + 1, `bytes ${start}-${end} of the file ${label} (it changed while being sent)`);
      file.once('error', (error) => check.destroy(error));
      return file.pipe(check);
    },
    chunks: (start, end) => fileChunks(absolute, start, end, `bytes ${start}-${end} of the file ${label} (it changed while being sent)`),
    readAll: () => readFile(absolute),
    whole: () => createReadStream(absolute, { highWaterMark: READ_STEP }).pipe(exactly(info.size, `the file ${label}`)),
    close: () => undefined,
  };
}

function bufferSource(buffer: Buffer): UploadSource {
  return {
    kind: 'buffer',
    size: buffer.length,
    label: 'the content',
    range: async (start, end) => Readable.from([buffer.subarray(start, end + 1)], { objectMode: false }),
    chunks: async function* (start, end) {
      yield buffer.subarray(start, end + 1);
    },
    readAll: async () => buffer,
    whole: () => Readable.from([buffer], { objectMode: false }),
    close: () => undefined,
  };
}

/**
 * A Readable read forward a range at a time. The bytes of the last range stay in memory (one chunk) so that the range
 * can be sent again; a range starting before them cannot be served: a stream cannot rewind.
 */
function streamSource(stream: Readable, size: number): UploadSource {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  let windowStart = 0;
  let window: Buffer = Buffer.alloc(0);
  let read = 0;
  let used = false;
  const what = 'the source stream';
  const drop = (to: number) => {
    const n = Math.min(Math.max(0, to - windowStart), window.length);
    window = window.subarray(n);
    windowStart += n;
  };
  return {
    kind: 'stream',
    size,
    label: what,
    async range(start, end) {
      used = true;
      if (start < windowStart) {
        throw new ProtocolError(
          `the service asked for byte ${start} again, but the source is a stream already read to byte ${windowStart}`,
          'upload from a file, which can be read again from any place',
        );
      }
      drop(start);
      const pieces: Buffer[] = [window];
      let have = windowStart + window.length;
      while (have <= end) {
        const next = await iterator.next();
        if (next.done) throw new UsageError(`${what} ended after ${read} of the ${size} bytes it was said to be`);
        const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
        read += chunk.length;
        if (read > size) throw new UsageError(`${what} is longer than the ${size} bytes it was said to be`);
        pieces.push(chunk);
        have += chunk.length;
      }
      window = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
      drop(start);
      return Readable.from([window.subarray(0, end - start + 1)], { objectMode: false });
    },
    async *chunks(start, end) {
      yield* chunksOf(await this.range(start, end));
    },
    async readAll() {
      used = true;
      const pieces: Buffer[] = [];
      for await (const chunk of { [Symbol.asyncIterator]: () => iterator }) pieces.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      const all = Buffer.concat(pieces);
      if (all.length !== size) throw new UsageError(`${what} carried ${all.length} bytes, not the ${size} it was said to be`);
      return all;
    },
    whole() {
      if (used) throw new ProtocolError(`${what} was already read`);
      used = true;
      return stream.pipe(exactly(size, what));
    },
    close: () => {
      if (!stream.destroyed) stream.destroy();
    },
  };
}

/** The source of `upload()`: a path, a Buffer, or a Readable with `size`. */
export async function openSource(where: string, source: unknown, size: unknown): Promise<UploadSource> {
  if (typeof source === 'string') {
    if (source.trim() === '') throw new UsageError(`${where}: options.source is an empty path`);
    if (size !== undefined) throw new UsageError(`${where}: options.size is for a stream source; a file's size is read from the file`);
    return fileSource(where, source);
  }
  if (Buffer.isBuffer(source) || source instanceof Uint8Array) {
    if (size !== undefined && size !== source.length)
      throw new UsageError(`${where}: options.size (${String(size)}) is not the Buffer's length (${source.length})`);
    return bufferSource(Buffer.isBuffer(source) ? source : Buffer.from(source.buffer, source.byteOffset, source.length));
  }
  if (source instanceof Readable) {
    if (!Number.isSafeInteger(size) || (size as number) < 0) {
      throw new UsageError(`${where}: a stream source needs options.size, its length in bytes`, {
        hint: 'the storage API is told the length before the bytes; for a file give its path instead',
      });
    }
    return streamSource(source, size as number);
  }
  throw new UsageError(`${where}: options.source takes a file path, a Buffer, or a Readable with options.size`);
}

/** What a session file records of its source: enough to notice a changed file without reading it whole. */
export interface SourceIdentity {
  size: number;
  mtimeMs: number;
  ino: number;
  /** sha256 of 64 KiB at the start, the middle and the end of the file. */
  sample: string;
}

const SAMPLE = 64 * 1024;

export async function identityOf(path: string): Promise<SourceIdentity> {
  const handle = await open(path, 'r');
  try {
    const info = await handle.stat();
    const hash = createHash('sha256');
    const starts = [...new Set([0, Math.max(0, Math.floor(info.size / 2) - SAMPLE / 2), Math.max(0, info.size - SAMPLE)])];
    const buffer = Buffer.alloc(SAMPLE);
    for (const start of starts) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(SAMPLE, info.size - start), start);
      hash.update(buffer.subarray(0, bytesRead));
    }
    return { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino, sample: hash.digest('hex') };
  } finally {
    await handle.close();
  }
}

/** The first way `now` differs from `then`, in words; undefined when they agree. */
export function identityChange(then: SourceIdentity, now: SourceIdentity): string | undefined {
  if (then.size !== now.size) return `its size is ${now.size} bytes, not ${then.size}`;
  // Below a millisecond, times do not survive every copy tool or file system; the sample catches such edits anyway.
  if (Math.abs(then.mtimeMs - now.mtimeMs) >= 1)
    return `it was modified at ${new Date(now.mtimeMs).toISOString()}, after ${new Date(then.mtimeMs).toISOString()}`;
  if (then.ino !== now.ino) return 'it is another file (its inode changed: replaced or moved)';
  if (then.sample !== now.sample) return 'its content changed';
  return undefined;
}
