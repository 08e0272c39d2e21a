/**
 * Downloads of file content (files.get with `alt=media`, STO-FILES-GET), streamed to disk and resumable. The bytes go
 * to a partial file next to the target under a stable name (`.<name>.<key>.gantry-download`, the key from the file
 * and revision ids) with a small JSON beside it naming what it holds (md5, size, head revision); the partial is
 * renamed onto the target only when complete and its md5 matches the service's `md5Checksum`. After a broken
 * connection the download goes on with `Range: bytes=n-` from what is on disk — in the same call, or in a later one
 * (a rerun finds the partial and its JSON still describing the file's current content). A 200 instead of a 206
 * starts the partial over. The target is never half written, and never touched unless the download succeeded.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { writeFileAtomic } from '../atomic-write.js';
import { CheckFailedError, UsageError } from '../errors.js';
import { ProtocolError } from '../http/index.js';
import { ensureFolder } from '../local-paths.js';
import { getLogger, type Logger } from '../log.js';
import { toStorageError } from './errors.js';
import type { StorageTransport } from './transport.js';
import { describeFailure, FailureStreak, isTransient, resolveRetry, wait, type TransferRetry } from './upload/retry.js';

export interface TransferProgress {
  received: number;
  /** When known (the file's size, or the answer's length). */
  total: number | undefined;
}

export interface DownloadOptions {
  /** Where the content goes (a file; its folder is created when missing). */
  path: string;
  /** A revision's content instead of the head revision's. */
  revisionId?: string;
  onProgress?: (progress: TransferProgress) => void;
  signal?: AbortSignal;
  /** After a broken connection or a 5xx: attempts in a row without progress, and the backoff between them. */
  retry?: TransferRetry;
  /** Compare the md5 of the bytes with the service's md5Checksum (default true; a mismatch is exit 1). */
  verifyMd5?: boolean;
  logger?: Logger;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  /** The service's md5Checksum, when it gave one (checked unless verifyMd5 is false). */
  md5Checksum: string | undefined;
  /** The byte the download started at: above 0 when an earlier run's partial file was used. */
  resumedFrom: number;
}

interface ContentInfo {
  md5Checksum?: string;
  fileSize?: string;
  headRevisionId?: string;
  etag?: string;
}

/** What the partial file is a part of; a partial from another content is started over. */
interface PartialInfo {
  kind: 'gantry#storageDownloadPartial';
  fileId: string;
  revisionId: string | null;
  md5Checksum: string | null;
  fileSize: string | null;
  headRevisionId: string | null;
  /** Only when there is no md5Checksum: an etag changes with metadata too, so it is the last resort. */
  etag: string | null;
}

const samePartial = (a: PartialInfo, b: Partial<PartialInfo> | undefined) =>
  !!b && (['kind', 'fileId', 'revisionId', 'md5Checksum', 'fileSize', 'headRevisionId', 'etag'] as const).every((k) => a[k] === b[k]);

async function hashFile(path: string, upTo: number): Promise<Hash> {
  const hash = createHash('md5');
  if (upTo > 0) for await (const chunk of createReadStream(path, { start: 0, end: upTo - 1 })) hash.update(chunk as Buffer);
  return hash;
}

async function sizeOf(path: string): Promise<number> {
  return (await stat(path).catch(() => undefined))?.size ?? 0;
}

