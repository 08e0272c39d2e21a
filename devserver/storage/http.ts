// Drive v2's error shape and small node:http helpers of the embedded storage server: JSON bodies in (with a limit),
// JSON out, `{error: {code, message, errors: [{domain, reason, message, location?, locationType?}]}}` for failures.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpFailure, parseJson, readBody, sendReply, sendText, type Reply, type ReplyStyle } from '../kit/index.js';

export type { Reply };

/** A failure answered in Drive's error shape. */
export class StorageFailure extends HttpFailure {
  constructor(
    status: number,
    readonly reason: string,
    message: string,
    readonly location?: string,
    readonly locationType: 'parameter' | 'header' | 'other' = 'parameter',
    headers: Record<string, string> = {},
  ) {
    super(status, message, headers);
  }
}

export const notFound = (fileId: string, what = 'File', location = 'fileId') => new StorageFailure(404, 'notFound', `${what} not found: ${fileId}`, location);
export const badRequest = (message: string, location?: string, reason = 'invalid') => new StorageFailure(400, reason, message, location);
export const required = (location: string) => new StorageFailure(400, 'required', 'Required', location);

export function errorBody(failure: StorageFailure): unknown {
  const item: Record<string, string> = {
    domain: failure.reason === 'userRateLimitExceeded' || failure.reason === 'rateLimitExceeded' ? 'usageLimits' : 'global',
    reason: failure.reason,
    message: failure.message,
  };
  if (failure.location) {
    item.locationType = failure.locationType;
    item.location = failure.location;
  }
  return { error: { code: failure.status, message: failure.message, errors: [item] } };
}

export function failureReply(failure: StorageFailure): Reply {
  return { status: failure.status, body: errorBody(failure), headers: failure.headers };
}

/** The JSON metadata bodies are small: 5 MiB is Drive's simple-upload limit and far above any metadata. */
export const MAX_JSON = 1024 * 1024;

export async function readRaw(req: IncomingMessage, limit: number): Promise<Buffer> {
  return readBody(req, {
    limit,
    refuseDeclared: true,
    tooLarge: (n) => new StorageFailure(413, 'uploadTooLarge', `The request body is larger than ${n} bytes`, undefined, 'other'),
  });
}

export function parseJsonObject(raw: Buffer | string): Record<string, unknown> {
  return parseJson(raw, {
    empty: 'blank',
    notJson: () => new StorageFailure(400, 'parseError', 'Parse Error', undefined, 'other'),
    notObject: () => new StorageFailure(400, 'parseError', 'The body must be a JSON object', undefined, 'other'),
  }) as Record<string, unknown>;
}

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return parseJsonObject(await readRaw(req, MAX_JSON));
}

const NO_CACHE = { 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate' };
/** Drive's framing: pretty-printed JSON, never cached, a length on every reply that may have a body. */
const STYLE: ReplyStyle = { json: 'application/json; charset=UTF-8', headers: NO_CACHE, indent: 1, emptyLength: 'zero-unless-no-content' };

export function send(res: ServerResponse, method: string, reply: Reply): void {
  sendReply(res, reply, STYLE, method);
}

/** Whether a path is the API's (Drive's front end answers any other path itself, before the API sees it). */
export function inTheApi(pathname: string): boolean {
  return ['/storage/v2', '/upload/storage/v2'].some((root) => pathname === root || pathname.startsWith(`${root}/`));
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A path outside the API: the front end's plain 404 page (text/html), not the API's JSON error, as Google answers
 * `https://www.googleapis.com/foo`. A client can tell a wrong base URL from an unknown file by it.
 */
export function sendOutsideApi(res: ServerResponse, method: string, pathname: string): void {
  const text = `<!DOCTYPE html>\n<html lang=en>\n<meta charset=utf-8>\n<title>Error 404 (Not Found)</title>\n<p><b>404.</b> That's an error.\n<p>The requested URL <code>${escapeHtml(pathname.slice(0, 2000))}</code> was not found on this server.\n`;
  sendText(res, 404, text, 'text/html; charset=UTF-8', NO_CACHE, STYLE, method);
}
