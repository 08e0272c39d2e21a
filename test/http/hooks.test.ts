import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { bearerAuth, createHttpClient, definePolicy, HttpError, toCredentials, type Credentials, type RetryNotice } from '../../lib/http/index.js';
import { sendJson, startHttpPeer, type HttpPeer } from '../peers/http.js';

const fast = definePolicy({ retries: 2, statuses: [503], backoff: { initialMs: 5, maxMs: 10, factor: 2, jitter: 0 }, budgetMs: 5_000 });

/** A token source that hands out `token-1`, `token-2` … and counts its renewals. */
function counting(): Credentials & { renewals: Array<string | undefined>; current: number } {
  const source = {
    current: 1,
    renewals: [] as Array<string | undefined>,
    token: async () => `token-${source.current}`,
    renew: async (refused: string | undefined) => {
      source.renewals.push(refused);
      source.current += 1;
    },
  };
  return source;
}

describe("LAYER-HOOKS: the HTTP core's hooks and its one bearer-auth plugin (lib/http)", () => {
  let peer: HttpPeer;
  /** Tokens the peer takes. */
  let good = new Set<string>();
  before(async () => {
    peer = await startHttpPeer((req, res) => {
      const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (req.url === '/busy' && peer.requests.length === 1) return sendJson(res, 503, { error: 'busy' });
      if (!good.has(token)) return sendJson(res, 401, { error: 'invalid_token' });
      sendJson(res, 200, { token });
    });
  });
  after(() => peer.close());
  beforeEach(() => {
    peer.requests.length = 0;
    good = new Set(['token-2']);
  });

  it("LAYER-HOOKS: beforeRequest runs before every attempt, beforeRetry before every wait, afterResponse sees every answer; the client's hooks run before the request's", async () => {
    const seen: string[] = [];
    const notices: RetryNotice[] = [];
    const client = createHttpClient({
      baseUrl: peer.url,
      retry: fast,
      onRetry: (notice) => notices.push(notice),
      hooks: {
        beforeRequest: [
          (context) => {
            seen.push(`client before ${context.attempt}`);
            context.headers.authorization = 'Bearer token-2';
          },
        ],
        afterResponse: [
          (answer) => {
            seen.push(`client after ${answer.status}`);
          },
        ],
        beforeRetry: [
          (retry) => {
            seen.push(`client retry ${retry.attempt}`);
          },
        ],
      },
    });
    const response = await client.request<{ token: string }>({
      url: '/busy',
      hooks: {
        beforeRequest: [
          (context) => {
            seen.push(`request before ${context.attempt}`);
          },
        ],
      },
    });
    assert.equal(response.body.token, 'token-2');
    assert.equal(response.attempts, 2);
    assert.deepEqual(seen, [
      'client before 1',
      'request before 1',
      'client after 503',
      'client retry 1',
      'client before 2',
      'request before 2',
      'client after 200',
    ]);
    assert.equal(notices.length, 1, 'onRetry is heard as before');
    client.close();
  });

  it('LAYER-CREDENTIALS: a 401 renews the token once and sends the request once more, outside the retry count', async () => {
    const source = counting();
    const client = createHttpClient({ baseUrl: peer.url, retry: fast, hooks: bearerAuth(source) });
    const response = await client.request<{ token: string }>({ url: '/x' });
    assert.equal(response.body.token, 'token-2');
    assert.equal(response.attempts, 1, 'the resend is not a retry');
    assert.deepEqual(source.renewals, ['token-1'], 'told which token was refused');
    assert.deepEqual(
      peer.requests.map((r) => r.headers.authorization),
      ['Bearer token-1', 'Bearer token-2'],
    );
    client.close();
  });

  it('LAYER-CREDENTIALS: a second 401 stands (one renewal per request); a source without renew, or one that says false, is not resent', async () => {
    good = new Set();
    const source = counting();
    const client = createHttpClient({ baseUrl: peer.url, retry: fast, hooks: bearerAuth(source) });
    const error = await client.request({ url: '/x' }).catch((e: unknown) => e);
    assert.ok(error instanceof HttpError && error.status === 401, String(error));
    assert.equal(source.renewals.length, 1);
    assert.equal(peer.requests.length, 2);

    peer.requests.length = 0;
    for (const fixed of [toCredentials('token-1'), { ...counting(), renew: async () => false }]) {
      const once = createHttpClient({ baseUrl: peer.url, retry: fast, hooks: bearerAuth(fixed) });
      await assert.rejects(once.request({ url: '/x' }), (e: unknown) => e instanceof HttpError && e.status === 401);
      once.close();
    }
    assert.equal(peer.requests.length, 2, 'each sent once');
    client.close();
  });

  it('LAYER-CREDENTIALS: a streamed body is never renewed for (it cannot be sent again); an accepted 401 is renewed for too', async () => {
    const source = counting();
    const client = createHttpClient({ baseUrl: peer.url, retry: fast, hooks: bearerAuth(source) });
    await assert.rejects(
      client.request({ method: 'PUT', url: '/x', body: Readable.from([Buffer.from('data')]) }),
      (e: unknown) => e instanceof HttpError && e.status === 401,
    );
    assert.deepEqual(source.renewals, [], 'no renewal for a request that cannot be resent');
    const answer = await client.stream({ url: '/x', accept: () => true });
    answer.body.resume();
    assert.equal(answer.status, 200);
    assert.deepEqual(source.renewals, ['token-1']);
    client.close();
  });

  it("LAYER-CREDENTIALS: a login's getAccessToken/refresh face (AuthSession, the storage client's StorageTokenSource) is Credentials", async () => {
    let current = 'token-1';
    let refreshed = 0;
    const credentials = toCredentials({
      getAccessToken: async () => current,
      refresh: async () => {
        refreshed += 1;
        current = 'token-2';
      },
    });
    const client = createHttpClient({ baseUrl: peer.url, retry: fast, hooks: bearerAuth(credentials) });
    assert.equal((await client.request<{ token: string }>({ url: '/x' })).body.token, 'token-2');
    assert.equal(refreshed, 1);
    client.close();
  });
});

