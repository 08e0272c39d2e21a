/**
 * One attempt on got: the connection (keep-alive agents, proxies, TLS), redirects, decompression and timeouts. The
 * retries are the core's (send.ts), so got's are off; status errors are the core's too, so got hands back every status.
 */
import type http from 'node:http';
import * as zlib from 'node:zlib';
import got, { type Got, type Method, type PlainResponse, type Request as GotRequest } from 'got';
import { redact, redactUrl, registerSecret, sensitiveHeaders } from '../redact.js';
import { isStreamed } from './bodies.js';
import { ProtocolError } from './errors.js';
import { proxyRefusal } from './failures.js';
import { addHeaders } from './headers.js';
import { createProxyAgents, type ProxyAgents, type ProxySettings } from './proxy.js';
import type { AgentTlsOptions } from './tls.js';
import type { RequestOptions, Timeouts } from './types.js';
import { announceWait, answerNoticeMs } from '../waits.js';

/** Methods got ends by itself when they carry no body; any other gets an empty body, sent with Content-Length: 0. */
const bodilessMethods = new Set(['GET', 'HEAD']);
/** What got's `decompress` decodes (decompress-response: zstd where Node has it). */
const decodedEncodings = new Set(['gzip', 'deflate', 'br', ...('createZstdDecompress' in zlib ? ['zstd'] : [])]);
/** Failures of attempts sent on a connection taken from the pool (`ClientRequest.reusedSocket`), as got reports it. */
const failedOnReusedConnection = new WeakSet<object>();

/** Whether an attempt's failure happened on a connection taken from the pool. */
export function failedOnReused(error: unknown): boolean {
  return error !== null && typeof error === 'object' && failedOnReusedConnection.has(error);
}

/** The final response of one attempt (got followed the redirects), its body not read yet. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  url: string;
  redirectUrls: string[];
  /** got's request stream: the body, decoded. */
  body: GotRequest;
  /** Content-Length no longer describes the body: got decoded it. */
  decoded: boolean;
  /** The request is over: let the caller's signal go and release the request. */
  finish(): void;
}

export interface AttemptSettings {
  tls: AgentTlsOptions;
  proxy: ProxySettings;
  connectTimeoutMs: number;
  baseHeaders: Record<string, string>;
  baseMaxRedirects: number;
}

export interface Attempts {
  /** The client's keep-alive pools. */
  readonly agents: ProxyAgents;
  /** One attempt: resolves once got has the final response's headers (redirects followed), rejects without one. */
  open(request: RequestOptions, url: URL, timeouts: Timeouts, attempt: { attempt: number; attempts: number }): Promise<Answer>;
  close(): void;
}

/** An attempt still without an answer after `answerNoticeMs` is told (lib/http/waits.ts), with when it gives up. */
function noticeWhilePending(url: URL, timeouts: Timeouts, attempt: { attempt: number; attempts: number }): NodeJS.Timeout | undefined {
  const limit = Math.min(timeouts.response, timeouts.total ?? Number.POSITIVE_INFINITY);
  if (limit <= answerNoticeMs) return undefined;
  const started = Date.now();
  const timer = setTimeout(
    () => announceWait({ kind: 'answer', host: url.host, afterMs: answerNoticeMs, givesUpAt: started + limit, ...attempt }),
    answerNoticeMs,
  );
  timer.unref();
  return timer;
}

