// Pages served on 127.0.0.1 for the local engine: a light page that passes, a heavy page that fails (its content
// waits behind 2.5 s of main-thread work, so FCP, LCP and TBT are all bad), and a 404 for anything else.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const LIGHT_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="A light page for the page-analysis gate tests.">
<title>Light page</title>
<style>body{font-family:sans-serif;margin:2rem;color:#222;background:#fff}</style>
</head>
<body>
<main><h1>Light page</h1><p>Small, fast, accessible: it should pass every category threshold.</p></main>
</body>
</html>
`;

export const HEAVY_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="A heavy page for the page-analysis gate tests.">
<title>Heavy page</title>
<script>
  // Render-blocking work: nothing paints until the main thread has been busy for 2.5 s.
  const until = Date.now() + 2500;
  let x = 0;
  while (Date.now() < until) x += Math.sqrt(x + 1);
  window.__work = x;
</script>
</head>
<body>
<main><h1>Heavy page</h1><p>Everything here waited for a long blocking script.</p></main>
<script>
  setTimeout(() => { const until = Date.now() + 1500; while (Date.now() < until) {} }, 50);
</script>
</body>
</html>
`;

export interface TestSite {
  url: string;
  /** Requests seen, by path. */
  hits: string[];
  stop(): Promise<void>;
}

export async function startTestSite(): Promise<TestSite> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    hits.push(path);
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
      res.end(body);
    };
    if (path === '/') return send(200, LIGHT_PAGE);
    if (path === '/heavy') return send(200, HEAVY_PAGE);
    if (path === '/favicon.ico') return send(404, '');
    send(404, '<!doctype html><html lang="en"><head><title>Not found</title></head><body><h1>Not found</h1></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
