/**
 * files.export (STO-FILES-EXPORT): a storage document (application/vnd.google-apps.*) converted to a requested type,
 * streamed to a temporary name next to the target and renamed when complete. The service refuses exports above
 * 10 MB with 403 `exportSizeLimitExceeded`; the StorageError says so and advises downloading the file instead.
 */
import { UsageError } from '../errors.js';
import { toStorageError } from './errors.js';
import { prepareTarget, type TransferProgress } from './download.js';
import type { StorageTransport } from './transport.js';

export interface ExportOptions {
  /** Where the exported content goes (its folder is created when missing; replaced only when complete). */
  path: string;
  onProgress?: (progress: TransferProgress) => void;
  signal?: AbortSignal;
}

export interface ExportResult {
  path: string;
  bytes: number;
  mimeType: string;
}

const mediaType = /^[\w!#$&^.+-]{1,127}\/[\w!#$&^.+-]{1,127}$/;

/** Exports a storage document as `mimeType` (text/plain, application/pdf, text/csv …) to `options.path`. */
export async function exportFile(transport: StorageTransport, fileId: string, mimeType: string, options: ExportOptions): Promise<ExportResult> {
  const t = transport as Partial<StorageTransport> | null;
  if (!t || typeof t.request !== 'function' || !t.http)
    throw new UsageError('exportFile: the first argument takes a storage transport (createStorageTransport)');
  if (typeof fileId !== 'string' || fileId.trim() === '') throw new UsageError('exportFile: fileId takes a non-empty string');
  if (typeof mimeType !== 'string' || !mediaType.test(mimeType))
    throw new UsageError('exportFile: mimeType takes a media type such as application/pdf or text/plain');
  if (!options || typeof options !== 'object' || typeof options.path !== 'string' || options.path.trim() === '')
    throw new UsageError('exportFile: options.path takes the path of the file to write');
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw new UsageError('exportFile: options.onProgress takes a function');
  const target = await prepareTarget('exportFile', options.path);
  const { onProgress, signal } = options;
  try {
    const result = await transport.http.download({
      url: `storage/v2/files/${encodeURIComponent(fileId)}/export`,
      searchParams: { mimeType },
      headers: { authorization: await transport.authorization(), accept: '*/*' },
      path: target,
      ...(onProgress ? { onProgress: (p: { transferred: number; total: number | undefined }) => onProgress({ received: p.transferred, total: p.total }) } : {}),
      ...(signal ? { signal } : {}),
    });
    return { path: target, bytes: result.bytes, mimeType };
  } catch (error) {
    throw toStorageError(error);
  }
}
