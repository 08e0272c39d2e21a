import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const lean = fileURLToPath(new URL('../../lib/http/undici.ts', import.meta.url));

/** Runs an ES module script in a fresh node (with tsx) so nothing else has loaded undici yet; returns its JSON line. */
function inFreshProcess(script: string): Record<string, unknown> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;
}

describe('HTTP core: the lean undici entry (lib/http/undici.ts)', () => {
  it('loads the Agent and its request API without undici\'s index (fetch, WebSocket, cookies, cache, mocks)', () => {
    const seen = inFreshProcess(`
      import { createRequire } from 'node:module';
      const { Agent } = await import(${JSON.stringify(lean)});
      const cache = createRequire(import.meta.url).cache;
      const loaded = Object.keys(cache).filter((file) => file.includes('/node_modules/undici/'));
      console.log(JSON.stringify({
        index: loaded.some((file) => file.endsWith('/node_modules/undici/index.js')),
        fetch: loaded.some((file) => file.includes('/undici/lib/web/')),
        mock: loaded.some((file) => file.includes('/undici/lib/mock/')),
        request: typeof Agent.prototype.request,
        stream: typeof Agent.prototype.stream,
      }));
    `);
    assert.deepEqual(seen, { index: false, fetch: false, mock: false, request: 'function', stream: 'function' });
  });

  it('gives the very Agent class undici exports, with the same request method (an upgrade that moves a file fails here)', () => {
    const seen = inFreshProcess(`
      const { Agent } = await import(${JSON.stringify(lean)});
      const undici = await import('undici');
      console.log(JSON.stringify({ sameAgent: Agent === undici.Agent, sameRequest: Agent.prototype.request === undici.Agent.prototype.request}));
    `);
    assert.deepEqual(seen, { sameAgent: true, sameRequest: true });
  });

  it('answers a real request through the lean Agent with undici\'s own request API', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((_request, response) => response.end('lean'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { Agent } = await import('../../lib/http/undici.js');
      const agent = new Agent();
      const { port } = server.address() as { port: number };
      const response = await agent.request({ origin: `http://127.0.0.1:${port}`, path: '/', method: 'GET' });
      assert.equal(response.statusCode, 200);
      assert.equal(await response.body.text(), 'lean');
      await agent.close();
    } finally {
      server.close();
    }
  });
});
