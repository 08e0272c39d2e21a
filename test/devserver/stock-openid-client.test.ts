// openid-client 6 (the stock OpenID Connect / OAuth 2 client from npm, an independent RFC reader) against the embedded
// authorization server: the device grant in both dialects, the authorization code flow with PKCE after dynamic
// registration, refresh, and revocation with the right credentials, wrong ones and none. Approvals go through the
// server's admin API (device codes) or its login form posted as a browser would (the code flow).
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { postDecision, transactionOf } from './oauth/codeflow-helpers.js';
import { admin, form, sleep } from './oauth/helpers.js';

const insecure = { execute: [oidc.allowInsecureRequests] };
const REDIRECT = 'http://127.0.0.1:8976/callback';

/**
 * The error openid-client raised: its OAuth `error` (from the body when a WWW-Authenticate challenge came first), the
 * HTTP status, the challenge, and its message with its cause's.
 */
async function failure(promise: Promise<unknown>): Promise<{ error?: string; status?: number; message: string; challenge?: string | null }> {
  try {
    await promise;
  } catch (thrown) {
    const e = thrown as { error?: string; status?: number; message: string; response?: Response; cause?: { message?: string } };
    const body = e.error === undefined && e.response && !e.response.bodyUsed ? ((await e.response.json()) as { error?: string }) : undefined;
    return {
      error: e.error ?? body?.error,
      status: e.status,
      message: `${e.message}: ${e.cause?.message ?? ''}`,
      challenge: e.response?.headers.get('www-authenticate') ?? null,
    };
  }
  assert.fail('expected openid-client to reject');
}

async function approveWhenShown(server: OAuthServer, userCode: string): Promise<void> {
  await sleep(1_300);
  assert.equal((await admin(server.url, 'POST', 'device/approve', { user_code: userCode })).status, 200);
}

