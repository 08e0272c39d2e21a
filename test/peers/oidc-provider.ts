/**
 * oidc-provider (panva's OpenID Connect / OAuth 2.0 server, a devDependency) as an independent RFC 8628 authorization
 * server for the device-login client: the device flow and revocation on, two device clients (one confidential with
 * client_secret_post, one public with `none`), the scopes openid email profile, and one account, `dev`.
 *
 * It runs in the test process behind a logging relay on 127.0.0.1: the issuer is the relay's address, so every
 * request — the client's and the browser's — passes through it and is recorded with its answer (method, URL, headers,
 * body, status, time). That is how a test sees where a token travelled (the form body, never the URL) and when each
 * poll happened. The provider itself listens on another loopback port nobody is told about.
 *
 * Approval is real: `approve()` drives oidc-provider's own pages in Debian's Chromium through chromedriver with the
 * project's WebDriver client (lib/automation): the user-code page (`verification_uri`, the code typed as shown), the
 * confirmation page (Continue, or Abort for a denial), the sign-in page of its development interactions (login `dev`),
 * the consent page, the success page. Nothing reaches into the provider's models.
 *
 * What is configured beyond oidc-provider's defaults, and why:
 * - `issueRefreshToken` true for clients allowed the refresh_token grant, and `expiresWithSession` false: a device
 *   gets a refresh token without asking for `offline_access` (the device-flow scope list has no such scope; Google
 *   issues one to every device login), and it does not end with the approving browser's session.
 * - `conformIdTokenClaims` false: the ID token carries the account's email (as Google's does), not only `sub`.
 * - oidc-provider's device authorization answer has no `interval` (clients then wait RFC 8628's 5 s).
 *   `setPollInterval(1)` adds `interval: 1` to that answer with a provider middleware (its documented extension
 *   point), to keep the test run short; `setPollInterval(undefined)` leaves the answer as oidc-provider sends it.
 * - `setDeviceCodeTtl(seconds)`: the device code's lifetime (`ttl.DeviceCode`, 120 s here), short for expiry tests.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { startChromeDriver, type ChromeDriver, type Session } from '../../lib/automation/index.js';
import { trackSockets } from './http.js';

export interface RelayedExchange {
  /** When the relay received the request (ms since the epoch). */
  at: number;
  method: string;
  /** The request target as sent: path and query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
  responseHeaders: http.IncomingHttpHeaders;
  responseBody: string;
  /** When the answer was complete. */
  answeredAt: number;
}

export interface ApproveOptions {
  /**
   * The address the person was shown: the device answer's `verification_uri` (the code is then typed in), or its
   * `verification_uri_complete` (the code filled in, as a QR code gives it); `${issuer}/device` by default.
   */
  verificationUrl?: string;
}

export interface ApproveResult {
  /** The code as oidc-provider's confirmation page showed it. */
  shownCode: string;
  /** The title of each page passed through, in order. */
  pages: string[];
}

export interface OidcProviderPeer {
  issuer: string;
  /** The confidential client (client_secret_post). */
  clientId: string;
  clientSecret: string;
  /** The public client (token_endpoint_auth_method none). */
  publicClientId: string;
  account: { id: string; email: string; name: string };
  /** Every request through the relay, oldest first. */
  exchanges: RelayedExchange[];
  /** Errors oidc-provider reported as `server_error` (a bug or misconfiguration, never expected). */
  serverErrors: Error[];
  /** Names of the provider's events, in order (`grant.success`, `revocation.success`, `grant.error` …). */
  events: string[];
  /** oidc-provider's own notices and warnings (development interactions, default pages), held off the test output. */
  notices: string[];
  approve(userCode: string, decision: 'allow' | 'deny', options?: ApproveOptions): Promise<ApproveResult>;
  setPollInterval(seconds: number | undefined): void;
  setDeviceCodeTtl(seconds: number): void;
  stop(): Promise<void>;
}

const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** Holds oidc-provider's console notices (it prints them once per process) while the peer runs. */
export function holdNotices(into: string[]): () => void {
  const original = { info: console.info, warn: console.warn };
  const hold =
    (write: (...args: unknown[]) => void) =>
    (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].includes('oidc-provider ')) into.push(args[0]);
      else write(...args);
    };
  console.info = hold(original.info.bind(console));
  console.warn = hold(original.warn.bind(console));
  return () => {
    console.info = original.info;
    console.warn = original.warn;
  };
}

interface PageState {
  url: string;
  title: string;
  heading: string;
  userCodeInput: boolean;
  confirmForm: boolean;
  shownCode: string | null;
  prompt: string | null;
  message: string;
}

