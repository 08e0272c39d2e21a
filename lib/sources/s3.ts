import { createWriteStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { ExitCode, GantryError, exitCodeForStatus } from '../errors.js';
import type { S3Location } from './location.js';
import type { DownloadProgress } from '../http/index.js';
import { s3ProxyConfig } from '../http/s3-handler.js';
import { SourceRefusedError } from './limits.js';
import type { SourceErrorCode } from './errors.js';

export interface S3FetchOptions {
  /**
   * Compute request checksums only when an operation requires one. Some S3-compatible stores (s3rver, older MinIO)
   * store the SDK's default aws-chunked framing inside the object; `GANTRY_S3_CHECKSUM=when_required` sets this too.
   */
  checksumsWhenRequired?: boolean;
  /** Extra client settings (credentials provider, endpoint override) for library users and tests. */
  clientConfig?: S3ClientConfig;
  maxBytes: number;
  onProgress?: (progress: DownloadProgress) => void;
  env?: NodeJS.ProcessEnv;
}

/** Streams an S3 object to `file` with the default AWS credential chain; never holds it in memory. */
export async function fetchS3(location: S3Location, file: string, options: S3FetchOptions): Promise<number> {
  const env = options.env ?? process.env;
  const whenRequired = options.checksumsWhenRequired ?? env.GANTRY_S3_CHECKSUM?.toLowerCase() === 'when_required';
  const client = new S3Client({
    region: location.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...(location.endpoint ? { endpoint: location.endpoint, forcePathStyle: true } : {}),
    ...(whenRequired ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {}),
    // HTTPS_PROXY, HTTP_PROXY and NO_PROXY, as for every other connection.
    ...s3ProxyConfig(env),
    ...options.clientConfig,
  });
  const where = `s3://${location.bucket}/${location.key}`;
  try {
    let response;
    try {
      response = await client.send(
        new GetObjectCommand({ Bucket: location.bucket, Key: location.key, ...(location.versionId ? { VersionId: location.versionId } : {}) }),
      );
    } catch (error) {
      const name = (error as { name?: string }).name ?? 'Error';
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      throw new GantryError(`reading ${where} failed: ${name}${status ? ` (HTTP ${status})` : ''}`, {
        code: 'S3_FAILED' satisfies SourceErrorCode,
        exitCode: status === undefined ? ExitCode.remote : exitCodeForStatus(status),
        hint:
          name === 'NoSuchKey' || name === 'NoSuchBucket'
            ? 'check the bucket and key'
            : 'check the AWS credentials (the default chain: environment, profile, instance role) and the region',
        cause: error,
      });
    }
    const total = response.ContentLength;
    if (total !== undefined && total > options.maxBytes) throw new SourceRefusedError(`${where} is ${total} bytes, more than the ${options.maxBytes} allowed`);
    let transferred = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        transferred += chunk.length;
        if (transferred > options.maxBytes) {
          callback(new SourceRefusedError(`${where} is larger than the ${options.maxBytes} bytes allowed`));
          return;
        }
        options.onProgress?.({ transferred, total });
        callback(null, chunk);
      },
    });
    await pipeline(response.Body as Readable, meter, createWriteStream(file, { flags: 'wx' }));
    return transferred;
  } finally {
    client.destroy();
  }
}
