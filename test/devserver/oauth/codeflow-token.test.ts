// The token endpoint of the embedded server for context-server clients: code redemption with PKCE and resource
// indicators, RFC 9068 JWT access tokens verified with jose against /jwks, code replay, refresh rotation for public
// clients, and RFC 7662 introspection of live, expired and revoked tokens.
import assert from 'node:assert/strict';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { form, getJson, sleep, type Json } from './helpers.js';
import { REDIRECT, RESOURCE, authorizeAndAllow, basic, redeem, tokensFor } from './codeflow-helpers.js';

describe('devserver/oauth: tokens for context-server clients', function () {
  this.timeout(30_000);
  let server: OAuthServer;
  let publicId: string;
  let jwks: ReturnType<typeof createLocalJWKSet>;
  let rs: { id: string; secret: string };
  const introspect = (token: string, auth: Record<string, string> = basic(rs.id, rs.secret), extra: Record<string, string> = {}) =>
    form(`${server.url}/introspect`, { token, ...extra }, auth);
  const refresh = (clientId: string, refreshToken: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    form(`${server.url}/token`, { grant_type: 'refresh_token', ...(clientId ? { client_id: clientId } : {}), refresh_token: refreshToken, ...extra }, headers);

  before(async () => {
    server = await startOAuthServer({ accessTokenTtl: 60 });
    publicId = server.registerClient({ redirectUris: [REDIRECT], name: 'Agent' }).id;
    const registered = server.registerClient({ tokenEndpointAuthMethod: 'client_secret_basic', id: 'gantry-mcp-rs' });
    rs = { id: registered.id, secret: registered.secret! };
    jwks = createLocalJWKSet((await getJson(`${server.url}/jwks`)).body);
  });
  after(() => server.stop());

  it('CTX-EP-TOKEN-REQUEST CTX-STD-OAUTH21 CTX-ROLE-AUTH-SERVER: the code, its verifier and the resource give a Bearer JWT (RFC 9068: typ at+jwt, aud the resource as requested) verified with jose against /jwks, and a refresh token', async () => {
    const resource = 'https://MCP.gantry.test:8443/mcp';
    const body = await tokensFor(server.url, publicId, 'modules:read gates:run', resource);
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.scope, 'modules:read gates:run');
    assert.equal(body.expires_in, 60);
    const { payload, protectedHeader } = await jwtVerify(body.access_token, jwks, {
      issuer: server.url,
      audience: resource,
      typ: 'at+jwt',
      algorithms: ['RS256'],
    });
    assert.equal(protectedHeader.typ, 'at+jwt');
    assert.equal(protectedHeader.kid, (await getJson(`${server.url}/jwks`)).body.keys[0].kid);
    assert.equal(payload.aud, resource, 'exactly as requested');
    assert.equal(payload.client_id, publicId);
    assert.equal(payload.scope, 'modules:read gates:run');
    assert.match(payload.sub!, /^\d{21}$/);
    assert.equal(payload.exp! - payload.iat!, 60);
    assert.equal(typeof payload.jti, 'string');
    await assert.rejects(jwtVerify(body.access_token, jwks, { issuer: server.url, audience: RESOURCE }), /aud/);
  });

  it('CTX-EP-TOKEN-REQUEST: without a resource anywhere the access token is opaque; a resource named only at the token request becomes the aud', async () => {
    const none = await authorizeAndAllow(server.url, { clientId: publicId, scope: 'modules:read' });
    const opaque = await redeem(server.url, { client_id: publicId, code: none.code, code_verifier: none.verifier, redirect_uri: REDIRECT });
    assert.equal(opaque.status, 200);
    assert.match(opaque.body.access_token, /^ya29\./);
    const late = await authorizeAndAllow(server.url, { clientId: publicId, scope: 'modules:read' });
    const jwt = await redeem(server.url, { client_id: publicId, code: late.code, code_verifier: late.verifier, redirect_uri: REDIRECT, resource: RESOURCE });
    assert.equal(decodeProtectedHeader(jwt.body.access_token).typ, 'at+jwt');
    assert.equal((await jwtVerify(jwt.body.access_token, jwks, { audience: RESOURCE })).payload.aud, RESOURCE);
  });

  it('CTX-EP-TOKEN-REQUEST CTX-ERR-400: a wrong or missing verifier, another redirect_uri, another or missing resource — each refused (invalid_grant, invalid_target)', async () => {
    const cases: Array<[(c: { code: string; verifier: string }) => Record<string, string>, string]> = [
      [
        (c) => ({
          code: c.code,
          code_verifier: `${c.verifier.slice(0, -1)}${c.verifier.endsWith('A') ? 'B' : 'A'}`,
          redirect_uri: REDIRECT,
          resource: RESOURCE,
        }),
        'invalid_grant',
      ],
      [(c) => ({ code: c.code, redirect_uri: REDIRECT, resource: RESOURCE }), 'invalid_grant'],
      [(c) => ({ code: c.code, code_verifier: c.verifier, redirect_uri: 'http://127.0.0.1:8976/other', resource: RESOURCE }), 'invalid_grant'],
      [(c) => ({ code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT }), 'invalid_target'],
      [(c) => ({ code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT, resource: 'https://other.test/mcp' }), 'invalid_target'],
      [(c) => ({ code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT, resource: `${RESOURCE}#x` }), 'invalid_target'],
      [(c) => ({ code: `${c.code}x`, code_verifier: c.verifier, redirect_uri: REDIRECT, resource: RESOURCE }), 'invalid_grant'],
    ];
    for (const [fields, error] of cases) {
      const flow = await authorizeAndAllow(server.url, { clientId: publicId, resource: RESOURCE });
      const answer = await redeem(server.url, { client_id: publicId, ...fields(flow) });
      assert.deepEqual([answer.status, answer.body.error], [400, error], JSON.stringify(fields(flow)));
    }
    const other = server.registerClient({ redirectUris: [REDIRECT] }).id;
    const flow = await authorizeAndAllow(server.url, { clientId: publicId, resource: RESOURCE });
    const stolen = await redeem(server.url, { client_id: other, code: flow.code, code_verifier: flow.verifier, redirect_uri: REDIRECT, resource: RESOURCE });
    assert.equal(stolen.body.error, 'invalid_grant', 'a code is bound to its client');
  });

  it('CTX-STD-OAUTH21 CTX-EP-TOKEN-REQUEST: a code used twice is invalid_grant and revokes the tokens issued from it', async () => {
    const flow = await authorizeAndAllow(server.url, { clientId: publicId, resource: RESOURCE });
    const fields = { client_id: publicId, code: flow.code, code_verifier: flow.verifier, redirect_uri: REDIRECT, resource: RESOURCE };
    const first = await redeem(server.url, fields);
    assert.equal(first.status, 200);
    assert.equal((await introspect(first.body.access_token)).body.active, true);
    const replay = await redeem(server.url, fields);
    assert.deepEqual([replay.status, replay.body.error], [400, 'invalid_grant']);
    assert.deepEqual((await introspect(first.body.access_token)).body, { active: false });
    assert.equal((await refresh(publicId, first.body.refresh_token)).body.error, 'invalid_grant');
  });

  it('CTX-STD-OAUTH21: confidential clients authenticate the way they registered (Basic or post); a public client sends no secret — else 401 invalid_client', async () => {
    const viaBasic = server.registerClient({ redirectUris: [REDIRECT], tokenEndpointAuthMethod: 'client_secret_basic' });
    const viaPost = server.registerClient({ redirectUris: [REDIRECT], tokenEndpointAuthMethod: 'client_secret_post' });
    const attempt = async (id: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
      const flow = await authorizeAndAllow(server.url, { clientId: id, resource: RESOURCE });
      return redeem(server.url, { code: flow.code, code_verifier: flow.verifier, redirect_uri: REDIRECT, resource: RESOURCE, ...fields }, headers);
    };
    assert.equal((await attempt(viaBasic.id, {}, basic(viaBasic.id, viaBasic.secret!))).status, 200);
    assert.equal((await attempt(viaPost.id, { client_id: viaPost.id, client_secret: viaPost.secret! })).status, 200);
    for (const [id, fields, headers] of [
      [viaBasic.id, { client_id: viaBasic.id, client_secret: viaBasic.secret! }, {}],
      [viaBasic.id, {}, basic(viaBasic.id, 'wrong')],
      [viaBasic.id, { client_id: viaBasic.id }, {}],
      [viaPost.id, {}, basic(viaPost.id, viaPost.secret!)],
      [viaPost.id, { client_id: viaPost.id, client_secret: 'wrong' }, {}],
      [publicId, { client_id: publicId, client_secret: 'anything' }, {}],
    ] as Array<[string, Record<string, string>, Record<string, string>]>) {
      const answer = await attempt(id, fields, headers);
      assert.deepEqual([answer.status, answer.body.error], [401, 'invalid_client'], JSON.stringify(fields));
    }
  });

  it("CTX-AS-REFRESH-ROTATION: a public client's refresh returns a new refresh token and the old one stops; presenting a rotated one again revokes the whole grant", async () => {
    const first = await tokensFor(server.url, publicId);
    const second = await refresh(publicId, first.refresh_token, { resource: RESOURCE });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.notEqual(second.body.refresh_token, first.refresh_token);
    assert.equal((await jwtVerify(second.body.access_token, jwks, { audience: RESOURCE, typ: 'at+jwt' })).payload.scope, 'modules:read gates:run');
    const third = await refresh(publicId, second.body.refresh_token);
    assert.equal(third.status, 200);
    assert.equal((await introspect(third.body.access_token)).body.active, true);
    // The old refresh token again: the grant ends, including the newest tokens.
    const reuse = await refresh(publicId, first.refresh_token);
    assert.deepEqual([reuse.status, reuse.body.error], [400, 'invalid_grant']);
    assert.equal((await refresh(publicId, third.body.refresh_token)).body.error, 'invalid_grant');
    assert.deepEqual((await introspect(third.body.access_token)).body, { active: false });
    assert.deepEqual((await introspect(second.body.access_token)).body, { active: false });
  });

  it('CTX-AS-REFRESH-ROTATION CTX-EP-TOKEN-REQUEST: a refresh may narrow the scope (never widen), names only a granted resource (else invalid_target), and a confidential client keeps its refresh token', async () => {
    const first = await tokensFor(server.url, publicId);
    const narrowed = await refresh(publicId, first.refresh_token, { scope: 'modules:read', resource: RESOURCE });
    assert.equal(narrowed.body.scope, 'modules:read');
    assert.equal((await jwtVerify(narrowed.body.access_token, jwks, { audience: RESOURCE })).payload.scope, 'modules:read');
    const wider = await refresh(publicId, narrowed.body.refresh_token, { scope: 'modules:read secrets:list' });
    assert.equal(wider.body.error, 'invalid_scope');
    const other = await refresh(publicId, narrowed.body.refresh_token, { resource: 'https://other.test/mcp' });
    assert.equal(other.body.error, 'invalid_target');
    const full = await refresh(publicId, narrowed.body.refresh_token);
    assert.equal(full.body.scope, 'modules:read gates:run', 'the refresh token keeps the granted scopes');

    const conf = server.registerClient({ redirectUris: [REDIRECT], tokenEndpointAuthMethod: 'client_secret_post' });
    const flow = await authorizeAndAllow(server.url, { clientId: conf.id, resource: RESOURCE });
    const tokens = (
      await redeem(server.url, {
        client_id: conf.id,
        client_secret: conf.secret!,
        code: flow.code,
        code_verifier: flow.verifier,
        redirect_uri: REDIRECT,
        resource: RESOURCE,
      })
    ).body;
    for (let i = 0; i < 2; i++) {
      const again = await refresh(conf.id, tokens.refresh_token, { client_secret: conf.secret! });
      assert.equal(again.status, 200);
      assert.equal(again.body.refresh_token, undefined, 'not rotated: the same refresh token stays valid');
    }
    assert.equal((await refresh(conf.id, tokens.refresh_token)).body.error, 'invalid_client', 'the secret is still needed');
  });

  it('CTX-AS-SHORT-LIVED-TOKENS: access tokens live accessTokenTtl seconds; introspection answers active with the claims, then {active:false} once expired or revoked', async () => {
    const short = await startOAuthServer({ accessTokenTtl: 2 });
    try {
      const client = short.registerClient({ redirectUris: [REDIRECT] }).id;
      const shortRs = short.registerClient({ tokenEndpointAuthMethod: 'client_secret_post' });
      const ask = (token: string, extra: Record<string, string> = {}) =>
        form(`${short.url}/introspect`, { token, client_id: shortRs.id, client_secret: shortRs.secret!, ...extra });
      const body = await tokensFor(short.url, client, 'modules:read');
      assert.equal(body.expires_in, 2);
      const live = await ask(body.access_token);
      assert.equal(live.status, 200);
      const claims: Json = live.body;
      assert.equal(claims.active, true);
      assert.equal(claims.scope, 'modules:read');
      assert.equal(claims.client_id, client);
      assert.equal(claims.aud, RESOURCE);
      assert.equal(claims.iss, short.url);
      assert.equal(claims.token_type, 'Bearer');
      assert.match(claims.sub, /^\d{21}$/);
      assert.equal(claims.exp - claims.iat, 2);
      assert.deepEqual((await ask(body.refresh_token, { token_type_hint: 'refresh_token' })).body, { active: false }, 'refresh tokens are not access tokens');
      assert.deepEqual((await ask('not-a-token')).body, { active: false });
      await sleep(2_100);
      assert.deepEqual((await ask(body.access_token)).body, { active: false }, 'expired');
      const shortJwks = createLocalJWKSet((await getJson(`${short.url}/jwks`)).body);
      await assert.rejects(jwtVerify(body.access_token, shortJwks, { audience: RESOURCE }), /exp/);

      const next = (await form(`${short.url}/token`, { grant_type: 'refresh_token', client_id: client, refresh_token: body.refresh_token })).body;
      assert.equal((await ask(next.access_token)).body.active, true);
      assert.equal((await form(`${short.url}/revoke`, { token: next.refresh_token, client_id: client })).status, 200, 'a public client names itself');
      assert.deepEqual((await ask(next.access_token)).body, { active: false }, 'revoked with its grant');
    } finally {
      await short.stop();
    }
  });

  it('CTX-ROLE-AUTH-SERVER: introspection needs a confidential client by Basic or post (401 invalid_client otherwise); opaque tokens of the device flow are introspected too', async () => {
    const token = server.issueAccessToken({ resource: RESOURCE, scopes: ['modules:read'] });
    assert.equal((await introspect(token, {}, { client_id: rs.id, client_secret: rs.secret })).body.active, true);
    for (const auth of [{}, basic(rs.id, 'wrong'), basic(publicId, '')]) {
      const answer = await introspect(token, auth);
      assert.deepEqual([answer.status, answer.body.error], [401, 'invalid_client']);
      assert.match(answer.headers.get('www-authenticate')!, /^Basic/);
    }
    assert.equal((await introspect(token, {}, { client_id: publicId })).status, 401);
    const device = server.registerClient({ name: 'TV' });
    const code = (await form(`${server.url}/device/code`, { client_id: device.id, scope: 'email' })).body;
    server.approve(code.user_code);
    const tokens = (
      await form(`${server.url}/token`, {
        client_id: device.id,
        client_secret: device.secret!,
        device_code: code.device_code,
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      })
    ).body;
    const opaque = await introspect(tokens.access_token);
    assert.deepEqual([opaque.body.active, opaque.body.scope, opaque.body.client_id, opaque.body.aud], [true, 'email', device.id, undefined]);
  });

  it('CTX-AS-SHORT-LIVED-TOKENS: issueAccessToken signs RFC 9068 tokens for resource-server tests: any audience, expired with a negative ttl', async () => {
    const other = server.issueAccessToken({ resource: 'https://other.test/mcp', scopes: ['gates:run'], clientId: 'c1', ttlSeconds: 60 });
    const { payload, protectedHeader } = await jwtVerify(other, jwks, { audience: 'https://other.test/mcp', issuer: server.url });
    assert.deepEqual([protectedHeader.typ, payload.client_id, payload.scope, payload.exp! - payload.iat!], ['at+jwt', 'c1', 'gates:run', 60]);
    const expired = server.issueAccessToken({ resource: RESOURCE, scopes: ['modules:read'], ttlSeconds: -60 });
    await assert.rejects(jwtVerify(expired, jwks, { audience: RESOURCE }), /"exp" claim timestamp check failed/);
    assert.throws(() => server.issueAccessToken({ resource: 'not a uri', scopes: [] }), /absolute URI/);
  });
});
