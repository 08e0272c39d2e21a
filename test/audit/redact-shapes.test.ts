import assert from 'node:assert/strict';
import { REDACTED, redact, redactHeaders, redactUrl, redactValue, registerSecret } from '../../lib/redact.js';

// Every name and shape lib/redact knows, one by one: a credential carrier dropped from a table, or a pattern that
// stops a character early, leaks that credential and nothing else, so each entry gets its own canary. In-process and
// without servers: this is the spec of `npm run mutate -- redact` (stryker/redact.config.mjs).
const CANARY = 'canary9v1';

const headers = ['Authorization', 'Proxy-Authorization', 'X-Secrets-Token', 'X-Api-Key'];
const schemes = [
  'Bearer',
  'Basic',
  'token',
  'Digest',
  'Negotiate',
  'NTLM',
  'OAuth',
  'DPoP',
  'GNAP',
  'HOBA',
  'Mutual',
  'PrivateToken',
  'Concealed',
  'SCRAM-SHA-1',
  'SCRAM-SHA-256',
  'vapid',
  'AWS4-HMAC-SHA256',
];
const queryParameters = [
  'access_token',
  'refresh_token',
  'id_token',
  'key',
  'api_key',
  'apikey',
  'token',
  'password',
  'client_secret',
  'secret_id',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'signature',
];
const jsonFields = ['access_token', 'refresh_token', 'id_token', 'client_token', 'token', 'password', 'secret_id', 'client_secret', 'api_key', 'apikey'];

/** `inner` carried `levels` deep: each level a URL whose `next` query value is the level below, percent-encoded. */
function nested(inner: string, levels: number): string {
  let url = inner;
  for (let level = 0; level < levels; level++) url = `https://l${level}.example/?next=${encodeURIComponent(url)}`;
  return url;
}

