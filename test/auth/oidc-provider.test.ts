/**
 * The device-login client against an independent authorization server: oidc-provider 9 (panva), with the device flow
 * and revocation on (test/peers/oidc-provider.ts). It speaks RFC 8628, not Google's dialect: `/device/auth` from its
 * metadata, `verification_uri(_complete)`, no `interval` in the answer (5 s then), 400 for `authorization_pending`
 * and `access_denied`, refresh-token rotation for public clients, revocation at `/token/revocation`. The same client
 * code logs in with it; each approval is done on oidc-provider's own pages in Chromium through WebDriver.
 *
 * Every request passes a logging relay in front of the provider (the issuer is the relay's address), so the tests see
 * what went where: form bodies, URLs, statuses, times.
 */
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import {
  DeviceLoginError,
  authHttpClient,
  deviceLogin,
  discoverEndpoints,
  idTokenClaims,
  pollForTokens,
  readDeviceCode,
  refreshTokens,
  renderPrompt,
  revokeToken,
  type AuthEndpoints,
  type DeviceCode,
  type DeviceLoginResult,
  type PollEvent,
  type TokenSet,
} from '../../lib/auth/index.js';
import type { HttpClient } from '../../lib/http/index.js';
import { createLogger, type Logger } from '../../lib/log.js';
import { startOidcProvider, type ApproveResult, type OidcProviderPeer, type RelayedExchange } from '../peers/oidc-provider.js';

const scopes = ['openid', 'email', 'profile'];

function form(exchange: RelayedExchange): URLSearchParams {
  assert.match(String(exchange.headers['content-type']), /^application\/x-www-form-urlencoded/);
  return new URLSearchParams(exchange.body);
}

function json(exchange: RelayedExchange): Record<string, unknown> {
  return JSON.parse(exchange.responseBody) as Record<string, unknown>;
}