describe('LAYER-HOOKS: a throttling hook over the one retry loop (what the platform limiter needs)', () => {
  let peer: HttpPeer;
  before(async () => {
    peer = await startHttpPeer((req, res) => {
      if (req.url === '/limited' && peer.requests.length <= 4) {
        res.writeHead(403, { 'content-type': 'application/json', 'x-ratelimit-remaining': '0' });
        res.end(JSON.stringify({ message: 'You have exceeded a secondary rate limit' }));
        return;
      }
      if (req.url === '/text') {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<p>no such page</p>');
        return;
      }
      if (req.url === '/busy' && peer.requests.length <= 2) return sendJson(res, 503, { error: 'busy' });
      sendJson(res, 200, { ok: true });
    });
  });
  after(() => peer.close());
  beforeEach(() => {
    peer.requests.length = 0;
  });

  it('LAYER-HOOKS: afterResponse sees the error body of an answer the request refuses (JSON or text), never an accepted one, and the error keeps it', async () => {
    const seen: Array<{ status: number; errorBody: unknown }> = [];
    const client = createHttpClient({
      baseUrl: peer.url,
      retry: fast,
      hooks: { afterResponse: [(answer) => void seen.push({ status: answer.status, errorBody: answer.errorBody })] },
    });
    const error = await client.request({ url: '/text' }).catch((e: unknown) => e);
    assert.ok(error instanceof HttpError && error.status === 404 && error.rawBody === '<p>no such page</p>', String(error));
    assert.deepEqual(seen, [{ status: 404, errorBody: { rawBody: '<p>no such page</p>' } }]);
    seen.length = 0;
    const accepted = await client.request({ url: '/text', responseType: 'text', accept: [404] });
    assert.equal(accepted.body, '<p>no such page</p>', "an accepted answer's body is the caller's, unread by the core");
    assert.deepEqual(seen, [{ status: 404, errorBody: undefined }]);
    client.close();
  });

  it("LAYER-HOOKS: a hook that reads the body, holds, and resends — the wait awaited in beforeRequest — outside the retry count, up to the policy's hookResends", async () => {
    const waits: string[] = [];
    let heldUntil = 0;
    const throttle = {
      beforeRequest: [
        async () => {
          if (heldUntil > 0) waits.push(`held ${heldUntil}`);
          heldUntil = 0;
        },
      ],
      afterResponse: [
        (answer: { status: number; errorBody?: { body?: unknown } }) => {
          const message = (answer.errorBody?.body as { message?: string } | undefined)?.message ?? '';
          if (answer.status !== 403 || !/secondary rate limit/.test(message)) return undefined;
          heldUntil += 1;
          return 'resend' as const;
        },
      ],
    };
    const bounded = createHttpClient({ baseUrl: peer.url, retry: fast, hooks: throttle });
    const error = await bounded.request({ url: '/limited' }).catch((e: unknown) => e);
    assert.ok(error instanceof HttpError && error.status === 403, String(error));
    assert.equal(peer.requests.length, 4, 'the first attempt and the default 3 resends');
    assert.deepEqual(waits, ['held 1', 'held 1', 'held 1']);
    bounded.close();

    peer.requests.length = 0;
    waits.length = 0;
    const patient = createHttpClient({ baseUrl: peer.url, retry: definePolicy({ hookResends: 4 }, fast), hooks: throttle });
    const response = await patient.request<{ ok: boolean }>({ url: '/limited' });
    assert.equal(response.body.ok, true);
    assert.equal(response.attempts, 1, 'resends are not retries');
    assert.equal(peer.requests.length, 5);
    patient.close();
  });

  it("LAYER-HOOKS: the client's sleep is the wait before every retry (a clock of the caller's), told the delay and the request's signal", async () => {
    const slept: number[] = [];
    const signal = new AbortController().signal;
    const signals: unknown[] = [];
    const client = createHttpClient({
      baseUrl: peer.url,
      retry: definePolicy({ backoff: { initialMs: 60_000, maxMs: 60_000, factor: 1, jitter: 0 }, statusBackoff: {}, budgetMs: 600_000 }, fast),
      sleep: async (ms, given) => {
        slept.push(ms);
        signals.push(given);
      },
    });
    const started = Date.now();
    const response = await client.request<{ ok: boolean }>({ url: '/busy', signal });
    assert.equal(response.attempts, 3);
    assert.deepEqual(slept, [60_000, 60_000]);
    assert.ok(signals.every((s) => s === signal));
    assert.ok(Date.now() - started < 10_000, 'no real minute went by');
    client.close();
  });
});

