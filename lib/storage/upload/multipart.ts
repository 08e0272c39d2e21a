/**
 * `multipart/related` bodies for `uploadType=multipart`: the JSON metadata part, then the media part, as Drive wants
 * them. Binary-safe: the boundary is random and checked not to occur anywhere in the content (scanned as bytes,
 * across read steps for a file streamed from disk), so no byte sequence of the media can end its part early.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';

/** A random boundary (RFC 2046 allows up to 70 characters of these). */
export function newBoundary(): string {
  return `gantry_${randomBytes(24).toString('hex')}`;
}

/** Whether `needle` occurs in the file at `path`, read as a stream (a match across two reads is found too). */
export async function fileContains(path: string, needle: Buffer): Promise<boolean> {
  let tail = Buffer.alloc(0);
  for await (const chunk of createReadStream(path)) {
    const joined = tail.length ? Buffer.concat([tail, chunk as Buffer]) : (chunk as Buffer);
    if (joined.includes(needle)) return true;
    tail = Buffer.from(joined.subarray(Math.max(0, joined.length - needle.length + 1)));
  }
  return false;
}

/** A boundary that `contains` says is not in the content: drawn again on the (astronomically rare) hit. */
export async function boundaryFor(contains: (needle: Buffer) => boolean | Promise<boolean>): Promise<string> {
  for (let draw = 0; draw < 8; draw += 1) {
    const boundary = newBoundary();
    if (!(await contains(Buffer.from(boundary)))) return boundary;
  }
  throw new Error('no boundary absent from the content after 8 random draws');
}

export interface MultipartParts {
  contentType: string;
  head: Buffer;
  tail: Buffer;
  length(mediaBytes: number): number;
}

/** The parts around the media: `head` (delimiter, metadata part, media part headers) and `tail` (closing delimiter). */
export function multipartParts(boundary: string, metadata: unknown, mediaType: string): MultipartParts {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata ?? {})}\r\n` +
      `--${boundary}\r\nContent-Type: ${mediaType}\r\n\r\n`,
    'utf8',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  return { contentType: `multipart/related; boundary=${boundary}`, head, tail, length: (n) => head.length + n + tail.length };
}

/** The whole body as one stream: head, the media stream, tail. */
export function multipartStream(parts: MultipartParts, media: Readable): Readable {
  return Readable.from(
    (async function* body() {
      yield parts.head;
      for await (const chunk of media) yield chunk as Buffer;
      yield parts.tail;
    })(),
    { objectMode: false },
  );
}