const pageStateScript = `
  const q = (s) => document.querySelector(s);
  return {
    url: location.href,
    title: document.title,
    heading: (q('h1') && q('h1').textContent || '').trim(),
    userCodeInput: !!q('[id="op.deviceInputForm"] input[name=user_code]'),
    confirmForm: !!q('[id="op.deviceConfirmForm"]'),
    shownCode: q('code') ? q('code').textContent : null,
    prompt: q('input[name=prompt]') ? q('input[name=prompt]').value : null,
    message: (q('p') && q('p').textContent || '').trim(),
  };`;

async function pageState(session: Session): Promise<PageState> {
  return (await session.executeScript(pageStateScript)) as PageState;
}

/** Waits until the page is no longer `before` (a form submission navigates; the click may return first). */
async function nextPage(session: Session, before: PageState, ms = 10_000): Promise<PageState> {
  const deadline = Date.now() + ms;
  for (;;) {
    let state: PageState | undefined;
    try {
      state = await pageState(session);
    } catch {
      state = undefined; // between two documents
    }
    if (state && (state.url !== before.url || state.heading !== before.heading || state.prompt !== before.prompt || state.message !== before.message))
      return state;
    if (Date.now() > deadline) throw new Error(`the approval page did not move on from "${before.heading}" (${before.url}) within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function approveInBrowser(session: Session, verificationUrl: string, userCode: string, decision: 'allow' | 'deny'): Promise<ApproveResult> {
  await session.setTimeouts({ pageLoad: 15_000, implicit: 2_000 });
  await session.navigateTo(verificationUrl);
  let state = await pageState(session);
  const pages: string[] = [];
  let shownCode = '';
  let typed = false;
  for (let step = 0; step < 10; step++) {
    pages.push(state.heading || state.title);
    if (state.heading === 'Sign-in Success') {
      if (decision === 'deny') throw new Error('the login was approved, but the test asked to deny it');
      return { shownCode, pages };
    }
    if (state.userCodeInput) {
      if (typed) {
        // oidc-provider shows the input page again after an abort ("The Sign-in request was interrupted") or a bad code.
        if (decision === 'deny' && /interrupted/i.test(state.message)) return { shownCode, pages };
        throw new Error(`oidc-provider's code page answered: ${state.message}`);
      }
      const input = await session.findElement('[id="op.deviceInputForm"] input[name=user_code]');
      await session.sendKeys(input, userCode);
      await session.click(await session.findElement('button[form="op.deviceInputForm"]'));
      typed = true;
    } else if (state.confirmForm) {
      shownCode = state.shownCode ?? '';
      await session.click(
        await session.findElement(decision === 'allow' ? 'button[autofocus][form="op.deviceConfirmForm"]' : 'button[name=abort][form="op.deviceConfirmForm"]'),
      );
    } else if (state.prompt === 'login') {
      await session.sendKeys(await session.findElement('input[name=login]'), 'dev');
      await session.sendKeys(await session.findElement('input[name=password]'), 'any password: development interactions accept every one');
      await session.click(await session.findElement('button.login-submit'));
    } else if (state.prompt === 'consent') {
      await session.click(await session.findElement('button.login-submit'));
    } else if (step === 0 && new URL(verificationUrl).searchParams.has('user_code')) {
      // verification_uri_complete: oidc-provider answers with a form that posts the code by itself; wait for its answer.
      pages.pop();
    } else {
      throw new Error(`an unexpected page during approval: "${state.heading}" (${state.url}): ${state.message}`);
    }
    state = await nextPage(session, state);
  }
  throw new Error(`the approval did not finish; pages: ${pages.join(' → ')}`);
}

