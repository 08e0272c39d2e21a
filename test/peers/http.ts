import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Handler = (request: RecordedRequest, response: http.ServerResponse, socket: Socket) => void | Promise<void>;

export interface HttpPeer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Replace the handler between tests. */
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export interface HttpPeerOptions {
  tls?: { cert: string; key: string; ca?: string; requestCert?: boolean };
}

/** Keeps the open connections of a server; the function returned ends them, so that close() does not wait on keep-alive. */
export function trackSockets(server: net.Server): () => void {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return () => {
    for (const socket of sockets) socket.destroy();
  };
}

/** A real HTTP(S) server on 127.0.0.1 whose behaviour a test programs, recording every request it gets. */
export async function startHttpPeer(handler: Handler, options: HttpPeerOptions = {}): Promise<HttpPeer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      Promise.resolve(current(recorded, res, req.socket)).catch((error: Error) => {
        res.writeHead(599);
        res.end(String(error.stack));
      });
    });
  };
  const server = options.tls
    ? https.createServer(
        {
          cert: options.tls.cert,
          key: options.tls.key,
          ca: options.tls.ca,
          requestCert: options.tls.requestCert ?? false,
          rejectUnauthorized: options.tls.requestCert ?? false,
        },
        listener,
      )
    : http.createServer(listener);
  const destroySockets = trackSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    handle(next) {
      current = next;
    },
    close() {
      destroySockets();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}
