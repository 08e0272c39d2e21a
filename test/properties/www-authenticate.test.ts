import assert from 'node:assert/strict';
import { parseWwwAuthenticate, bearerChallenge } from '../../lib/mcp/client/www-authenticate.js';
import { bearerOf, challenge, type Refusal } from '../../lib/mcp/server/challenge.js';
import { anyText, check, fc, fromAlphabet } from './fc.js';

const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/);
/** Header text built from the grammar's pieces: schemes, params, quotes, escapes, commas, token68 padding. */
const nearHeader = fromAlphabet(['Bearer', 'Basic', ' ', '\t', ',', '=', '==', '"', '\\', 'realm', 'scope', 'a', 'x y', 'é', '\u0000'], 30);
const headerInput = fc.oneof(anyText(nearHeader), fc.array(anyText(nearHeader), { maxLength: 3 }));

/** Printable text the server's quoted-string printer keeps as is (it turns control characters into spaces). */
const printable = fc.string({ maxLength: 30 }).map((s) => [...s].map((c) => (c < ' ' || c === '\u007f' ? ' ' : c)).join(''));
const refusal: fc.Arbitrary<Refusal> = fc.record({
  status: fc.constantFrom(400, 401, 403) as fc.Arbitrary<400 | 401 | 403>,
  error: fc.option(fc.constantFrom('invalid_request', 'invalid_token', 'insufficient_scope') as fc.Arbitrary<Refusal['error']>, { nil: undefined }),
  description: printable,
  scopes: fc.option(fc.array(token, { minLength: 1, maxLength: 3 }), { nil: undefined }),
});

describe('PROP-WWW-AUTHENTICATE: the challenge parser and the bearer credential reader (CTX-EP-401-WWW-AUTHENTICATE)', () => {
  it('PROP-WWW-AUTHENTICATE: parseWwwAuthenticate never throws and answers challenges with lower-cased schemes and names, whatever the header', () => {
    check(
      headerInput,
      (header) => {
        const challenges = parseWwwAuthenticate(header);
        for (const c of challenges) {
          assert.match(c.scheme, /^[!#$%&'*+.^_`|~0-9a-z-]+$/);
          for (const name of Object.keys(c.params)) assert.equal(name, name.toLowerCase());
        }
        bearerChallenge(header);
      },
      600,
    );
  });

  it("PROP-WWW-AUTHENTICATE: the server's Bearer challenge round-trips through the client's parser (CTX-EP-401-WWW-AUTHENTICATE)", () => {
    check(fc.tuple(refusal, printable), ([given, url]) => {
      const parsed = parseWwwAuthenticate(challenge(given, url));
      assert.equal(parsed.length, 1);
      const expected: Record<string, string> = { resource_metadata: url };
      if (given.scopes) expected.scope = given.scopes.join(' ');
      if (given.error) Object.assign(expected, { error: given.error, error_description: given.description });
      assert.deepEqual(parsed[0], { scheme: 'bearer', params: expected });
    });
  });

  it('PROP-WWW-AUTHENTICATE: challenges joined by commas (or given as several header fields) parse as each alone, in order', () => {
    const one = fc.tuple(token, fc.array(fc.tuple(token, fc.oneof(token, printable)), { maxLength: 3 })).map(([scheme, params]) => ({
      text: `${scheme}${params.length ? ' ' : ''}${params.map(([k, v]) => `${k}="${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(', ')}`,
      scheme,
      params,
    }));
    check(fc.array(one, { minLength: 1, maxLength: 3 }), (list) => {
      const joined = parseWwwAuthenticate(list.map((c) => c.text).join(', '));
      assert.deepEqual(parseWwwAuthenticate(list.map((c) => c.text)), joined);
      assert.equal(joined.length, list.length);
      list.forEach((c, i) => {
        const expected: Record<string, string> = {};
        for (const [k, v] of c.params) if (!(k.toLowerCase() in expected)) expected[k.toLowerCase()] = v;
        assert.deepEqual(joined[i], { scheme: c.scheme.toLowerCase(), params: expected });
      });
    });
  });

  it('PROP-WWW-AUTHENTICATE: bearerOf never throws; a token it accepts is exactly the b68token after the scheme', () => {
    const b68 = fc.stringMatching(/^[A-Za-z0-9\-._~+/]{1,20}=*$/);
    const near = fc
      .tuple(
        fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', ''),
        fc.constantFrom(' ', '  ', '\t', ''),
        fc.oneof(b68, fromAlphabet(['a', '=', ' ', '"', '%', '/'], 10)),
      )
      .map(([s, sp, t]) => `${s}${sp}${t}`);
    check(
      fc.oneof(anyText(near), fc.array(near, { maxLength: 2 })),
      (header) => {
        const credential = bearerOf(header as string | string[]);
        if (credential.kind === 'token') {
          assert.match(credential.token, /^[A-Za-z0-9\-._~+/]+=*$/);
          assert.ok((header as string).trim().endsWith(credential.token));
        }
      },
      600,
    );
  });
});
