/**
 * One-request uploads: `uploadType=media` (the bytes alone) and `uploadType=multipart` (`multipart/related`: the JSON
 * metadata part, then the media part). Up to the simple-upload limit the body is held in memory, so that a 429 or a
 * rate-limit 403 can send it again; a larger body (only when such a protocol is asked for) is streamed once.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { CheckFailedError, UsageError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { StorageParams, StorageTransport } from '../transport.js';
import { boundaryFor, fileContains, multipartParts, multipartStream } from './multipart.js';
import { tap } from './resumable.js';
import type { UploadSource } from './source.js';
import type { UploadedFile, UploadProgress } from './types.js';

/** Drive's limit for media and multipart uploads: larger files go resumable. */
export const SIMPLE_UPLOAD_LIMIT = 5 * 1024 * 1024;

export interface SimpleJob {
  transport: StorageTransport;
  type: 'media' | 'multipart';
  source: UploadSource;
  mediaType: string;
  metadata?: Record<string, unknown>;
  fileId?: string;
  params?: StorageParams;
  ifMatch?: string;
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
  logger: Logger;
  verifyMd5: boolean;
}

export async function simpleUpload(job: SimpleJob): Promise<UploadedFile> {
  const { source } = job;
  const total = source.size;
  const hash = createHash('md5');
  let body: Buffer | Readable;
  let contentType: string;
  let sent = 0;
  let length = total;
  const counted = (stream: Readable) =>
    stream.pipe(
      tap((chunk) => {
        sent += chunk.length;
        job.onProgress?.({ sent: Math.min(sent, total), total });
      }),
    );
  if (total <= SIMPLE_UPLOAD_LIMIT) {
    const media = await source.readAll();
    hash.update(media);
    if (job.type === 'media') {
      body = media;
      contentType = job.mediaType;
    } else {
      const parts = multipartParts(await boundaryFor((needle) => media.includes(needle)), job.metadata, job.mediaType);
      body = Buffer.concat([parts.head, media, parts.tail]);
      contentType = parts.contentType;
      length = body.length;
    }
  } else {
    const media = () => source.whole().pipe(tap((chunk) => hash.update(chunk)));
    if (job.type === 'media') {
      body = counted(media());
      contentType = job.mediaType;
    } else {
      let boundary: string;
      if (source.kind === 'path') boundary = await boundaryFor((needle) => fileContains(source.path!, needle));
      else if (source.kind === 'buffer') {
        const all = await source.readAll();
        boundary = await boundaryFor((needle) => all.includes(needle));
      } else {
        throw new UsageError(`upload: a multipart upload of a stream above ${SIMPLE_UPLOAD_LIMIT} bytes cannot check its boundary against the content`, {
          hint: 'use the resumable protocol (the default at this size), or upload from a file',
        });
      }
      const parts = multipartParts(boundary, job.metadata, job.mediaType);
      body = multipartStream(parts, counted(media()));
      contentType = parts.contentType;
      length = parts.length(total);
    }
  }
  job.onProgress?.({ sent: 0, total });
  const method = job.fileId === undefined ? 'POST' : 'PUT';
  const response = await job.transport.request<UploadedFile>({
    method,
    path: job.fileId === undefined ? '/upload/storage/v2/files' : `/upload/storage/v2/files/${encodeURIComponent(job.fileId)}`,
    searchParams: { ...job.params, uploadType: job.type },
    headers: {
      'content-type': contentType,
      'content-length': String(length),
      ...(job.ifMatch !== undefined ? { 'if-match': job.ifMatch } : {}),
    },
    body,
    ...(job.signal ? { signal: job.signal } : {}),
  });
  job.onProgress?.({ sent: total, total });
  const file = response.body ?? ({} as UploadedFile);
  if (job.verifyMd5 && typeof file.md5Checksum === 'string') {
    const local = hash.digest('hex');
    if (local !== file.md5Checksum.toLowerCase()) {
      throw new CheckFailedError(
        `the ${job.type} upload of ${source.label} completed, but the service's md5 (${file.md5Checksum}) is not that of the bytes sent (${local})`,
        {
          code: 'STORAGE_MD5_MISMATCH',
          hint: `the file ${file.id} holds other bytes than the source: upload it again (files.update with fileId)`,
        },
      );
    }
  }
  return file;
}
