// The OAuth core's grants without a person against oidc-provider (panva's, not Gantry's) on 127.0.0.1: the
// client-credentials grant (RFC 6749 §4.4) with client_secret_basic, client_secret_post and private_key_jwt (RFC 7523
// §2.2), each answered with a JWT access token for the resource asked; a wrong secret and a wrong key are the one
// OAuthError (invalid_client, 401, exit 1) whose message and fields never hold the secret or the key.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { UsageError } from '../../lib/errors.js';
import { redact } from '../../lib/redact.js';
import {
  OAuthError,
  clientCredentialsGrantRequest,
  clientKeyOf,
  discoverMetadata,
  oauthHttpClient,
  processTokenResponse,
  type OAuthClient,
  type OAuthConfig,
} from '../../lib/oauth/index.js';
import { startAuthorizationServer, type AuthorizationServerPeer } from '../mcp/fixtures-client/oidc.js';

const resource = 'https://mcp.example.test/mcp';

describe('LAYER-OAUTH: the client-credentials grant against oidc-provider', function () {
  this.timeout(30_000);
  let op: AuthorizationServerPeer;
  const http = oauthHttpClient();
  let config: (client: OAuthClient) => OAuthConfig;

  before(async () => {
    op = await startAuthorizationServer();
    const { metadata } = await discoverMetadata(http, op.issuer);
    assert.ok(metadata, 'oidc-provider publishes its metadata');
    config = (client) => ({ http, server: metadata, client });
  });
  after(async () => {
    http.close();
    await op?.stop();
  });

  async function grant(client: OAuthClient) {
    const answer = await clientCredentialsGrantRequest(config(client), { resource, scope: 'modules:read' });
    return processTokenResponse(answer);
  }

  for (const method of ['client_secret_basic', 'client_secret_post'] as const) {
    it(`CTX-AUTH-RESOURCE-ALWAYS: ${method} gets a bearer token whose audience is the resource asked for`, async () => {
      const clientId = method === 'client_secret_basic' ? op.machine.basicId : op.machine.postId;
      const tokens = await grant({ clientId, clientSecret: op.machine.secret, authMethod: method });
      const claims = decodeJwt(tokens.accessToken);
      assert.equal(claims.aud, resource);
      assert.equal(claims.client_id, clientId);
      assert.equal(tokens.scope, 'modules:read');
      const sent = op.requests.findLast((request) => request.route === 'token')!;
      assert.equal(sent.params.grant_type, 'client_credentials');
      assert.equal(sent.authorization, method === 'client_secret_basic');
    });
  }

  for (const [what, text] of [
    ['a PKCS#8 PEM key', () => op.machine.keyPem],
    ['a JWK', () => op.machine.keyJwk],
  ] as const) {
    it(`private_key_jwt with ${what}: oidc-provider verifies the signed assertion (iss = sub = client id, aud = issuer) and issues the token`, async () => {
      const privateKey = clientKeyOf(text());
      assert.equal(privateKey.alg, 'ES256');
      const tokens = await grant({ clientId: op.machine.keyId, privateKey, audience: op.issuer, authMethod: 'private_key_jwt' });
      assert.equal(decodeJwt(tokens.accessToken).aud, resource);
      const sent = op.requests.findLast((request) => request.route === 'token')!;
      assert.equal(sent.params.client_assertion_type, 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      const assertion = sent.params.client_assertion as string;
      const claims = decodeJwt(assertion);
      assert.equal(claims.iss, op.machine.keyId);
      assert.equal(claims.sub, op.machine.keyId);
      assert.equal(claims.aud, op.issuer);
      assert.ok(typeof claims.jti === 'string' && claims.jti.length >= 16);
      assert.ok(claims.exp! > claims.iat! && claims.exp! - claims.iat! <= 300);
      assert.equal(decodeProtectedHeader(assertion).alg, 'ES256');
    });
  }

  it('a wrong secret is invalid_client (401, exit 1), and neither the secret nor the one sent is in the error', async () => {
    const wrong = `wrong-${op.machine.secret}`;
    const error = await grant({ clientId: op.machine.basicId, clientSecret: wrong, authMethod: 'client_secret_basic' }).then(
      () => assert.fail('a wrong secret got a token'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof OAuthError);
    assert.equal(error.error, 'invalid_client');
    assert.equal(error.status, 401);
    assert.equal(error.exitCode, 1);
    const shown = JSON.stringify({ message: error.message, hint: error.hint, description: error.description, stack: error.stack });
    assert.doesNotMatch(shown, new RegExp(op.machine.secret));
  });

  it('a key other than the registered one is invalid_client, and the key never appears in the error', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const privateKey = clientKeyOf(other);
    const error = await grant({ clientId: op.machine.keyId, privateKey, audience: op.issuer, authMethod: 'private_key_jwt' }).then(
      () => assert.fail('a wrong key got a token'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof OAuthError);
    assert.equal(error.error, 'invalid_client');
    assert.equal(error.exitCode, 1);
    const body = other.split('\n').slice(1, -2).join('');
    assert.ok(!JSON.stringify({ message: error.message, stack: error.stack }).includes(body.slice(0, 40)));
  });

  it('clientKeyOf refuses a public key, text that is no key and an algorithm the key cannot sign with (exit 2), quoting none of it; the key text is redacted', () => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicPem = pair.publicKey.export({ format: 'pem', type: 'spki' }) as string;
    for (const [text, alg] of [
      [publicPem, undefined],
      ['not a key at all, hunter2-hunter2', undefined],
      [op.machine.keyPem, 'RS256'],
      [JSON.stringify({ kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQ' }), undefined],
    ] as const) {
      assert.throws(
        () => clientKeyOf(text, alg),
        (error: unknown) => error instanceof UsageError && error.exitCode === 2 && !error.message.includes('hunter2') && !error.message.includes('BEGIN'),
      );
    }
    const rsa = clientKeyOf(pair.privateKey.export({ format: 'pem', type: 'pkcs1' }) as string);
    assert.equal(rsa.alg, 'RS256');
    assert.equal(clientKeyOf(op.machine.keyPem, 'ES256').alg, 'ES256');
    assert.doesNotMatch(redact(`loaded ${op.machine.keyPem.trim()}`), /BEGIN PRIVATE KEY/);
  });
});
