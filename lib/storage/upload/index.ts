/**
 * Uploads to the storage API (files.insert and files.update at `/upload/storage/v2/files`): media, multipart and
 * resumable, the last one surviving broken connections, 5xx answers, expired sessions and — through a session file —
 * the death of the uploading process. Memory stays flat at any size: a file is read a range at a time.
 */
import { resolve } from 'node:path';
import mimeTypes from 'mime-types';
import { UsageError } from '../../errors.js';
import { checkWritableFile } from '../../local-paths.js';
import { getLogger } from '../../log.js';
import type { StorageTransport } from '../transport.js';
import { resolveRetry } from './retry.js';
import { CHUNK_UNIT, DEFAULT_CHUNK_SIZE, runSession, startSession, type ResumableJob } from './resumable.js';
import { readSessionFile, sessionFileExists } from './session-file.js';
import { SIMPLE_UPLOAD_LIMIT, simpleUpload } from './simple.js';
import { identityChange, identityOf, openSource } from './source.js';
import type { ResumeOptions, UploadedFile, UploadOptions } from './types.js';

export { CHUNK_UNIT, DEFAULT_CHUNK_SIZE } from './resumable.js';
export { SIMPLE_UPLOAD_LIMIT } from './simple.js';
export { SESSION_FILE_KIND, type SessionFileContent } from './session-file.js';
export type { TransferRetry } from './retry.js';
export type { ResumeOptions, UploadedFile, UploadOptions, UploadProgress, UploadType } from './types.js';

