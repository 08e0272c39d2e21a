// The HTTP core's connection policy (lib/http/keep-alive.ts, client.ts): a connection is never used after the client
// asked to close it, nor after the server closed it while it sat in the pool, and a reused connection the server ended
// before answering costs an idempotent request one more sending on a new connection — never a POST that may have
// been read, never a streamed body — outside the retry policy's count.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import http from 'node:http';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { createHttpClient, createProxyAgents, definePolicy, NetworkError, noRetry } from '../../lib/http/index.js';
import { reuseAtOnceMs, unrepeatableReuseMs } from '../../lib/http/keep-alive.js';
import { createLogger } from '../../lib/log.js';
import {
  deviceAuthorizationRequest,
  introspectionRequest,
  processIntrospectionResponse,
  refreshTokenGrantRequest,
  revocationRequest,
} from '../../lib/oauth/index.js';
import { startClosingServer, type ClosingAnswer, type ClosingServer } from '../peers/closing-http.js';

/** A client whose debug lines are kept: a resend says so there. */
function recordingClient() {
  const lines: string[] = [];
  const http = createHttpClient({ retry: noRetry, logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }) });
  return { http, resends: () => lines.filter((line) => line.includes('sending again')) };
}

describe('HTTP core: connections (lib/http/keep-alive.ts)', () => {
  const servers: ClosingServer[] = [];
  const start = async (...args: Parameters<typeof startClosingServer>) => {
    const server = await startClosingServer(...args);
    servers.push(server);
    return server;
  };
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  it('HTTP-CONN-CLOSE-POLICY: a request that says Connection: close gives its connection up, though the server closes without echoing the header', async () => {
    const server = await start('when-asked', () => ({ body: { ok: true } }));
    const { http, resends } = recordingClient();
    try {
      for (let round = 0; round < 5; round += 1) {
        for (const method of ['POST', 'GET', 'PUT', 'DELETE']) {
          const response = await http.request<{ ok: boolean }>({
            method,
            url: `${server.url}/x`,
            headers: { connection: 'close' },
            ...(method === 'GET' ? {} : { body: 'a=1' }),
          });
          assert.deepEqual(response.body, { ok: true });
          assert.equal(response.attempts, 1);
        }
      }
      assert.equal(server.requests.length, 20);
      assert.equal(server.connections, 20, 'each request on a connection of its own');
      assert.ok(
        server.requests.every((request) => request.headers.connection === 'close'),
        'the header went out as asked',
      );
      assert.deepEqual(resends(), [], 'no request was written to a connection the client had asked to close');
    } finally {
      http.close();
    }
  });

  it('HTTP-CONN-CLOSE-POLICY: without Connection: close, requests share one kept connection', async () => {
    const server = await start('never', () => ({ body: { ok: true } }));
    const http = createHttpClient({ retry: noRetry });
    try {
      for (let index = 0; index < 4; index += 1) await http.request({ method: 'POST', url: `${server.url}/x`, body: 'a=1' });
      assert.equal(server.connections, 1);
      assert.ok(server.requests.every((request) => request.headers.connection === 'keep-alive'));
    } finally {
      http.close();
    }
  });

  it('HTTP-CONN-CLOSE-POLICY: a pooled connection the server closed right after answering is never written to, whatever the method', async () => {
    const server = await start('after-answer', () => ({ body: { ok: true } }));
    const { http, resends } = recordingClient();
    try {
      for (let round = 0; round < 5; round += 1) {
        for (const method of ['POST', 'PATCH', 'GET', 'PUT']) {
          const response = await http.request({ method, url: `${server.url}/x`, ...(method === 'GET' ? {} : { body: 'form=1' }) });
          assert.equal(response.status, 200);
          assert.equal(response.attempts, 1);
        }
      }
      assert.equal(server.requests.length, 20, 'every request was sent once: none went on a closed connection and needed a resend');
      assert.equal(server.connections, 20);
      assert.deepEqual(resends(), [], 'none went on a closed connection and needed a resend');
    } finally {
      http.close();
    }
  });

  it('HTTP-CONN-CLOSE-POLICY: a request on a reused connection the server ended unanswered goes once more on a new one when it may be repeated (an idempotent method, or an Idempotency-Key), outside the policy count', async () => {
    const server = await start('drop-reused', () => ({ body: { ok: true } }));
    // No retries at all in the policy: the resend is not the policy's.
    const { http, resends } = recordingClient();
    try {
      await http.request({ url: `${server.url}/first` });
      for (const method of ['GET', 'PUT', 'DELETE', 'HEAD', 'POST']) {
        const idempotencyKey = method === 'POST' ? { 'Idempotency-Key': 'k-1' } : {};
        const response = await http.request({
          method,
          url: `${server.url}/${method}`,
          responseType: 'text',
          headers: idempotencyKey,
          ...(['GET', 'HEAD', 'DELETE'].includes(method) ? {} : { body: `${method} body` }),
        });
        assert.equal(response.status, 200);
        assert.equal(response.attempts, 1, 'the resend is not an attempt of the policy');
      }
      const sent = server.requests.map((request) => `${request.method} ${request.path} #${request.connection}`);
      assert.deepEqual(sent, [
        'GET /first #1',
        'GET /GET #1',
        'GET /GET #2',
        'PUT /PUT #2',
        'PUT /PUT #3',
        'DELETE /DELETE #3',
        'DELETE /DELETE #4',
        'HEAD /HEAD #4',
        'HEAD /HEAD #5',
        'POST /POST #5',
        'POST /POST #6',
      ]);
      assert.ok(
        server.requests.filter((request) => ['POST', 'PUT'].includes(request.method)).every((request) => request.body === `${request.method} body`),
        'the same body both times',
      );
      assert.equal(resends().length, 5);
      assert.match(
        resends()[4]!,
        /^debug: POST http:\/\/127\.0\.0\.1:\d+\/POST: the reused connection ended before an answer \(ECONNRESET\); sending again on a new one$/,
      );
    } finally {
      http.close();
    }
  });

  it("HTTP-CONN-CLOSE-POLICY: a POST or PATCH the server read and then dropped unanswered is not sent again — it may have been acted on (Go's shouldRetryRequest; a second code exchange would revoke the first one's tokens)", async () => {
    const server = await start('drop-reused', () => ({ body: { ok: true } }));
    const { http, resends } = recordingClient();
    try {
      for (const method of ['POST', 'PATCH']) {
        const before = server.requests.length;
        await http.request({ url: `${server.url}/warm-${method}` });
        await assert.rejects(
          http.request({ method, url: `${server.url}/${method}`, body: `${method} body` }),
          (error: NodeJS.ErrnoException & { errorCode?: string }) => {
            assert.equal(error.name, 'NetworkError', String(error));
            assert.equal(error.errorCode, 'ECONNRESET');
            return true;
          },
        );
        assert.deepEqual(
          server.requests.slice(before).map((request) => `${request.method} ${request.path}`),
          [`GET /warm-${method}`, `${method} /${method}`],
          'reached the server once',
        );
      }
      assert.deepEqual(resends(), []);
    } finally {
      http.close();
    }
  });

  it('HTTP-CONN-CLOSE-POLICY: a POST its caller marks repeatable — an OAuth device authorization, revocation or introspection (RFC 8628, RFC 7009, RFC 7662) — goes once more when a reused connection ends unanswered; a token request does not', async () => {
    const server = await start('drop-reused', (request) =>
      request.path === '/token' ? { status: 400, body: { error: 'invalid_grant' } } : { body: request.path === '/introspect' ? { active: false } : {} },
    );
    const { http, resends } = recordingClient();
    const config = {
      http,
      server: {
        token_endpoint: `${server.url}/token`,
        device_authorization_endpoint: `${server.url}/device`,
        revocation_endpoint: `${server.url}/revoke`,
        introspection_endpoint: `${server.url}/introspect`,
      },
    };
    try {
      await http.request({ url: `${server.url}/warm-1` });
      assert.equal((await deviceAuthorizationRequest(config, { client_id: 'cli' })).status, 200);
      assert.equal((await revocationRequest(config, 'tok-revoke-4a7c')).status, 200);
      assert.deepEqual(processIntrospectionResponse(await introspectionRequest(config, 'tok-intro-9b2e')), { active: false });
      await assert.rejects(refreshTokenGrantRequest(config, 'tok-refresh-5d1f'), (error: Error & { errorCode?: string }) => {
        assert.equal(error.errorCode, 'ECONNRESET', String(error));
        return true;
      });
      assert.deepEqual(
        server.requests.map((request) => `${request.method} ${request.path} #${request.connection}`),
        [
          'GET /warm-1 #1',
          'POST /device #1',
          'POST /device #2',
          'POST /revoke #2',
          'POST /revoke #3',
          'POST /introspect #3',
          'POST /introspect #4',
          'POST /token #4',
        ],
      );
      assert.ok(
        server.requests.filter((request) => request.path === '/revoke').every((request) => request.body === 'token=tok-revoke-4a7c'),
        'the same form both times',
      );
      assert.equal(resends().length, 3);
    } finally {
      http.close();
    }
  });

  it('HTTP-CONN-CLOSE-POLICY: a streamed body, which cannot be sent again, goes on a connection of its own, never a pooled one', async () => {
    const server = await start('drop-reused', () => ({ body: { ok: true } }));
    const http = createHttpClient({ retry: noRetry });
    try {
      await http.request({ url: `${server.url}/warm` });
      const response = await http.request({ method: 'PUT', url: `${server.url}/streamed`, body: Readable.from([Buffer.from('stream')]) });
      assert.equal(response.status, 200);
      const streamed = server.requests.filter((request) => request.path === '/streamed');
      assert.equal(streamed.length, 1);
      assert.equal(streamed[0]!.connection, 2, 'a new connection, though connection 1 was idle in the pool');
      assert.equal(streamed[0]!.body, 'stream');
      assert.equal(streamed[0]!.headers.connection, 'close', 'and it is closed after');
    } finally {
      http.close();
    }
  });

  it("HTTP-CONN-CLOSE-POLICY: a connection that was not reused and ends unanswered is the policy's failure, not resent", async () => {
    const server = await start('drop-reused', () => ({ body: { ok: true } }));
    const http = createHttpClient({ retry: noRetry });
    try {
      // A fresh connection per request (Connection: close): none is ever reused, so nothing is resent.
      const response = await http.request({ method: 'POST', url: `${server.url}/fresh`, body: 'x', headers: { connection: 'close' } });
      assert.equal(response.status, 200);
      assert.equal(server.requests.length, 1);
    } finally {
      http.close();
    }
  });

  it("HTTP-CONN-CLOSE-POLICY: the resend happens once; when it meets an ended connection too, the failure is the policy's", async () => {
    const server = await start('drop-reused', () => ({ body: { ok: true } }));
    const warmTwo = (http: ReturnType<typeof createHttpClient>) =>
      Promise.all([http.request({ url: `${server.url}/warm` }), http.request({ url: `${server.url}/warm` })]);
    const once = createHttpClient({ retry: noRetry });
    try {
      // Two pooled connections, each of which the server drops at its next request.
      await warmTwo(once);
      const error = await once.request({ url: `${server.url}/once` }).catch((caught: unknown) => caught);
      assert.ok(error instanceof NetworkError, String(error));
      assert.equal(error.attempts, 1);
      assert.equal(server.requests.filter((request) => request.path === '/once').length, 2, 'the first sending and one resend, no more');
    } finally {
      once.close();
    }
    const retrying = createHttpClient({
      retry: definePolicy({ retries: 1, errorCodes: ['ECONNRESET'], backoff: { initialMs: 1, maxMs: 1, factor: 1, jitter: 0 } }),
    });
    try {
      await warmTwo(retrying);
      const response = await retrying.request({ url: `${server.url}/counted` });
      assert.equal(response.attempts, 2, 'the policy retried once, counted; the resend was not');
      assert.equal(server.requests.filter((request) => request.path === '/counted').length, 3);
    } finally {
      retrying.close();
    }
  });

  it('HTTP-CONN-CLOSE-POLICY: a POST or PATCH takes a pooled connection idle under 1 s, else a new one — a late server timer may reset it unanswered, and it cannot be sent again; a GET or a POST with an Idempotency-Key still reuses it', async () => {
    const server = await start('never', () => ({ body: { ok: true } }));
    const http = createHttpClient({ retry: noRetry });
    const pause = () => new Promise((resolve) => setTimeout(resolve, unrepeatableReuseMs + 150));
    const connectionOfLast = () => server.requests.at(-1)!.connection;
    try {
      await http.request({ method: 'POST', url: `${server.url}/a`, body: 'a=1' });
      await http.request({ method: 'POST', url: `${server.url}/b`, body: 'a=2' });
      assert.equal(connectionOfLast(), 1, 'a POST right after an answer reuses its connection');
      await pause();
      await http.request({ method: 'GET', url: `${server.url}/c` });
      assert.equal(connectionOfLast(), 1, 'a GET after a pause reuses the connection');
      await pause();
      await http.request({ method: 'POST', url: `${server.url}/d`, body: 'a=3', headers: { 'Idempotency-Key': 'k-1' } });
      assert.equal(connectionOfLast(), 1, 'a POST with an Idempotency-Key after a pause reuses the connection');
      await pause();
      await http.request({ method: 'PATCH', url: `${server.url}/e`, body: 'a=4' });
      assert.equal(connectionOfLast(), 2, 'a PATCH after a pause goes on a new connection');
      await pause();
      await http.request({ method: 'POST', url: `${server.url}/f`, body: 'a=5' });
      assert.equal(connectionOfLast(), 3, 'a POST after a pause goes on a new connection');
      await http.request({ method: 'POST', url: `${server.url}/g`, body: 'a=6' });
      assert.equal(connectionOfLast(), 3, 'and the next one, at once, reuses that one');
      assert.equal(server.connections, 3);
    } finally {
      http.close();
    }
  });

  it('HTTP-CONN-CLOSE-POLICY: a request waits one turn of the event loop for a pooled connection, unless every pooled connection has carried two answers and came back under 100 ms ago', async () => {
    const server = await start('never', () => ({ body: { ok: true } }));
    const agents = createProxyAgents({});
    // Whether the request had its connection before an immediate queued right after it ran: at once, the agent hands
    // the connection over on the next tick; after the wait, two immediates later.
    const sendAndSee = async (path: string) => {
      const request = http.get(`${server.url}${path}`, { agent: agents.http });
      await new Promise((resolve) => setImmediate(resolve));
      const atOnce = request.socket !== null && request.socket !== undefined;
      const [response] = (await once(request, 'response')) as [http.IncomingMessage];
      response.resume();
      await once(response, 'end');
      // The agent pools the connection on the tick after the body's end.
      await new Promise((resolve) => setImmediate(resolve));
      return atOnce;
    };
    try {
      assert.equal(await sendAndSee('/1'), true, 'nothing pooled: a new connection at once');
      assert.equal(await sendAndSee('/2'), false, 'the connection has carried one answer: the request waits');
      assert.equal(await sendAndSee('/3'), true, 'two answers, back just now: taken at once');
      assert.equal(await sendAndSee('/4'), true);
      await new Promise((resolve) => setTimeout(resolve, reuseAtOnceMs + 50));
      assert.equal(await sendAndSee('/5'), false, 'back over 100 ms ago: the request waits again');
      assert.equal(server.connections, 1, 'every request went on the one connection');
    } finally {
      agents.destroy();
    }
  });

  it("HTTP-CONN-CLOSE-POLICY: an idle connection stays in the pool 4 s at most, less when the server's Keep-Alive says so", async () => {
    const server = await start('never', (request): ClosingAnswer => ({
      body: { ok: true },
      ...(request.path === '/hint' ? { headers: { 'keep-alive': 'timeout=3' } } : {}),
    }));
    const agents = createProxyAgents({});
    try {
      const idleTimeout = async (path: string) => {
        const request = http.get(`${server.url}${path}`, { agent: agents.http });
        const [response] = (await once(request, 'response')) as [http.IncomingMessage];
        response.resume();
        await once(response, 'end');
        await new Promise((resolve) => setImmediate(resolve));
        const idle = Object.values(agents.http.freeSockets).flat() as Socket[];
        assert.equal(idle.length, 1);
        return idle[0]!.timeout;
      };
      assert.equal(await idleTimeout('/plain'), 4_000);
      assert.equal(await idleTimeout('/hint'), 2_000, "the server's 3 s, less Node's 1 s margin");
    } finally {
      agents.destroy();
    }
  });
});
