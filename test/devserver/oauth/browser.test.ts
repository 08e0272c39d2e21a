// The approval page in a real browser: headless Chromium under chromedriver (Debian's), driven through WebDriver
// with lib/automation, types the user code into the form and presses Allow; the device's next poll gets tokens.
import assert from 'node:assert/strict';
import { startChromeDriver, type ChromeDriver } from '../../../lib/automation/index.js';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { poll, requestCode, VIDEO_READONLY, type TestClient } from './helpers.js';

describe('devserver/oauth: approving in Chromium through WebDriver', function () {
  this.timeout(90_000);
  let server: OAuthServer;
  let client: TestClient;
  let driver: ChromeDriver;
  before(async () => {
    server = await startOAuthServer({ interval: 1, userCodeCase: 'mixed' });
    client = server.registerClient({ name: 'Browser test device' });
    // A hung WebDriver command fails in 30 s, well inside the test's time, with its own error.
    driver = await startChromeDriver({ commandTimeoutMs: 30_000 });
  });
  after(async () => {
    await driver?.stop();
    await server?.stop();
  });

  it('DEV-FLOW-USER-DECISION DEV-FLOW-DISPLAY DEV-ST-GRANTED DEV-LIM-USER-CODE-UNALTERED: a person types the code at verification_url, sees the consent page and presses Allow; the poll gets tokens', async () => {
    const code = await requestCode(server.url, client, `openid ${VIDEO_READONLY}`);
    assert.equal((await poll(server.url, client, code.device_code)).status, 428);
    await driver.withSession(async (session) => {
      // Each button submits a form and the next page loads after it: elements are waited for, not found by luck.
      await session.setTimeouts({ implicit: 15_000 });
      await session.navigateTo(code.verification_url);
      assert.equal(await session.getTitle(), 'Connect a device');
      await session.sendKeys(await session.findElement('#user_code'), code.user_code);
      await session.click(await session.findElement('#continue'));
      await session.findElement('#allow');
      assert.match(await session.getTitle(), /Browser test device wants to access your account/);
      assert.match(String(await session.executeScript('return document.getElementById("scopes").textContent')), /View your video account/);
      await session.click(await session.findElement('#allow'));
      await session.findElement('#result');
      assert.equal(await session.getTitle(), 'Access granted');
      assert.match(String(await session.executeScript('return document.getElementById("result").textContent')), /Access granted — you may close this window/);
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const tokens = await poll(server.url, client, code.device_code);
    assert.equal(tokens.status, 200);
    assert.equal(tokens.body.scope, `openid ${VIDEO_READONLY}`);
  });

  it('DEV-ST-DENIED: the link with ?user_code= opens the form filled in; Deny ends in access_denied', async () => {
    const code = await requestCode(server.url, client, 'email');
    await driver.withSession(async (session) => {
      await session.setTimeouts({ implicit: 15_000 });
      await session.navigateTo(`${code.verification_url}?user_code=${encodeURIComponent(code.user_code)}`);
      await session.click(await session.findElement('#continue'));
      await session.click(await session.findElement('#deny'));
      await session.findElement('#result');
      assert.equal(await session.getTitle(), 'Access denied');
    });
    assert.equal((await poll(server.url, client, code.device_code)).body.error, 'access_denied');
  });
});
