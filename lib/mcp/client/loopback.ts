/**
 * The loopback redirect (RFC 8252 §7.3): an HTTP server on 127.0.0.1 that takes one request at `/callback`, answers
 * the browser with a small page and hands the query to the flow. Nothing else is served; it closes after the callback
 * or the timeout.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError, bothFaces } from '../../errors.js';
import { ContextClientError } from './errors.js';

export interface CallbackServer {
  port: number;
  redirectUri: string;
  /** The callback's query parameters; rejects on timeout or abort. */
  wait(options: {
    timeoutMs: number;
    signal?: AbortSignal | undefined;
    check?: (params: URLSearchParams) => { ok: true } | { ok: false; page: string };
  }): Promise<URLSearchParams>;
  close(): Promise<void>;
}

const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family: sans-serif; margin: 3em"><h1>${title}</h1><p id="result">${text}</p></body></html>`;

export const donePage = page('Gantry is signed in', 'You can close this tab and return to the terminal.');
export const refusedPage = (why: string) => page('Gantry did not sign in', `${why} You can close this tab; the terminal says what to do next.`);

/**
 * Binds 127.0.0.1:`port` (0: any free port). A port that is taken is a UsageError `CTX_CALLBACK_PORT` (exit 2; the
 * caller may register again on another port).
 */
export async function startCallbackServer(port = 0): Promise<CallbackServer> {
  let deliver: ((params: URLSearchParams, response: http.ServerResponse) => void) | undefined;
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== '/callback') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('not found\n');
      return;
    }
    if (!deliver) {
      response.writeHead(410, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end(refusedPage('This sign-in is over.'));
      return;
    }
    deliver(url.searchParams, response);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new UsageError(`cannot listen on 127.0.0.1:${port} for the authorization callback: ${error.code ?? error.message}`, {
          code: 'CTX_CALLBACK_PORT',
          ...(port
            ? bothFaces((name) => `choose another ${name}, or leave it out for any free port`, 'callbackPort', '--callback-port')
            : { hint: 'check that loopback networking works' }),
        }),
      ),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const close = () =>
    new Promise<void>((resolve) => {
      deliver = undefined;
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return {
    port: bound,
    redirectUri: `http://127.0.0.1:${bound}/callback`,
    wait({ timeoutMs, signal, check }) {
      return new Promise<URLSearchParams>((resolve, reject) => {
        const timer = setTimeout(() => {
          finish();
          reject(
            new ContextClientError(`nobody completed the authorization in the browser within ${Math.round(timeoutMs / 1000)} s`, {
              code: 'CTX_AUTHORIZATION_TIMEOUT',
              hint: 'run the command again and finish signing in in the browser sooner',
            }),
          );
        }, timeoutMs);
        timer.unref?.();
        const onAbort = () => {
          finish();
          reject(signal?.reason ?? new Error('aborted'));
        };
        const finish = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          deliver = undefined;
        };
        if (signal?.aborted) {
          onAbort();
          return;
        }
        signal?.addEventListener('abort', onAbort, { once: true });
        deliver = (params, response) => {
          const verdict = check ? check(params) : { ok: true as const };
          const headers = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' };
          if (verdict.ok) {
            response.writeHead(200, headers);
            response.end(donePage);
          } else {
            response.writeHead(400, headers);
            response.end(verdict.page);
          }
          finish();
          resolve(params);
        };
      });
    },
    close,
  };
}
