// File content: request bodies streamed to disk (never held in memory), revisions committed by rename, and
// `alt=media` downloads streamed with `Range` (206, 416).
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { sendFile } from '../kit/index.js';
import { StorageFailure } from './http.js';
import type { Model } from './model.js';
import { newId, type FileRecord } from './store.js';

export interface Received {
  bytes: number;
  /** False when the connection broke (or was cut) before the body ended. */
  complete: boolean;
}

/**
 * Streams `source` into `target` (appending with `flags: 'a'`), skipping its first `skip` bytes, writing at most
 * `limit` bytes; `cutAfter` destroys the socket once that many body bytes arrived (fault injection). Bytes that reached
 * the file before a break stay there.
 */
export function receive(
  req: IncomingMessage,
  source: Readable,
  target: string,
  options: { flags?: 'w' | 'a'; skip?: number; limit?: number; cutAfter?: number; onBytes?: (n: number) => void },
): Promise<Received> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(target, { flags: options.flags ?? 'w' });
    let seen = 0;
    let written = 0;
    let finished = false;
    let ended = false;
    let failure: Error | undefined;
    const done = () => {
      if (finished) return;
      finished = true;
      source.off('data', onData);
      out.end(() => (failure ? reject(failure) : resolve({ bytes: written, complete: ended })));
    };
    const onData = (chunk: Buffer) => {
      let piece = chunk;
      const start = seen;
      seen += chunk.length;
      if (options.cutAfter !== undefined && seen > options.cutAfter) piece = piece.subarray(0, Math.max(0, options.cutAfter - start));
      const skip = Math.max(0, (options.skip ?? 0) - start);
      piece = piece.subarray(Math.min(skip, piece.length));
      if (options.limit !== undefined && written + piece.length > options.limit) {
        failure = new StorageFailure(400, 'badContent', 'The request body is longer than Content-Range or Content-Length says', undefined, 'other');
        piece = piece.subarray(0, options.limit - written);
      }
      if (piece.length > 0) {
        written += piece.length;
        options.onBytes?.(piece.length);
        if (!out.write(piece)) {
          source.pause();
          out.once('drain', () => source.resume());
        }
      }
      if (failure) return done();
      if (options.cutAfter !== undefined && seen >= options.cutAfter) {
        req.socket.destroy();
        done();
      }
    };
    source.on('data', onData);
    source.once('end', () => {
      ended = true;
      done();
    });
    source.once('error', done);
    source.once('close', done);
    req.once('aborted', done);
    out.once('error', (error) => {
      failure = error;
      done();
    });
  });
}

export async function md5Of(file: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Makes `tempPath` the file's new head revision (a rename), with its md5 and size. */
export async function commitContent(model: Model, file: FileRecord, tempPath: string, mimeType: string): Promise<void> {
  const md5 = await md5Of(tempPath);
  const { size } = await stat(tempPath);
  const revisionId = newId(40);
  await rename(tempPath, model.store.contentPath(revisionId));
  const revisions = (model.data.revisions[file.id] ??= []);
  revisions.push({
    id: revisionId,
    mimeType,
    md5Checksum: md5,
    fileSize: size,
    modifiedDate: model.now(),
    pinned: false,
    ...(file.originalFilename ? { originalFilename: file.originalFilename } : {}),
  });
  file.headRevisionId = revisionId;
  file.md5Checksum = md5;
  file.fileSize = size;
  file.mimeType = mimeType;
  model.changed(file);
}

/** Streams a revision's bytes with `Range` support; `cutAfter` destroys the socket after that many body bytes. */
export async function sendContent(
  req: IncomingMessage,
  res: ServerResponse,
  model: Model,
  file: FileRecord,
  revisionId: string | undefined,
  cutAfter?: number,
): Promise<void> {
  const size = revisionId ? (await stat(model.store.contentPath(revisionId))).size : 0;
  const headers: Record<string, string> = {
    'content-type': file.mimeType,
    etag: model.etag(file),
    'accept-ranges': 'bytes',
    'cache-control': 'private, max-age=0, must-revalidate',
  };
  let start = 0;
  let end = size - 1;
  let status = 200;
  const range = req.headers.range;
  if (typeof range === 'string' && /^bytes=[^,]*$/.test(range.trim())) {
    const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
    const from = m?.[1] ? Number(m[1]) : undefined;
    const to = m?.[2] ? Number(m[2]) : undefined;
    if (!m || (from === undefined && to === undefined) || (from !== undefined && to !== undefined && to < from)) {
      status = 200; // a malformed Range is ignored (RFC 9110 §14.2)
    } else if (from === undefined) {
      start = Math.max(0, size - to!);
      status = 206;
    } else if (from >= size) {
      res.writeHead(416, { 'content-range': `bytes */${size}`, 'content-length': '0' });
      res.end();
      return;
    } else {
      start = from;
      end = to === undefined ? size - 1 : Math.min(to, size - 1);
      status = 206;
    }
  }
  const length = Math.max(0, end - start + 1);
  if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  headers['content-length'] = String(length);
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || length === 0 || !revisionId) {
    res.end();
    return;
  }
  // A file that cannot be read, or a client that went away: the connection is dropped (the headers are out).
  await sendFile(res, model.store.contentPath(revisionId), { start, end, cutAfter }).catch(() => res.destroy());
}
