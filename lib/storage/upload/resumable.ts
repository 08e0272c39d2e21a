/**
 * Drive's resumable upload protocol. The session: `POST /upload/storage/v2/files?uploadType=resumable` (or `PUT
 * …/files/{fileId}` for files.update) with the metadata as JSON and `X-Upload-Content-Type`/`-Length`; its URI comes
 * back in `Location`. The bytes: `PUT <session>` one chunk at a time with `Content-Range: bytes a-b/total`, each
 * chunk a range of the source streamed from disk; 308 with `Range: bytes=0-n` means "go on from n+1", 200/201 carries
 * the file. After a broken connection or a 5xx: wait (backoff), ask `Content-Range: bytes *\/total` with an empty
 * body and go on from what the service has (no Range: nothing). A 404 or 410 on the session: it expired, so a new one
 * starts from byte 0. Any other 4xx is the service's "no" (a StorageError).
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform } from 'node:stream';
import { CheckFailedError } from '../../errors.js';
import { noRetry, ProtocolError, type HttpResponse } from '../../http/index.js';
import type { Logger } from '../../log.js';
import { StorageError, toStorageError } from '../errors.js';
import type { StorageParams, StorageTransport } from '../transport.js';
import { describeFailure, FailureStreak, isTransient, wait, type ResolvedRetry } from './retry.js';
import { md5OfFile, type PendingMd5 } from './file-md5.js';
import { protectSessionUri, removeSessionFile, SESSION_FILE_KIND, writeSessionFile } from './session-file.js';
import type { SourceIdentity, UploadSource } from './source.js';
import type { UploadedFile, UploadProgress } from './types.js';

/** Chunks are multiples of this (Drive's rule for every chunk but the last). */
export const CHUNK_UNIT = 256 * 1024;
/**
 * 32 MiB: a quarter of 8 MiB's round trips, never slower on loopback (bench/storage, docs/performance.md). Memory does
 * not grow with it — a chunk is streamed from disk — only what a cut can send again.
 */
export const DEFAULT_CHUNK_SIZE = 32 * 1024 * 1024;
/** Sessions that expire this many times during one upload make it give up rather than start over forever. */
const MAX_RESTARTS = 3;

export interface ResumableJob {
  transport: StorageTransport;
  source: UploadSource;
  contentType: string;
  chunkSize: number;
  metadata?: Record<string, unknown>;
  fileId?: string;
  params?: StorageParams;
  ifMatch?: string;
  /** Absolute path; with `identity`, the file source's. */
  sessionFile?: string;
  identity?: SourceIdentity;
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
  logger: Logger;
  retry: ResolvedRetry;
  verifyMd5: boolean;
}

/** Where the service's answer to a chunk or status query leaves the upload. */
type Outcome = { file: UploadedFile } | { received: number };

/** A Transform that shows every chunk passing through to `see`. */
export function tap(see: (chunk: Buffer) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      see(chunk);
      callback(null, chunk);
    },
  });
}

/**
 * The md5 of the bytes the service has confirmed, kept in step with it, for a Buffer or stream source (a file is
 * hashed whole on a worker thread instead: file-md5.ts): a chunk is hashed into a copy while it is sent, and the copy
 * is kept when the service confirms the whole chunk; otherwise the confirmed bytes are read again from the source (at
 * most one chunk).
 */
class Md5Tracker {
  private hash: Hash = createHash('md5');
  at = 0;
  constructor(private readonly source: UploadSource) {}

  reset(): void {
    this.hash = createHash('md5');
    this.at = 0;
  }

  fork(start: number): Hash | undefined {
    return start === this.at ? this.hash.copy() : undefined;
  }

  adopt(fork: Hash, at: number): void {
    this.hash = fork;
    this.at = at;
  }

  async catchUp(to: number): Promise<void> {
    if (to <= this.at) return;
    const stream = await this.source.range(this.at, to - 1);
    for await (const chunk of stream) this.hash.update(chunk as Buffer);
    this.at = to;
  }