describe('MUTATION-REDACT: every credential carrier lib/redact names is masked on its own', () => {
  it('SEC-AUTH-TOKEN-HEADER: each sensitive header, as `Name: value` and as `name=value`', () => {
    for (const name of headers) {
      assert.equal(redact(`${name}: ${CANARY}`), `${name}: ${REDACTED}`);
      assert.equal(redact(`${name.toLowerCase()}=${CANARY}`), `${name.toLowerCase()}=${REDACTED}`);
    }
    assert.equal(redact(`Cookie: theme=dark; sid=${CANARY}`), `Cookie: ${REDACTED}`);
    assert.equal(redact(`set-cookie=sid=${CANARY}; Path=/`), `set-cookie=${REDACTED}`);
    assert.equal(redact(`Cookie: ${REDACTED}`), `Cookie: ${REDACTED}`, 'a masked cookie is left as it is');
  });

  it('SEC-AUTH-BEARER: after each registered authentication scheme the credential is masked and the scheme kept; the scheme named alone is no credential', () => {
    for (const scheme of schemes) {
      assert.equal(redact(`Authorization: ${scheme} ${CANARY}`), `Authorization: ${scheme} ${REDACTED}`, scheme);
      assert.equal(redact(`(Authorization: ${scheme}).`), `(Authorization: ${scheme}).`, scheme);
      assert.equal(redact(`authorization=${scheme.toLowerCase()}`), `authorization=${scheme.toLowerCase()}`, scheme);
    }
    assert.equal(redact('send Authorization: Bearer <token>).'), 'send Authorization: Bearer <token>).');
    assert.equal(redact('X-Api-Key: <key>'), 'X-Api-Key: <key>');
  });

  it('SEC-AUTH-TOKEN-HEADER: the value is masked whatever the spacing, and a value that only contains a placeholder or a scheme name is still a value', () => {
    assert.equal(redact(`Authorization:${CANARY}`), `Authorization:${REDACTED}`);
    assert.equal(redact(`authorization = ${CANARY}`), `authorization = ${REDACTED}`);
    assert.equal(redact(`Authorization: Bearer   ${CANARY}`), `Authorization: Bearer ${REDACTED}`);
    assert.equal(redact('Authorization: Bearer token'), `Authorization: Bearer ${REDACTED}`, 'a credential spelled like a scheme, after a scheme');
    for (const value of [`${CANARY}<x>`, `<x>${CANARY}`, `${CANARY}Basic`, `Basic${CANARY}`]) {
      assert.equal(redact(`X-Api-Key: ${value}`), `X-Api-Key: ${REDACTED}`, value);
    }
  });

  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: a bearer credential in prose is masked from 8 token68 characters with a digit, padding included', () => {
    assert.equal(redact('invalid Bearer abcdefg1'), `invalid Bearer ${REDACTED}`);
    assert.equal(redact('bearer abcdefg1=='), `bearer ${REDACTED}`);
    assert.equal(redact('Bearer abc+/_~.-9xyz'), `Bearer ${REDACTED}`);
    assert.equal(redact('a Bearer abcdefgh'), 'a Bearer abcdefgh', 'a word without a digit is prose');
    assert.equal(redact('a Bearer abc1'), 'a Bearer abc1', 'too short to be a token');
    assert.equal(redact(`invalid Bearer  ${CANARY}`), `invalid Bearer  ${REDACTED}`, 'two spaces after the scheme');
  });

  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: each sensitive query parameter, in any case, in a URL, through redactUrl, and percent-encoded once or twice inside another URL', () => {
    for (const name of queryParameters) {
      assert.equal(
        redact(`GET https://h.example/x?q=1&${name.toUpperCase()}=${CANARY}&z=2`),
        `GET https://h.example/x?q=1&${name.toUpperCase()}=${REDACTED}&z=2`,
      );
      assert.equal(redactUrl(`https://h.example/x?${name}=${CANARY}&z=2`), `https://h.example/x?${name}=${REDACTED}&z=2`);
      const inner = `https://shop.example/?${name}=${CANARY}&x=1`;
      assert.equal(
        redact(`https://api.example/run?url=${encodeURIComponent(inner)}`),
        `https://api.example/run?url=https%3A%2F%2Fshop.example%2F%3F${name}%3D${REDACTED}%26x%3D1`,
      );
      assert.equal(redact(`GET /x;${name}=${CANARY}`), `GET /x;${name}=${REDACTED}`);
      const twice = `https://a.example/?next=${encodeURIComponent(`https://shop.example/?${name}=${CANARY}#x`)}`;
      assert.equal(
        redact(`https://api.example/run?url=${encodeURIComponent(twice)}`),
        `https://api.example/run?url=https%3A%2F%2Fa.example%2F%3Fnext%3Dhttps%253A%252F%252Fshop.example%252F%253F${name}%253D${REDACTED}%2523x`,
      );
    }
  });

  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: an encoded query value starts after an encoded `?`, `&`, `#` or `;` and ends at the next one', () => {
    assert.equal(
      redact(`u=${encodeURIComponent(`https://s.example/?x=1&token=${CANARY}#f`)}`),
      `u=https%3A%2F%2Fs.example%2F%3Fx%3D1%26token%3D${REDACTED}%23f`,
    );
    assert.equal(redact(`u=${encodeURIComponent(`https://s.example/#token=${CANARY}`)}`), `u=https%3A%2F%2Fs.example%2F%23token%3D${REDACTED}`);
    assert.equal(redact(`u=${encodeURIComponent(`https://s.example/p;token=${CANARY};v=2`)}`), `u=https%3A%2F%2Fs.example%2Fp%3Btoken%3D${REDACTED}%3Bv%3D2`);
  });

  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: an encoded query value ends only at a separator encoded no deeper than its own `?`: a token holding `&`, `#` or `;` is masked whole', () => {
    for (const separator of ['&', '#', ';']) {
      const token = `${CANARY}${separator}tail-of-the-token-${separator === '&' ? 'a' : separator === '#' ? 'b' : 'c'}9`;
      for (const levels of [1, 2, 3]) {
        const text = redact(nested(`https://s.example/?token=${encodeURIComponent(token)}`, levels));
        assert.ok(!text.includes('tail-of-the-token'), `${levels} level(s), ${separator}: ${text}`);
        assert.ok(text.includes(REDACTED) || text.includes(encodeURIComponent(REDACTED)), text);
      }
    }
    // A separator of an outer level ends an inner level's value too: what follows it is the outer URL's, not the token's.
    const inner = `https://s.example/?token=${CANARY}`;
    const outer = `https://o.example/?next=${encodeURIComponent(inner)}&page=2`;
    assert.equal(
      redact(`u=${encodeURIComponent(outer)}`),
      `u=${encodeURIComponent(`https://o.example/?next=`)}${encodeURIComponent(encodeURIComponent('https://s.example/?token='))}${REDACTED}%26page%3D2`,
    );
  });

  it('each credential-named environment assignment, the rest of the line kept', () => {
    for (const name of [
      'SECRETS_TOKEN',
      'PAGEANALYSIS_API_KEY',
      'CLIENT_SECRET',
      'APPROLE_SECRET_ID',
      'DB_PASSWORD',
      'TOKEN',
      'GANTRY_TOKEN_registry_example_com',
    ]) {
      assert.equal(redact(`env ${name}=${CANARY} OTHER=x`), `env ${name}=${REDACTED} OTHER=x`);
    }
  });

  it('each credential-named JSON field, in an echoed body and in a body quoted inside a JSON string', () => {
    for (const field of jsonFields) {
      assert.equal(redact(`{"${field}": "${CANARY}", "user": "a"}`), `{"${field}": "${REDACTED}", "user": "a"}`);
      const quoted = JSON.stringify({ body: JSON.stringify({ [field.toUpperCase()]: CANARY, user: 'a' }) });
      assert.equal(redact(quoted), JSON.stringify({ body: JSON.stringify({ [field.toUpperCase()]: REDACTED, user: 'a' }) }));
    }
  });

  it('URL userinfo, also percent-encoded once or twice into another URL', () => {
    assert.equal(redact('https%3A%2F%2Fuser%3Apass%40host.example%2Fp'), `https%3A%2F%2F${REDACTED}%40host.example%2Fp`);
    assert.equal(redact('x%3Dhttps%253A%252F%252Fuser%253Apass%2540host%252Fp'), `x%3Dhttps%253A%252F%252F${REDACTED}%2540host%252Fp`);
    const thrice = encodeURIComponent(encodeURIComponent(encodeURIComponent(`https://user:${CANARY}@host.example/p`)));
    assert.equal(redact(`x=${thrice}`), `x=https%25253A%25252F%25252F${REDACTED}%252540host.example%25252Fp`, 'the `@` keeps its three encodings');
    assert.equal(redact('see https://u:p@h.example/x'), `see https://${REDACTED}@h.example/x`);
    for (const password of [`${CANARY}#1`, `${CANARY}/2`, `${CANARY}?3`, `${CANARY}@4`]) {
      const inner = `https://bot:${encodeURIComponent(password)}@h.example/x`;
      assert.equal(
        redact(`GET https://a.example/?url=${encodeURIComponent(inner)} failed`),
        `GET https://a.example/?url=https%3A%2F%2F${REDACTED}%40h.example%2Fx failed`,
        password,
      );
      const twice = `https://m.example/?next=${encodeURIComponent(inner)}`;
      assert.equal(
        redact(`GET https://a.example/?url=${encodeURIComponent(twice)}`),
        `GET https://a.example/?url=https%3A%2F%2Fm.example%2F%3Fnext%3Dhttps%253A%252F%252F${REDACTED}%2540h.example%252Fx`,
        password,
      );
    }
    assert.equal(redact('see https%3A%2F%2Fu%3Ap%40h.example'), `see https%3A%2F%2F${REDACTED}%40h.example`);
  });
});

