/**
 * The context server's refusals (lib/mcp/server/challenge.ts): the Bearer challenge and body a client reads, and the
 * bearer credential read out of an Authorization header. test/properties/www-authenticate.test.ts round-trips them.
 */
import assert from 'node:assert/strict';
import { bearerOf, challenge, refusalBody } from '../../lib/mcp/server/challenge.js';

const PRM = 'https://mcp.example.test/.well-known/oauth-protected-resource/mcp';

describe('mcp server: Bearer challenges and credentials', () => {
  it('CTX-EP-401-WWW-AUTHENTICATE CTX-ERR-401: without a token the challenge names the metadata and the scopes, and no error (RFC 6750 §3.1)', () => {
    assert.equal(
      challenge({ status: 401, description: 'needs a token', scopes: ['modules:read', 'gates:run'] }, PRM),
      `Bearer resource_metadata="${PRM}", scope="modules:read gates:run"`,
    );
    assert.equal(challenge({ status: 401, description: 'needs a token', scopes: [] }, PRM), `Bearer resource_metadata="${PRM}"`);
    assert.equal(challenge({ status: 401, description: 'needs a token' }, PRM), `Bearer resource_metadata="${PRM}"`);
  });

  it('CTX-AUTH-INVALID-401 CTX-ERR-403: a refused token gets its error and description; a temporary failure (503) gets neither', () => {
    assert.equal(
      challenge({ status: 403, error: 'insufficient_scope', description: 'needs gates:run', scopes: ['gates:run'] }, PRM),
      `Bearer resource_metadata="${PRM}", scope="gates:run", error="insufficient_scope", error_description="needs gates:run"`,
    );
    assert.equal(challenge({ status: 503, error: 'temporarily_unavailable', description: 'try again' }, PRM), `Bearer resource_metadata="${PRM}"`);
  });

  it('MUTATION-MCP-TOKENS: quoted-string values escape backslash and double quote and turn control characters (and DEL) into spaces', () => {
    const header = challenge({ status: 400, error: 'invalid_request', description: 'a "quoted" C:\\path\nnext\tcol\u007fend\u0000 ok' }, PRM);
    assert.equal(header, `Bearer resource_metadata="${PRM}", error="invalid_request", error_description="a \\"quoted\\" C:\\\\path next col end  ok"`);
  });

  it('MUTATION-MCP-TOKENS: the JSON body says the error, or unauthorized when there is none, with the description', () => {
    assert.deepEqual(refusalBody({ status: 401, description: 'needs a token' }), { error: 'unauthorized', error_description: 'needs a token' });
    assert.deepEqual(refusalBody({ status: 401, error: 'invalid_token', description: 'expired' }), { error: 'invalid_token', error_description: 'expired' });
  });

  it('CTX-ERR-401: no header, an empty one, or another scheme is no bearer credential; the scheme is case-insensitive and surrounding space is dropped', () => {
    for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', 'Bearerx abc', 'Token abc'])
      assert.deepEqual(bearerOf(header), { kind: 'none' }, String(header));
    for (const header of ['Bearer abc', 'bearer abc', 'BEARER abc', '  Bearer \t abc  '])
      assert.deepEqual(bearerOf(header), { kind: 'token', token: 'abc' }, header);
  });

  it('CTX-ERR-400: two Authorization headers, an empty Bearer credential, or one with characters outside b68token are malformed', () => {
    assert.deepEqual(bearerOf(['Bearer a', 'Bearer b']), { kind: 'malformed', reason: 'more than one Authorization header' });
    for (const header of ['Bearer', 'Bearer   ', 'bearer\t'])
      assert.deepEqual(bearerOf(header), { kind: 'malformed', reason: 'the Bearer credential is empty' }, JSON.stringify(header));
    for (const token of ['a b', 'abc!', '!abc', '=abc', 'ab=c', 'abc=!', 'ab"c', 'a,b'])
      assert.deepEqual(bearerOf(`Bearer ${token}`), { kind: 'malformed', reason: 'the Bearer credential has characters a token cannot have' }, token);
  });

  it('MUTATION-MCP-TOKENS: every b68token character is accepted, with trailing = padding', () => {
    for (const token of ['AZaz09-._~+/', 'Zz9', 'x', 'abc=', 'abc==', 'A', 'z', '0', '9', '-', '.', '_', '~', '+', '/'])
      assert.deepEqual(bearerOf(`Bearer ${token}`), { kind: 'token', token }, token);
  });
});
