// The OAuth core (lib/oauth) against a real authorization-server stand-in on 127.0.0.1: how each client
// authentication method sends the client, what each request puts in its body, RFC 6749 §5.2 error bodies as the one
// neutral OAuthError, the metadata checks, PKCE's S256 and the loopback rule shared with lib/loopback.ts.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { checkAuthUrl } from '../../lib/auth/index.js';
import { UsageError } from '../../lib/errors.js';
import {
  OAuthError,
  authorizationCodeGrantRequest,
  checkEndpoint,
  checkMetadata,
  clientAuthFor,
  discoverMetadata,
  endpointsAt,
  findMetadata,
  metadataUrls,
  introspectionRequest,
  oauthHttpClient,
  processIntrospectionResponse,
  processTokenResponse,
  refreshTokenGrantRequest,
  revocationRequest,
  s256,
  wellKnownUrl,
  type OAuthConfig,
} from '../../lib/oauth/index.js';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  form: URLSearchParams;
}

describe('LAYER-OAUTH: the one OAuth core', () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  /** What the next request is answered with. */
  let answer: { status: number; body: unknown } = { status: 200, body: {} };
  const http = oauthHttpClient();

  before(async () => {
    server = createServer((request: IncomingMessage, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ method: request.method!, url: request.url!, authorization: request.headers.authorization, form: new URLSearchParams(body) });
        const documents: Record<string, unknown> = {
          '/.well-known/oauth-authorization-server/tenant': `<html>a web page</html>`,
          '/tenant/.well-known/openid-configuration': { issuer: `${base}/tenant`, token_endpoint: `${base}/token` },
        };
        if (request.method === 'GET') {
          const document = documents[request.url!];
          if (document === undefined) response.writeHead(404).end();
          else response.writeHead(200, { 'content-type': 'application/json' }).end(typeof document === 'string' ? document : JSON.stringify(document));
          return;
        }
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => {
    http.close();
    server.close();
  });

  const config = (client: OAuthConfig['client']): OAuthConfig => ({
    http,
    client,
    server: { issuer: base, token_endpoint: `${base}/token`, revocation_endpoint: `${base}/revoke`, introspection_endpoint: `${base}/introspect` },
  });
  const grant = { code: 'code-1', redirectUri: 'http://127.0.0.1:1/callback', codeVerifier: 'verifier-1' };

  it('LAYER-OAUTH: none sends the client id alone, client_secret_post the id and secret in the body, client_secret_basic both form-urlencoded in Basic (RFC 6749 §2.3.1) and neither in the body', async () => {
    answer = { status: 200, body: { access_token: 'at-1', token_type: 'Bearer' } };
    await authorizationCodeGrantRequest(config({ clientId: 'public', authMethod: 'none' }), grant, { resource: 'https://mcp.example/' });
    await refreshTokenGrantRequest(config({ clientId: 'post', clientSecret: 'post-secret', authMethod: 'client_secret_post' }), 'rt-1');
    await refreshTokenGrantRequest(config({ clientId: 'id:with space', clientSecret: 's%cret:1', authMethod: 'client_secret_basic' }), 'rt-2');
    const [none, post, basic] = seen.splice(0);
    assert.equal(none!.form.get('client_id'), 'public');
    assert.equal(none!.form.has('client_secret'), false);
    assert.equal(none!.authorization, undefined);
    assert.deepEqual(Object.fromEntries(none!.form), {
      client_id: 'public',
      grant_type: 'authorization_code',
      code: 'code-1',
      redirect_uri: grant.redirectUri,
      code_verifier: 'verifier-1',
      resource: 'https://mcp.example/',
    });
    assert.equal(post!.form.get('client_secret'), 'post-secret');
    assert.equal(post!.form.get('grant_type'), 'refresh_token');
    assert.equal(post!.form.get('refresh_token'), 'rt-1');
    assert.equal(basic!.form.has('client_id'), false);
    assert.equal(basic!.form.has('client_secret'), false);
    assert.equal(Buffer.from(basic!.authorization!.replace(/^Basic /, ''), 'base64').toString(), 'id%3Awith%20space:s%25cret%3A1');
    // The choice for a pre-registered client: none without a secret, Basic unless the server lists only post.
    assert.equal(clientAuthFor(undefined, ['client_secret_basic']), 'none');
    assert.equal(clientAuthFor('s', undefined), 'client_secret_basic');
    assert.equal(clientAuthFor('s', ['client_secret_post']), 'client_secret_post');
  });

  it('LAYER-OAUTH: revocation and introspection send the token in the form body, never in the URL (RFC 7009, RFC 7662)', async () => {
    answer = { status: 200, body: { active: true, scope: 'a b' } };
    await revocationRequest(config(undefined), 'tok-revoke', { token_type_hint: 'refresh_token' });
    const introspected = processIntrospectionResponse(
      await introspectionRequest(config({ clientId: 'rs', clientSecret: 'rs-secret', authMethod: 'client_secret_post' }), 'tok-introspect'),
    );
    assert.equal(introspected.active, true);
    const [revoke, introspect] = seen.splice(0);
    assert.equal(revoke!.url, '/revoke');
    assert.deepEqual(Object.fromEntries(revoke!.form), { token: 'tok-revoke', token_type_hint: 'refresh_token' });
    assert.equal(introspect!.url, '/introspect');
    assert.equal(introspect!.form.get('token'), 'tok-introspect');
    assert.equal(introspect!.form.get('client_secret'), 'rs-secret');
  });

  it('LAYER-OAUTH: an RFC 6749 §5.2 error body is one OAuthError with its error, description and status — exit 1 for a refusal, 3 for a server that failed; a success without a bearer token is OAUTH_INVALID_RESPONSE', async () => {
    const client = { clientId: 'public', authMethod: 'none' as const };
    answer = { status: 400, body: { error: 'invalid_grant', error_description: 'the refresh token was revoked', error_uri: 'https://as.example/errors' } };
    const refused = await refreshTokenGrantRequest(config(client), 'rt-3');
    assert.throws(
      () => processTokenResponse(refused),
      (error: unknown) => {
        assert.ok(error instanceof OAuthError, String(error));
        assert.equal(error.code, 'OAUTH_ERROR_RESPONSE');
        assert.equal(error.error, 'invalid_grant');
        assert.equal(error.description, 'the refresh token was revoked');
        assert.equal(error.errorUri, 'https://as.example/errors');
        assert.equal(error.status, 400);
        assert.equal(error.exitCode, 1);
        assert.doesNotMatch(error.message, /rt-3/);
        return true;
      },
    );
    answer = { status: 503, body: { error: 'temporarily_unavailable' } };
    const failed = await refreshTokenGrantRequest(config(client), 'rt-4');
    assert.throws(
      () => processTokenResponse(failed),
      (error: unknown) => error instanceof OAuthError && error.exitCode === 3 && error.error === 'temporarily_unavailable',
    );
    answer = { status: 200, body: { access_token: 'at-mac', token_type: 'mac' } };
    const mac = await refreshTokenGrantRequest(config(client), 'rt-5');
    assert.throws(
      () => processTokenResponse(mac),
      (error: unknown) => error instanceof OAuthError && error.code === 'OAUTH_INVALID_RESPONSE' && error.field === 'token_type',
    );
    answer = { status: 200, body: { access_token: 'at-ok', token_type: 'bearer', expires_in: '120', refresh_token: 'rt-new', scope: 'openid' } };
    const ok = processTokenResponse(await refreshTokenGrantRequest(config(client), 'rt-6'));
    assert.deepEqual(
      { ...ok },
      {
        accessToken: 'at-ok',
        tokenType: 'Bearer',
        expiresIn: 120,
        refreshToken: 'rt-new',
        refreshTokenExpiresIn: undefined,
        scope: 'openid',
        idToken: undefined,
      },
    );
    seen.splice(0);
  });

  it('LAYER-OAUTH: discovery — RFC 8414 inserts the well-known segment, OpenID appends it; the first JSON object wins, a web page is passed over and said', async () => {
    const issuer = `${base}/tenant`;
    assert.equal(wellKnownUrl(issuer, 'oauth-authorization-server', 'inserted'), `${base}/.well-known/oauth-authorization-server/tenant`);
    assert.equal(wellKnownUrl(issuer, 'openid-configuration', 'appended'), `${base}/tenant/.well-known/openid-configuration`);
    assert.equal(wellKnownUrl(`${base}/`, 'openid-configuration', 'inserted'), wellKnownUrl(`${base}/`, 'openid-configuration', 'appended'));
    const urls = [
      wellKnownUrl(issuer, 'oauth-authorization-server', 'inserted'),
      wellKnownUrl(issuer, 'openid-configuration', 'inserted'),
      wellKnownUrl(issuer, 'openid-configuration', 'appended'),
    ];
    const { found, tried, notJson } = await findMetadata(http, urls);
    seen.splice(0);
    assert.equal(found?.url, urls[2]);
    assert.deepEqual(tried, [`${urls[0]} (not a JSON object)`, `${urls[1]} (404)`]);
    assert.deepEqual(notJson, [urls[0]]);
    assert.equal(checkMetadata(found!, { issuer, required: ['token_endpoint'] }).token_endpoint, `${base}/token`);
    assert.throws(
      () => checkMetadata(found!, { issuer: `${issuer}/` }),
      (error: unknown) => error instanceof OAuthError && error.code === 'OAUTH_ISSUER_MISMATCH',
    );
    assert.throws(
      () => checkMetadata(found!, { issuer, required: ['authorization_endpoint'] }),
      (error: unknown) => error instanceof OAuthError && error.code === 'OAUTH_INVALID_METADATA' && error.field === 'authorization_endpoint',
    );
    const insecure = { url: urls[2]!, document: { ...found!.document, revocation_endpoint: 'http://as.example.com/revoke' } };
    assert.throws(
      () => checkMetadata(insecure, { issuer }),
      (error: unknown) => error instanceof OAuthError && error.code === 'OAUTH_INSECURE_ENDPOINT' && error.field === 'revocation_endpoint',
    );
  });

  it("LAYER-OAUTH: discoverMetadata — the issuer's addresses by default, or the ones given; an issuer on the origin where asked; the fallback where no address has a document, checked as one", async () => {
    const issuer = `${base}/tenant`;
    assert.deepEqual(metadataUrls(issuer), [
      `${base}/.well-known/oauth-authorization-server/tenant`,
      `${base}/.well-known/openid-configuration/tenant`,
      `${base}/tenant/.well-known/openid-configuration`,
    ]);
    const found = await discoverMetadata(http, issuer);
    assert.equal(found.url, `${base}/tenant/.well-known/openid-configuration`);
    assert.equal(found.metadata?.token_endpoint, `${base}/token`);
    // Read at an address no issuer formed: the issuer it names must be on that origin.
    const atOrigin = await discoverMetadata(http, base, { urls: [`${base}/tenant/.well-known/openid-configuration`], checks: { issuerOrigin: base } });
    assert.equal(atOrigin.metadata?.issuer, issuer);
    await assert.rejects(
      discoverMetadata(http, 'http://127.0.0.2:1', {
        urls: [`${base}/tenant/.well-known/openid-configuration`],
        checks: { issuerOrigin: 'http://127.0.0.2:1' },
      }),
      (error: unknown) => error instanceof OAuthError && error.code === 'OAUTH_ISSUER_MISMATCH',
    );
    // Nothing at the addresses: none, or the fallback's endpoints — checked as a document's are.
    const nothing = await discoverMetadata(http, base, { urls: [`${base}/missing`] });
    assert.deepEqual(nothing, { metadata: undefined, url: undefined, tried: [`${base}/missing (404)`] });
    const fallback = await discoverMetadata(http, base, {
      urls: [`${base}/missing`],
      checks: { required: ['token_endpoint'] },
      fallback: () => endpointsAt(base, { authorization_endpoint: '/authorize', token_endpoint: '/token' }),
    });
    assert.equal(fallback.url, undefined);
    assert.deepEqual(fallback.metadata, { issuer: base, authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token` });
    await assert.rejects(
      discoverMetadata(http, 'http://as.example.com', {
        urls: [`${base}/missing`],
        fallback: () => endpointsAt('http://as.example.com', { token_endpoint: '/token' }),
      }),
      (error: unknown) => error instanceof OAuthError && error.code === 'OAUTH_INSECURE_ENDPOINT',
    );
    seen.splice(0);
  });

  it("LAYER-OAUTH: plain http only on this machine, as lib/loopback.ts says (127.0.0.0/8, ::1, *.localhost) — for endpoints and for lib/auth's server address alike", () => {
    for (const url of [
      'https://as.example.com/token',
      'http://127.0.0.1:9/token',
      'http://127.0.0.2/token',
      'http://[::1]:9/token',
      'http://auth.localhost/token',
    ]) {
      assert.equal(checkEndpoint(url, 'token_endpoint', 'the test').href, new URL(url).href, url);
    }
    assert.throws(
      () => checkEndpoint('http://as.example.com/token', 'token_endpoint', 'the test'),
      (error: unknown) => error instanceof OAuthError && error.code === 'OAUTH_INSECURE_ENDPOINT',
    );
    assert.equal(checkAuthUrl('http://127.0.0.2:8080/'), 'http://127.0.0.2:8080');
    assert.equal(checkAuthUrl('http://auth.localhost'), 'http://auth.localhost');
    assert.throws(
      () => checkAuthUrl('http://auth.example.com'),
      (error: unknown) => error instanceof UsageError && /must be https/.test(error.message),
    );
  });

  it("LAYER-OAUTH RFC 7636 appendix B: S256 of the specification's verifier is its challenge", () => {
    assert.equal(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'), 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
});
