// A plain HTTP/1.1 server written on node:net, for the ways a real server ends a connection that a client's pool may
// still hold: 'when-asked' closes after answering a request that says `Connection: close` without echoing the header
// (RFC 9112 §9.6 allows it; Python's http.server does so), 'after-answer' closes every connection right after
// answering, never saying so (a server whose idle timeout is shorter than the client's), 'drop-reused' ends a
// connection without an answer when a second request comes on it (the server closing it just as the request
// arrives). Every request is recorded with the number of the connection it came on.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export type CloseMode = 'when-asked' | 'after-answer' | 'drop-reused' | 'never';

export interface ClosingRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** 1 for the first connection the server accepted, and so on. */
  connection: number;
}

export interface ClosingAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string | object;
}

export interface ClosingServer {
  url: string;
  requests: ClosingRequest[];
  mode: CloseMode;
  /** Connections accepted so far. */
  readonly connections: number;
  answer(handler: (request: ClosingRequest) => ClosingAnswer): void;
  close(): Promise<void>;
}

const reasons: Record<number, string> = { 200: 'OK', 201: 'Created', 204: 'No Content', 400: 'Bad Request', 404: 'Not Found' };

/** Reads one request from `buffer`: its parts and the bytes it took, or undefined while it is incomplete. */
function parseRequest(buffer: Buffer): { request: Omit<ClosingRequest, 'connection'>; used: number } | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [line = '', ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const [method = '', path = ''] = line.split(' ');
  const headers: Record<string, string> = {};
  for (const header of lines) {
    const colon = header.indexOf(':');
    headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  }
  let at = end + 4;
  let body: Buffer;
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
    body = Buffer.concat(parts);
  } else {
    const length = Number(headers['content-length'] ?? 0);
    if (buffer.length < at + length) return undefined;
    body = buffer.subarray(at, at + length);
    at += length;
  }
  return { request: { method, path, headers, body: body.toString('utf8') }, used: at };
}

export async function startClosingServer(mode: CloseMode, handler: (request: ClosingRequest) => ClosingAnswer = () => ({ body: {} })): Promise<ClosingServer> {
  let current = handler;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const requests: ClosingRequest[] = [];
  const server = net.createServer((socket) => {
    connections += 1;
    const connection = connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    let served = 0;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const parsed = parseRequest(pending);
        if (!parsed) return;
        pending = pending.subarray(parsed.used);
        const request = { ...parsed.request, connection };
        requests.push(request);
        served += 1;
        if (mode === 'drop-reused' && served > 1) {
          socket.destroy();
          return;
        }
        const answer = current(request);
        const status = answer.status ?? 200;
        const body = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
        const headers: Record<string, string> = {
          ...(typeof answer.body === 'object' ? { 'content-type': 'application/json' } : {}),
          ...answer.headers,
          'content-length': String(Buffer.byteLength(body)),
        };
        const head = [`HTTP/1.1 ${status} ${reasons[status] ?? 'Status'}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join('\r\n');
        socket.write(`${head}\r\n\r\n${request.method === 'HEAD' ? '' : body}`);
        // Neither mode says `Connection: close`: the client learns of the close only from the socket.
        const asked = /(^|[\s,])close($|[\s,])/i.test(request.headers.connection ?? '');
        if (mode === 'after-answer' || (mode === 'when-asked' && asked)) {
          // Closed for good, as a server that closes its socket: what comes after is never read.
          socket.removeAllListeners('data');
          socket.end();
          return;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    mode,
    get connections() {
      return connections;
    },
    answer(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
