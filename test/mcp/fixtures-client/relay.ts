/**
 * A recording relay in front of the context server: forwards every request and its streamed answer (SSE included)
 * unchanged, and records what each request carried — method, path and query, and whether it had a Bearer
 * Authorization header. The context server is started with `publicUrl` = the relay's URL, so the relay's address is
 * the resource the client signs in for.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trackSockets } from '../../peers/http.js';

export interface RelayedRequest {
  method: string;
  url: string;
  bearer: boolean;
  status: number;
}

export interface Relay {
  url: string;
  requests: RelayedRequest[];
  /** Where to forward (set once the context server runs). */
  target: URL | undefined;
  stop(): Promise<void>;
}

export async function startRelay(path = '/mcp'): Promise<Relay> {
  const requests: RelayedRequest[] = [];
  const agent = new http.Agent({ keepAlive: true });
  const relay: Relay = { url: '', requests, target: undefined, stop: async () => undefined };
  const server = http.createServer((request, response) => {
    const record: RelayedRequest = {
      method: request.method ?? '',
      url: request.url ?? '',
      bearer: /^Bearer \S+$/.test(request.headers.authorization ?? ''),
      status: 0,
    };
    requests.push(record);
    const target = relay.target!;
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: { ...request.headers, host: target.host }, agent },
      (answer) => {
        record.status = answer.statusCode ?? 0;
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502).end();
      else response.destroy();
    });
    request.pipe(upstream);
    response.on('close', () => upstream.destroy());
  });
  const closeSockets = trackSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  relay.stop = async () => {
    closeSockets();
    agent.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return relay;
}

/** A port free now (the context server is then started on it, behind the relay). */
export async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
