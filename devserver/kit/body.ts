// Request bodies: read with a limit, parsed as JSON or as a form. Each server names its own failures (the kit knows
// no wire format), so the same reader answers `413 {errors: ["http: request body too large"]}` on one server and
// Drive's `uploadTooLarge` on another.
import type { IncomingMessage } from 'node:http';

export interface BodyLimit {
  /** The most bytes a body may have. */
  limit: number;
  /** The failure to throw for a larger body. */
  tooLarge: (limit: number) => Error;
  /** Take Content-Length's word that the body is larger: refuse before reading (or, with drainUpTo, drain it). */
  refuseDeclared?: boolean;
  /**
   * Keep reading (and dropping) a body over the limit up to this many bytes before answering, so a client still
   * sending reads the answer on a usable connection; beyond it the socket is destroyed. Default: stop at the limit.
   */
  drainUpTo?: number;
}

/** The whole body as bytes, or the server's `tooLarge` failure. */
export async function readBody(req: IncomingMessage, rules: BodyLimit): Promise<Buffer> {
  let tooLarge = rules.refuseDeclared === true && Number(req.headers['content-length'] ?? 0) > rules.limit;
  if (tooLarge && rules.drainUpTo === undefined) throw rules.tooLarge(rules.limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > rules.limit) {
      if (rules.drainUpTo === undefined) throw rules.tooLarge(rules.limit);
      tooLarge = true;
    }
    if (tooLarge) {
      chunks.length = 0;
      if (size > rules.drainUpTo!) {
        req.socket.destroy();
        break;
      }
      continue;
    }
    chunks.push(chunk);
  }
  if (tooLarge) throw rules.tooLarge(rules.limit);
  return Buffer.concat(chunks);
}

/** Reads a body and counts its bytes without keeping them (a method whose body must be empty). */
export async function countBody(req: IncomingMessage): Promise<number> {
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) size += chunk.length;
  return size;
}

export interface JsonRules {
  /** The failure for text that is not JSON. */
  notJson: () => Error;
  /** When given, the value must be an object (not an array, not null); this is the failure otherwise. */
  notObject?: () => Error;
  /** What an empty body means: an error like any other text (default), `{}` when it has no bytes, `{}` when blank. */
  empty?: 'invalid' | 'no-bytes' | 'blank';
}

/** Parses a JSON body by the server's rules. */
export function parseJson(raw: Buffer | string, rules: JsonRules): unknown {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  if ((rules.empty === 'no-bytes' && text.length === 0) || (rules.empty === 'blank' && text.trim() === '')) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw rules.notJson();
  }
  if (rules.notObject && (!value || typeof value !== 'object' || Array.isArray(value))) throw rules.notObject();
  return value;
}

/** `type/subtype` of Content-Type, lower case, without parameters; '' when absent. */
export function mediaType(req: IncomingMessage): string {
  return String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

/** A form body (application/x-www-form-urlencoded); an empty body is an empty form whatever its type. */
export function parseForm(text: string, req: IncomingMessage, notForm: () => Error): URLSearchParams {
  if (text.length > 0 && mediaType(req) !== 'application/x-www-form-urlencoded') throw notForm();
  return new URLSearchParams(text);
}
