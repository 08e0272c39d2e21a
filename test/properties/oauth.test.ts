import assert from 'node:assert/strict';
import type { OAuthAnswer } from '../../lib/oauth/answer.js';
import { checkMetadata } from '../../lib/oauth/discovery.js';
import { OAuthError } from '../../lib/oauth/errors.js';
import { processIntrospectionResponse, processRegistrationResponse, processTokenResponse } from '../../lib/oauth/requests.js';
import { check, fc, typed } from './fc.js';

/** A field's value as servers get them wrong: the right type, the wrong one, empty, huge, negative, numeric text. */
const loose = fc.oneof(
  fc.constantFrom<unknown>(undefined, null, '', 'Bearer', 'bearer', 'mac', 0, -1, 3600, '3600', '36e2', 1e308, Number.MAX_SAFE_INTEGER + 2, true, [], {}, [
    'a',
    1,
  ]),
  fc.string({ maxLength: 12 }),
  fc.jsonValue({ maxDepth: 1 }),
);
const secret = fc.stringMatching(/^[A-Za-z0-9]{16,24}$/).map((s) => `S${s}`);
const fields = [
  'token_type',
  'expires_in',
  'refresh_token_expires_in',
  'scope',
  'id_token',
  'error',
  'error_description',
  'error_uri',
  'active',
  'client_id',
  'client_secret',
  'token_endpoint_auth_method',
];
const answer = fc
  .tuple(
    fc.constantFrom(200, 201, 400, 401, 403, 429, 500, 503),
    fc.option(
      fc.tuple(fc.option(secret, { nil: undefined }), fc.option(secret, { nil: undefined }), fc.dictionary(fc.constantFrom(...fields), loose, { maxKeys: 6 })),
      { nil: undefined },
    ),
    fc.string({ maxLength: 20 }),
  )
  .map(([status, body, text]): OAuthAnswer & { secrets: string[] } => {
    const json = body && {
      ...body[2],
      ...(body[0] === undefined ? {} : { access_token: body[0] }),
      ...(body[1] === undefined ? {} : { refresh_token: body[1] }),
    };
    return {
      status,
      headers: {},
      json,
      text,
      url: 'https://as.example/token',
      secrets: body ? [body[0], body[1]].filter((s): s is string => s !== undefined) : [],
    };
  });

const url = fc.constantFrom<unknown>(
  'https://as.example/authorize',
  'http://as.example/t',
  'http://127.0.0.1:8/t',
  'https://as.example/t#frag',
  'not a url',
  '',
  'https://',
  'javascript:alert(1)',
  42,
  null,
  ['https://a.example'],
);
const metadata = fc.record(
  {
    issuer: fc.constantFrom<unknown>('https://as.example', 'https://as.example/', 'https://other.example', 7, undefined),
    authorization_endpoint: url,
    token_endpoint: url,
    jwks_uri: url,
    scopes_supported: fc.constantFrom<unknown>(['openid'], [], ['a', 2], 'openid', undefined),
    code_challenge_methods_supported: fc.constantFrom<unknown>(['S256'], ['plain', 'S256'], [null], undefined),
  },
  { requiredKeys: [] },
);

describe('PROP-OAUTH: token, introspection and registration answers and authorization server metadata (CTX-STD-RFC8414)', () => {
  it('PROP-OAUTH: a token answer is a TokenResponse or an OAuthError, and the error never carries the access or refresh token', () => {
    check(
      answer,
      (given) => {
        const result = typed(() => processTokenResponse(given));
        if (result.ok) {
          assert.equal(given.status, 200);
          assert.ok(result.value.accessToken.length > 0);
          if (result.value.expiresIn !== undefined) assert.ok(Number.isFinite(result.value.expiresIn) && result.value.expiresIn >= 0);
          return;
        }
        assert.ok(result.error instanceof OAuthError, result.error.constructor.name);
        const said = `${result.error.message} ${result.error.hint ?? ''}`;
        for (const s of given.secrets)
          if (!Object.values(given.json ?? {}).some((v) => v !== s && JSON.stringify(v ?? '').includes(s))) assert.ok(!said.includes(s), said);
      },
      800,
    );
  });

  it('PROP-OAUTH: introspection and registration answers are a result or an OAuthError, whatever the body', () => {
    check(
      answer,
      (given) => {
        const introspected = typed(() => processIntrospectionResponse(given));
        if (introspected.ok) assert.equal(typeof introspected.value.active, 'boolean');
        const registered = typed(() => processRegistrationResponse(given));
        if (registered.ok) assert.ok(registered.value.clientId.length > 0);
      },
      500,
    );
  });

  it('PROP-OAUTH: checkMetadata accepts a document only when every endpoint it names is a URL and every list is of strings (CTX-STD-RFC8414)', () => {
    check(
      fc.tuple(metadata, fc.constantFrom(undefined, 'https://as.example')),
      ([document, issuer]) => {
        const result = typed(() =>
          checkMetadata(
            { url: 'https://as.example/.well-known/oauth-authorization-server', document },
            { ...(issuer ? { issuer } : {}), required: ['token_endpoint'] },
          ),
        );
        if (!result.ok) return assert.ok(result.error instanceof OAuthError, result.error.constructor.name);
        if (issuer) assert.equal(result.value.issuer, issuer);
        for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
          const value = (document as Record<string, unknown>)[field];
          // null is as absent, as RFC 8414 servers write an endpoint they lack
          if (value !== undefined && value !== null) assert.match(new URL(value as string).protocol, /^https?:$/, `${field} ${String(value)}`);
        }
        for (const field of ['scopes_supported', 'code_challenge_methods_supported'] as const) {
          const value = (document as Record<string, unknown>)[field];
          if (value !== undefined) assert.ok(Array.isArray(value) && value.every((v) => typeof v === 'string'));
        }
      },
      500,
    );
  });
});
