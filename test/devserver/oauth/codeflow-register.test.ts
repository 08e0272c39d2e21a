// The embedded authorization server for context-server clients: RFC 8414 metadata and RFC 7591 dynamic registration.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { getJson } from './helpers.js';
import { REDIRECT, registerJson } from './codeflow-helpers.js';

describe('devserver/oauth: authorization server metadata and dynamic registration (context-server clients)', function () {
  this.timeout(20_000);
  let server: OAuthServer;
  before(async () => {
    server = await startOAuthServer();
  });
  after(() => server.stop());

  it('CTX-STD-RFC8414 CTX-ROLE-AUTH-SERVER CTX-STD-OAUTH21: both metadata documents name the authorization, registration and introspection endpoints, S256 only, code, iss in responses, resource indicators and the context scopes', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const { status, body } = await getJson(`${server.url}${path}`);
      assert.equal(status, 200);
      assert.equal(body.issuer, server.url);
      assert.equal(body.authorization_endpoint, `${server.url}/authorize`);
      assert.equal(body.token_endpoint, `${server.url}/token`);
      assert.equal(body.registration_endpoint, `${server.url}/register`);
      assert.equal(body.introspection_endpoint, `${server.url}/introspect`);
      assert.equal(body.jwks_uri, `${server.url}/jwks`);
      assert.equal(body.device_authorization_endpoint, `${server.url}/device/code`, 'the device flow stays');
      assert.deepEqual(body.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(body.response_types_supported, ['code']);
      assert.ok(body.grant_types_supported.includes('authorization_code'));
      assert.ok(body.grant_types_supported.includes('refresh_token'));
      for (const method of ['none', 'client_secret_basic', 'client_secret_post'])
        assert.ok(body.token_endpoint_auth_methods_supported.includes(method), method);
      assert.deepEqual(body.introspection_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post']);
      assert.equal(body.authorization_response_iss_parameter_supported, true);
      assert.equal(body.resource_indicators_supported, true);
      for (const scope of ['modules:read', 'gates:run', 'secrets:list', 'platform:read']) assert.ok(body.scopes_supported.includes(scope), scope);
    }
    assert.equal(server.metadataUrl, `${server.url}/.well-known/oauth-authorization-server`);
  });

  it('CTX-STD-RFC8414: authorizationScopes replaces the context scopes; metadataOverrides is merged into both documents (a server without S256, another issuer)', async () => {
    const other = await startOAuthServer({
      authorizationScopes: ['tools:call'],
      metadataOverrides: { code_challenge_methods_supported: undefined, issuer: 'https://elsewhere.test' },
    });
    try {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const { body } = await getJson(`${other.url}${path}`);
        assert.equal(body.issuer, 'https://elsewhere.test');
        assert.equal('code_challenge_methods_supported' in body, false, 'undefined drops the field');
        assert.ok(body.scopes_supported.includes('tools:call'));
        assert.ok(!body.scopes_supported.includes('modules:read'));
      }
    } finally {
      await other.stop();
    }
  });

  it('CTX-STD-RFC7591: a public client registers with its loopback redirect URI: 201, a client_id, no secret, the metadata echoed with the defaults', async () => {
    const answer = await registerJson(server.url, {
      redirect_uris: [REDIRECT],
      client_name: 'Agent',
      scope: 'modules:read gates:run',
      client_uri: 'https://agent.test',
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const body = answer.body;
    assert.equal(typeof body.client_id, 'string');
    assert.ok(Number.isInteger(body.client_id_issued_at) && Math.abs(body.client_id_issued_at - Date.now() / 1000) < 60);
    assert.equal(body.client_secret, undefined);
    assert.equal(body.client_secret_expires_at, undefined);
    assert.deepEqual(body.redirect_uris, [REDIRECT]);
    assert.equal(body.token_endpoint_auth_method, 'none');
    assert.deepEqual(body.grant_types, ['authorization_code', 'refresh_token']);
    assert.deepEqual(body.response_types, ['code']);
    assert.equal(body.application_type, 'native');
    assert.equal(body.client_name, 'Agent');
    assert.equal(body.scope, 'modules:read gates:run');
    assert.equal(body.client_uri, 'https://agent.test');
    assert.equal(answer.headers.get('cache-control'), 'no-store');
  });

  it('CTX-STD-RFC7591 CTX-STD-OAUTH21: confidential clients (client_secret_basic, client_secret_post) get a secret that never expires', async () => {
    for (const method of ['client_secret_basic', 'client_secret_post']) {
      const answer = await registerJson(server.url, {
        redirect_uris: ['https://app.example.com/cb'],
        token_endpoint_auth_method: method,
        application_type: 'web',
      });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.equal(typeof answer.body.client_secret, 'string');
      assert.ok(answer.body.client_secret.length >= 32);
      assert.equal(answer.body.client_secret_expires_at, 0);
      assert.equal(answer.body.token_endpoint_auth_method, method);
      assert.equal(answer.body.application_type, 'web');
    }
  });

  it('CTX-AS-REDIRECT-URI-SCHEME: only https or loopback http redirect URIs (127.0.0.1, [::1], localhost), none with a fragment; a web client gets no loopback — 400 invalid_redirect_uri', async () => {
    for (const uri of ['http://127.0.0.1:1234/cb', 'http://[::1]:1234/cb', 'http://localhost/cb', 'https://app.example.com/cb?x=1']) {
      assert.equal((await registerJson(server.url, { redirect_uris: [uri] })).status, 201, uri);
    }
    for (const [uri, applicationType] of [
      ['http://app.example.com/cb', 'native'],
      ['http://192.168.1.10/cb', 'native'],
      ['com.example.app:/cb', 'native'],
      ['https://app.example.com/cb#frag', 'native'],
      ['http://127.0.0.1:1234/cb#', 'native'],
      ['/relative/cb', 'native'],
      ['javascript:alert(1)', 'native'],
      ['http://127.0.0.1:1234/cb', 'web'],
    ] as const) {
      const answer = await registerJson(server.url, { redirect_uris: ['https://ok.example.com/cb', uri], application_type: applicationType });
      assert.equal(answer.status, 400, `${uri} (${applicationType})`);
      assert.equal(answer.body.error, 'invalid_redirect_uri', uri);
    }
    for (const body of [{}, { redirect_uris: [] }]) {
      const answer = await registerJson(server.url, body);
      assert.deepEqual([answer.status, answer.body.error], [400, 'invalid_redirect_uri']);
    }
  });

  it('CTX-STD-RFC7591 CTX-ERR-400: malformed JSON, a wrong content type, wrong field types or values are 400 invalid_client_metadata; a body over 64 KiB is refused', async () => {
    const bad: Array<[unknown, Record<string, string>?]> = [
      ['{"redirect_uris": [', undefined],
      ['[1, 2]', undefined],
      [{ redirect_uris: REDIRECT }],
      [{ redirect_uris: [REDIRECT, 7] }],
      [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt' }],
      [{ redirect_uris: [REDIRECT], grant_types: 'authorization_code' }],
      [{ redirect_uris: [REDIRECT], grant_types: ['implicit'] }],
      [{ redirect_uris: [REDIRECT], grant_types: ['refresh_token'] }],
      [{ redirect_uris: [REDIRECT], response_types: ['token'] }],
      [{ redirect_uris: [REDIRECT], application_type: 'desktop' }],
      [{ redirect_uris: [REDIRECT], client_name: 42 }],
      [{ redirect_uris: [REDIRECT], scope: ['modules:read'] }],
      [{ redirect_uris: [REDIRECT], scope: 'modules:write' }],
      [{ redirect_uris: [REDIRECT], contacts: 'me@example.com' }],
      [JSON.stringify({ redirect_uris: [REDIRECT] }), { 'content-type': 'text/plain' }],
    ];
    for (const [body, headers] of bad) {
      const answer = await registerJson(server.url, body, headers);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error, 'invalid_client_metadata', JSON.stringify(body));
      assert.equal(typeof answer.body.error_description, 'string');
    }
    const huge = await registerJson(server.url, { redirect_uris: [REDIRECT], client_name: 'x', padding: 'y'.repeat(70 * 1024) });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error, 'invalid_client_metadata');
  });

  it('CTX-STD-RFC7591: registerClient pre-registers authorization-code clients (public by default, confidential with a secret) and refuses bad redirect URIs; device clients are as before', () => {
    const pub = server.registerClient({ redirectUris: [REDIRECT], name: 'Pre-registered' });
    assert.equal(pub.secret, null);
    const conf = server.registerClient({ redirectUris: [REDIRECT], tokenEndpointAuthMethod: 'client_secret_basic' });
    assert.equal(typeof conf.secret, 'string');
    const resourceServer = server.registerClient({ tokenEndpointAuthMethod: 'client_secret_post', secret: 'rs-secret', id: 'resource-server' });
    assert.deepEqual(resourceServer, { id: 'resource-server', secret: 'rs-secret' });
    assert.throws(() => server.registerClient({ redirectUris: ['http://example.com/cb'] }), /https, or http on a loopback host/);
    assert.throws(() => server.registerClient({ redirectUris: ['https://x.test/cb'], tokenEndpointAuthMethod: 'none', secret: 's' }), /public client/);
    const device = server.registerClient({ name: 'Device' });
    assert.match(device.id, /\.apps\.gantry\.test$/);
    assert.match(device.secret!, /^GOCSPX-/);
  });
});
