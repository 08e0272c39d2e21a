/**
 * The device-poll state machine (lib/auth/poll.ts) in process, against a token endpoint on 127.0.0.1 that the test
 * programs answer by answer: what each answer leads to (tokens, a wait and which, an error and which), counted in the
 * requests the server got. Intervals are hundredths of a second and the deadline is on a clock the test holds, so no
 * test waits for real time except where the wait is the behaviour; the flows against whole authorization servers are
 * test/auth/device-flow.test.ts and test/auth/oidc-provider.test.ts.
 */
import assert from 'node:assert/strict';
import { DeviceLoginError, pollForTokens, slowDownStepMs, type AuthEndpoints, type DeviceCode, type PollEvent } from '../../lib/auth/index.js';
import { createHttpClient, NetworkError, noRetry, ProtocolError, type HttpClient } from '../../lib/http/index.js';
import { sendJson, startHttpPeer, type HttpPeer, type RecordedRequest } from '../peers/http.js';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const START = Date.parse('2030-01-01T00:00:00Z');
type Answer = (request: RecordedRequest, res: ServerResponse, socket: Socket) => void;

const pending: Answer = (_req, res) => sendJson(res, 400, { error: 'authorization_pending' });
const granted: Answer = (_req, res) =>
  sendJson(res, 200, { access_token: 'at-1', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-1', scope: 'openid' });
const dropped: Answer = (_req, _res, socket) => void socket.destroy();
const status =
  (code: number, body = '', headers: Record<string, string> = {}): Answer =>
  (_req, res) =>
    void res.writeHead(code, { 'content-type': 'text/plain', ...headers }).end(body);
const oauth =
  (error: string, extra: Record<string, unknown> = {}, code = 400, headers: Record<string, string> = {}): Answer =>
  (_req, res) =>
    sendJson(res, code, { error, ...extra }, headers);

describe('device login: the poll state machine against a programmed token endpoint', function () {
  this.timeout(20_000);
  let peer: HttpPeer;
  let http: HttpClient;
  let endpoints: AuthEndpoints;
  let clock = START;
  let script: Answer[] = [];
  let events: PollEvent[] = [];

  const polls = () => peer.requests.length;
  const device = (fields: Partial<DeviceCode> = {}): DeviceCode => ({
    deviceCode: 'device-code-1',
    userCode: 'ABCD-EFGH',
    verificationUrl: `${peer.url}/device`,
    verificationUrlComplete: undefined,
    expiresIn: 600,
    interval: 0.01,
    expiresAt: START + 600_000,
    ...fields,
  });
  const poll = (fields: Partial<DeviceCode> = {}, options: { signal?: AbortSignal; onPoll?: (event: PollEvent) => void; http?: HttpClient } = {}) =>
    pollForTokens(options.http ?? http, endpoints, device(fields), {
      clientId: 'tv-client',
      clientSecret: 'tv-secret-0123456789',
      now: () => clock,
      onPoll: (event) => {
        events.push(event);
        options.onPoll?.(event);
      },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => assert.fail('polling returned tokens'),
      (error: unknown) => error,
    );
  async function loginError(promise: Promise<unknown>): Promise<DeviceLoginError> {
    const error = await failure(promise);
    assert.ok(error instanceof DeviceLoginError, `a DeviceLoginError, not ${String(error)}`);
    return error;
  }
  /** Aborts polling as soon as it announces its first wait: what that wait is, without waiting it. */
  async function firstWait(fields: Partial<DeviceCode> = {}): Promise<PollEvent> {
    const controller = new AbortController();
    const error = await loginError(poll(fields, { signal: controller.signal, onPoll: () => controller.abort() }));
    assert.equal(error.code, 'AUTH_CANCELLED');
    return events[0]!;
  }

  before(async () => {
    peer = await startHttpPeer((request, res, socket) => {
      const next = script.length > 1 ? script.shift()! : script[0];
      if (!next) return void res.writeHead(500).end();
      next(request, res, socket);
    });
    http = createHttpClient({ retry: noRetry });
    endpoints = {
      authUrl: peer.url,
      issuer: peer.url,
      deviceAuthorization: `${peer.url}/device/code`,
      token: `${peer.url}/token`,
      revocation: `${peer.url}/revoke`,
      userinfo: undefined,
      jwksUri: undefined,
      source: 'defaults',
    };
  });

  beforeEach(() => {
    clock = START;
    peer.requests.length = 0;
    events = [];
    script = [];
  });

  after(async () => {
    http.close();
    await peer.close();
  });

  it('DEV-EP-POLL-TOKEN DEV-ST-PENDING DEV-ST-GRANTED: pending polls once an interval, each announced, until the tokens come; the poll is the device grant with the client', async () => {
    script = [pending, pending, granted];
    const tokens = await poll();
    assert.equal(tokens.accessToken, 'at-1');
    assert.equal(tokens.refreshToken, 'rt-1');
    assert.equal(tokens.expiresAt, START + 3_600_000, "the tokens' expiry is on the poller's clock");
    assert.deepEqual(events, [
      { kind: 'pending', nextInMs: 10 },
      { kind: 'pending', nextInMs: 10 },
    ]);
    assert.equal(polls(), 3);
    const [request] = peer.requests;
    assert.equal(request!.url, '/token');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(request!.body)), {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: 'device-code-1',
      client_id: 'tv-client',
      client_secret: 'tv-secret-0123456789',
    });
  });

  it("DEV-LIM-POLL-INTERVAL: the interval is in seconds; Retry-After (seconds or a date, on the poller's clock) stretches a wait, never shortens it", async () => {
    script = [pending];
    assert.deepEqual(await firstWait({ interval: 0.25 }), { kind: 'pending', nextInMs: 250 });
    events = [];
    script = [oauth('authorization_pending', {}, 400, { 'retry-after': '3' })];
    assert.deepEqual(await firstWait(), { kind: 'pending', nextInMs: 3_000 });
    events = [];
    script = [oauth('authorization_pending', {}, 400, { 'retry-after': new Date(START + 7_000).toUTCString() })];
    assert.deepEqual(await firstWait(), { kind: 'pending', nextInMs: 7_000 });
    events = [];
    script = [oauth('authorization_pending', {}, 400, { 'retry-after': new Date(START - 7_000).toUTCString() })];
    assert.deepEqual(await firstWait(), { kind: 'pending', nextInMs: 10 });
  });

  it("DEV-ST-SLOW-DOWN DEV-ERR-SLOW-DOWN: slow_down adds 5 s to the interval, or takes the server's larger interval, or a longer Retry-After", async () => {
    assert.equal(slowDownStepMs, 5_000);
    script = [oauth('slow_down')];
    assert.deepEqual(await firstWait(), { kind: 'slow_down', nextInMs: 5_010 });
    events = [];
    script = [oauth('slow_down', { interval: 9 })];
    assert.deepEqual(await firstWait(), { kind: 'slow_down', nextInMs: 9_000 });
    events = [];
    script = [oauth('slow_down', { interval: '9' })];
    assert.deepEqual(await firstWait(), { kind: 'slow_down', nextInMs: 5_010 }, 'an interval that is not a number is not one');
    events = [];
    script = [oauth('slow_down', { interval: 2 }, 403, { 'retry-after': '8' })];
    assert.deepEqual(await firstWait(), { kind: 'slow_down', nextInMs: 8_000 }, "Google's 403 decides by its error as well");
  });

  it('DEV-ST-EXPIRED AMB-17: a code past its deadline is never polled; the last wait stops at the deadline, without a poll', async () => {
    const expired = await loginError(poll({ expiresAt: START }));
    assert.equal(expired.code, 'AUTH_EXPIRED');
    assert.equal(expired.message, 'the code expired before it was approved: run `gantry auth login` again');
    assert.equal(polls(), 0);

    script = [pending];
    const started = Date.now();
    assert.equal((await loginError(poll({ expiresAt: START + 300, interval: 0.3 }))).code, 'AUTH_EXPIRED');
    assert.equal(polls(), 0, 'a wait as long as the time left ends the login');
    assert.ok(Date.now() - started >= 290, 'after waiting out the time left');

    script = [
      (request, res, socket) => {
        clock = START + 200;
        pending(request, res, socket);
      },
    ];
    assert.equal((await loginError(poll({ expiresAt: START + 301, interval: 0.3 }))).code, 'AUTH_EXPIRED');
    assert.equal(polls(), 1, 'with a moment left it polls once, then waits out the 101 ms left');
  });

  it('AMB-17: whatever the server answers once the deadline has passed — even tokens — the code has expired', async () => {
    script = [
      (request, res, socket) => {
        clock = START + 600_000;
        granted(request, res, socket);
      },
    ];
    assert.equal((await loginError(poll())).code, 'AUTH_EXPIRED');
    script = [oauth('expired_token')];
    clock = START;
    const said = await loginError(poll());
    assert.deepEqual(
      [said.code, said.status, said.oauthError, polls()],
      ['AUTH_EXPIRED', 400, 'expired_token', 2],
      'expired_token (RFC 8628) ends it before the deadline, with the status the server answered',
    );
  });

  it('DEV-ERR-ACCESS-DENIED DEV-ERR-INVALID-GRANT: any other OAuth error ends polling with its own error and status', async () => {
    script = [pending, oauth('access_denied', { error_description: 'the user said no' }, 403)];
    const denied = await loginError(poll());
    assert.deepEqual([denied.code, denied.status, polls()], ['AUTH_ACCESS_DENIED', 403, 2]);
    assert.match(denied.message, /the user said no/);
    peer.requests.length = 0;
    script = [oauth('invalid_grant')];
    const invalid = await loginError(poll());
    assert.deepEqual([invalid.code, invalid.status, polls()], ['AUTH_INVALID_GRANT', 400, 1]);
  });

  it('MUTATION-AUTH-POLL: a 5xx or 429 is polled through, each announced with its status and the wait', async () => {
    script = [status(500), status(429), status(503), granted];
    assert.equal((await poll()).accessToken, 'at-1');
    assert.deepEqual(events, [
      { kind: 'retry', nextInMs: 10, detail: '500' },
      { kind: 'retry', nextInMs: 10, detail: '429' },
      { kind: 'retry', nextInMs: 10, detail: '503' },
    ]);
    events = [];
    script = [status(429, '', { 'retry-after': '2' })];
    assert.deepEqual(await firstWait(), { kind: 'retry', nextInMs: 2_000, detail: '429' }, 'Retry-After stretches the wait');
  });

  it('MUTATION-AUTH-POLL: a caller that does not listen for poll events polls the same way', async () => {
    script = [pending, dropped, status(503), granted];
    const tokens = await pollForTokens(http, endpoints, device(), { clientId: 'tv-client', now: () => clock });
    assert.equal(tokens.accessToken, 'at-1');
    assert.equal(polls(), 4);
    assert.equal(new URLSearchParams(peer.requests[0]!.body).get('client_secret'), null, 'a public client sends no secret');
  });

  it('MUTATION-AUTH-POLL: five failing answers in a row give up with a ProtocolError naming the endpoint and the count', async () => {
    script = [status(502)];
    const error = await failure(poll());
    assert.ok(error instanceof ProtocolError, String(error));
    assert.equal(error.message, `POST ${endpoints.token} answered 502 5 times in a row while polling`);
    assert.equal(error.hint, 'the authorization server is failing; run `gantry auth login` again later');
    assert.equal(error.exitCode, 3);
    assert.equal(polls(), 5);
  });

  it('MUTATION-AUTH-POLL: dropped connections are polled through (announced with what the network said) up to five in a row; a pending answer starts the count again', async () => {
    script = [dropped, dropped, dropped, dropped, pending, dropped, dropped, dropped, dropped, granted];
    assert.equal((await poll()).accessToken, 'at-1');
    assert.equal(polls(), 10);
    assert.deepEqual(
      events.map((e) => e.kind),
      ['retry', 'retry', 'retry', 'retry', 'pending', 'retry', 'retry', 'retry', 'retry'],
    );
    assert.equal(events[0]!.nextInMs, 10);
    assert.match(events[0]!.detail ?? '', /POST .*\/token/);

    peer.requests.length = 0;
    script = [dropped, dropped, dropped, dropped, status(500), dropped, granted];
    const error = await failure(poll());
    assert.ok(error instanceof ProtocolError || error instanceof NetworkError, String(error));
    assert.equal(polls(), 5, 'network failures and failing answers count together');

    peer.requests.length = 0;
    events = [];
    script = [dropped];
    const gaveUp = await failure(poll());
    assert.ok(gaveUp instanceof NetworkError, String(gaveUp));
    assert.equal(polls(), 5);
    assert.equal(events.length, 4);
  });

  it('MUTATION-AUTH-POLL: an answer that is neither tokens nor an OAuth error is a ProtocolError at once, quoting what came', async () => {
    for (const [answer, said] of [
      [status(200, '<html>welcome</html>'), 'answered 200 without an OAuth error: <html>welcome</html>'],
      [(_req: RecordedRequest, res: ServerResponse) => sendJson(res, 200, { token_type: 'Bearer' }), 'answered 200 without an OAuth error'],
      [status(404), 'answered 404 without an OAuth error'],
      [
        (_req: RecordedRequest, res: ServerResponse) => sendJson(res, 201, { access_token: 'at-2', token_type: 'Bearer' }),
        'answered 201 without an OAuth error',
      ],
      [status(499, 'gone'), 'answered 499 without an OAuth error: gone'],
    ] as const) {
      peer.requests.length = 0;
      script = [answer as Answer];
      const error = await failure(poll());
      assert.ok(error instanceof ProtocolError, String(error));
      assert.equal(error.message, `POST ${endpoints.token} ${said}`);
      assert.match(error.hint ?? '', /is it an authorization server with the device grant\?/);
      assert.equal(polls(), 1);
    }
  });

  it("MUTATION-AUTH-POLL: a failure that is not the network (an answer past the OAuth core's 256 KiB) ends polling at once", async () => {
    script = [status(503, 'x'.repeat(300 * 1024))];
    const error = await failure(poll());
    assert.ok(error instanceof ProtocolError && !(error instanceof NetworkError), String(error));
    assert.match(error.message, /larger than/);
    assert.equal(polls(), 1);
  });

  it('MUTATION-AUTH-POLL: the abort signal cancels at once: before the first poll, during a wait, and during a request', async () => {
    const before = new AbortController();
    before.abort();
    const early = await loginError(poll({}, { signal: before.signal }));
    assert.deepEqual(
      [early.code, early.exitCode, early.message, early.hint],
      ['AUTH_CANCELLED', 1, 'login cancelled while waiting for approval', 'run `gantry auth login` again when ready'],
    );
    assert.equal(polls(), 0);

    const waiting = new AbortController();
    setTimeout(() => waiting.abort(), 50);
    const started = Date.now();
    assert.equal((await loginError(poll({ interval: 60 }, { signal: waiting.signal }))).code, 'AUTH_CANCELLED');
    assert.ok(Date.now() - started < 5_000, 'not after the minute-long wait');
    assert.equal(polls(), 0);

    const asking = new AbortController();
    script = [() => asking.abort()];
    assert.equal((await loginError(poll({}, { signal: asking.signal }))).code, 'AUTH_CANCELLED');
    assert.equal(polls(), 1);
    assert.deepEqual(events, [], 'a cancelled request is not a failure to poll through');

    const lastWait = new AbortController();
    setTimeout(() => lastWait.abort(), 50);
    const stopped = await loginError(poll({ interval: 60, expiresAt: START + 30_000 }, { signal: lastWait.signal }));
    assert.equal(stopped.code, 'AUTH_CANCELLED', 'stopped during the wait that ends at the deadline: cancelled, not expired');

    const late = new AbortController();
    late.abort();
    assert.equal((await loginError(poll({ expiresAt: START - 1 }, { signal: late.signal }))).code, 'AUTH_CANCELLED', 'a stop wins over an expiry');
  });

  it('DEV-ST-SLOW-DOWN: after slow_down the grown interval stays, and the failure count starts again (one real 5 s wait)', async function () {
    this.timeout(30_000);
    script = [dropped, dropped, dropped, dropped, oauth('slow_down'), dropped];
    const controller = new AbortController();
    const error = await loginError(poll({}, { signal: controller.signal, onPoll: () => events.length === 6 && controller.abort() }));
    assert.equal(error.code, 'AUTH_CANCELLED');
    assert.deepEqual(
      events.map((e) => [e.kind, e.nextInMs]),
      [
        ['retry', 10],
        ['retry', 10],
        ['retry', 10],
        ['retry', 10],
        ['slow_down', 5_010],
        ['retry', 5_010],
      ],
    );
  });
});
