/**
 * The md5 of a file, computed on a worker thread while the upload sends the same file from the main thread. md5 costs
 * about 1.6 s of CPU per GiB; on the sending thread it took a large upload to 0.55 of a plain PUT's speed
 * (bench/storage). The worker is a few lines of CommonJS given as text (no module file to find from dist/ or from
 * sources run by tsx) with a small heap: it reads 1 MiB at a time into one buffer and allocates nothing else, so it
 * adds about 7 MB to the process, not the ~40 MB of a worker that loads modules and streams.
 */
import { Worker } from 'node:worker_threads';

/**
 * The hashing thread's niceness: 10 gives it about a tenth of a core the upload wants, so it never starves even on a
 * busy machine; it took bench/storage from a median 0.83 to 0.92 and 0.93 of a raw upload.
 */
const MD5_NICENESS = 10;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { createHash } = require('node:crypto');
try {
  // Linux lets a thread lower its own priority (setpriority on its thread id): the hash then takes the CPU the upload
  // and the service leave idle, rather than slowing the sending thread, and catches up while the service, having
  // received the last byte, computes its own md5.
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  if (tid > 0) require('node:os').setPriority(tid, workerData.niceness);
} catch {}
try {
  const fd = openSync(workerData.path, 'r');
  try {
    const buffer = Buffer.allocUnsafeSlow(1 << 20);
    const hash = createHash('md5');
    let size = 0;
    for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0; size += n) hash.update(buffer.subarray(0, n));
    parentPort.postMessage({ md5: hash.digest('hex'), size });
  } finally {
    closeSync(fd);
  }
} catch (error) {
  parentPort.postMessage({ error: String(error && error.code || error && error.message || error) });
}
`;

export interface FileDigest {
  md5: string;
  /** The bytes the worker read: differs from the upload's size when the file changed length while it was sent. */
  size: number;
}

export interface PendingMd5 {
  /** Settles once the worker has read the whole file; rejects when it could not (the reason in words). */
  readonly result: Promise<FileDigest>;
  /** Stops the worker (an upload that failed or was aborted has no use for the digest). */
  stop(): void;
}

/** Starts hashing `path` on a worker thread. */
export function md5OfFile(path: string): PendingMd5 {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { path, niceness: MD5_NICENESS },
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    stdout: false,
    stderr: false,
  });
  let settled = false;
  const result = new Promise<FileDigest>((resolve, reject) => {
    worker.once('message', (message: { md5?: string; size?: number; error?: string }) => {
      settled = true;
      if (typeof message.md5 === 'string' && typeof message.size === 'number') resolve({ md5: message.md5, size: message.size });
      else reject(new Error(message.error ?? 'the md5 worker gave no digest'));
      void worker.terminate();
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the md5 worker stopped (exit ${code}) before it read the whole file`));
    });
  });
  // Awaited only when the upload completes: a failed upload never looks at it.
  result.catch(() => undefined);
  return {
    result,
    stop: () => {
      settled = true;
      void worker.terminate();
    },
  };
}
