// An independent client against the embedded server's authorization code flow: the MCP TypeScript SDK's auth
// functions discover the metadata (its Zod schemas parse both documents), register, build the authorization URL
// (PKCE, resource), exchange the code and refresh.
import assert from 'node:assert/strict';
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { REDIRECT, RESOURCE, callbackParams, postDecision, transactionOf } from './codeflow-helpers.js';

describe("devserver/oauth: the MCP SDK's OAuth client against the authorization code flow", function () {
  this.timeout(20_000);
  let server: OAuthServer;
  before(async () => {
    server = await startOAuthServer();
  });
  after(() => server.stop());

  it('CTX-STD-RFC8414 CTX-STD-RFC7591 CTX-EP-AUTHORIZATION-REQUEST CTX-EP-TOKEN-REQUEST CTX-AS-REFRESH-ROTATION: the SDK discovers, registers, authorizes with PKCE and resource, exchanges the code and refreshes (rotated)', async () => {
    const metadata = await discoverAuthorizationServerMetadata(server.url);
    assert.ok(metadata, 'the SDK parses the metadata');
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    const clientInformation = await registerClient(server.url, {
      metadata,
      clientMetadata: {
        redirect_uris: [REDIRECT],
        client_name: 'SDK client',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'modules:read',
      },
    });
    const resource = new URL(RESOURCE);
    const { authorizationUrl, codeVerifier } = await startAuthorization(server.url, {
      metadata,
      clientInformation,
      redirectUrl: REDIRECT,
      scope: 'modules:read',
      state: 'sdk-state',
      resource,
    });
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    const page = await fetch(authorizationUrl);
    assert.equal(page.status, 200);
    const answer = await postDecision(server.url, { transaction: transactionOf(await page.text()), username: 'dev', password: 'dev', decision: 'allow' });
    const params = callbackParams(answer.location);
    assert.deepEqual([params.state, params.iss], ['sdk-state', server.url]);
    const tokens = await exchangeAuthorization(server.url, {
      metadata,
      clientInformation,
      authorizationCode: params.code!,
      codeVerifier,
      redirectUri: REDIRECT,
      resource,
    });
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()).aud, resource.href);
    const refreshed = await refreshAuthorization(server.url, { metadata, clientInformation, refreshToken: tokens.refresh_token!, resource });
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    await assert.rejects(
      refreshAuthorization(server.url, { metadata, clientInformation, refreshToken: tokens.refresh_token!, resource }),
      /invalid_grant|InvalidGrant|already used/i,
    );
  });
});