describe('MUTATION-REDACT: every credential in a message is masked, not only the first, whatever the case of its escapes', () => {
  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: two percent-encoded query credentials, one spelled with lower-case escapes', () => {
    const first = `https://api.example/run?url=${encodeURIComponent(`https://shop.example/?token=${CANARY}a`).toLowerCase()}`;
    const second = `https://api.example/run?url=${encodeURIComponent(`https://shop.example/?token=${CANARY}b`)}`;
    assert.equal(
      redact(`retry 1: ${first}; retry 2: ${second}`),
      `retry 1: https://api.example/run?url=https%3a%2f%2fshop.example%2f%3ftoken%3d${REDACTED}; ` +
        `retry 2: https://api.example/run?url=https%3A%2F%2Fshop.example%2F%3Ftoken%3D${REDACTED}`,
    );
  });

  it('two percent-encoded URL userinfos, one with lower-case escapes and an upper-case scheme', () => {
    assert.equal(
      redact(`from HTTPS%3a%2f%2falice%3a${CANARY}a%40h.example to https%3A%2F%2Fbob%3A${CANARY}b%40h.example`),
      `from HTTPS%3a%2f%2f${REDACTED}%40h.example to https%3A%2F%2F${REDACTED}%40h.example`,
    );
  });
});

describe('MUTATION-REDACT: redactUrl, redactValue and redactHeaders', () => {
  it('redactUrl masks a user alone or a password alone, leaves a clean URL spelled as given, and falls back to text for what is no URL', () => {
    assert.equal(redactUrl('https://alice@h.example/'), `https://${REDACTED}@h.example/`);
    assert.equal(redactUrl('https://:pw@h.example/?a=1'), `https://${REDACTED}@h.example/?a=1`);
    assert.equal(redactUrl('http://host.example'), 'http://host.example');
    assert.equal(redactUrl('https://h.example/a?b=1&c=%2F'), 'https://h.example/a?b=1&c=%2F');
    assert.equal(redactUrl('https://u:p@h.example/?q=a%20b'), `https://${REDACTED}@h.example/?q=a%20b`, 'masking the user keeps the query as spelled');
    assert.equal(redactUrl(new URL('https://h.example/x?token=abc1')), `https://h.example/x?token=${REDACTED}`);
    assert.equal(redactUrl('not a url ?token=abc1'), `not a url ?token=${REDACTED}`);
  });

  it('redactUrl masks a URL nested as a query value of another, also several levels deep', () => {
    const inner = `https://shop.example/p?token=${CANARY}`;
    const middle = `https://m.example/?next=${encodeURIComponent(inner)}`;
    const out = redactUrl(`https://api.example/run?url=${encodeURIComponent(middle)}&n=1`);
    assert.ok(!out.includes(CANARY), out);
    assert.equal(new URL(new URL(new URL(out).searchParams.get('url')!).searchParams.get('next')!).searchParams.get('token'), REDACTED);
    assert.equal(new URL(out).searchParams.get('n'), '1');
  });

  it('redactUrl reads a query the way the URL parser does: a parameter name spelled with escapes, a password holding `,` or `(`', () => {
    assert.equal(redactUrl(`https://h.example/x?%74oken=${CANARY}&q=1`), `https://h.example/x?token=${REDACTED}&q=1`);
    assert.equal(redactUrl(`https://h.example/x?password=${CANARY},(x)&q=1`), `https://h.example/x?password=${REDACTED}&q=1`);
  });

  it('redactUrl masks the userinfo of a URL nested raw in a query value whose `@` alone is percent-encoded: a token as user, a password alone, both', () => {
    for (const userinfo of [`ghp_${CANARY}`, `:${CANARY}`, `bot:${CANARY}`]) {
      assert.equal(
        redactUrl(`https://a.example/?url=https://${userinfo}%40h.example/x&n=1`),
        `https://a.example/?url=https%3A%2F%2F${REDACTED}%40h.example%2Fx&n=1`,
        userinfo,
      );
    }
  });

  it('redactUrl masks a nested URL the parser reads as one though it does not start `scheme://`: a leading space, backslashes, no slashes', () => {
    for (const url of [` https://bot:${CANARY}%40h.example/x`, `https:%5C%5Cbot:${CANARY}%40h.example%5Cx`, `https:bot:${CANARY}%40h.example/x`]) {
      assert.equal(redactUrl(`https://a.example/?url=${url}&n=1`), `https://a.example/?url=https%3A%2F%2F${REDACTED}%40h.example%2Fx&n=1`, url);
    }
    assert.equal(
      redactUrl(`https://a.example/?next=%20https://h.example/x?%74oken=${CANARY}`),
      `https://a.example/?next=https%3A%2F%2Fh.example%2Fx%3Ftoken%3D${REDACTED}`,
    );
  });

  it('redactUrl parses 8 levels of nested URLs: what only the parser sees is masked 8 levels deep; deeper, the free-text pass masks by shape and keeps the spelling', () => {
    const eight = redactUrl(nested(`https://in.example/?%74oken=${CANARY}`, 8));
    assert.ok(!eight.includes(CANARY), eight);
    let innermost = new URL(eight);
    for (let level = 0; level < 8; level++) innermost = new URL(innermost.searchParams.get('next')!);
    assert.equal(innermost.href, `https://in.example/?token=${REDACTED}`);
    // `~` is a character the parser would respell (`%7E`) had it re-encoded the nine levels.
    const nine = nested(`https://in.example/~me/?token=${CANARY}`, 9);
    assert.equal(redactUrl(nine), nine.replace(CANARY, REDACTED));
  });

  it('redactUrl of a URL nested 10,000 levels deep (hostile input) returns it as given instead of exhausting the stack', () => {
    const hostile = `https://h.example/?u=${'a://?u='.repeat(10_000)}`;
    assert.equal(redactUrl(hostile), hostile);
  });

  it('redactValue masks each credential-named string field in any case and at any depth, walks the rest, and stops on a cycle', () => {
    for (const field of jsonFields) {
      assert.deepEqual(redactValue({ [field]: CANARY, [field.toUpperCase()]: 'x1', nested: [{ [field]: 'c2' }], user: 'a' }), {
        [field]: REDACTED,
        [field.toUpperCase()]: REDACTED,
        nested: [{ [field]: REDACTED }],
        user: 'a',
      });
    }
    assert.deepEqual(redactValue({ token: { expires_in: 3600 }, password: 7 }), { token: { expires_in: 3600 }, password: 7 });
    assert.deepEqual(redactValue(['Bearer abcdefg1', 3, null]), [`Bearer ${REDACTED}`, 3, null]);
    assert.equal(redactValue(null), null);
    assert.equal(redactValue(`Authorization: Basic ${CANARY}`), `Authorization: Basic ${REDACTED}`);
    let deep: unknown = { password: CANARY, note: `Authorization: Basic ${CANARY}` };
    for (let level = 0; level < 64; level++) deep = { level: deep };
    assert.ok(!JSON.stringify(redactValue(deep)).includes(CANARY), 'a credential 64 objects deep');
    const cyclic: Record<string, unknown> = { note: `Authorization: Basic ${CANARY}` };
    cyclic.self = cyclic;
    const copy = redactValue(cyclic) as Record<string, unknown>;
    assert.equal(copy.note, `Authorization: Basic ${REDACTED}`);
    assert.equal((copy.self as Record<string, unknown>).note, `Authorization: Basic ${REDACTED}`);
    const list: unknown[] = [`Bearer ${CANARY}`];
    list.push(list);
    const listCopy = redactValue(list) as unknown[];
    assert.equal(listCopy[0], `Bearer ${REDACTED}`);
    assert.equal((listCopy[1] as unknown[])[0], `Bearer ${REDACTED}`, 'a list that holds itself');
  });

  it('redactValue masks only fields named for a credential: an OAuth token response keeps its token_type, a page cursor (nextPageToken) its value', () => {
    assert.deepEqual(redactValue({ access_token: CANARY, token_type: 'Bearer', expires_in: 3600, nextPageToken: 'CiAKGjBp' }), {
      access_token: REDACTED,
      token_type: 'Bearer',
      expires_in: 3600,
      nextPageToken: 'CiAKGjBp',
    });
  });

  it('redactHeaders masks each credential header whatever its case, passes the others through redact, keeps lists and absent values', () => {
    assert.deepEqual(
      redactHeaders({
        Authorization: 'Bearer x',
        'X-API-KEY': 'k',
        cookie: 'a=b',
        'Set-Cookie': ['a=b'],
        'proxy-authorization': 'x',
        'x-secrets-token': 't',
        accept: 'text/plain',
        link: ['<https://u:p@h.example/>; rel=next', 'plain'],
        location: `https://h.example/?token=${CANARY}`,
        gone: undefined,
      }),
      {
        Authorization: REDACTED,
        'X-API-KEY': REDACTED,
        cookie: REDACTED,
        'Set-Cookie': REDACTED,
        'proxy-authorization': REDACTED,
        'x-secrets-token': REDACTED,
        accept: 'text/plain',
        link: [`<https://${REDACTED}@h.example/>; rel=next`, 'plain'],
        location: `https://h.example/?token=${REDACTED}`,
        gone: undefined,
      },
    );
  });
});