export function createAttempts(settings: AttemptSettings): Attempts {
  const { tls, baseHeaders, baseMaxRedirects } = settings;
  // One keep-alive pool per client for each scheme, its connections direct or through the proxy (proxy.ts).
  const agents = createProxyAgents(settings.proxy, { connectTimeoutMs: settings.connectTimeoutMs });
  // A streamed body can be sent only once, so it never goes on a pooled connection the server may be closing (the race
  // a resend covers for other bodies): a connection of its own, closed after. Made on the first such request.
  let freshAgents: ProxyAgents | undefined;
  const fresh = () => (freshAgents ??= createProxyAgents(settings.proxy, { connectTimeoutMs: settings.connectTimeoutMs, keepAlive: false }));

  const client: Got = got.extend({
    agent: { http: agents.http, https: agents.https },
    https: {
      rejectUnauthorized: tls.rejectUnauthorized,
      ...(tls.ca ? { certificateAuthority: tls.ca } : {}),
      ...(tls.cert ? { certificate: tls.cert, key: tls.key } : {}),
      ...(tls.servername ? { serverName: tls.servername } : {}),
    },
    decompress: true,
    retry: { limit: 0 },
    throwHttpErrors: false,
    hooks: {
      beforeRedirect: [
        (next, response) => {
          const from = new URL(response.url);
          const to = next.url instanceof URL ? next.url : new URL(String(next.url));
          if (to.protocol !== 'http:' && to.protocol !== 'https:') {
            throw new ProtocolError(`${response.request.options.method} ${redactUrl(from)} redirected to ${redactUrl(to)}, which is not http(s)`);
          }
          // Credentials go to the origin they were meant for, never to a host a redirect points at. got drops
          // Authorization and Cookie when the host or port changes; every header we know is secret (X-Secrets-Token,
          // X-Api-Key, registry and platform tokens in Authorization, …) goes, and on a change of scheme too.
          if (to.origin !== from.origin) {
            for (const name of Object.keys(next.headers)) if (sensitiveHeaders.has(name.toLowerCase())) delete next.headers[name];
          }
          if (response.statusCode === 303) delete next.headers['content-type'];
        },
      ],
      // What escapes got unwrapped (a body stream's error) says no more than our own errors would.
      beforeError: [
        (error) => {
          error.message = redact(error.message);
          return error;
        },
      ],
    },
  });

  function open(request: RequestOptions, url: URL, timeouts: Timeouts, attempt: { attempt: number; attempts: number }): Promise<Answer> {
    const headers = addHeaders({ ...baseHeaders }, request.headers);
    let body: RequestOptions['body'] = request.body;
    if (request.json !== undefined) {
      body = JSON.stringify(request.json);
      headers['content-type'] ??= 'application/json';
    }
    if (!headers.accept && (request.responseType ?? 'json') === 'json') headers.accept = 'application/json';
    const target = new URL(url);
    if (target.username || target.password) {
      // Userinfo never goes on the wire as part of the address: it becomes Basic credentials for that origin only
      // (the beforeRedirect hook drops them on a change of origin).
      const basic = Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64');
      registerSecret(basic);
      if (target.password) registerSecret(decodeURIComponent(target.password));
      headers.authorization ??= `Basic ${basic}`;
      target.username = '';
      target.password = '';
    }
    const method = (request.method ?? 'GET').toUpperCase();
    const streamed = isStreamed(body);
    const { signal } = request;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const stream = client.stream(target, {
        ...(streamed ? { agent: { http: fresh().http, https: fresh().https } } : {}),
        method: method as Method,
        headers,
        body: body ?? (bodilessMethods.has(method) ? undefined : ''),
        // A streamed body cannot be sent again: a 307 or 308 is handed back rather than followed.
        followRedirect: request.followRedirects === false ? false : (response: PlainResponse) => !(streamed && response.statusCode !== 303),
        maxRedirects: request.maxRedirects ?? baseMaxRedirects,
        timeout: {
          connect: timeouts.connect,
          secureConnect: timeouts.connect,
          response: timeouts.response,
          socket: timeouts.response,
          ...(timeouts.total ? { request: timeouts.total } : {}),
        },
      });
      const onAbort = () => stream.destroy(signal?.reason as Error);
      signal?.addEventListener('abort', onAbort, { once: true });
      const pending = noticeWhilePending(target, timeouts, attempt);
      const finish = () => {
        clearTimeout(pending);
        signal?.removeEventListener('abort', onAbort);
        if (!stream.destroyed) stream.destroy();
      };
      const onError = (error: unknown) => {
        if (stream.reusedSocket && error !== null && typeof error === 'object') failedOnReusedConnection.add(error);
        finish();
        reject(error);
      };
      stream.once('error', onError);
      stream.once('response', (response: PlainResponse) => {
        clearTimeout(pending);
        // A 407 counts as the proxy's only on a request that went to the proxy itself: through a tunnel or direct,
        // it is the server's answer like any other status.
        const sentWith = streamed ? fresh() : agents;
        if (response.statusCode === 407 && sentWith.forwarded((response as PlainResponse & { req?: http.ClientRequest }).req)) {
          onError(proxyRefusal(response));
          return;
        }
        stream.off('error', onError);
        // Until a reader takes the body, an error on it must not go unheard.
        stream.on('error', () => undefined);
        const finalMethod = response.request.options.method;
        const decoded =
          decodedEncodings.has(String(response.headers['content-encoding'] ?? '').toLowerCase()) &&
          finalMethod !== 'HEAD' &&
          ![204, 205, 304].includes(response.statusCode) &&
          response.statusCode >= 200;
        const answerHeaders = { ...response.headers };
        if (decoded) {
          delete answerHeaders['content-length'];
          delete answerHeaders['content-encoding'];
        }
        resolve({
          status: response.statusCode,
          headers: answerHeaders,
          url: response.url,
          redirectUrls: response.redirectUrls.map(String),
          body: stream,
          decoded,
          finish,
        });
      });
    });
  }

  return {
    agents,
    open,
    close() {
      agents.destroy();
      freshAgents?.destroy();
    },
  };
}
