// A real outgoing proxy for tests: TooTallNate's `proxy` (an exact-pinned devDependency) — plain http requests in
// absolute form and CONNECT tunnels, with optional Basic authentication — on 127.0.0.1, port 0. It records what it
// saw, so a test can tell a request that went through it from one that went direct.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxy } from 'proxy';
import { trackSockets } from './http.js';

export interface ProxyPeer {
  /** http://127.0.0.1:<port>, without credentials. */
  url: string;
  port: number;
  /** Plain-http requests forwarded, as "METHOD absolute-url". */
  requests: string[];
  /** CONNECT tunnels asked for, as "host:port" (refused ones included). */
  connects: string[];
  /** Client connections the proxy accepted (keep-alive reuses one for several requests). */
  connections: number;
  /** Requests and CONNECTs refused with 407 for missing or wrong credentials. */
  refused: number;
  /** The URL with credentials, for a proxy started with some. */
  urlWithCredentials(user?: string, password?: string): string;
  reset(): void;
  close(): Promise<void>;
}

export async function startProxyPeer(options: { credentials?: { user: string; password: string } } = {}): Promise<ProxyPeer> {
  const server = createProxy(http.createServer());
  const requests: string[] = [];
  const connects: string[] = [];
  let refused = 0;
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  server.prependListener('request', (request: http.IncomingMessage) => requests.push(`${request.method} ${request.url}`));
  server.prependListener('connect', (request: http.IncomingMessage) => connects.push(String(request.url)));
  const { credentials } = options;
  if (credentials) {
    const expected = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;
    server.authenticate = (request) => {
      const ok = request.headers['proxy-authorization'] === expected;
      if (!ok) refused += 1;
      return ok;
    };
  }
  const destroySockets = trackSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    requests,
    connects,
    get connections() {
      return connections;
    },
    get refused() {
      return refused;
    },
    urlWithCredentials(user = credentials?.user ?? '', password = credentials?.password ?? '') {
      return `http://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
    },
    reset() {
      requests.length = 0;
      connects.length = 0;
      refused = 0;
      connections = 0;
    },
    close() {
      destroySockets();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
