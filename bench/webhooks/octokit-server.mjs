// The peer of bench/webhooks: @octokit/webhooks' Node middleware on node:http, as its README shows it
// (`createServer(createNodeMiddleware(webhooks)).listen(…)`), with one no-op handler for every event (`onAny`), in a
// plain-node process of its own (no TypeScript loader in its memory), so its CPU and memory are its own.
// Per delivery it: checks the path, the method, Content-Type (JSON only) and three headers (X-GitHub-Event,
// X-GitHub-Delivery, X-Hub-Signature-256); buffers the whole body (any size: no cap), decodes it to a string; checks
// the sha256 HMAC over that string's UTF-8 bytes; JSON.parse; runs the handlers (here one no-op) and answers 200
// "ok" once they are done (202 after 9 s).
// Prints {"listening": "<url>", "pid": n} as its first stdout line. The secret comes from BENCH_WEBHOOKS_SECRET.
import { createServer } from 'node:http';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';

const secret = process.env.BENCH_WEBHOOKS_SECRET;
if (!secret) {
  console.error('octokit-server: set BENCH_WEBHOOKS_SECRET');
  process.exit(2);
}
const webhooks = new Webhooks({ secret });
webhooks.onAny(() => {});

const server = createServer(createNodeMiddleware(webhooks, { path: '/hooks' }));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${port}/hooks`, pid: process.pid })}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