  digest(): string {
    return this.hash.copy().digest('hex');
  }
}

function uploadPath(fileId: string | undefined): string {
  return fileId === undefined ? '/upload/storage/v2/files' : `/upload/storage/v2/files/${encodeURIComponent(fileId)}`;
}

/** Starts a session and returns its URI (registered as a secret before anything can log it). */
export async function startSession(job: ResumableJob): Promise<string> {
  const method = job.fileId === undefined ? 'POST' : 'PUT';
  const path = uploadPath(job.fileId);
  // Starting a session twice leaves an unused session, never a second file: safe to send again after a 5xx.
  const response = await job.transport.request<string>({
    method,
    path,
    searchParams: { ...job.params, uploadType: 'resumable' },
    json: job.metadata ?? {},
    headers: {
      'x-upload-content-type': job.contentType,
      'x-upload-content-length': String(job.source.size),
      ...(job.ifMatch !== undefined ? { 'if-match': job.ifMatch } : {}),
    },
    idempotent: true,
    responseType: 'text',
    ...(job.signal ? { signal: job.signal } : {}),
  });
  const location = response.headers.location;
  if (typeof location !== 'string' || location === '') {
    throw new ProtocolError(
      `${method} ${path}?uploadType=resumable answered ${response.status} without a Location header: the service started no upload session`,
    );
  }
  const uri = new URL(location, `${job.transport.baseUrl}/`);
  protectSessionUri(uri.toString());
  if (uri.protocol !== 'https:' && uri.protocol !== 'http:') throw new ProtocolError(`the upload session URI is not http(s) (${uri.protocol})`);
  if (uri.username || uri.password) throw new ProtocolError('the upload session URI carries user credentials');
  job.logger.info(`upload of ${job.source.label}: resumable session started (${job.source.size} bytes, chunks of ${job.chunkSize})`);
  if (job.sessionFile && job.identity && job.source.path) {
    await writeSessionFile(job.sessionFile, {
      kind: SESSION_FILE_KIND,
      version: 1,
      sessionUri: uri.toString(),
      path: job.source.path,
      ...job.identity,
      chunkSize: job.chunkSize,
      createdAt: new Date().toISOString(),
      contentType: job.contentType,
      ...(job.fileId !== undefined ? { fileId: job.fileId } : {}),
      ...(job.metadata !== undefined ? { metadata: job.metadata } : {}),
      ...(job.params !== undefined ? { params: job.params as Record<string, unknown> } : {}),
      ...(job.ifMatch !== undefined ? { ifMatch: job.ifMatch } : {}),
    });
  }
  return uri.toString();
}

/** `Range: bytes=0-n` → n + 1; none → 0. */
function receivedOf(response: HttpResponse<string>): number {
  const header = response.headers.range;
  if (header === undefined) return 0;
  const m = /^bytes=0-(\d{1,15})$/.exec(String(header).trim());
  if (!m) throw new ProtocolError(`the upload session answered 308 with a Range header that is not bytes=0-n: ${String(header).slice(0, 60)}`);
  return Number(m[1]) + 1;
}

function outcomeOf(response: HttpResponse<string>): Outcome {
  if (response.status === 308) return { received: receivedOf(response) };
  let file: unknown;
  try {
    file = JSON.parse(response.body);
  } catch {
    throw new ProtocolError(`the upload session answered ${response.status} with a body that is not JSON: the file resource was expected`);
  }
  if (file === null) return { file: {} as UploadedFile };
  if (typeof file !== 'object' || Array.isArray(file)) {
    throw new ProtocolError(
      `the upload session answered ${response.status} with JSON that is not an object (${Array.isArray(file) ? 'a list' : `a ${typeof file}`}): the file resource was expected`,
    );
  }
  // A `fields` mask without id is the caller's choice: the file is still whatever came back.
  return { file: file as UploadedFile };
}

/** 404 or 410 on a session request: the session is gone (expired, or never known to this service). */
function expired(error: unknown): error is StorageError {
  return error instanceof StorageError && (error.status === 404 || error.status === 410);
}