// A media type as it may stand in a header and a part header: type/subtype and parameters, no control characters.
const mediaTypePattern = /^[\w!#$&^.+-]{1,127}\/[\w!#$&^.+-]{1,127}(?:\s*;[\x20-\x7e]*)?$/;

function checkTransport(where: string, transport: unknown): asserts transport is StorageTransport {
  const t = transport as Partial<StorageTransport> | null;
  if (!t || typeof t !== 'object' || typeof t.request !== 'function' || typeof t.baseUrl !== 'string' || !t.http) {
    throw new UsageError(`${where}: the first argument takes a storage transport (createStorageTransport)`);
  }
}

function checkCommon(where: string, options: Partial<ResumeOptions>): void {
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw new UsageError(`${where}: options.onProgress takes a function`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new UsageError(`${where}: options.signal takes an AbortSignal`);
  if (options.verifyMd5 !== undefined && typeof options.verifyMd5 !== 'boolean') throw new UsageError(`${where}: options.verifyMd5 takes true or false`);
}

function checkOptions(options: UploadOptions): void {
  const where = 'upload';
  if (!options || typeof options !== 'object') throw new UsageError(`${where}: options takes an object with at least a source`);
  checkCommon(where, options);
  const record = (name: string, value: unknown) => {
    if (value !== undefined && (!value || typeof value !== 'object' || Array.isArray(value))) throw new UsageError(`${where}: options.${name} takes an object`);
  };
  record('metadata', options.metadata);
  record('params', options.params);
  for (const name of ['fileId', 'ifMatch', 'sessionFile'] as const) {
    const value = options[name];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) throw new UsageError(`${where}: options.${name} takes a non-empty string`);
  }
  if (options.mimeType !== undefined && (typeof options.mimeType !== 'string' || !mediaTypePattern.test(options.mimeType))) {
    throw new UsageError(`${where}: options.mimeType takes a media type such as text/plain`);
  }
  if (options.uploadType !== undefined && !['media', 'multipart', 'resumable'].includes(options.uploadType)) {
    throw new UsageError(`${where}: options.uploadType is media, multipart or resumable`);
  }
  if (options.chunkSize !== undefined && (!Number.isSafeInteger(options.chunkSize) || options.chunkSize < CHUNK_UNIT || options.chunkSize % CHUNK_UNIT !== 0)) {
    throw new UsageError(`${where}: options.chunkSize must be a multiple of 256 KiB (${CHUNK_UNIT} bytes), got ${String(options.chunkSize)}`, {
      hint: 'the service refuses other chunk sizes; 32 MiB is the default',
    });
  }
  if (options.params && 'uploadType' in options.params) throw new UsageError(`${where}: give the protocol as options.uploadType, not in params`);
  if (options.sessionFile !== undefined && (options.uploadType === 'media' || options.uploadType === 'multipart')) {
    throw new UsageError(`${where}: a session file is for resumable uploads, not ${options.uploadType}`);
  }
}

/** A file's media type from its extension (report.html → text/html), as the service's own web upload and `aws s3 cp` guess it. */
function guessedMediaType(path: string | undefined): string | undefined {
  const type = path === undefined ? false : mimeTypes.lookup(path);
  return type === false ? undefined : type;
}

/**
 * Uploads a file, a Buffer or a stream: files.insert, or files.update of `fileId`. Without metadata and up to 5 MiB
 * it is a media upload, with metadata a multipart one; above 5 MiB, with a session file or when asked, resumable.
 * Returns the file resource. Errors: UsageError (2) for bad options or source, StorageError for the service's "no",
 * CheckFailedError (1) when the service's md5 differs from the bytes sent, exit 3 once the retries are spent.
 */
export async function upload(transport: StorageTransport, options: UploadOptions): Promise<UploadedFile> {
  checkTransport('upload', transport);
  checkOptions(options);
  const source = await openSource('upload', options.source, options.size);
  try {
    const logger = options.logger ?? getLogger();
    const verifyMd5 = options.verifyMd5 ?? true;
    const mediaType =
      options.mimeType ??
      (typeof options.metadata?.mimeType === 'string' && mediaTypePattern.test(options.metadata.mimeType) ? options.metadata.mimeType : undefined) ??
      guessedMediaType(source.path) ??
      'application/octet-stream';
    const type =
      options.uploadType ?? (options.sessionFile !== undefined || source.size > SIMPLE_UPLOAD_LIMIT ? 'resumable' : options.metadata ? 'multipart' : 'media');
    const common = {
      transport,
      source,
      ...(options.metadata ? { metadata: options.metadata } : {}),
      ...(options.fileId !== undefined ? { fileId: options.fileId } : {}),
      ...(options.params ? { params: options.params } : {}),
      ...(options.ifMatch !== undefined ? { ifMatch: options.ifMatch } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      logger,
      verifyMd5,
    };
    if (type !== 'resumable') return await simpleUpload({ ...common, type, mediaType });

    const retry = resolveRetry('upload', options.retry);
    const job: ResumableJob = { ...common, contentType: mediaType, chunkSize: options.chunkSize ?? DEFAULT_CHUNK_SIZE, retry };
    if (options.sessionFile !== undefined) {
      if (source.kind !== 'path')
        throw new UsageError('upload: a session file needs a file source (a path): a Buffer or a stream cannot be read again by another process');
      job.sessionFile = resolve(options.sessionFile);
      if (await sessionFileExists(job.sessionFile)) {
        throw new UsageError(`upload: the session file ${job.sessionFile} already exists: an earlier upload may be waiting to be resumed`, {
          code: 'STORAGE_SESSION_FILE',
          hint: 'finish it with resumeUpload (gantry storage put --resume), or delete the file to start over',
        });
      }
      await checkWritableFile(job.sessionFile, 'the session file');
      job.identity = await identityOf(source.path!);
    }
    options.signal?.throwIfAborted();
    const uri = await startSession(job);
    return await runSession(job, uri, false);
  } finally {
    source.close();
  }
}

/**
 * Finishes the resumable upload a session file describes (one an earlier process left): checks that the source file
 * is unchanged (else a UsageError, exit 2, and the session file is kept), asks the service what it has, sends the
 * rest, and removes the session file once the upload is complete. An expired session starts again from byte 0.
 */
export async function resumeUpload(transport: StorageTransport, sessionFile: string, options: ResumeOptions = {}): Promise<UploadedFile> {
  checkTransport('resumeUpload', transport);
  if (typeof sessionFile !== 'string' || sessionFile.trim() === '') throw new UsageError('resumeUpload: the second argument takes the path of a session file');
  if (!options || typeof options !== 'object') throw new UsageError('resumeUpload: options takes an object');
  checkCommon('resumeUpload', options);
  const file = resolve(sessionFile);
  const saved = await readSessionFile(file);
  const source = await openSource('resumeUpload', saved.path, undefined);
  try {
    const now = await identityOf(saved.path);
    const change = identityChange(saved, now);
    if (change) {
      throw new UsageError(
        `resumeUpload: the source ${saved.path} changed since the upload began: ${change}; nothing was sent and the session file ${file} is kept`,
        {
          code: 'STORAGE_SOURCE_CHANGED',
          hint: 'put the original file back and resume, or delete the session file and upload the file as a new upload',
        },
      );
    }
    if (saved.chunkSize % CHUNK_UNIT !== 0) throw new UsageError(`resumeUpload: the session file ${file} has a chunk size that is not a multiple of 256 KiB`);
    const logger = options.logger ?? getLogger();
    const job: ResumableJob = {
      transport,
      source,
      contentType: saved.contentType,
      chunkSize: saved.chunkSize,
      ...(saved.metadata ? { metadata: saved.metadata } : {}),
      ...(saved.fileId !== undefined ? { fileId: saved.fileId } : {}),
      ...(saved.params ? { params: saved.params as ResumableJob['params'] } : {}),
      ...(saved.ifMatch !== undefined ? { ifMatch: saved.ifMatch } : {}),
      sessionFile: file,
      identity: now,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      logger,
      retry: resolveRetry('resumeUpload', options.retry),
      verifyMd5: options.verifyMd5 ?? true,
    };
    logger.info(`resuming the upload of ${source.label} (${source.size} bytes) from ${file}`);
    return await runSession(job, saved.sessionUri, true);
  } finally {
    source.close();
  }
}
