// POST /revoke authenticates the client before it touches a token (RFC 7009 §2.1): a wrong secret, or no client
// authentication at all, is 401 invalid_client and the token stays live; a token of another client is answered as an
// unknown one and stays live. Plain fetch against the embedded server; live-ness is asked of introspection.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { basic, REDIRECT, RESOURCE, authorizeAndAllow, redeem } from './codeflow-helpers.js';
import { form, getJson, login, revoke, VIDEO_READONLY, type TestClient } from './helpers.js';

for (const dialect of ['google', 'rfc8628'] as const) {
  describe(`devserver/oauth: revocation authenticates the client (${dialect})`, function () {
    this.timeout(30_000);
    let server: OAuthServer;
    let device: TestClient;
    let other: TestClient;
    let resourceServer: TestClient;
    const unknownAnswer = dialect === 'google' ? [400, 'invalid_token'] : [200, undefined];
    before(async () => {
      server = await startOAuthServer({ dialect, interval: 0 });
      device = server.registerClient();
      other = server.registerClient();
      resourceServer = server.registerClient({ tokenEndpointAuthMethod: 'client_secret_post' });
    });
    after(() => server.stop());
    beforeEach(() => server.reset());
    const active = async (token: string) =>
      (await form(`${server.url}/introspect`, { token, client_id: resourceServer.id, client_secret: resourceServer.secret! })).body.active as boolean;

    it('DEV-EP-REVOKE DEV-STOCK-CLIENT: a wrong secret, a secret without the client, or no client authentication at all is 401 invalid_client and the token stays live', async () => {
      const tokens = await login(server.url, device, VIDEO_READONLY);
      const attempts: Array<[Record<string, string>, Record<string, string>, boolean]> = [
        [{ token: tokens.access_token }, {}, false],
        [{ token: tokens.access_token, client_id: device.id }, {}, false],
        [{ token: tokens.access_token, client_id: device.id, client_secret: 'GOCSPX-wrong' }, {}, false],
        [{ token: tokens.access_token, client_secret: device.secret! }, {}, false],
        [{ token: tokens.access_token, client_id: 'nobody.apps.gantry.test', client_secret: device.secret! }, {}, false],
        [{ token: tokens.access_token }, basic(device.id, 'GOCSPX-wrong'), true],
        [{ token: tokens.access_token }, { authorization: 'Basic !!!' }, true],
      ];
      for (const [fields, headers, triedBasic] of attempts) {
        const answer = await form(`${server.url}/revoke`, fields, headers);
        assert.deepEqual([answer.status, answer.body.error], [401, 'invalid_client'], JSON.stringify(Object.keys(fields)));
        assert.equal(typeof answer.body.error_description, 'string');
        assert.equal(answer.headers.get('www-authenticate'), triedBasic ? 'Basic realm="gantry-dev-oauth"' : null);
        assert.equal(await active(tokens.access_token), true, 'the token was not revoked');
      }
      const both = await form(`${server.url}/revoke`, { token: tokens.access_token, client_secret: device.secret! }, basic(device.id, device.secret!));
      assert.deepEqual([both.status, both.body.error], [400, 'invalid_request'], 'credentials in two places');
      assert.equal(await active(tokens.access_token), true);
      assert.equal(server.stats().revocations, 0);
      // Credentials are checked first: a request without them learns nothing about the token.
      const unknown = await form(`${server.url}/revoke`, { token: 'ya29.unknown' });
      assert.deepEqual([unknown.status, unknown.body.error], [401, 'invalid_client']);
    });

    it('DEV-TL-REVOKE DEV-STOCK-CLIENT: the right secret by client_secret_post or HTTP Basic revokes', async () => {
      const post = await login(server.url, device, VIDEO_READONLY);
      assert.equal((await revoke(server.url, device, post.access_token)).status, 200);
      assert.equal(await active(post.access_token), false);
      const byBasic = await login(server.url, device, VIDEO_READONLY);
      const answer = await form(`${server.url}/revoke`, { token: byBasic.refresh_token }, basic(device.id, device.secret!));
      assert.deepEqual([answer.status, answer.body], [200, {}]);
      assert.equal(await active(byBasic.access_token), false, 'the refresh token took its access token');
    });

    it('DEV-ERR-REVOKE DEV-STOCK-CLIENT: a token issued to another client is answered as an unknown one and stays live', async () => {
      const tokens = await login(server.url, device, VIDEO_READONLY);
      for (const token of [tokens.access_token, tokens.refresh_token, 'ya29.unknown']) {
        const answer = await revoke(server.url, other, token);
        assert.deepEqual([answer.status, answer.body.error], unknownAnswer);
      }
      assert.equal(await active(tokens.access_token), true);
      assert.equal(server.stats().revocations, 0);
    });

    it('DEV-STOCK-CLIENT: a code client revokes the way it authenticates at /token — Basic or post as registered, client_id alone when public', async () => {
      const basicClient = server.registerClient({ redirectUris: [REDIRECT], tokenEndpointAuthMethod: 'client_secret_basic' });
      const publicClient = server.registerClient({ redirectUris: [REDIRECT] });
      const issue = async (client: { id: string; secret: string | null }) => {
        const { code, verifier } = await authorizeAndAllow(server.url, { clientId: client.id, scope: 'modules:read', resource: RESOURCE });
        const fields = { code, code_verifier: verifier, redirect_uri: REDIRECT, resource: RESOURCE };
        const answer = client.secret
          ? await redeem(server.url, fields, basic(client.id, client.secret))
          : await redeem(server.url, { ...fields, client_id: client.id });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        return answer.body.access_token as string;
      };
      const confidential = await issue(basicClient);
      const viaPost = await form(`${server.url}/revoke`, { token: confidential, client_id: basicClient.id, client_secret: basicClient.secret! });
      assert.deepEqual([viaPost.status, viaPost.body.error], [401, 'invalid_client'], 'registered for Basic');
      assert.equal(await active(confidential), true);
      assert.equal((await form(`${server.url}/revoke`, { token: confidential }, basic(basicClient.id, basicClient.secret!))).status, 200);
      assert.equal(await active(confidential), false);
      const open = await issue(publicClient);
      const withSecret = await form(`${server.url}/revoke`, { token: open, client_id: publicClient.id, client_secret: 'made-up' });
      assert.deepEqual([withSecret.status, withSecret.body.error], [401, 'invalid_client']);
      assert.equal((await form(`${server.url}/revoke`, { token: open, client_id: publicClient.id })).status, 200);
      assert.equal(await active(open), false);
    });

    it('DEV-STOCK-CLIENT: both metadata documents advertise what /revoke accepts', async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const body = (await getJson(`${server.url}${path}`)).body;
        assert.deepEqual(body.revocation_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
      }
    });
  });
}