describe('DEV-STOCK-CLIENT: openid-client against gantry dev oauth', function () {
  this.timeout(60_000);

  describe('the device grant (RFC 8628)', () => {
    it('DEV-STOCK-CLIENT DEV-FLOW-REQUEST-CODES: in the rfc8628 dialect openid-client gets verification_uri(_complete), polls through authorization_pending, and gets tokens it checks (id_token iss/aud)', async () => {
      const server = await startOAuthServer({ dialect: 'rfc8628', interval: 1 });
      try {
        const client = server.registerClient();
        const config = await oidc.discovery(new URL(server.url), client.id, undefined, oidc.ClientSecretPost(client.secret!), insecure);
        const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email' });
        assert.equal(started.verification_uri, `${server.url}/device`);
        assert.equal(started.verification_uri_complete, `${server.url}/device?user_code=${encodeURIComponent(started.user_code)}`);
        const [tokens] = await Promise.all([oidc.pollDeviceAuthorizationGrant(config, started), approveWhenShown(server, started.user_code)]);
        assert.equal(tokens.token_type, 'bearer', 'openid-client lower-cases it');
        assert.equal(tokens.claims()?.email, 'dev@gantry.test');
        assert.equal(tokens.claims()?.iss, server.url);
        assert.ok(server.stats().tokenErrors.authorization_pending! >= 1, 'it polled while pending');
        const user = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
        assert.equal(user.email, 'dev@gantry.test');
        // A public device client (RFC 8628 allows it) authenticates with client_id alone.
        const open = server.registerClient({ secret: null });
        const openConfig = await oidc.discovery(new URL(server.url), open.id, undefined, oidc.None(), insecure);
        const second = await oidc.initiateDeviceAuthorization(openConfig, { scope: 'email' });
        const [openTokens] = await Promise.all([oidc.pollDeviceAuthorizationGrant(openConfig, second), approveWhenShown(server, second.user_code)]);
        assert.equal(typeof openTokens.refresh_token, 'string');
      } finally {
        await server.stop();
      }
    });

    it("DEV-STOCK-CLIENT DEV-DAR-VERIFICATION-URL: in Google's dialect (the default) openid-client refuses the code answer, which has verification_url and no verification_uri — the reason for --oauth-dialect rfc8628", async () => {
      const server = await startOAuthServer({ interval: 1 });
      try {
        const client = server.registerClient();
        const config = await oidc.discovery(new URL(server.url), client.id, undefined, oidc.ClientSecretPost(client.secret!), insecure);
        const refused = await failure(oidc.initiateDeviceAuthorization(config, { scope: 'openid email' }));
        assert.match(refused.message, /verification_uri/);
      } finally {
        await server.stop();
      }
    });

    it("DEV-STOCK-CLIENT: the rfc8628 dialect answers standard errors openid-client reports by name: access_denied (also for Google's org_internal) and expired_token", async () => {
      const server = await startOAuthServer({ dialect: 'rfc8628', interval: 1 });
      try {
        const client = server.registerClient({ orgInternal: 'example.org' });
        const config = await oidc.discovery(new URL(server.url), client.id, undefined, oidc.ClientSecretPost(client.secret!), insecure);
        const outside = await oidc.initiateDeviceAuthorization(config, { scope: 'email' });
        const denied = await failure(Promise.all([oidc.pollDeviceAuthorizationGrant(config, outside), approveWhenShown(server, outside.user_code)]));
        assert.deepEqual([denied.error, denied.status], ['access_denied', 400]);
        const late = await oidc.initiateDeviceAuthorization(config, { scope: 'email' });
        assert.equal((await admin(server.url, 'POST', 'device/expire', { user_code: late.user_code })).status, 200);
        const expired = await failure(oidc.pollDeviceAuthorizationGrant(config, late));
        assert.deepEqual([expired.error, expired.status], ['expired_token', 400]);
      } finally {
        await server.stop();
      }
    });
  });

  describe('the authorization code flow', () => {
    let server: OAuthServer;
    before(async () => {
      server = await startOAuthServer({ dialect: 'rfc8628', interval: 1 });
    });
    after(() => server.stop());

    /** buildAuthorizationUrl with PKCE, the login form as a browser posts it, authorizationCodeGrant on the callback. */
    async function signIn(config: oidc.Configuration, scope = 'modules:read gates:run') {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope,
        state,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const page = await fetch(url, { redirect: 'manual' });
      assert.equal(page.status, 200);
      const decision = await postDecision(server.url, { transaction: transactionOf(await page.text()), username: 'dev', password: 'dev', decision: 'allow' });
      assert.equal(decision.status, 302);
      return oidc.authorizationCodeGrant(config, new URL(decision.location!), { pkceCodeVerifier: verifier, expectedState: state });
    }

    it('DEV-STOCK-CLIENT: a public client registers itself (RFC 7591), signs in with PKCE S256 (iss checked per RFC 9207), refreshes (rotated), and revokes by client_id', async () => {
      const config = await oidc.dynamicClientRegistration(
        new URL(server.url),
        { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'openid-client test' },
        oidc.None(),
        insecure,
      );
      const metadata = config.clientMetadata();
      assert.equal(metadata.client_secret, undefined);
      assert.equal(config.serverMetadata().authorization_response_iss_parameter_supported, true);
      const tokens = await signIn(config);
      assert.equal(tokens.scope, 'modules:read gates:run');
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token, "a public client's refresh token rotates");
      await oidc.tokenRevocation(config, refreshed.refresh_token!);
      const again = await failure(oidc.refreshTokenGrant(config, refreshed.refresh_token!));
      assert.equal(again.error, 'invalid_grant', 'the revoked grant refreshes no more');
    });

    it('DEV-TL-REVOKE DEV-STOCK-CLIENT: a confidential client revokes with its secret; the wrong secret or none is 401 invalid_client (WWW-Authenticate: Basic when Basic was tried) and the token stays live', async () => {
      const registered = await oidc.dynamicClientRegistration(
        new URL(server.url),
        { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' },
        undefined,
        insecure,
      );
      const { client_id: id, client_secret: secret } = registered.clientMetadata() as { client_id: string; client_secret: string };
      assert.match(secret, /^gcs-/);
      const resourceServer = server.registerClient({ tokenEndpointAuthMethod: 'client_secret_post' });
      const rs = await oidc.discovery(new URL(server.url), resourceServer.id, undefined, oidc.ClientSecretPost(resourceServer.secret!), insecure);
      const config = await oidc.discovery(new URL(server.url), id, undefined, oidc.ClientSecretBasic(secret), insecure);
      const tokens = await signIn(config);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.equal(refreshed.refresh_token, undefined, 'a confidential client keeps its refresh token');
      assert.equal((await oidc.tokenIntrospection(rs, refreshed.access_token)).active, true);

      const wrongBasic = await oidc.discovery(new URL(server.url), id, undefined, oidc.ClientSecretBasic('gcs-wrong'), insecure);
      const wrongPost = await oidc.discovery(new URL(server.url), id, undefined, oidc.ClientSecretPost('gcs-wrong'), insecure);
      const none = await oidc.discovery(new URL(server.url), id, undefined, oidc.None(), insecure);
      for (const [attempt, basic] of [
        [wrongBasic, true],
        [wrongPost, false],
        [none, false],
      ] as const) {
        const refused = await failure(oidc.tokenRevocation(attempt, refreshed.access_token));
        assert.deepEqual([refused.error, refused.status], ['invalid_client', 401]);
        assert.equal(refused.challenge, basic ? 'Basic realm="gantry-dev-oauth"' : null);
        assert.equal((await oidc.tokenIntrospection(rs, refreshed.access_token)).active, true, 'not revoked');
      }
      // A token of another client is answered as an unknown one (200) and stays live.
      await oidc.tokenRevocation(rs, refreshed.access_token);
      assert.equal((await oidc.tokenIntrospection(rs, refreshed.access_token)).active, true, 'another client cannot revoke it');

      await oidc.tokenRevocation(config, tokens.refresh_token!);
      assert.equal((await oidc.tokenIntrospection(rs, refreshed.access_token)).active, false, 'the refresh token took the grant');
      assert.equal((await oidc.tokenIntrospection(rs, tokens.access_token)).active, false);
      await oidc.tokenRevocation(config, tokens.refresh_token!);
      assert.ok(config.serverMetadata().revocation_endpoint_auth_methods_supported?.includes('client_secret_basic'));
    });

    it("DEV-STOCK-CLIENT: the device client of the google dialect revokes with client_secret_post too (plain form, as Gantry's logout sends it)", async () => {
      const google = await startOAuthServer({ interval: 0 });
      try {
        const client = google.registerClient();
        const code = (await form(`${google.url}/device/code`, { client_id: client.id, scope: 'email' })).body;
        await admin(google.url, 'POST', 'device/approve', { user_code: code.user_code });
        const tokens = (
          await form(`${google.url}/token`, {
            client_id: client.id,
            client_secret: client.secret!,
            device_code: code.device_code,
            grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          })
        ).body;
        const config = await oidc.discovery(new URL(google.url), client.id, undefined, oidc.ClientSecretPost(client.secret!), insecure);
        await oidc.tokenRevocation(config, tokens.refresh_token);
        const gone = await failure(oidc.refreshTokenGrant(config, tokens.refresh_token));
        assert.equal(gone.error, 'invalid_grant');
      } finally {
        await google.stop();
      }
    });
  });
});
