/** Serves examples/site on 127.0.0.1 for the demo steps that need a deployed page (the gate, the browser check). */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

export interface DemoSite {
  url: string;
  stop(): Promise<void>;
}

export async function serveDemoSite(examplesDir: string, host = '127.0.0.1'): Promise<DemoSite> {
  const root = join(examplesDir, 'site');
  const server = http.createServer((req, res) => {
    void (async () => {
      const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
      const relative = normalize(pathname.endsWith('/') ? `${pathname}index.html` : pathname).replace(/^([/\\])+/, '');
      const file = join(root, relative);
      if (relative.startsWith('..') || !file.startsWith(root + sep)) {
        res.writeHead(400).end();
        return;
      }
      try {
        const body = await readFile(file);
        res.writeHead(200, {
          'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
          'content-length': body.length,
          'cache-control': 'max-age=3600',
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      } catch {
        const body = '<!doctype html><html lang="en"><head><title>Not found</title></head><body><h1>Not found</h1></body></html>';
        res.writeHead(404, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Runs `use` with examples/site served on 127.0.0.1, and stops serving when it ends, whatever its outcome. */
export async function withDemoSite<T>(examplesDir: string, use: (site: DemoSite) => Promise<T>): Promise<T> {
  const site = await serveDemoSite(examplesDir);
  try {
    return await use(site);
  } finally {
    await site.stop();
  }
}
