// The client's login approved as a person would: headless Chromium (Debian's, under chromedriver, driven through
// lib/automation's WebDriver client) opens the address the client shows, types the code it shows and presses Allow or
// Deny, in both dialects of the embedded server. In the RFC 8628 dialect the link with the code in it is opened.
import assert from 'node:assert/strict';
import { startChromeDriver, type ChromeDriver } from '../../lib/automation/index.js';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { DeviceLoginError, deviceLogin, resolveScopes, type DeviceCode } from '../../lib/auth/index.js';

const enterKey = '\uE007';

describe('device login approved in Chromium through WebDriver', function () {
  this.timeout(120_000);
  let driver: ChromeDriver;
  before(async () => {
    // A command that hangs fails with its name well inside the test's own timeout.
    driver = await startChromeDriver({ commandTimeoutMs: 30_000 });
  });
  after(async () => {
    await driver?.stop();
  });

  /** What a person does on the second device: open the address, type the code (unless the link carries it), decide. */
  function approveIn(code: DeviceCode, decision: 'allow' | 'deny'): Promise<string> {
    return driver.withSession(async (session) => {
      // Enter submits the form and the decision page loads after it: find its buttons by waiting for them, not by luck.
      await session.setTimeouts({ implicit: 15_000 });
      if (code.verificationUrlComplete) {
        await session.navigateTo(code.verificationUrlComplete);
        assert.equal(String(await session.executeScript('return document.getElementById("user_code").value')), code.userCode, 'the link filled the code in');
        await session.sendKeys(await session.findElement('#user_code'), enterKey);
      } else {
        await session.navigateTo(code.verificationUrl);
        await session.sendKeys(await session.findElement('#user_code'), `${code.userCode}${enterKey}`);
      }
      await session.click(await session.findElement(`#${decision}`));
      // The click only starts the form's POST: read the title once the result page is there.
      await session.findElement('#result');
      return session.getTitle();
    });
  }

  for (const dialect of ['google', 'rfc8628'] as const) {
    describe(`${dialect} dialect`, () => {
      let server: OAuthServer;
      let client: { id: string; secret: string | null };
      before(async () => {
        server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1, dialect, userCodeCase: 'mixed' });
        client = server.registerClient({ name: 'Gantry browser test' });
      });
      after(async () => {
        await server?.stop();
      });

      /** The login, and (once the browser session has ended) the title of the page the person saw last. */
      const login = async (decision: 'allow' | 'deny', pages: string[]) => {
        let approval: Promise<unknown> = Promise.resolve();
        // A browser step that failed ends the login at once with that error, rather than polling until the code expires.
        const browserFailed = new AbortController();
        try {
          return await deviceLogin({
            authUrl: server.url,
            clientId: client.id,
            clientSecret: client.secret ?? undefined,
            scopes: resolveScopes(['openid', 'email', 'video.readonly']),
            signal: browserFailed.signal,
            onCode: (code) => {
              approval = approveIn(code, decision).then(
                (title) => pages.push(title),
                (error: Error) => {
                  pages.push(`failed: ${error.message}`);
                  browserFailed.abort(new Error(`the browser step failed: ${error.message}`));
                },
              );
            },
          });
        } finally {
          await approval;
        }
      };

      it(`DEV-FLOW-USER-DECISION DEV-ST-GRANTED DEV-FLOW-POLL-RESULT DEV-LIM-USER-CODE-UNALTERED (${dialect}): the code typed in Chromium exactly as shown, Allow, and the poll gets tokens`, async () => {
        const pages: string[] = [];
        const result = await login('allow', pages);
        assert.deepEqual(pages, ['Access granted']);
        assert.equal(result.account?.email, 'dev@gantry.test');
        assert.ok(result.tokens.accessToken && result.tokens.refreshToken);
      });

      it(`DEV-ST-DENIED (${dialect}): Deny in Chromium ends the login with access_denied and no tokens`, async () => {
        const pages: string[] = [];
        await assert.rejects(login('deny', pages), (error: DeviceLoginError) => error.code === 'AUTH_ACCESS_DENIED' && error.exitCode === 1);
        assert.deepEqual(pages, ['Access denied']);
      });
    });
  }
});
