// The load balancer in front of a fleet of receivers, as small as one can be: each request goes to the next upstream in
// turn (the body read first, the answer streamed back), keep-alive both ways. An upstream that cannot be reached is a 502, as nginx
// answers — the sender sees it and must not count it as delivered. It counts the answers by upstream and status, so a
// test can tell the load was spread.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trackSockets } from '../peers/http.js';

export interface RoundRobinProxy {
  url: string;
  /** "<upstream index> <status>" → answers. */
  answers: Map<string, number>;
  close(): Promise<void>;
}

export async function startRoundRobinProxy(upstreams: readonly string[]): Promise<RoundRobinProxy> {
  const targets = upstreams.map((upstream) => new URL(upstream));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const answers = new Map<string, number>();
  let next = 0;
  const server = http.createServer(async (request, response) => {
    const index = next;
    next = (next + 1) % targets.length;
    const target = targets[index]!;
    const count = (status: number) => answers.set(`${index} ${status}`, (answers.get(`${index} ${status}`) ?? 0) + 1);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const forward = (retry: boolean) => {
      const forwarded = http.request(
        { agent, host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers },
        (upstream) => {
          count(upstream.statusCode ?? 0);
          response.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(response);
        },
      );
      forwarded.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the upstream closed as it was reused: sent again once, as nginx does.
        if (retry && forwarded.reusedSocket && error.code === 'ECONNRESET') return forward(false);
        count(502);
        if (response.headersSent) response.destroy(error);
        else response.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream ${index}: ${error.message}\n`);
      });
      forwarded.end(body);
    };
    forward(true);
  });
  // Longer than the sender keeps a connection idle: the proxy never closes one under it.
  server.keepAliveTimeout = 120_000;
  const destroySockets = trackSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    close() {
      destroySockets();
      agent.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
