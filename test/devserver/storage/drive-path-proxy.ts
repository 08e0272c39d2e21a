// TEST-ONLY: a byte-forwarding HTTP proxy on 127.0.0.1 that turns googleapis' Drive v2 paths into the storage API's
// (`/drive/v2/…` → `/storage/v2/…`, `/upload/drive/v2/…` → `/upload/storage/v2/…`) and changes nothing else.
//
// Why it exists: the storage API is Drive v2 with `drive` renamed `storage` (spec §A), and @googleapis/drive writes
// `/drive/v2` into every URL it builds — its `rootUrl` option replaces only the scheme, host and port. To cross-check
// the embedded server with that real, unmodified client, something must rename the path on the wire. The proxy
// never parses or re-serialises a body (request and response bytes are piped as they come, chunked or not), so what
// the client sends and what the server answers are exactly what each produced; only the request line's path
// changes. It is no part of the product: the embedded server answers `/storage/v2` only, and Gantry's own client
// speaks `/storage/v2` itself.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PathProxy {
  /** `http://127.0.0.1:<port>/`, for the client's `rootUrl`. */
  url: string;
  /** Request paths as they arrived (before the rewrite), for assertions about what the client sent. */
  seen: { method: string; path: string }[];
  close(): Promise<void>;
}

/** Renames the Drive prefixes of a request target (path and query); anything else passes unchanged. */
export function rewriteDrivePath(target: string): string {
  if (target.startsWith('/drive/v2/') || target === '/drive/v2' || target.startsWith('/drive/v2?')) return `/storage/v2${target.slice('/drive/v2'.length)}`;
  if (target.startsWith('/upload/drive/v2/') || target.startsWith('/upload/drive/v2?')) return `/upload/storage/v2${target.slice('/upload/drive/v2'.length)}`;
  return target;
}

export async function startPathProxy(upstream: string): Promise<PathProxy> {
  const to = new URL(upstream);
  const seen: PathProxy['seen'] = [];
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({ method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0]! });
    // rawHeaders keeps names, order and repeats as the client sent them (Host included: the server builds its links
    // from it, so they name the address the client used).
    const headers: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (req.rawHeaders[i]!.toLowerCase() === 'connection') continue;
      headers.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    }
    const out = http.request(
      { host: to.hostname, port: to.port, method: req.method, path: rewriteDrivePath(req.url ?? '/'), headers, agent: false },
      (answer) => {
        const back: string[] = [];
        for (let i = 0; i < answer.rawHeaders.length; i += 2) {
          if (answer.rawHeaders[i]!.toLowerCase() === 'connection') continue;
          back.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
        }
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, back);
        answer.pipe(res);
        answer.once('error', () => res.destroy());
      },
    );
    out.once('error', () => res.destroy());
    req.pipe(out);
    req.once('error', () => out.destroy());
    res.once('close', () => {
      if (!res.writableFinished) out.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
