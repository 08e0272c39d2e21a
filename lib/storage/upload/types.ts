/** The shapes of uploads: their options, their progress and what they return. */
import type { Readable } from 'node:stream';
import type { Logger } from '../../log.js';
import type { StorageParams } from '../transport.js';
import type { TransferRetry } from './retry.js';

/**
 * The file resource an upload answers with (Drive v2's File; the fields asked for with `params.fields`). Only what
 * the transfers read is named here.
 */
export interface UploadedFile {
  id: string;
  title?: string;
  mimeType?: string;
  md5Checksum?: string;
  /** Drive v2 sends sizes as strings (int64). */
  fileSize?: string;
  etag?: string;
  headRevisionId?: string;
  [field: string]: unknown;
}

export interface UploadProgress {
  /** Bytes handed to the connection so far (after a break, counted again from what the service has). */
  sent: number;
  total: number;
}

export type UploadType = 'media' | 'multipart' | 'resumable';

export interface UploadOptions {
  /** A file path (streamed from disk), a Buffer, or a Readable whose length is given in `size`. */
  source: string | Buffer | Uint8Array | Readable;
  /** The length of a stream source, in bytes (required for a Readable; a file's size is read from the file). */
  size?: number;
  /** The file's metadata (title, parents, mimeType, description, properties, …): Drive v2's File fields. */
  metadata?: Record<string, unknown>;
  /** Replace the content of this existing file (files.update) instead of creating one (files.insert). */
  fileId?: string;
  /** Query parameters of files.insert / files.update (`fields`, `convert`, `pinned`, `supportsAllDrives`, …). */
  params?: StorageParams;
  /** `If-Match`: the upload is refused (412 conditionNotMet) when the file's etag is no longer this one. */
  ifMatch?: string;
  /** The media's type (`Content-Type` of the media, `X-Upload-Content-Type`); default metadata.mimeType, then (for a file) the type its extension names, then application/octet-stream. */
  mimeType?: string;
  /** Force a protocol; by default media (no metadata) or multipart up to 5 MiB, resumable above or with a sessionFile. */
  uploadType?: UploadType;
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
  /** Bytes per request of a resumable upload: a multiple of 256 KiB; default 32 MiB. */
  chunkSize?: number;
  /**
   * Where to keep the resumable session (JSON, 0600) so that `resumeUpload` can finish the upload from another
   * process; removed once the upload is complete. Needs a file source.
   */
  sessionFile?: string;
  /** After a broken connection or a 5xx: attempts in a row without progress, and the backoff between them. */
  retry?: TransferRetry;
  /** Compare the service's md5Checksum with the bytes sent (default true; a mismatch is exit 1). */
  verifyMd5?: boolean;
  logger?: Logger;
}

export type ResumeOptions = Pick<UploadOptions, 'onProgress' | 'signal' | 'retry' | 'verifyMd5' | 'logger'>;
