// What the registry needs to serve from a bucket, apart from the AWS SDK itself (s3-store.ts, loaded only when a bucket
// is served), so the command can parse --s3 without loading the SDK.
import { CatalogError } from './catalog.js';

export interface S3StoreOptions {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' for the bucket root. */
  prefix?: string;
  /** For S3-compatible stores and tests, e.g. http://127.0.0.1:9000 (path-style is then used). */
  endpoint?: string;
  region?: string;
  /** Defaults to the AWS SDK's default credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  forcePathStyle?: boolean;
  /** 'presigned' (default): a presigned https/http GET URL. 's3': an `s3::` getter address for the client to fetch. */
  locations?: 'presigned' | 's3';
  /** Lifetime of presigned URLs; default 900 s. */
  expiresInSeconds?: number;
}

/** Parses `s3://bucket/prefix` (the command's --s3 value). */
export function parseS3Url(value: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value);
  if (!match) throw new CatalogError(`"${value}" is not an S3 location: expected s3://<bucket>[/<prefix>] with a valid bucket name`);
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((part) => part === '..' || part === '.')) throw new CatalogError(`S3 prefix "${prefix}" may not contain . or .. segments`);
  return { bucket: match[1]!, prefix };
}