describe('MUTATION-REDACT: registered secrets', () => {
  it('ignores values shorter than 4 characters and empty ones; masks from 4', () => {
    registerSecret('q7z');
    registerSecret(undefined);
    registerSecret(null);
    registerSecret('');
    registerSecret('w8xy');
    assert.equal(redact('q7z w8xy'), `q7z ${REDACTED}`);
  });

  it('matches a secret literally, not as a pattern', () => {
    const special = 'k7.q*r+(s)?t^u$v{1}w|x[y]z\\';
    registerSecret(special);
    assert.equal(redact(`k7Xqqr ${special}`), `k7Xqqr ${REDACTED}`);
    assert.equal(redact('k7qqqqrr'), 'k7qqqqrr');
  });

  it('masks the longest of two overlapping secrets whole, whichever was registered first', () => {
    registerSecret('lp4q');
    registerSecret('lp4q-longer-9');
    assert.equal(redact('x lp4q-longer-9 y'), `x ${REDACTED} y`);
  });

  it('masks a secret as JSON escapes it and as one or two rounds of URL encoding spell it', () => {
    const secret = 'zz"y/q&u=1';
    registerSecret(secret);
    assert.equal(redact(JSON.stringify(secret)), `"${REDACTED}"`);
    assert.equal(redact(`a ${encodeURIComponent(secret)} b`), `a ${REDACTED} b`);
    assert.equal(redact(`a ${encodeURIComponent(encodeURIComponent(secret))} b`), `a ${REDACTED} b`);
  });

  it('keeps the newest 4,096 forms: 1,024 secrets whose four forms differ are all masked, the next one pushes the oldest out', () => {
    const stamp = Date.now();
    // A space and a quote make the raw, JSON-escaped, URL-encoded and twice-encoded forms four different strings.
    const secrets = Array.from({ length: 1025 }, (_, i) => `cap "${i}" ${stamp}`);
    for (const secret of secrets.slice(0, 1024)) registerSecret(secret);
    assert.equal(redact(secrets[0]!), REDACTED);
    assert.equal(redact(encodeURIComponent(encodeURIComponent(secrets[0]!))), REDACTED);
    registerSecret(secrets[1024]);
    assert.equal(redact(secrets[0]!), secrets[0], 'the oldest raw form was forgotten');
    assert.equal(redact(secrets[1024]!), REDACTED);
  });

  it('a secret registered after redaction has run is masked from then on', () => {
    assert.equal(redact('late-m9q2'), 'late-m9q2');
    registerSecret('late-m9q2');
    assert.equal(redact('late-m9q2'), REDACTED);
  });
});
