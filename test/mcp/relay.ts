/**
 * A recording relay for the context server's upstreams (the registry, the secrets service, the platform): every
 * request that passes is kept whole — method, URL, headers, body — so a test can search them for a token that must
 * never have travelled there (CTX-AUTH-NO-TOKEN-PASSTHROUGH). It forwards to `target` unchanged.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Relay {
  url: string;
  host: string;
  /** Each request as text: the request line, every header and the body. */
  seen: string[];
  stop(): Promise<void>;
}

export async function startRelay(target: string): Promise<Relay> {
  const upstream = new URL(target);
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push(`${req.method} ${req.url}\n${req.rawHeaders.join('\n')}\n\n${body.toString('utf8')}`);
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.writeHead(502).end());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
