// Replies: a status, a JSON body or none, headers. How a server frames them (its JSON content type, the headers
// every reply carries, pretty printing, whether Content-Length is sent) is its style, given once.
import type { ServerResponse } from 'node:http';

export interface Reply {
  status: number;
  /** Sent as JSON; no body when undefined. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ReplyStyle {
  /** Content-Type of a JSON body. */
  json: string;
  /** Headers every reply carries (a reply's own headers win over them). */
  headers?: Record<string, string>;
  /** Indentation of JSON bodies; compact when absent. */
  indent?: number;
  /** Content-Length on a JSON body (default true; false sends it chunked). */
  length?: boolean;
  /** Content-Length of a reply without a body: none (default), `0`, or `0` except on 204 and 304. */
  emptyLength?: 'none' | 'zero' | 'zero-unless-no-content';
  /** Which side wins when a reply's headers name Content-Type or Content-Length: the reply's (default) or the style's. */
  framing?: 'reply' | 'style';
}

/** Writes a reply in a server's style; a HEAD request gets the headers alone. */
export function sendReply(res: ServerResponse, reply: Reply, style: ReplyStyle, method = 'GET'): void {
  const own = { ...(style.headers ?? {}), ...(reply.headers ?? {}) };
  if (reply.body === undefined) {
    const noContent = reply.status === 204 || reply.status === 304;
    const zero = style.emptyLength === 'zero' || (style.emptyLength === 'zero-unless-no-content' && !noContent && own['content-length'] === undefined);
    res.writeHead(reply.status, zero ? frame(own, { 'content-length': '0' }, style) : own);
    res.end();
    return;
  }
  sendText(res, reply.status, JSON.stringify(reply.body, null, style.indent), style.json, own, style, method);
}

/** A body that is text of a given type (an HTML page), framed like the server's JSON. */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  type: string,
  headers: Record<string, string>,
  style: Pick<ReplyStyle, 'length' | 'framing'>,
  method = 'GET',
): void {
  const framing: Record<string, string> = { 'content-type': type };
  if (style.length !== false) framing['content-length'] = String(Buffer.byteLength(text));
  res.writeHead(status, frame(headers, framing, style));
  res.end(method === 'HEAD' ? undefined : text);
}

function frame(headers: Record<string, string>, framing: Record<string, string>, style: Pick<ReplyStyle, 'framing'>): Record<string, string> {
  return style.framing === 'style' ? { ...headers, ...framing } : { ...framing, ...headers };
}
