// The login and consent page of the authorization code flow in a real browser: headless Chromium (Debian's, under
// chromedriver, driven through lib/automation's WebDriver client, as browser.test.ts drives the device page) signs in
// and presses Allow or Deny; a loopback callback server records where the browser was sent.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startChromeDriver, type ChromeDriver } from '../../../lib/automation/index.js';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { RESOURCE, authorizeUrl, pkce, redeem } from './codeflow-helpers.js';

type Session = Parameters<Parameters<ChromeDriver['withSession']>[0]>[0];

/** Under load a click can return before the next page is in: wait (up to 15 s) until the script's value passes. */
async function waitFor(session: Session, script: string, test: (value: string) => boolean): Promise<string> {
  const until = Date.now() + 15_000;
  let value = '';
  while (Date.now() < until) {
    value = String(await session.executeScript(`try { return ${script}; } catch (e) { return ''; }`));
    if (test(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`gave up waiting: ${script} was ${JSON.stringify(value)}`);
}

describe('devserver/oauth: the authorization code flow in Chromium through WebDriver', function () {
  this.timeout(90_000);
  let server: OAuthServer;
  let driver: ChromeDriver;
  let callback: http.Server;
  let redirectUri: string;
  const received: Array<Record<string, string>> = [];
  before(async () => {
    callback = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname === '/callback') received.push(Object.fromEntries(url.searchParams)); // not /favicon.ico
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Signed in</title><p>You may close this window.</p>');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    server = await startOAuthServer();
    driver = await startChromeDriver();
  });
  after(async () => {
    await driver?.stop();
    await server?.stop();
    callback?.closeAllConnections();
    await new Promise((resolve) => callback?.close(resolve));
  });

  it('CTX-EP-AUTHORIZATION-REQUEST CTX-AS-REDIRECT-EXACT-MATCH CTX-EP-TOKEN-REQUEST CTX-ROLE-AUTH-SERVER: a person sees the client, scopes and resource, types a wrong then the right password, presses Allow; the loopback redirect gets code, state and iss, and the code gives a JWT', async () => {
    const client = server.registerClient({ redirectUris: [redirectUri], name: 'Browser agent' });
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(server.url, {
      client_id: client.id,
      redirect_uri: redirectUri,
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'browser-state',
      scope: 'modules:read gates:run',
      resource: RESOURCE,
    });
    await driver.withSession(async (session) => {
      await session.navigateTo(url);
      assert.equal(await session.getTitle(), 'Sign in to allow Browser agent');
      assert.equal(String(await session.executeScript('return document.getElementById("client").textContent')), 'Browser agent');
      assert.match(String(await session.executeScript('return document.getElementById("scopes").textContent')), /modules:read[\s\S]*gates:run/);
      assert.equal(String(await session.executeScript('return document.getElementById("resource").textContent')), RESOURCE);
      await session.sendKeys(await session.findElement('#username'), 'dev');
      await session.sendKeys(await session.findElement('#password'), 'not-the-password');
      await session.click(await session.findElement('button[name=decision][value=allow]'));
      await waitFor(session, 'document.getElementById("error").textContent', (v) => /Wrong username or password/.test(v));
      await session.sendKeys(await session.findElement('#password'), 'dev');
      await session.click(await session.findElement('button[name=decision][value=allow]'));
      await waitFor(session, 'document.title', (v) => v === 'Signed in');
      assert.ok((await session.getCurrentUrl()).startsWith(`${redirectUri}?`));
    });
    const params = received.at(-1)!;
    assert.equal(params.state, 'browser-state');
    assert.equal(params.iss, server.url);
    const tokens = await redeem(server.url, {
      client_id: client.id,
      code: params.code!,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      resource: RESOURCE,
    });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(JSON.parse(Buffer.from(tokens.body.access_token.split('.')[1], 'base64url').toString()).aud, RESOURCE);
  });

  it('CTX-EP-AUTHORIZATION-REQUEST: Deny sends the browser back with access_denied, the state and iss', async () => {
    const client = server.registerClient({ redirectUris: [redirectUri] });
    const { challenge } = pkce();
    await driver.withSession(async (session) => {
      await session.navigateTo(
        authorizeUrl(server.url, {
          client_id: client.id,
          redirect_uri: redirectUri,
          response_type: 'code',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state: 'deny-state',
          resource: RESOURCE,
        }),
      );
      await session.click(await session.findElement('button[name=decision][value=deny]'));
      await waitFor(session, 'document.title', (v) => v === 'Signed in');
    });
    assert.deepEqual(received.at(-1), { error: 'access_denied', error_description: 'The user denied the request', state: 'deny-state', iss: server.url });
  });
});