function checkTarget(
  where: string,
  transport: unknown,
  fileId: unknown,
  options: { path?: unknown; onProgress?: unknown; signal?: unknown } | undefined,
): void {
  const t = transport as Partial<StorageTransport> | null;
  if (!t || typeof t.request !== 'function' || !t.http) throw new UsageError(`${where}: the first argument takes a storage transport (createStorageTransport)`);
  if (typeof fileId !== 'string' || fileId.trim() === '') throw new UsageError(`${where}: fileId takes a non-empty string`);
  if (!options || typeof options !== 'object') throw new UsageError(`${where}: options takes an object with a path`);
  if (typeof options.path !== 'string' || options.path.trim() === '') throw new UsageError(`${where}: options.path takes the path of the file to write`);
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw new UsageError(`${where}: options.onProgress takes a function`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new UsageError(`${where}: options.signal takes an AbortSignal`);
}

/** The absolute target path, its folder made, refusing a target that exists and is not a regular file. */
export async function prepareTarget(where: string, path: string): Promise<string> {
  const target = resolve(path);
  const present = await stat(target).catch(() => undefined);
  if (present && !present.isFile())
    throw new UsageError(`${where}: ${target} exists and is not a regular file`, {
      hint: 'give the path of a file to write (it is replaced only once the transfer is complete)',
    });
  await ensureFolder(dirname(target), 'the download folder');
  return target;
}

/**
 * Downloads a file's content (or a revision's) to `options.path`, resuming after a broken connection and across runs.
 * Errors: UsageError (2), StorageError for the service's answers (404 notFound, 403 fileNotDownloadable …),
 * CheckFailedError (1) when the md5 does not match, exit 3 once the retries are spent (the partial file is kept).
 */
export async function download(transport: StorageTransport, fileId: string, options: DownloadOptions): Promise<DownloadResult> {
  checkTarget('download', transport, fileId, options);
  if (options.revisionId !== undefined && (typeof options.revisionId !== 'string' || options.revisionId === ''))
    throw new UsageError('download: options.revisionId takes a non-empty string');
  const retry = resolveRetry('download', options.retry);
  const logger = options.logger ?? getLogger();
  const verify = options.verifyMd5 ?? true;
  const { signal, revisionId } = options;
  const target = await prepareTarget('download', options.path);
  const label = basename(target);
  const id = encodeURIComponent(fileId);

  const { body: meta } = await transport.request<ContentInfo>({
    path: revisionId === undefined ? `/storage/v2/files/${id}` : `/storage/v2/files/${id}/revisions/${encodeURIComponent(revisionId)}`,
    searchParams: { fields: revisionId === undefined ? 'md5Checksum,fileSize,headRevisionId,etag' : 'md5Checksum,fileSize,etag' },
    ...(signal ? { signal } : {}),
  });
  const md5 = typeof meta?.md5Checksum === 'string' ? meta.md5Checksum.toLowerCase() : undefined;
  const declared = typeof meta?.fileSize === 'string' && /^\d{1,15}$/.test(meta.fileSize) ? Number(meta.fileSize) : undefined;
  const info: PartialInfo = {
    kind: 'gantry#storageDownloadPartial',
    fileId,
    revisionId: revisionId ?? null,
    md5Checksum: md5 ?? null,
    fileSize: declared === undefined ? null : String(declared),
    headRevisionId: typeof meta?.headRevisionId === 'string' ? meta.headRevisionId : null,
    etag: md5 === undefined && typeof meta?.etag === 'string' ? meta.etag : null,
  };

  const key = createHash('sha256')
    .update(`${fileId}\0${revisionId ?? ''}`)
    .digest('hex')
    .slice(0, 16);
  const partial = join(dirname(target), `.${label}.${key}.gantry-download`);
  const partialInfo = `${partial}.json`;
  const saved = await readFile(partialInfo, 'utf8').then(
    (text) => JSON.parse(text) as Partial<PartialInfo>,
    () => undefined,
  );
  let offset = 0;
  if (samePartial(info, saved)) {
    offset = await sizeOf(partial);
    if (declared !== undefined && offset > declared) offset = 0;
  }
  if (offset === 0) {
    await writeFileAtomic(partialInfo, `${JSON.stringify(info)}\n`);
    await writeFile(partial, '');
  } else logger.info(`download of ${label}: ${offset} bytes are on disk from an earlier run; going on from there`);

  const resumedFrom = offset;
  let total = declared;
  let hash: Hash | undefined;
  let hashedTo = -1;
  const streak = new FailureStreak(retry, offset);
  for (;;) {
    signal?.throwIfAborted();
    if (total !== undefined && offset >= total) break;
    let failure: unknown;
    try {
      if (verify && md5 !== undefined && hashedTo !== offset) {
        hash = await hashFile(partial, offset);
        hashedTo = offset;
      }
      let opened;
      try {
        opened = await transport.http.stream({
          url: `storage/v2/files/${id}`,
          searchParams: { alt: 'media', ...(revisionId !== undefined ? { revisionId } : {}) },
          headers: { authorization: await transport.authorization(), accept: '*/*', ...(offset > 0 ? { range: `bytes=${offset}-` } : {}) },
          accept: [200, 206, 416],
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        throw toStorageError(error);
      }
      if (opened.status === 416 || (opened.status === 200 && offset > 0)) {
        // The service cannot or will not send the rest (the content changed, or it ignores Range): start over.
        logger.warn(`download of ${label}: the service answered ${opened.status} to a request for bytes ${offset}- ; starting over from byte 0`);
        if (opened.status === 416) {
          opened.body.destroy();
          failure = new ProtocolError(`the service has no byte ${offset} of ${label} (416)`);
        }
        offset = 0;
        hash = verify && md5 !== undefined ? createHash('md5') : undefined;
        hashedTo = 0;
        await writeFile(partial, '');
      }
      if (opened.status === 206) {
        const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(opened.headers['content-range'] ?? ''));
        if (!m || Number(m[1]) !== offset) {
          opened.body.destroy();
          throw new ProtocolError(
            `the service answered bytes ${String(opened.headers['content-range'] ?? '(no Content-Range)')} to a request for bytes ${offset}-`,
          );
        }
        if (m[3] !== '*') total ??= Number(m[3]);
      } else if (opened.status === 200) {
        const length = Number(opened.headers['content-length']);
        if (opened.headers['content-length'] !== undefined && Number.isSafeInteger(length)) total ??= length;
      }
      if (failure === undefined) {
        const start = offset;
        let written = 0;
        const out = createWriteStream(partial, { flags: start > 0 ? 'a' : 'w' });
        try {
          // Each chunk is hashed as it is written, and the file is closed (flushed) however the body ends: after a
          // break the partial holds exactly the bytes received, and the hash is still that of the partial.
          for await (const chunk of opened.body as AsyncIterable<Buffer>) {
            hash?.update(chunk);
            written += chunk.length;
            if (!out.write(chunk)) await once(out, 'drain');
            options.onProgress?.({ received: start + written, total });
          }
        } finally {
          offset = start + written;
          hashedTo = hash ? offset : -1;
          out.end();
          await finished(out).catch(() => undefined);
        }
        if (total === undefined || offset === total) break;
        failure = new ProtocolError(`the body of ${label} ended at byte ${offset} of ${total}`);
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      failure = toStorageError(error);
      if (!isTransient(failure) && !(failure instanceof ProtocolError)) throw failure;
    }
    // A break: what reached the disk is kept, and the next attempt asks for the rest.
    const onDisk = await sizeOf(partial);
    if (onDisk !== offset) hashedTo = -1;
    offset = onDisk;
    if (total !== undefined && offset > total) {
      offset = 0;
      await writeFile(partial, '');
    }
    streak.reached(offset);
    const delay = streak.next(
      `the download of ${label}`,
      failure,
      `the ${offset} bytes received are kept in ${partial}: run the download again to go on from there`,
    );
    logger.warn(
      `download of ${label}: ${describeFailure(failure)} at byte ${offset}${total !== undefined ? ` of ${total}` : ''}; asking for the rest in ${delay} ms (${streak.nextAttempt})`,
    );
    await wait(delay, signal);
  }

  if (verify && md5 !== undefined) {
    const digest = (hashedTo === offset && hash ? hash : await hashFile(partial, offset)).digest('hex');
    if (digest !== md5) {
      await rm(partial, { force: true });
      await rm(partialInfo, { force: true });
      throw new CheckFailedError(`the download of ${label} has md5 ${digest}, not the service's ${md5}; ${target} was not written`, {
        code: 'STORAGE_MD5_MISMATCH',
        hint: 'download it again; if it fails again, the stored content differs from its md5Checksum',
      });
    }
  }
  await rename(partial, target);
  await rm(partialInfo, { force: true });
  options.onProgress?.({ received: offset, total: offset });
  return { path: target, bytes: offset, md5Checksum: md5, resumedFrom };
}