describe('auth: the device-login client against oidc-provider (an independent RFC 8628 server, approvals in Chromium)', function () {
  this.timeout(90_000);
  let peer: OidcProviderPeer;
  let http: HttpClient;
  let logger: Logger;
  const logLines: string[] = [];
  /** Every token, device code and secret the tests saw: none may appear in a URL, a log line or an error. */
  const canaries = new Set<string>();
  const errorsSeen: unknown[] = [];
  /** The public client's login, for the refresh and revoke tests. */
  let publicLogin: DeviceLoginResult | undefined;

  function remember(tokens: TokenSet): void {
    for (const value of [tokens.accessToken, tokens.refreshToken, tokens.idToken]) if (value) canaries.add(value);
  }

  /** What the command would show of an error: logged (through the redactor) and kept for the canary. */
  async function failure(promise: Promise<unknown>): Promise<DeviceLoginError> {
    try {
      await promise;
    } catch (error) {
      errorsSeen.push(error);
      if (error instanceof Error) {
        logger.error(error.message);
        logger.debug(String(error.stack));
      }
      if (error instanceof DeviceLoginError) return error;
      throw error;
    }
    assert.fail('expected an DeviceLoginError');
  }

  function exchangesSince(start: number, method: string, path: string): RelayedExchange[] {
    return peer.exchanges.slice(start).filter((e) => e.method === method && e.url.split('?')[0] === path);
  }

  interface LoginRun {
    /** Undefined when the login failed before it had codes to show. */
    device: DeviceCode | undefined;
    approval: ApproveResult | undefined;
    polls: PollEvent[];
    start: number;
  }

  /**
   * `deviceLogin` as `gantry auth login` calls it, the person approving (or denying) in Chromium once the first poll
   * has come back pending, at the address and with the code the prompt showed. A failed approval cancels the login
   * rather than waiting out the code's lifetime.
   */
  async function login(
    clientId: string,
    clientSecret: string | undefined,
    decision: 'allow' | 'deny' | 'none',
  ): Promise<{ run: LoginRun; result?: DeviceLoginResult; error?: DeviceLoginError }> {
    const start = peer.exchanges.length;
    const controller = new AbortController();
    let device: DeviceCode | undefined;
    let approving: Promise<ApproveResult> | undefined;
    const polls: PollEvent[] = [];
    const attempt = deviceLogin({
      authUrl: peer.issuer,
      clientId,
      clientSecret,
      scopes,
      http,
      signal: controller.signal,
      onCode(shown) {
        device = shown;
        for (const line of renderPrompt(shown, { columns: 120, rows: 60 })) logger.info(line);
      },
      onPoll(event) {
        polls.push(event);
        logger.info(`poll: ${event.kind}, next in ${event.nextInMs} ms${event.detail ? ` (${event.detail})` : ''}`);
        if (decision !== 'none' && !approving && device) {
          approving = peer.approve(device.userCode, decision, { verificationUrl: device.verificationUrl });
          approving.catch(() => controller.abort());
        }
      },
    });
    let result: DeviceLoginResult | undefined;
    let error: DeviceLoginError | undefined;
    try {
      result = await attempt;
      remember(result.tokens);
    } catch (caught) {
      if (approving) await approving; // an approval that failed is the cause: report it, not AUTH_CANCELLED
      error = await failure(Promise.reject(caught));
    }
    for (const exchange of exchangesSince(start, 'POST', '/token')) {
      const code = form(exchange).get('device_code');
      if (code) canaries.add(code);
    }
    return { run: { device, approval: approving ? await approving : undefined, polls, start }, ...(result ? { result } : {}), ...(error ? { error } : {}) };
  }

  async function userinfo(accessToken: string): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
    const response = await fetch(`${peer.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    const text = await response.text();
    return { status: response.status, body: response.ok ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  }

  before(async () => {
    peer = await startOidcProvider();
    canaries.add(peer.clientSecret);
    logger = createLogger({ level: 'debug', write: (line) => logLines.push(line) });
    http = authHttpClient({ logger });
  });

  after(async () => {
    http?.close();
    await peer?.stop();
  });

  afterEach(() => {
    peer.setPollInterval(undefined);
    peer.setDeviceCodeTtl(120);
    assert.deepEqual(
      peer.serverErrors.map((e) => e.message),
      [],
      'oidc-provider reported server errors',
    );
  });

  it('DEV-EP-DEVICE-CODE AMB-14: discovery takes device_authorization_endpoint (/device/auth) from the metadata, not {auth_url}/device/code', async () => {
    const endpoints = await discoverEndpoints(http, peer.issuer);
    assert.equal(endpoints.source, 'openid-configuration');
    assert.equal(endpoints.issuer, peer.issuer);
    assert.equal(endpoints.deviceAuthorization, `${peer.issuer}/device/auth`);
    assert.equal(endpoints.token, `${peer.issuer}/token`);
    assert.equal(endpoints.revocation, `${peer.issuer}/token/revocation`);
    assert.equal(endpoints.userinfo, `${peer.issuer}/me`);
  });

  it('DEV-FLOW-REQUEST-CODES DEV-FLOW-DISPLAY DEV-FLOW-USER-DECISION DEV-FLOW-POLL-RESULT DEV-ST-PENDING DEV-ST-GRANTED DEV-LIM-USER-CODE-UNALTERED DEV-LIM-POLL-INTERVAL DEV-DAR-INTERVAL DEV-TOK-ACCESS-TOKEN DEV-TOK-REFRESH-TOKEN DEV-TOK-SCOPE DEV-TOK-TOKEN-TYPE AMB-13: the public client logs in — RFC 8628 answer read, code shown unaltered, first poll after 5 s (no interval given), pending polls, approved in Chromium, tokens naming the account', async () => {
    const { run, result, error } = await login(peer.publicClientId, undefined, 'allow');
    assert.equal(error, undefined, `the login failed: ${error?.message}`);
    assert.ok(result && run.device);

    // The code request: a form with client_id and the scopes, to the metadata's endpoint.
    const [codeRequest, ...more] = exchangesSince(run.start, 'POST', '/device/auth');
    assert.ok(codeRequest && more.length === 0);
    assert.equal(codeRequest.status, 200);
    assert.deepEqual(Object.fromEntries(form(codeRequest)), { client_id: peer.publicClientId, scope: 'openid email profile' });
    const answer = json(codeRequest);

    // RFC 8628's names read as they were sent; the code never altered, on the prompt or on the confirmation page.
    assert.equal(answer.interval, undefined, 'oidc-provider sends no interval unless told');
    assert.equal(run.device.interval, 5);
    assert.equal(run.device.userCode, answer.user_code);
    assert.equal(run.device.verificationUrl, answer.verification_uri);
    assert.equal(run.device.verificationUrlComplete, answer.verification_uri_complete);
    assert.equal(run.device.expiresIn, answer.expires_in);
    assert.equal(run.device.verificationUrl, `${peer.issuer}/device`);
    const prompt = renderPrompt(run.device, { columns: 120, rows: 60 });
    assert.ok(prompt.includes(`    ${String(answer.user_code)}`), prompt.join('\n'));
    assert.ok(prompt.includes(`    ${String(answer.verification_uri)}`), prompt.join('\n'));
    assert.equal(run.approval?.shownCode, answer.user_code);
    assert.deepEqual(run.approval?.pages, ['Sign-in', 'Confirm Device', 'Sign-in', 'Authorize', 'Sign-in Success']);

    // The polls: the first one interval after the codes, then one per interval; pending answered 400 (RFC 8628).
    const polls = exchangesSince(run.start, 'POST', '/token');
    assert.ok(polls.length >= 2, `${polls.length} polls`);
    assert.ok(polls[0]!.at - codeRequest.answeredAt >= 4_950, `the first poll came ${polls[0]!.at - codeRequest.answeredAt} ms after the codes`);
    for (let i = 1; i < polls.length; i++)
      assert.ok(polls[i]!.at - polls[i - 1]!.answeredAt >= 4_950, `poll ${i + 1} came ${polls[i]!.at - polls[i - 1]!.answeredAt} ms after the previous answer`);
    const pending = polls.slice(0, -1);
    assert.ok(pending.length >= 1);
    for (const poll of pending) assert.deepEqual([poll.status, json(poll).error], [400, 'authorization_pending']);
    assert.ok(run.polls.filter((e) => e.kind === 'pending').length === pending.length);
    for (const poll of polls) {
      const body = form(poll);
      assert.equal(body.get('grant_type'), 'urn:ietf:params:oauth:grant-type:device_code');
      assert.equal(body.get('client_id'), peer.publicClientId);
      assert.equal(body.has('client_secret'), false, 'a public client has no secret to send');
    }

    // The tokens, as oidc-provider sent them.
    const granted = polls.at(-1)!;
    assert.equal(granted.status, 200);
    const tokens = json(granted);
    assert.equal(result.tokens.accessToken, tokens.access_token);
    assert.equal(result.tokens.refreshToken, tokens.refresh_token);
    assert.equal(result.tokens.idToken, tokens.id_token);
    assert.equal(result.tokens.tokenType, 'Bearer');
    assert.equal(result.tokens.scope, tokens.scope);
    assert.deepEqual(String(tokens.scope).split(' ').sort(), ['email', 'openid', 'profile']);
    assert.ok(Math.abs(result.tokens.expiresAt - (granted.answeredAt + Number(tokens.expires_in) * 1000)) < 2_000);
    assert.deepEqual(result.account, { issuer: peer.issuer, sub: 'dev', email: 'dev@gantry.test' });
    assert.deepEqual(result.endpoints.deviceAuthorization, `${peer.issuer}/device/auth`);

    // The access token works at the server's userinfo endpoint.
    const me = await userinfo(result.tokens.accessToken);
    assert.equal(me.status, 200);
    assert.equal(me.body?.sub, 'dev');
    publicLogin = result;
  });

  it('DEV-ST-DENIED DEV-ERR-ACCESS-DENIED DEV-FLOW-POLL-RESULT: a login denied on the confirmation page (Abort) ends in AUTH_ACCESS_DENIED, no tokens', async () => {
    peer.setPollInterval(1);
    const { run, result, error } = await login(peer.publicClientId, undefined, 'deny');
    assert.equal(result, undefined);
    assert.ok(error);
    assert.equal(error.code, 'AUTH_ACCESS_DENIED');
    assert.equal(error.oauthError, 'access_denied');
    assert.equal(error.exitCode, 1);
    assert.match(error.message, /denied/);
    assert.equal(run.device?.interval, 1);
    assert.deepEqual(run.approval?.pages, ['Sign-in', 'Confirm Device', 'Sign-in']);
    const polls = exchangesSince(run.start, 'POST', '/token');
    assert.deepEqual([polls.at(-1)!.status, json(polls.at(-1)!).error], [400, 'access_denied']);
    assert.ok(polls.slice(0, -1).every((poll) => json(poll).error === 'authorization_pending'));
    assert.ok(polls.every((poll) => json(poll).access_token === undefined));
  });

  it('DEV-ST-EXPIRED DEV-LIM-CODE-VALIDITY AMB-17: codes nobody approves end in AUTH_EXPIRED at expires_in, with no poll after it', async () => {
    peer.setPollInterval(1);
    peer.setDeviceCodeTtl(3);
    const { run, error } = await login(peer.publicClientId, undefined, 'none');
    assert.ok(error);
    assert.equal(error.code, 'AUTH_EXPIRED');
    assert.equal(run.device?.expiresIn, 3);
    const [codeRequest] = exchangesSince(run.start, 'POST', '/device/auth');
    const polls = exchangesSince(run.start, 'POST', '/token');
    assert.ok(polls.length >= 1 && polls.length <= 3, `${polls.length} polls in 3 s at 1 s`);
    for (const poll of polls) assert.ok(poll.at < codeRequest!.answeredAt + 3_000 + 100, 'a poll after the codes expired');
  });

  it('DEV-TL-REFRESH DEV-EP-REFRESH DEV-REFRESH-RESPONSE AMB-16: the public client refreshes; oidc-provider rotates its refresh token each time, the client keeps the new one, and the old one is refused (AUTH_REFRESH_REVOKED)', async () => {
    assert.ok(publicLogin, 'needs the public client login of the test above');
    const client = { clientId: peer.publicClientId };
    const start = peer.exchanges.length;
    const first = await refreshTokens(http, publicLogin.endpoints, client, publicLogin.tokens);
    remember(first);
    const [refresh] = exchangesSince(start, 'POST', '/token');
    assert.ok(refresh);
    assert.deepEqual(Object.fromEntries(form(refresh)), {
      client_id: peer.publicClientId,
      grant_type: 'refresh_token',
      refresh_token: publicLogin.tokens.refreshToken,
    });
    const answer = json(refresh);
    assert.equal(typeof answer.refresh_token, 'string');
    assert.notEqual(answer.refresh_token, publicLogin.tokens.refreshToken, "oidc-provider rotates a public client's refresh token");
    assert.equal(first.refreshToken, answer.refresh_token);
    assert.equal(first.accessToken, answer.access_token);
    assert.notEqual(first.accessToken, publicLogin.tokens.accessToken);
    assert.equal((await userinfo(first.accessToken)).status, 200);
    assert.equal(idTokenClaims(first.idToken)?.sub, 'dev');

    const second = await refreshTokens(http, publicLogin.endpoints, client, first);
    remember(second);
    assert.notEqual(second.refreshToken, first.refreshToken);
    publicLogin = { ...publicLogin, tokens: second };

    // The first refresh token was rotated out: reusing it is refused (and oidc-provider ends the grant for the reuse).
    const refused = await failure(refreshTokens(http, publicLogin.endpoints, client, { ...second, refreshToken: first.refreshToken }));
    assert.equal(refused.code, 'AUTH_REFRESH_REVOKED');
    assert.equal(refused.oauthError, 'invalid_grant');
    assert.match(refused.hint ?? '', /gantry auth login/);
  });

  // Fails while lib/auth/device.ts's requestDeviceCode sends only client_id and scope (Google's code request): RFC 8628
  // §3.1 has a confidential client authenticate at the device authorization endpoint, and oidc-provider answers 401
  // invalid_client without the secret. The tests below reach the confidential client's poll, refresh and revoke by
  // asking for its codes themselves.
  it('DEV-AUTH-CLIENT-SECRET DEV-EP-DEVICE-CODE AMB-13: the confidential client (client_secret_post) logs in with deviceLogin unchanged — oidc-provider authenticates it at the device authorization endpoint too (RFC 8628 §3.1)', async () => {
    peer.setPollInterval(1);
    const { run, result, error } = await login(peer.clientId, peer.clientSecret, 'allow');
    const [codeRequest] = exchangesSince(run.start, 'POST', '/device/auth');
    assert.ok(
      error === undefined,
      `deviceLogin failed: ${error?.code}: ${error?.message}; the code request's body had ${[...form(codeRequest!).keys()].join(', ')} and oidc-provider answered ${codeRequest!.status} ${codeRequest!.responseBody}`,
    );
    assert.ok(result);
    assert.deepEqual(result.account, { issuer: peer.issuer, sub: 'dev', email: 'dev@gantry.test' });
  });

  describe('the confidential client after its login (codes requested by the test with client authentication, then pollForTokens, refreshTokens, revokeToken)', () => {
    let endpoints: AuthEndpoints;
    let tokens: TokenSet;
    const client = () => ({ clientId: peer.clientId, clientSecret: peer.clientSecret });

    before(async function () {
      this.timeout(60_000);
      peer.setPollInterval(1);
      endpoints = await discoverEndpoints(http, peer.issuer);
      // RFC 8628 §3.1: a confidential client authenticates at the device authorization endpoint. lib/auth's
      // requestDeviceCode sends only client_id and scope (see the test above), so the test asks for the codes itself.
      const response = await fetch(endpoints.deviceAuthorization, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ client_id: peer.clientId, client_secret: peer.clientSecret, scope: scopes.join(' ') }),
      });
      const answer = (await response.json()) as Record<string, unknown>;
      assert.equal(response.status, 200, JSON.stringify(answer));
      const device = readDeviceCode({ status: 200, headers: {}, json: answer, text: '', url: endpoints.deviceAuthorization }, Date.now());
      canaries.add(device.deviceCode);
      const start = peer.exchanges.length;
      let approving: Promise<ApproveResult> | undefined;
      const controller = new AbortController();
      tokens = await pollForTokens(http, endpoints, device, {
        ...client(),
        signal: controller.signal,
        onPoll() {
          // This time through verification_uri_complete, the address a QR code carries: the code comes filled in.
          approving ??= peer.approve(device.userCode, 'allow', { verificationUrl: device.verificationUrlComplete ?? 'no verification_uri_complete' });
          approving.catch(() => controller.abort());
        },
      });
      remember(tokens);
      const approval = await approving;
      assert.equal(approval?.shownCode, device.userCode);
      assert.deepEqual(approval?.pages, ['Confirm Device', 'Sign-in', 'Authorize', 'Sign-in Success']);
      const polls = exchangesSince(start, 'POST', '/token');
      for (const poll of polls) assert.equal(form(poll).get('client_secret'), peer.clientSecret, 'DEV-AUTH-CLIENT-SECRET: every poll carries the secret');
      peer.setPollInterval(undefined);
    });

    it('DEV-TL-REFRESH DEV-EP-REFRESH DEV-AUTH-CLIENT-SECRET DEV-AUTH-REFRESH-REUSE AMB-16: a refresh sends the secret in the form and keeps the refresh token, which oidc-provider does not rotate for a confidential client early in its life', async () => {
      const start = peer.exchanges.length;
      const refreshed = await refreshTokens(http, endpoints, client(), tokens);
      remember(refreshed);
      const [refresh] = exchangesSince(start, 'POST', '/token');
      assert.ok(refresh);
      assert.deepEqual(Object.fromEntries(form(refresh)), {
        client_id: peer.clientId,
        client_secret: peer.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: tokens.refreshToken,
      });
      assert.equal(refresh.status, 200);
      const answer = json(refresh);
      assert.equal(refreshed.refreshToken, tokens.refreshToken);
      assert.ok(
        answer.refresh_token === undefined || answer.refresh_token === tokens.refreshToken,
        "oidc-provider rotated a confidential client's refresh token",
      );
      assert.equal(refreshed.accessToken, answer.access_token);
      assert.notEqual(refreshed.accessToken, tokens.accessToken);
      assert.equal((await userinfo(refreshed.accessToken)).status, 200);
      tokens = refreshed;
    });

    it('DEV-TL-REVOKE DEV-EP-REVOKE DEV-ERR-REVOKE AMB-18: revoking the refresh token sends it only in a form body (never the URL), ends the grant (its access token too), and a refresh with it is then AUTH_REFRESH_REVOKED', async () => {
      const start = peer.exchanges.length;
      const eventsBefore = peer.events.length;
      assert.equal(await revokeToken(http, endpoints, tokens.refreshToken!, client()), 'revoked');
      const [revoke, ...more] = exchangesSince(start, 'POST', '/token/revocation');
      assert.ok(revoke && more.length === 0);
      assert.equal(revoke.url, '/token/revocation', 'nothing in the query');
      assert.equal(revoke.status, 200);
      assert.deepEqual(Object.fromEntries(form(revoke)), { token: tokens.refreshToken, client_id: peer.clientId, client_secret: peer.clientSecret });
      assert.ok(peer.events.slice(eventsBefore).includes('grant.revoked'), `oidc-provider's events: ${peer.events.slice(eventsBefore).join(', ')}`);

      // RFC 7009 §2.1: oidc-provider ends the grant with the refresh token, so the access token stops working too.
      assert.equal((await userinfo(tokens.accessToken)).status, 401);
      const refused = await failure(refreshTokens(http, endpoints, client(), tokens));
      assert.equal(refused.code, 'AUTH_REFRESH_REVOKED');
      assert.equal(refused.status, 400);

      // Revoking what is already gone is no failure (RFC 7009 answers 200 for an unknown token).
      assert.equal(await revokeToken(http, endpoints, tokens.accessToken, client()), 'revoked');
    });
  });

  it('DEV-EP-REVOKE DEV-TL-REVOKE AMB-13: the public client revokes without a secret; its refresh token is then refused', async () => {
    assert.ok(publicLogin, 'needs the public client login');
    const start = peer.exchanges.length;
    assert.equal(await revokeToken(http, publicLogin.endpoints, publicLogin.tokens.refreshToken!, { clientId: peer.publicClientId }), 'revoked');
    const [revoke] = exchangesSince(start, 'POST', '/token/revocation');
    assert.ok(revoke);
    assert.equal(revoke.url, '/token/revocation');
    assert.deepEqual(Object.fromEntries(form(revoke)), { token: publicLogin.tokens.refreshToken, client_id: peer.publicClientId });
    const refused = await failure(refreshTokens(http, publicLogin.endpoints, { clientId: peer.publicClientId }, publicLogin.tokens));
    assert.equal(refused.code, 'AUTH_REFRESH_REVOKED');
  });

  // Mocha runs a describe's own tests before its nested ones: in a describe of its own, the canary runs after all.
  describe('the canary, after every login above', () => {
    it('canary: no token, device code or client secret of these tests in any URL sent, log line or error (message, hint, stack, inspected)', () => {
      assert.ok(canaries.size >= 8, `only ${canaries.size} canaries collected: did the logins run?`);
      assert.ok(logLines.length > 0 && errorsSeen.length >= 3);
      const places: Array<[string, string]> = [
        ...peer.exchanges.map((e): [string, string] => [`URL ${e.method} ${e.url.slice(0, 60)}`, e.url]),
        // The test's own userinfo calls carry the access token where it belongs (Authorization: Bearer): left out.
        ...peer.exchanges.map((e): [string, string] => [
          `request headers of ${e.method} ${e.url.slice(0, 60)}`,
          JSON.stringify({ ...e.headers, authorization: e.url === '/me' ? undefined : e.headers.authorization }),
        ]),
        ...logLines.map((line, i): [string, string] => [`log line ${i + 1}`, line]),
        ...errorsSeen.flatMap((error, i): Array<[string, string]> => [
          [`error ${i + 1} message`, String((error as Error).message)],
          [`error ${i + 1} hint`, String((error as { hint?: string }).hint)],
          [`error ${i + 1} stack`, String((error as Error).stack)],
          [`error ${i + 1} inspected`, inspect(error, { depth: 6 })],
          [`error ${i + 1} JSON`, JSON.stringify(error)],
        ]),
      ];
      const leaks: string[] = [];
      for (const canary of canaries) {
        for (const [where, text] of places) {
          if (text.includes(canary) || text.includes(encodeURIComponent(canary))) leaks.push(`${where} holds a ${canary.length}-character secret`);
        }
      }
      assert.deepEqual(leaks, []);
    });
  });
});