export async function startOidcProvider(): Promise<OidcProviderPeer> {
  const notices: string[] = [];
  const releaseNotices = holdNotices(notices);
  const exchanges: RelayedExchange[] = [];
  const serverErrors: Error[] = [];
  const events: string[] = [];
  const settings: { interval: number | undefined; deviceCodeTtl: number } = { interval: undefined, deviceCodeTtl: 120 };

  // The provider's own server first: the relay needs its port, the provider needs the relay's (its issuer).
  let handler: (request: http.IncomingMessage, response: http.ServerResponse) => void = (_request, response) => {
    response.writeHead(503);
    response.end();
  };
  const inner = http.createServer((request, response) => handler(request, response));
  const closeInner = trackSockets(inner);
  const innerPort = await listen(inner);
  const agent = new http.Agent({ keepAlive: true });

  const relay = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const exchange: RelayedExchange = {
        at: Date.now(),
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: body.toString('utf8'),
        status: 0,
        responseHeaders: {},
        responseBody: '',
        answeredAt: 0,
      };
      exchanges.push(exchange);
      const upstream = http.request(
        { host: '127.0.0.1', port: innerPort, method: request.method, path: request.url, headers: request.headers, agent },
        (answer) => {
          const out: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => out.push(chunk));
          answer.on('end', () => {
            const payload = Buffer.concat(out);
            Object.assign(exchange, {
              status: answer.statusCode ?? 0,
              responseHeaders: answer.headers,
              responseBody: payload.toString('utf8'),
              answeredAt: Date.now(),
            });
            const headers = { ...answer.headers };
            delete headers['transfer-encoding'];
            headers['content-length'] = String(payload.length);
            response.writeHead(answer.statusCode ?? 502, headers);
            response.end(payload);
          });
        },
      );
      upstream.on('error', (error) => {
        response.writeHead(502, { 'content-type': 'text/plain' });
        response.end(`relay: ${error.message}`);
      });
      upstream.end(body);
    });
  });
  const closeRelay = trackSockets(relay);
  const relayPort = await listen(relay);
  const issuer = `http://127.0.0.1:${relayPort}`;

  const clientId = 'gantry-device';
  const clientSecret = `oidc-provider-secret-${randomBytes(16).toString('hex')}`;
  const publicClientId = 'gantry-device-public';
  const account = { id: 'dev', email: 'dev@gantry.test', name: 'Gantry Dev' };
  const signingKey = {
    ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
    kid: randomUUID(),
    use: 'sig',
    alg: 'RS256',
  };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        client_name: 'Gantry (confidential)',
        grant_types: [deviceGrant, 'refresh_token'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post',
      },
      {
        client_id: publicClientId,
        client_name: 'Gantry (public)',
        grant_types: [deviceGrant, 'refresh_token'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'none',
      },
    ],
    scopes: ['openid', 'email', 'profile', 'offline_access'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    async findAccount(_ctx: unknown, id: string) {
      if (id !== account.id) return undefined;
      return {
        accountId: account.id,
        async claims() {
          return { sub: account.id, email: account.email, email_verified: true, name: account.name, preferred_username: account.id };
        },
      };
    },
    features: {
      deviceFlow: { enabled: true },
      revocation: { enabled: true },
      devInteractions: { enabled: true },
    },
    async issueRefreshToken(_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) {
      return client.grantTypeAllowed('refresh_token');
    },
    async expiresWithSession() {
      return false;
    },
    conformIdTokenClaims: false,
    ttl: {
      AccessToken: 600,
      IdToken: 600,
      RefreshToken: 3_600,
      DeviceCode: () => settings.deviceCodeTtl,
      Interaction: 600,
      Session: 3_600,
      Grant: 3_600,
    },
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
  });
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'device_authorization' && ctx.status === 200 && settings.interval !== undefined && ctx.body && typeof ctx.body === 'object') {
      ctx.body = { ...(ctx.body as Record<string, unknown>), interval: settings.interval };
    }
  });
  provider.on('server_error', (_ctx, error) => serverErrors.push(error as Error));
  for (const name of [
    'device_authorization.success',
    'device_authorization.error',
    'grant.success',
    'grant.error',
    'grant.revoked',
    'revocation.success',
    'revocation.error',
    'refresh_token.consumed',
    'access_token.destroyed',
    'refresh_token.destroyed',
  ]) {
    provider.on(name, () => events.push(name));
  }
  handler = provider.callback();

  let driver: Promise<ChromeDriver> | undefined;
  return {
    issuer,
    clientId,
    clientSecret,
    publicClientId,
    account,
    exchanges,
    serverErrors,
    events,
    notices,
    async approve(userCode, decision, options = {}) {
      driver ??= startChromeDriver();
      const running = await driver;
      return running.withSession((session) => approveInBrowser(session, options.verificationUrl ?? `${issuer}/device`, userCode, decision));
    },
    setPollInterval(seconds) {
      settings.interval = seconds;
    },
    setDeviceCodeTtl(seconds) {
      settings.deviceCodeTtl = seconds;
    },
    async stop() {
      try {
        if (driver) await (await driver.catch(() => undefined))?.stop();
      } finally {
        closeRelay();
        closeInner();
        agent.destroy();
        await Promise.all([relay, inner].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
        releaseNotices();
      }
    },
  };
}
