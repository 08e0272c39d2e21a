/**
 * The context server's token validator in process (lib/mcp/server/tokens.ts), against a programmable authorization
 * server on 127.0.0.1 that publishes a JWKS and answers introspection: the decisions a caller sees (accepted with what,
 * refused why and with which reason) and the requests it costs the authorization server (key fetches, introspections,
 * the cache), on a clock the test moves. The end-to-end path through oidc-provider is test/mcp/server.test.ts.
 */
import assert from 'node:assert/strict';
import { CompactSign, SignJWT, exportJWK, generateKeyPair, importJWK, type JWK, type JWTPayload } from 'jose';
import { createHttpClient, noRetry } from '../../lib/http/index.js';
import type { AuthorizationServerMetadata } from '../../lib/oauth/index.js';
import { createTokenValidator, IntrospectionFailed, InvalidTokenError, type TokenValidatorOptions } from '../../lib/mcp/server/tokens.js';
import { sendJson, startHttpPeer, type HttpPeer, type RecordedRequest } from '../peers/http.js';

const RESOURCE = 'https://mcp.example.test/mcp';
const START = Date.parse('2030-01-01T00:00:00Z');
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
type Alg = (typeof ALGORITHMS)[number] | 'HS256';

interface Signer {
  kid: string;
  public: JWK;
  private: JWK;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function signer(kid: string, alg: string): Promise<Signer> {
  const pair = await generateKeyPair(alg, { extractable: true });
  return { kid, public: { ...(await exportJWK(pair.publicKey)), kid }, private: await exportJWK(pair.privateKey) };
}

// Made once a process: a mutation run repeats the suite's hooks for every mutant, and an RSA key takes seconds under load.
let generated: Promise<Map<string, Signer>> | undefined;
const generateSigners = async () =>
  new Map(
    await Promise.all(
      [
        ['rsa', 'RS256'],
        ['ec', 'ES256'],
        ['ec384', 'ES384'],
        ['ec512', 'ES512'],
        ['ed', 'EdDSA'],
        ['other', 'ES256'],
      ].map(async ([kid, alg]) => [kid!, await signer(kid!, alg!)] as const),
    ),
  );

describe('mcp server: token validation (JWKS, introspection, cache) against a programmable authorization server', function () {
  this.timeout(30_000);
  let peer: HttpPeer;
  let issuer: string;
  let metadata: AuthorizationServerMetadata;
  let clock = START;
  let signers: Map<string, Signer>;
  /** The keys the JWKS endpoint publishes now; `jwks` answers for every other status or body. */
  let published: JWK[] = [];
  let jwksAnswer: ((res: Parameters<Parameters<typeof startHttpPeer>[0]>[1]) => void) | undefined;
  let introspect: (request: RecordedRequest) => { status: number; body: unknown } = () => ({ status: 200, body: { active: false } });

  const jwksFetches = () => peer.requests.filter((r) => r.url === '/jwks').length;
  const introspections = () => peer.requests.filter((r) => r.url === '/introspect');
  const validator = (overrides: Partial<TokenValidatorOptions> = {}) =>
    createTokenValidator({
      http: createHttpClient({ retry: noRetry }),
      metadata,
      resource: RESOURCE,
      introspection: { clientId: 'context-server', clientSecret: 'introspection-secret-0123456789' },
      now: () => clock,
      ...overrides,
    });

  async function jwt(claims: JWTPayload = {}, header: { alg?: Alg; kid?: string; typ?: unknown } = {}): Promise<string> {
    const kid = header.kid ?? 'ec';
    const alg = header.alg ?? 'ES256';
    const signer = signers.get(kid)!;
    const key = alg === 'HS256' ? new TextEncoder().encode('a shared secret of thirty-two bytes!') : await importJWK(signer.private, alg);
    const protectedHeader = { alg, kid, ...('typ' in header ? { typ: header.typ } : { typ: 'at+jwt' }) } as { alg: string };
    return new SignJWT({ iss: issuer, aud: RESOURCE, exp: clock / 1000 + 300, sub: 'alice', client_id: 'agent', scope: 'modules:read', ...claims })
      .setProtectedHeader(protectedHeader)
      .sign(key);
  }

  async function refusal(promise: Promise<unknown>): Promise<InvalidTokenError> {
    const error = await promise.then(
      () => assert.fail('the token was accepted'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof InvalidTokenError, `an InvalidTokenError, not ${String(error)}`);
    assert.equal(error.name, 'InvalidTokenError');
    return error;
  }

  before(async () => {
    peer = await startHttpPeer((request, res) => {
      if (request.url === '/jwks') {
        if (jwksAnswer) return jwksAnswer(res);
        return sendJson(res, 200, { keys: published });
      }
      if (request.url === '/introspect') {
        const { status, body } = introspect(request);
        return typeof body === 'string' ? void res.writeHead(status, { 'content-type': 'text/html' }).end(body) : sendJson(res, status, body);
      }
      res.writeHead(404).end();
    });
    issuer = peer.url;
    metadata = {
      issuer,
      jwks_uri: `${peer.url}/jwks`,
      introspection_endpoint: `${peer.url}/introspect`,
      token_endpoint: `${peer.url}/token`,
    } as AuthorizationServerMetadata;
    signers = await (generated ??= generateSigners());
  });

  beforeEach(() => {
    clock = START;
    peer.requests.length = 0;
    published = ['rsa', 'ec', 'ec384', 'ec512', 'ed'].map((kid) => signers.get(kid)!.public);
    jwksAnswer = undefined;
    introspect = () => ({ status: 200, body: { active: false } });
  });

  after(() => peer.close());

  it('CTX-AUTH-VALIDATE-AUDIENCE: a JWT for this server, signed with any asymmetric algorithm the issuer publishes a key for, is accepted with its subject, client, scopes and expiry', async () => {
    const validate = validator();
    const kidOf: Record<string, string> = { ES256: 'ec', ES384: 'ec384', ES512: 'ec512', EdDSA: 'ed' };
    for (const alg of ALGORITHMS) {
      const info = await validate.validate(await jwt({ scope: `${alg} tools` }, { alg, kid: kidOf[alg] ?? 'rsa' }));
      assert.deepEqual(info, { subject: 'alice', clientId: 'agent', scopes: [alg, 'tools'], expiresAt: START + 300_000, via: 'jwt' }, alg);
    }
    assert.equal(jwksFetches(), 1, 'the key set is fetched once and held');
  });

  it('CTX-AUTH-INVALID-401: a symmetric (HS256) token is refused for its algorithm, whatever key it names', async () => {
    const error = await refusal(validator().validate(await jwt({}, { alg: 'HS256' })));
    assert.equal(error.message, "the token's signature algorithm is not accepted");
    assert.equal(error.reason, 'invalid-token');
  });

  it('MUTATION-MCP-TOKENS: the claims a JWT may carry them in: client_id, else azp; scope as a string (extra spaces ignored) or scp as a list of strings; none at all', async () => {
    const validate = validator();
    const azp = await validate.validate(await jwt({ client_id: 7 as unknown as string, azp: 'browser', scope: undefined, scp: ['a', 3, 'b'] }));
    assert.deepEqual([azp.clientId, azp.scopes], ['browser', ['a', 'b']]);
    const spaced = await validate.validate(await jwt({ scope: '  one   two ', scp: ['ignored'] }));
    assert.deepEqual(spaced.scopes, ['one', 'two']);
    const bare = await validate.validate(await jwt({ sub: undefined, client_id: undefined, scope: undefined }));
    assert.deepEqual([bare.subject, bare.clientId, bare.scopes], [undefined, undefined, []]);
    const oddScope = await validate.validate(await jwt({ scope: 5 as unknown as string, client_id: undefined, azp: 9 as unknown as string }));
    assert.deepEqual([oddScope.scopes, oddScope.clientId], [[], undefined]);
  });

  it("CTX-AUTH-INVALID-401: an access token's type is at+jwt, application/at+jwt, JWT (any case) or none; a logout or security-event JWT is refused", async () => {
    const validate = validator();
    for (const typ of ['at+jwt', 'application/at+jwt', 'JWT', 'AT+JWT', undefined, 42]) {
      const info = await validate.validate(await jwt({ sub: `typ-${String(typ)}` }, { typ }));
      assert.equal(info.subject, `typ-${String(typ)}`);
    }
    for (const typ of ['logout+jwt', 'secevent+jwt']) {
      const error = await refusal(validate.validate(await jwt({}, { typ })));
      assert.equal(error.message, `a ${typ} token is not an access token`);
      assert.equal(error.reason, 'invalid-token');
    }
    assert.equal(jwksFetches(), 1, 'a refused type is decided before any key is fetched');
  });

  it('CTX-AUTH-INVALID-401: three dot-separated parts whose header is not a JSON object are not a well-formed JWT; a signed claims set that is not JSON is not a valid JWT', async () => {
    const validate = validator();
    for (const header of ['bm90IGpzb24', b64(null), b64([1]), b64('at+jwt'), b64(3)]) {
      const error = await refusal(validate.validate(`${header}.${b64({ aud: RESOURCE })}.c2ln`));
      assert.equal(error.message, 'the token is not a well-formed JWT', header);
    }
    assert.equal(jwksFetches(), 0);
    const notClaims = await new CompactSign(new TextEncoder().encode('not a claims set'))
      .setProtectedHeader({ alg: 'ES256', kid: 'ec' })
      .sign(await importJWK(signers.get('ec')!.private, 'ES256'));
    assert.equal((await refusal(validate.validate(notClaims))).message, 'the token is not a valid JWT');
  });

  it('CTX-AUTH-SERVER-OWN-TOKENS CTX-AUTH-VALIDATE-AUDIENCE: the audience must name this server (alone or among others, AMB-21 spelling); none, another, or a non-string is refused as wrong-audience', async () => {
    const validate = validator();
    assert.equal(
      (await validate.validate(await jwt({ aud: ['https://other.example.test/mcp', 'HTTPS://MCP.example.test/mcp/'], sub: 'listed' }))).subject,
      'listed',
    );
    const cases: [unknown, string][] = [
      [undefined, 'the token names no audience; it must be issued for this server'],
      [[], 'the token names no audience; it must be issued for this server'],
      ['https://other.example.test/mcp', `the token was issued for another audience, not ${RESOURCE}`],
      [[7, 'https://other.example.test/mcp'], `the token was issued for another audience, not ${RESOURCE}`],
    ];
    for (const [aud, message] of cases) {
      const error = await refusal(validate.validate(await jwt({ aud: aud as string })));
      assert.deepEqual([error.message, error.reason], [message, 'wrong-audience'], JSON.stringify(aud));
    }
  });

  it('CTX-AUTH-INVALID-401: another issuer, a missing exp, a forged signature are refused as invalid-token with what is wrong', async () => {
    const validate = validator();
    const iss = await refusal(validate.validate(await jwt({ iss: 'https://elsewhere.example.test' })));
    assert.deepEqual([iss.message, iss.reason], ["the token's iss claim is not acceptable (check_failed)", 'invalid-token']);
    const noExp = await refusal(validate.validate(await jwt({ exp: undefined })));
    assert.deepEqual([noExp.message, noExp.reason], ["the token's exp claim is not acceptable (missing)", 'invalid-token']);
    const [header, payload] = (await jwt()).split('.');
    const forged = `${header}.${payload}.${(await jwt({}, { kid: 'other' })).split('.')[2]}`;
    const signature = await refusal(validate.validate(forged));
    assert.deepEqual([signature.message, signature.reason], ["the token's signature does not verify", 'invalid-token']);
  });

  it('CTX-AUTH-INVALID-401: expiry allows the clock tolerance (60 s by default, or as configured) and no more; an expired token is refused as expired', async () => {
    const expiresAt = START + 300_000;
    const token = await jwt();
    clock = expiresAt + 59_000;
    assert.equal((await validator().validate(token)).expiresAt, expiresAt, 'within the default 60 s');
    clock = expiresAt + 61_000;
    const late = await refusal(validator().validate(token));
    assert.deepEqual([late.message, late.reason], ['the token has expired', 'expired']);
    clock = expiresAt + 9_000;
    assert.equal((await validator({ clockToleranceSeconds: 10 }).validate(token)).via, 'jwt');
    clock = expiresAt + 11_000;
    assert.equal((await refusal(validator({ clockToleranceSeconds: 10 }).validate(token))).reason, 'expired');
  });

  it("CTX-AUTH-INVALID-401: a fractional exp expires to the millisecond (past the tolerance), not at the whole second jose's clock reads", async () => {
    const token = await jwt({ exp: START / 1000 + 0.7 });
    clock = START + 60_699;
    assert.equal((await validator().validate(token)).expiresAt, START + 700);
    clock = START + 60_700;
    const error = await refusal(validator().validate(token));
    assert.deepEqual([error.message, error.reason], ['the token has expired', 'expired']);
  });

  it('MUTATION-MCP-TOKENS: JWKS fetching: once for concurrent validations, once for keysReady, announced to onKeysFetched; a failed fetch is retried on the next token', async () => {
    let announced = 0;
    const validate = validator({ onKeysFetched: () => announced++ });
    const tokens = await Promise.all([jwt({ sub: 'a' }), jwt({ sub: 'b' }), jwt({ sub: 'c' })]);
    assert.deepEqual(
      (await Promise.all(tokens.map((t) => validate.validate(t)))).map((i) => i.subject),
      ['a', 'b', 'c'],
    );
    await validate.keysReady();
    assert.deepEqual([jwksFetches(), announced], [1, 1]);

    const ready = validator();
    await ready.keysReady();
    await ready.keysReady();
    await ready.validate(await jwt());
    assert.equal(jwksFetches(), 2, 'keysReady fetched the keys the validation then used');

    for (const answer of [
      (res: Parameters<typeof sendJson>[0]) => sendJson(res, 500, { keys: published }),
      (res: Parameters<typeof sendJson>[0]) => sendJson(res, 200, { keys: 'none' }),
      (res: Parameters<typeof sendJson>[0]) => sendJson(res, 200, {}),
      (res: Parameters<typeof sendJson>[0]) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'),
    ]) {
      jwksAnswer = answer;
      const failing = validator();
      const error = await refusal(failing.validate(await jwt()));
      assert.match(error.message, /^the authorization server's JWKS \((500|200)\) is not a key set$/);
      await assert.rejects(failing.keysReady(), InvalidTokenError);
      jwksAnswer = undefined;
      assert.equal((await failing.validate(await jwt({ sub: 'after' }))).subject, 'after', 'the next token fetches the keys again');
    }
  });

  it("MUTATION-MCP-TOKENS: without a jwks_uri a JWT cannot be checked and keysReady has nothing to fetch; a key the server cannot import is not the token's fault", async () => {
    const noKeys = validator({ metadata: { ...metadata, jwks_uri: undefined } as AuthorizationServerMetadata });
    await noKeys.keysReady();
    const error = await refusal(noKeys.validate(await jwt()));
    assert.equal(error.message, 'the authorization server publishes no JWKS (jwks_uri), so a JWT cannot be checked');
    assert.equal(jwksFetches(), 0);

    published = [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'BBBB', kid: 'ec' }];
    const broken = await validator()
      .validate(await jwt())
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    assert.ok(broken instanceof Error && !(broken instanceof InvalidTokenError), `the server's failure, not a refusal: ${String(broken)}`);
  });

  it('CTX-AUTH-INVALID-401: an unknown key id refetches the JWKS (a rotation) only when the last fetch is more than 30 s old', async () => {
    const validate = validator();
    await validate.validate(await jwt());
    const rotated = await jwt({}, { kid: 'other' });
    const unknown = await refusal(validate.validate(rotated));
    assert.deepEqual([unknown.message, unknown.reason], ['the token is signed with a key the authorization server does not publish', 'invalid-token']);
    clock = START + 30_000;
    await refusal(validate.validate(rotated));
    assert.equal(jwksFetches(), 1, 'no fetch within 30 s of the last');

    clock = START + 30_001;
    const stillUnknown = await refusal(validate.validate(rotated));
    assert.equal(stillUnknown.message, 'the token is signed with a key the authorization server does not publish');
    assert.equal(jwksFetches(), 2);

    clock = START + 60_002;
    published = [signers.get('other')!.public];
    assert.equal((await validate.validate(await jwt({ sub: 'rotated' }, { kid: 'other' }))).subject, 'rotated');
    assert.equal(jwksFetches(), 3);
  });

  it('MUTATION-MCP-TOKENS: a JWT refused for anything but an unknown key never refetches the keys, however old they are', async () => {
    const validate = validator();
    await validate.validate(await jwt());
    clock = START + 120_000;
    const [header, payload] = (await jwt()).split('.');
    for (const token of [await jwt({ iss: 'https://elsewhere.example.test' }), await jwt({ exp: START / 1000 - 120 }), `${header}.${payload}.c2ln`])
      await refusal(validate.validate(token));
    assert.equal(jwksFetches(), 1);
  });

  it('MUTATION-MCP-TOKENS: an accepted JWT is cached until it expires (a later key rotation does not refuse it); a refused one is not cached', async () => {
    const validate = validator();
    const token = await jwt({ sub: 'cached' });
    await validate.validate(token);
    clock = START + 40_000;
    published = [signers.get('other')!.public];
    await validate.validate(await jwt({}, { kid: 'other' }));
    assert.equal(jwksFetches(), 2, 'the keys rotated: the first key is gone');
    clock = START + 299_000;
    assert.equal((await validate.validate(token)).subject, 'cached');
    clock = START + 300_000;
    await refusal(validate.validate(token));
    published = [signers.get('ec')!.public];
    clock = START + 310_000;
    const fresh = await jwt({ sub: 'fresh' });
    await refusal(validate.validate(fresh));
    clock = START + 330_001;
    assert.equal((await validate.validate(fresh)).subject, 'fresh', 'refused while the key was unknown, accepted once it is published');
  });

  it("RFC 7662 CTX-AUTH-SERVER-OWN-TOKENS: an opaque token is introspected with the server's own credentials in the body; the answer says who, which client, which scopes, until when", async () => {
    introspect = () => ({
      status: 200,
      body: { active: true, iss: issuer, aud: RESOURCE, sub: 'bob', client_id: 'agent', scope: 'a  b', exp: START / 1000 + 20 },
    });
    const info = await validator().validate('opaque-token-1');
    assert.deepEqual(info, { subject: 'bob', clientId: 'agent', scopes: ['a', 'b'], expiresAt: START + 20_000, via: 'introspection' });
    const [request] = introspections();
    assert.equal(request!.method, 'POST');
    assert.equal(request!.headers.authorization, undefined, 'client_secret_post: the credentials are in the body');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(request!.body)), {
      token: 'opaque-token-1',
      token_type_hint: 'access_token',
      client_id: 'context-server',
      client_secret: 'introspection-secret-0123456789',
    });

    introspect = () => ({ status: 200, body: { active: true, aud: [RESOURCE], sub: 4, client_id: 5, scope: ['x'] } });
    const sparse = await validator().validate('opaque-token-2');
    assert.deepEqual(sparse, { subject: undefined, clientId: undefined, scopes: ['x'], expiresAt: START + 30_000, via: 'introspection' });
  });

  it('CTX-AUTH-INVALID-401: introspection refuses an inactive token, another issuer, another or no audience, and an expiry past the tolerance', async () => {
    const base = { active: true, iss: issuer, aud: RESOURCE, exp: START / 1000 + 60 };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ active: false }, 'the token is not active (expired, revoked or unknown)', 'invalid-token'],
      [{ active: 'true' }, 'the token is not active (expired, revoked or unknown)', 'invalid-token'],
      [{ iss: 'https://elsewhere.example.test' }, 'the token was issued by another authorization server', 'invalid-token'],
      [{ aud: undefined }, 'the token names no audience; it must be issued for this server', 'wrong-audience'],
      [{ aud: 'https://other.example.test/mcp' }, `the token was issued for another audience, not ${RESOURCE}`, 'wrong-audience'],
      [{ exp: START / 1000 - 60 }, 'the token has expired', 'expired'],
      [{ exp: START / 1000 - 120 }, 'the token has expired', 'expired'],
    ];
    for (const [fields, message, reason] of cases) {
      introspect = () => ({ status: 200, body: { ...base, ...fields } });
      const error = await refusal(validator().validate('opaque'));
      assert.deepEqual([error.message, error.reason], [message, reason], JSON.stringify(fields));
    }
    introspect = () => ({ status: 200, body: { ...base, exp: START / 1000 - 59 } });
    assert.equal((await validator().validate('opaque')).expiresAt, START - 59_000, 'within the tolerance');
  });

  it("MUTATION-MCP-TOKENS: an introspection endpoint that fails is the server's trouble (IntrospectionFailed, a 503), not the token's; without introspection configured an opaque token is refused", async () => {
    for (const [status, body] of [
      [500, { active: true }],
      [200, '<html>maintenance</html>'],
      [401, { error: 'invalid_client' }],
    ] as const) {
      introspect = () => ({ status, body });
      const error = await validator()
        .validate('opaque')
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof IntrospectionFailed, String(error));
      assert.equal(error.name, 'IntrospectionFailed');
      assert.equal(error.message, `the introspection endpoint answered ${status}`);
    }
    const count = introspections().length;
    for (const options of [{ introspection: undefined }, { metadata: { ...metadata, introspection_endpoint: undefined } as AuthorizationServerMetadata }]) {
      const error = await refusal(validator(options).validate('opaque'));
      assert.deepEqual([error.message, error.reason], ['the token is not a JWT, and introspection is not configured', 'invalid-token']);
    }
    assert.equal(introspections().length, count);
  });

  it('MUTATION-MCP-TOKENS: an introspection is cached for 30 s or until the token expires, whichever is sooner, so a revocation is seen within 30 s', async () => {
    let active = true;
    introspect = () => ({ status: 200, body: { active, iss: issuer, aud: RESOURCE, sub: 'carol', exp: START / 1000 + 3600 } });
    const validate = validator();
    await validate.validate('long-lived');
    active = false;
    clock = START + 29_999;
    assert.equal((await validate.validate('long-lived')).subject, 'carol');
    assert.equal(introspections().length, 1);
    clock = START + 30_000;
    assert.equal((await refusal(validate.validate('long-lived'))).message, 'the token is not active (expired, revoked or unknown)');
    assert.equal(introspections().length, 2);

    clock = START;
    active = true;
    introspect = () => ({ status: 200, body: { active, iss: issuer, aud: RESOURCE, sub: 'dave', exp: START / 1000 + 10 } });
    await validate.validate('short-lived');
    clock = START + 9_999;
    await validate.validate('short-lived');
    assert.equal(introspections().length, 3);
    clock = START + 10_000;
    await validate.validate('short-lived');
    assert.equal(introspections().length, 4, 'asked again once the token expires, within its tolerance');
  });
});
