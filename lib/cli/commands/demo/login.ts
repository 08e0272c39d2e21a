import { pageWaitMs, runningServer, type DemoStep } from './step.js';

/** WebDriver's Enter key (W3C WebDriver §17.4.2). */
const enterKey = '\uE007';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * A device login against the embedded authorization server, as `gantry auth login` does it on a machine without a
 * browser: the code is shown, a "phone" (headless Chromium driven through ChromeDriver) opens the address, types the
 * code and allows; the poll then gets the tokens, and the video API says who is logged in. The tokens are kept in a
 * 0600 file in the demo's work folder, never in this machine's keyring or kv engine.
 */
export const loginStep: DemoStep = {
  name: 'login',
  description: 'device login: a code approved in headless Chromium, tokens kept, the video API asked who is logged in',
  async run({ servers, out, workDir, json, browser }) {
    const env = runningServer(servers, 'oauth', 'the embedded authorization server').env;
    const authUrl = env?.GANTRY_AUTH_URL;
    const clientId = env?.GANTRY_OAUTH_CLIENT_ID;
    if (!authUrl || !clientId) throw new Error('the embedded authorization server does not say where it is');
    const clientSecret = env.GANTRY_OAUTH_CLIENT_SECRET;
    const apiUrl = env.GANTRY_API_URL ?? authUrl;
    const lib = await import('../../../auth/index.js');
    const { openTokenStore, recordProfile } = await import('../../../auth/index.js');
    // storage.file: the publish step puts the gate's reports on the storage API with this login.
    const scopes = lib.resolveScopes(['openid', 'email', 'video.readonly', 'storage.file']);

    let approval: Promise<string> | undefined;
    // A failed approval stops the poll at once (not at the code's expiry, 30 min away) and is the error reported.
    const approvalFailed = new AbortController();
    const login = await lib
      .deviceLogin({
        authUrl,
        clientId,
        clientSecret,
        scopes,
        signal: approvalFailed.signal,
        onCode: (device) => {
          if (!json) {
            out.line(
              `  open ${device.verificationUrl} and enter ${device.userCode} (the code expires in ${lib.formatSeconds(device.expiresIn)}; polling every ${device.interval} s)`,
            );
            out.line('  approving as dev@gantry.test in headless Chromium…');
          }
          approval = browser.use(async (session) => {
            await session.setTimeouts({ implicit: pageWaitMs });
            await session.navigateTo(device.verificationUrl);
            const field = await session.findElement('#user_code');
            await session.sendKeys(field, `${device.userCode}${enterKey}`);
            await session.click(await session.findElement('#allow'));
            // The click only starts the form's POST: wait for the result page before the step lets the browser go.
            await session.findElement('#result');
            return String(await session.executeScript('return document.body.innerText'));
          });
          approval.catch((error: unknown) => approvalFailed.abort(error));
        },
      })
      .catch(async (error: unknown) => {
        // The browser is the demo's: a poll that failed on its own waits for the approval to end before the next step.
        await approval?.catch(() => undefined);
        throw approvalFailed.signal.aborted ? new Error(`the approval in headless Chromium failed: ${messageOf(approvalFailed.signal.reason)}`) : error;
      });
    const result = { login, page: await approval! };
    const { store } = await openTokenStore('file', { configDir: workDir, profile: 'demo', insecureStorage: true });
    const stored = {
      authUrl: lib.checkAuthUrl(authUrl),
      clientId,
      profile: 'demo',
      tokens: result.login.tokens,
      ...(result.login.account ? { account: result.login.account } : {}),
    };
    await store.write(stored);
    await recordProfile(stored, store, { configDir: workDir });
    const http = lib.authHttpClient();
    let channels;
    try {
      channels = await lib.listMyChannels(http, apiUrl, result.login.tokens.accessToken);
    } finally {
      http.close();
    }
    if (!json) {
      out.line(
        `  the approval page said: ${
          result.page
            .split('\n')
            .find((line) => line.trim() !== '')
            ?.trim() ?? '(nothing)'
        }`,
      );
      out.line(`  logged in as ${result.login.account?.email ?? result.login.account?.sub ?? 'an unnamed account'}; scopes: ${result.login.tokens.scope}`);
      out.line(`  tokens kept in ${store.location}${result.login.tokens.refreshToken ? ', with a refresh token' : ''}`);
      for (const channel of channels) out.line(`  whoami: channel ${channel.id}${channel.title ? ` "${channel.title}"` : ''}`);
      out.line('  try: gantry dev (it prints GANTRY_AUTH_URL, GANTRY_OAUTH_CLIENT_ID and _SECRET to export), then gantry auth login; gantry auth whoami');
    }
    return { account: result.login.account ?? null, scope: result.login.tokens.scope, channels: channels.map((c) => c.id), store: store.kind };
  },
};