describe('LAYER-PAGINATE: one paginator (lib/http paginate) under the core, the platform client and storage list', () => {
  it("LAYER-PAGINATE: paginate runs over any request function: got's transform/paginate terms, countLimit, and requestLimit as a ProtocolError", async () => {
    const { paginate, ProtocolError } = await import('../../lib/http/index.js');
    const asked: string[] = [];
    const page = async (request: { url: string | URL; searchParams?: unknown }) => {
      const n = Number((request.searchParams as { page?: number } | undefined)?.page ?? 0);
      asked.push(`${String(request.url)}#${n}`);
      return { status: 200, headers: {}, body: [n * 2, n * 2 + 1], url: 'https://x.example/list', redirectUrls: [], attempts: 1 };
    };
    const resolve = (url: string | URL) => new URL(String(url), 'https://x.example/');
    const numbers: unknown[] = [];
    for await (const n of paginate(page, resolve, {
      url: 'list',
      transform: (r) => r.body as number[],
      paginate: ({ request }) => ({ searchParams: { page: Number((request.searchParams as { page?: number } | undefined)?.page ?? 0) + 1 } }),
      countLimit: 5,
    }))
      numbers.push(n);
    assert.deepEqual(numbers, [0, 1, 2, 3, 4]);
    assert.equal(asked.length, 3);
    const endless = paginate(page, resolve, { url: 'list', transform: () => [], paginate: () => ({}), requestLimit: 3 });
    await assert.rejects(endless.next(), (e: unknown) => e instanceof ProtocolError && /more than 3 pages/.test(e.message));
  });
});
