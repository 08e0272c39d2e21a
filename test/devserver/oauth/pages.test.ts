// The approval pages at the verification URL, driven with plain fetch: the code form (pre-filled by ?user_code=),
// CSRF, the consent page with its account chooser, allow and deny, and the 400 page for an unknown or expired code.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { admin, poll, requestCode, VIDEO_READONLY, type TestClient } from './helpers.js';

interface Page {
  status: number;
  html: string;
  cookie?: string;
}

async function page(url: string, init: { method?: string; cookie?: string; fields?: Record<string, string> } = {}): Promise<Page> {
  const response = await fetch(url, {
    method: init.method ?? (init.fields ? 'POST' : 'GET'),
    headers: { ...(init.cookie ? { cookie: init.cookie } : {}), ...(init.fields ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(init.fields ? { body: new URLSearchParams(init.fields) } : {}),
  });
  const setCookie = response.headers.get('set-cookie');
  return { status: response.status, html: await response.text(), ...(setCookie ? { cookie: setCookie.split(';')[0] } : {}) };
}

const field = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

describe('devserver/oauth: the approval pages', function () {
  this.timeout(20_000);
  let server: OAuthServer;
  let client: TestClient;
  before(async () => {
    server = await startOAuthServer({ interval: 0 });
    server.addUser({ username: 'second', email: 'second@gantry.test', name: 'Second Person' });
    client = server.registerClient({ name: 'Living-room TV' });
  });
  after(() => server.stop());

  /** Opens the code form: its cookie and CSRF token. */
  const open = async (query = '') => {
    const form = await page(`${server.url}/device${query}`);
    assert.equal(form.status, 200);
    return { cookie: form.cookie!, csrf: field(form.html, 'csrf')!, html: form.html };
  };

  it('DEV-FLOW-USER-DECISION DEV-DAR-USER-CODE DEV-ST-GRANTED: the code form, then a consent page naming the client and the scopes with an account chooser; Allow as the chosen account grants', async () => {
    const code = await requestCode(server.url, client, `email ${VIDEO_READONLY}`);
    const { cookie, csrf, html } = await open();
    assert.match(html, /<input type="text" name="user_code" id="user_code"/);
    const consent = await page(`${server.url}/device`, { cookie, fields: { csrf, user_code: code.user_code.replace('-', '') } });
    assert.equal(consent.status, 200, 'the dash may be left out');
    assert.match(consent.html, /Living-room TV/);
    assert.match(consent.html, /View your video account/);
    assert.ok(consent.html.includes(VIDEO_READONLY));
    assert.match(consent.html, /id="allow"/);
    assert.match(consent.html, /id="deny"/);
    assert.match(consent.html, /dev@gantry\.test/);
    assert.match(consent.html, /second@gantry\.test/);
    const result = await page(`${server.url}/device/decision`, {
      cookie,
      fields: { csrf, user_code: field(consent.html, 'user_code')!, account: 'second', decision: 'allow' },
    });
    assert.equal(result.status, 200);
    assert.match(result.html, /Access granted — you may close this window/);
    const tokens = await poll(server.url, client, code.device_code);
    assert.equal(tokens.status, 200);
    assert.equal(server.deviceCodes().find((c) => c.user_code === code.user_code)!.account, 'second');
  });

  it('DEV-ST-DENIED: Deny shows "Access denied" and the poll is access_denied; the code cannot be used again', async () => {
    const code = await requestCode(server.url, client);
    const { cookie, csrf } = await open();
    const result = await page(`${server.url}/device/decision`, { cookie, fields: { csrf, user_code: code.user_code, decision: 'deny' } });
    assert.match(result.html, /Access denied/);
    assert.equal((await poll(server.url, client, code.device_code)).body.error, 'access_denied');
    const again = await page(`${server.url}/device`, { cookie, fields: { csrf, user_code: code.user_code } });
    assert.equal(again.status, 400);
    assert.match(again.html, /already been used/);
  });

  it('DEV-FLOW-REQUEST-CODES: ?user_code= pre-fills the form (verification_uri_complete)', async () => {
    const { html } = await open('?user_code=ABCD-EFGH');
    assert.match(html, /id="user_code"[^>]* value="ABCD-EFGH"/);
    const escaped = await open(`?user_code=${encodeURIComponent('"><script>')}`);
    assert.ok(!escaped.html.includes('"><script>'), 'escaped');
  });

  it('DEV-LIM-CODE-VALIDITY DEV-LIM-USER-CODE-UNALTERED: an unknown, expired or wrongly-cased code gets a 400 page saying so', async () => {
    const { cookie, csrf } = await open();
    const unknown = await page(`${server.url}/device`, { cookie, fields: { csrf, user_code: 'ZZZZ-ZZZZ' } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.html, /not valid or has expired/);
    const code = await requestCode(server.url, client);
    const lower = await page(`${server.url}/device`, { cookie, fields: { csrf, user_code: code.user_code.toLowerCase() } });
    assert.equal(lower.status, 400, 'user codes are case-sensitive');
    await admin(server.url, 'POST', 'device/expire', { user_code: code.user_code });
    const expired = await page(`${server.url}/device`, { cookie, fields: { csrf, user_code: code.user_code } });
    assert.equal(expired.status, 400);
    assert.match(expired.html, /not valid or has expired/);
  });

  it('the forms need their CSRF token and its cookie', async () => {
    const code = await requestCode(server.url, client);
    const { cookie, csrf } = await open();
    assert.equal((await page(`${server.url}/device`, { fields: { csrf, user_code: code.user_code } })).status, 403, 'no cookie');
    assert.equal((await page(`${server.url}/device`, { cookie, fields: { csrf: 'forged', user_code: code.user_code } })).status, 403, 'another token');
    assert.equal((await page(`${server.url}/device/decision`, { cookie, fields: { user_code: code.user_code, decision: 'allow' } })).status, 403);
    assert.equal(server.deviceCodes().find((c) => c.user_code === code.user_code)!.state, 'pending');
  });
});
