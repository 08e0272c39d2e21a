// A streaming `multipart/related` reader for multipart uploads: the first part is the JSON metadata (kept in memory,
// at most 1 MiB), the second the media, written to disk as it arrives; binary-safe (the delimiter is searched for as
// bytes, never as text).
import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { badRequest, MAX_JSON, parseJsonObject } from './http.js';

export interface MultipartResult {
  metadata: Record<string, unknown>;
  mediaType?: string;
  bytes: number;
}

const MAX_HEADERS = 8 * 1024;

export function boundaryOf(contentType: string): string {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!/^multipart\/related\b/i.test(contentType.trim()) || !boundary)
    throw badRequest('Bad multipart request: the Content-Type must be multipart/related with a boundary', 'Content-Type', 'badContent');
  return boundary;
}

function partHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return headers;
}

export async function readMultipart(req: IncomingMessage, boundary: string, target: string): Promise<MultipartResult> {
  const bad = (why: string) => badRequest(`Bad multipart request: ${why}`, undefined, 'badContent');
  const first = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const out = createWriteStream(target);
  let phase: 'preamble' | 'metaHeaders' | 'meta' | 'afterMeta' | 'mediaHeaders' | 'media' | 'end' = 'preamble';
  let pending: Buffer = Buffer.alloc(0);
  let metadata: Record<string, unknown> = {};
  let mediaType: string | undefined;
  let bytes = 0;
  const write = async (piece: Buffer) => {
    if (piece.length === 0) return;
    bytes += piece.length;
    if (!out.write(piece)) await once(out, 'drain');
  };
  try {
    for await (const chunk of req) {
      pending = pending.length === 0 ? (chunk as Buffer) : Buffer.concat([pending, chunk as Buffer]);
      let progressed = true;
      while (progressed) {
        progressed = false;
        if (phase === 'preamble') {
          const i = pending.indexOf(first);
          if (i >= 0 && pending.length >= i + first.length + 2) {
            pending = pending.subarray(i + first.length + 2);
            phase = 'metaHeaders';
            progressed = true;
          } else if (pending.length > MAX_HEADERS) throw bad('no opening boundary');
        } else if (phase === 'metaHeaders' || phase === 'mediaHeaders') {
          const i = pending.indexOf('\r\n\r\n');
          if (i < 0) {
            if (pending.length > MAX_HEADERS) throw bad('part headers too long');
            continue;
          }
          const headers = partHeaders(pending.subarray(0, i).toString('latin1'));
          pending = pending.subarray(i + 4);
          if (phase === 'mediaHeaders') mediaType = headers['content-type'];
          else if (headers['content-type'] && !/^application\/json\b/i.test(headers['content-type'])) throw bad('the first part must be the JSON metadata');
          phase = phase === 'metaHeaders' ? 'meta' : 'media';
          progressed = true;
        } else if (phase === 'meta') {
          const i = pending.indexOf(delimiter);
          if (i < 0) {
            if (pending.length > MAX_JSON) throw bad('the metadata part is larger than 1 MiB');
            continue;
          }
          metadata = parseJsonObject(pending.subarray(0, i));
          pending = pending.subarray(i + delimiter.length);
          phase = 'afterMeta';
          progressed = true;
        } else if (phase === 'afterMeta') {
          if (pending.length < 2) continue;
          if (pending.subarray(0, 2).toString() === '--') throw bad('the media part is missing');
          pending = pending.subarray(2);
          phase = 'mediaHeaders';
          progressed = true;
        } else if (phase === 'media') {
          const i = pending.indexOf(delimiter);
          if (i >= 0) {
            await write(pending.subarray(0, i));
            pending = pending.subarray(i + delimiter.length);
            phase = 'end';
          } else {
            const keep = delimiter.length - 1;
            if (pending.length > keep) {
              await write(pending.subarray(0, pending.length - keep));
              pending = Buffer.from(pending.subarray(pending.length - keep));
            }
          }
        }
      }
    }
    if (phase !== 'end') throw bad(phase === 'media' ? 'no closing boundary' : 'the body ended early');
    return { metadata, ...(mediaType ? { mediaType } : {}), bytes };
  } finally {
    out.end();
    await once(out, 'close').catch(() => {});
  }
}