/**
 * Sends the bytes of a session until the service has them all, and returns the file. `resume`: the session may
 * already hold bytes (a session file's), so the first request is a status query.
 */
export async function runSession(job: ResumableJob, firstUri: string, resume: boolean): Promise<UploadedFile> {
  const { transport, source, signal, logger, retry } = job;
  const total = source.size;
  const label = source.label;
  let uri = firstUri;
  // A file is hashed whole beside the upload, whatever the service asks to be sent again; the service's md5 is of
  // everything it holds, so the two compare however many cuts and restarts came between.
  const fileMd5: PendingMd5 | undefined = job.verifyMd5 && source.path !== undefined ? md5OfFile(source.path) : undefined;
  const tracker = job.verifyMd5 && !fileMd5 ? new Md5Tracker(source) : undefined;
  let verify = job.verifyMd5;
  let reported = -1;
  // A callback that throws ends the upload with its error (after the request in flight), never as a network failure.
  const callback: { failed: boolean; error?: unknown } = { failed: false };
  const progress = (sent: number) => {
    if (!job.onProgress || callback.failed || Math.min(sent, total) === reported) return;
    reported = Math.min(sent, total);
    try {
      job.onProgress({ sent: reported, total });
    } catch (error) {
      Object.assign(callback, { failed: true, error });
    }
  };

  const call = async (headers: Record<string, string>, body?: AsyncIterable<Buffer>): Promise<HttpResponse<string>> => {
    const options = {
      method: 'PUT',
      headers,
      body: body ?? '',
      accept: [200, 201, 308],
      followRedirects: false,
      retry: noRetry,
      responseType: 'text' as const,
      ...(signal ? { signal } : {}),
    };
    // The session URI authorises the upload by itself: the bearer token goes along only to the service's own origin.
    if (new URL(uri).origin === new URL(transport.baseUrl).origin) return transport.request<string>({ path: uri, ...options });
    try {
      return await transport.http.request<string>({ url: uri, ...options });
    } catch (error) {
      throw toStorageError(error);
    }
  };

  const query = async (): Promise<Outcome> => outcomeOf(await call({ 'content-range': `bytes */${total}`, 'content-length': '0' }));

  const sendChunk = async (offset: number): Promise<{ outcome: Outcome; end: number; fork: Hash | undefined }> => {
    const end = Math.min(offset + job.chunkSize, total) - 1;
    const fork = tracker?.fork(offset);
    let inflight = 0;
    // An async iterable, not a stream pipeline: the core writes each chunk before it asks for the next, so a file's
    // chunks come from two buffers refilled in turn (source.ts) and nothing is allocated per chunk.
    const body = (async function* () {
      for await (const chunk of source.chunks(offset, end)) {
        fork?.update(chunk);
        inflight += chunk.length;
        progress(offset + inflight);
        yield chunk;
      }
    })();
    try {
      const response = await call({ 'content-range': `bytes ${offset}-${end}/${total}`, 'content-length': String(end - offset + 1) }, body);
      return { outcome: outcomeOf(response), end, fork };
    } finally {
      // A request that ended before its body did leaves the iterator waiting: this closes the file.
      void body.return(undefined).catch(() => undefined);
    }
  };

  try {
    let offset = 0;
    const streak = new FailureStreak(retry);
    let restarts = 0;
    let needStatus = resume || total === 0;
    for (;;) {
      signal?.throwIfAborted();
      if (callback.failed) throw callback.error;
      let outcome: Outcome;
      let queried = false;
      try {
        if (needStatus || offset >= total) {
          queried = true;
          outcome = await query();
          needStatus = false;
          if ('received' in outcome && outcome.received >= total) {
            throw new ProtocolError(`the upload session holds all ${total} bytes but did not answer with the file`);
          }
        } else {
          const sent = await sendChunk(offset);
          outcome = sent.outcome;
          if (sent.fork && tracker && ('file' in outcome || outcome.received === sent.end + 1)) tracker.adopt(sent.fork, sent.end + 1);
        }
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (callback.failed) throw callback.error;
        if (expired(error)) {
          restarts += 1;
          if (restarts > MAX_RESTARTS) throw error;
          logger.warn(`upload of ${label}: the upload session expired (the service answered ${error.status} to it); starting a new session from byte 0`);
          uri = await startSession(job);
          offset = 0;
          streak.restart();
          tracker?.reset();
          verify = job.verifyMd5;
          needStatus = total === 0;
          progress(0);
          continue;
        }
        if (!isTransient(error)) throw error;
        const delay = streak.next(
          `the upload of ${label}`,
          error,
          job.sessionFile
            ? `the service keeps what it received: resume with resumeUpload(transport, '${job.sessionFile}') (gantry storage put --resume) when it is back`
            : 'try again later; give a sessionFile to be able to resume such an upload from where it stopped',
        );
        const where = queried ? `asking what it has of ${total} bytes` : `sending bytes ${offset}–${Math.min(offset + job.chunkSize, total) - 1} of ${total}`;
        logger.warn(`upload of ${label}: ${describeFailure(error)} ${where}; asking the service what it has in ${delay} ms (${streak.nextAttempt})`);
        await wait(delay, signal);
        needStatus = true;
        continue;
      }
      if ('file' in outcome) return await finish(outcome.file);
      const received = outcome.received;
      if (received > total) throw new ProtocolError(`the upload session says it has ${received} bytes of ${total}`);
      if (queried) logger.info(`upload of ${label}: the service has ${received} of ${total} bytes; going on from there`);
      if (tracker && verify) {
        if (received < tracker.at) {
          verify = false; // the service dropped bytes it had confirmed: the md5 of what it has can no longer be followed
          logger.debug(`upload of ${label}: the service went back to byte ${received}; its md5 is not checked`);
        } else await tracker.catchUp(received);
      }
      streak.reached(received);
      offset = received;
      progress(offset);
    }
  } finally {
    fileMd5?.stop();
  }

  async function finish(file: UploadedFile): Promise<UploadedFile> {
    progress(total);
    // The session is over whatever the check below finds: its file has no more use.
    if (job.sessionFile) await removeSessionFile(job.sessionFile);
    // The last chunk's answer is in: a callback that threw on its bytes (or on the 100 %) ends the upload as it would
    // have before any other chunk — the file exists, and the caller hears why its callback stopped being called.
    if (callback.failed) throw callback.error;
    if (typeof file.md5Checksum !== 'string') return file;
    if (fileMd5) {
      const local = await fileMd5.result.catch((error: unknown) => {
        throw new CheckFailedError(
          `the upload of ${label} completed, but its md5 could not be checked: reading the file again failed (${error instanceof Error ? error.message : String(error)})`,
          {
            code: 'STORAGE_MD5_UNCHECKED',
            hint: `compare the file with ${file.id}'s md5Checksum (${file.md5Checksum}) yourself, or upload it again`,
          },
        );
      });
      if (local.size !== total || local.md5 !== file.md5Checksum.toLowerCase()) {
        throw new CheckFailedError(
          `the upload of ${label} completed, but the service's md5 (${file.md5Checksum}) is not that of the file (${local.md5}${local.size !== total ? `, ${local.size} bytes instead of ${total}` : ''}); did the file change while it was sent?`,
          {
            code: 'STORAGE_MD5_MISMATCH',
            hint: `the file ${file.id} holds other bytes than the source: upload it again (files.update with fileId)`,
          },
        );
      }
    } else if (tracker && verify) {
      await tracker.catchUp(total);
      const sent = tracker.digest();
      if (sent !== file.md5Checksum.toLowerCase()) {
        throw new CheckFailedError(
          `the upload of ${label} completed, but the service's md5 (${file.md5Checksum}) is not that of the bytes sent (${sent}); did the file change while it was sent?`,
          {
            code: 'STORAGE_MD5_MISMATCH',
            hint: `the file ${file.id} holds other bytes than the source: upload it again (files.update with fileId)`,
          },
        );
      }
    }
    return file;
  }
}
