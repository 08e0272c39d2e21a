/** Request parameters and response bodies: query strings, accepted statuses, bounded reads. */
import { Readable } from 'node:stream';
import { redactUrl } from '../redact.js';
import { ProtocolError } from './errors.js';
import type { RequestOptions, SearchParams } from './types.js';

/** A body sent as it is read (a stream or an async iterable): it can be sent only once. */
export function isStreamed(body: RequestOptions['body']): body is Readable | AsyncIterable<Uint8Array> {
  return (
    typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && typeof (body as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function'
  );
}

export function isAccepted(accept: RequestOptions['accept'], status: number): boolean {
  if (!accept) return status >= 200 && status < 300;
  return typeof accept === 'function' ? accept(status) : accept.includes(status);
}

export function toSearchParams(params: SearchParams | undefined): URLSearchParams | undefined {
  if (!params) return undefined;
  if (params instanceof URLSearchParams) return params;
  const out = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) out.append(name, String(item));
    else out.append(name, String(value));
  }
  return out;
}

/** Reads a whole body, refusing it past `limit` bytes; `what` is only built when the limit is hit. */
export function readLimited(stream: Readable, limit: number, what: () => string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stream.destroy();
        reject(new ProtocolError(`${what()} is larger than ${limit} bytes`, 'raise the limit if this response is expected to be this large'));
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

export function parseErrorBody(raw: Buffer): { body?: unknown; rawBody?: string } {
  const text = raw.toString('utf8');
  if (text.trim() === '') return {};
  try {
    return { body: JSON.parse(text) };
  } catch {
    return { rawBody: text };
  }
}

/**
 * got's body passed on as it comes, refused past `maxBytes` (counted after decoding), its errors typed by `typed`.
 * A Readable fed from the source's 'data' rather than a Transform piped to: a chunk reaches the reader in the same
 * tick, with no writable side's bookkeeping per chunk (an install hands over thousands of them).
 */
export class RelayedBody extends Readable {
  readonly #source: Readable;

  constructor(source: Readable, maxBytes: number | undefined, url: URL, typed: (error: Error) => Error) {
    super();
    this.#source = source;
    let transferred = 0;
    source.on('data', (chunk: Buffer) => {
      if (this.destroyed) return;
      transferred += chunk.length;
      if (maxBytes !== undefined && transferred > maxBytes) {
        this.destroy(new ProtocolError(`the body of ${redactUrl(url)} is larger than the ${maxBytes} bytes allowed`));
        return;
      }
      if (!this.push(chunk)) source.pause();
    });
    source.once('end', () => this.push(null));
    source.on('error', (error: Error) => {
      if (!this.destroyed) this.destroy(typed(error));
    });
  }

  override _read(): void {
    this.#source.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#source.destroy();
    callback(error);
  }
}
