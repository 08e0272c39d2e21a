// Webhook signatures, checked against an independent signer: @octokit/webhooks-methods for sha256 and node:crypto
// (written out here, not through lib/) for sha1.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { GantryError, UsageError } from '../../lib/errors.js';
import { matchSignatureClaim, readSignatureClaim, requestSignatureClaim, sign, signatureCheck, verify, type VerifyResult } from '../../lib/webhooks/verify.js';

const secret = "It's a Secret to Everybody";
const body = '{"action":"opened","number":1,"repository":{"full_name":"octo/hello"},"sender":{"login":"octocat"}}';

function sha1Of(key: string, bytes: string | Buffer): string {
  return `sha1=${createHmac('sha1', key).update(bytes).digest('hex')}`;
}

function failure(result: VerifyResult): { reason: string; message: string } {
  assert.equal(result.ok, false, `expected a refusal, got ${JSON.stringify(result)}`);
  return result as { reason: string; message: string };
}

/** Nothing secret in a refusal's message: neither a secret nor any hex run that could be a digest. */
function assertClean(message: string, ...secrets: string[]) {
  for (const s of secrets) assert.ok(!message.includes(s), `the message quotes a secret: ${message}`);
  assert.doesNotMatch(message, /[0-9a-f]{16,}/i, `the message quotes a digest: ${message}`);
}

describe('webhooks: sign and verify (HOOK-AUTH-HMAC)', () => {
  it('HOOK-HDR-SIGNATURE-SHA256: sign() gives what @octokit/webhooks-methods gives, the documented example included', async () => {
    assert.equal(sign(secret, 'Hello, World!'), 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
    assert.equal(sign(secret, body), await octokitSign(secret, body));
    assert.equal(sign(secret, Buffer.from(body)), await octokitSign(secret, body));
  });

  it('HOOK-HDR-SIGNATURE-SHA1: sign(…, "sha1") is the HMAC SHA-1 of the body with the secret as key, prefixed sha1=', () => {
    assert.equal(sign(secret, body, 'sha1'), sha1Of(secret, body));
  });

  it('HOOK-HDR-SIGNATURE-SHA256: a good X-Hub-Signature-256 verifies, whatever the case of the header name', async () => {
    const signature = await octokitSign(secret, body);
    assert.deepEqual(verify(secret, body, { 'x-hub-signature-256': signature }), { ok: true, algorithm: 'sha256', secretIndex: 0 });
    assert.deepEqual(verify([secret], Buffer.from(body), { 'X-Hub-Signature-256': signature }), { ok: true, algorithm: 'sha256', secretIndex: 0 });
    assert.deepEqual(verify(secret, body, { 'X-HUB-SIGNATURE-256': [signature] }), { ok: true, algorithm: 'sha256', secretIndex: 0 });
    assert.deepEqual(verify(secret, body, new Headers({ 'X-Hub-Signature-256': signature }) as never), { ok: true, algorithm: 'sha256', secretIndex: 0 });
    // The hex digits encode bytes; upper case encodes the same ones.
    assert.equal(verify(secret, body, { 'x-hub-signature-256': `sha256=${signature.slice(7).toUpperCase()}` }).ok, true);
  });

  it('HOOK-HDR-SIGNATURE-SHA1: only X-Hub-Signature came — accepted by default, for older platforms', () => {
    assert.deepEqual(verify(secret, body, { 'x-hub-signature': sha1Of(secret, body) }), { ok: true, algorithm: 'sha1', secretIndex: 0 });
    assert.deepEqual(verify(secret, body, { 'x-hub-signature': sha1Of(secret, body) }, { allowSha1: true }), { ok: true, algorithm: 'sha1', secretIndex: 0 });
  });

  it('HOOK-HDR-SIGNATURE-SHA1: refused with sha1-refused when allowSha1 is false, even when it is right', () => {
    const refusal = failure(verify(secret, body, { 'x-hub-signature': sha1Of(secret, body) }, { allowSha1: false }));
    assert.equal(refusal.reason, 'sha1-refused');
    assert.match(refusal.message, /X-Hub-Signature-256/);
    assertClean(refusal.message, secret);
  });

  it('HOOK-HDR-SIGNATURE-SHA256, HOOK-HDR-SIGNATURE-SHA1: when both came the sha256 one decides — a wrong sha256 beside a right sha1 is a mismatch', async () => {
    const wrong256 = await octokitSign('another secret', body);
    const refusal = failure(verify(secret, body, { 'x-hub-signature-256': wrong256, 'x-hub-signature': sha1Of(secret, body) }));
    assert.equal(refusal.reason, 'mismatch');
    assert.match(refusal.message, /X-Hub-Signature-256/);
    assertClean(refusal.message, secret);
    const malformed = failure(verify(secret, body, { 'x-hub-signature-256': 'sha256=abc', 'x-hub-signature': sha1Of(secret, body) }));
    assert.equal(malformed.reason, 'malformed');
    // And a right sha256 beside a wrong sha1 verifies as sha256.
    assert.deepEqual(verify(secret, body, { 'x-hub-signature-256': await octokitSign(secret, body), 'x-hub-signature': sha1Of('x', body) }), {
      ok: true,
      algorithm: 'sha256',
      secretIndex: 0,
    });
  });

  it('HOOK-HDR-SIGNATURE-SHA256: a signature of the wrong length is malformed, never thrown on', async () => {
    const good = await octokitSign(secret, body);
    const hex = good.slice('sha256='.length);
    for (const value of [`sha256=${hex.slice(0, -1)}`, `sha256=${hex}0`, `sha256=${hex}${hex}`, 'sha256=', `sha256=${hex.slice(0, 40)}`]) {
      const refusal = failure(verify(secret, body, { 'x-hub-signature-256': value }));
      assert.equal(refusal.reason, 'malformed', value);
      assert.match(refusal.message, /hex digits/);
      assertClean(refusal.message, secret);
    }
    const sha1 = failure(verify(secret, body, { 'x-hub-signature': `${sha1Of(secret, body)}00` }));
    assert.equal(sha1.reason, 'malformed');
    assert.match(sha1.message, /^X-Hub-Signature is malformed: the digest has 42 hex digits/);
  });

  it('HOOK-HDR-SIGNATURE-SHA256: a digest with a non-hex character is malformed', async () => {
    const hex = (await octokitSign(secret, body)).slice(7);
    for (const value of [`sha256=${hex.slice(0, -1)}g`, `sha256=${hex.slice(0, -2)} a`, `sha256=${'z'.repeat(64)}`, `sha256=${hex.slice(0, -1)}é`]) {
      const refusal = failure(verify(secret, body, { 'x-hub-signature-256': value }));
      assert.equal(refusal.reason, 'malformed', value);
      assertClean(refusal.message, secret);
    }
  });

  it('HOOK-HDR-SIGNATURE-SHA256, HOOK-HDR-SIGNATURE-SHA1: a wrong or missing prefix is malformed', async () => {
    const hex256 = (await octokitSign(secret, body)).slice(7);
    const hex1 = sha1Of(secret, body).slice(5);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ 'x-hub-signature-256': hex256 }, /does not start with sha256=/],
      [{ 'x-hub-signature-256': `SHA256=${hex256}` }, /sha256 in another case/],
      [{ 'x-hub-signature-256': `sha512=${hex256}` }, /another algorithm/],
      [{ 'x-hub-signature-256': `sha1=${hex1}` }, /another algorithm/],
      [{ 'x-hub-signature-256': `sha256:${hex256}` }, /does not start with sha256=/],
      [{ 'x-hub-signature': `sha256=${hex1}` }, /another algorithm/],
      [{ 'x-hub-signature': hex1 }, /does not start with sha1=/],
    ];
    for (const [headers, message] of cases) {
      const refusal = failure(verify(secret, body, headers));
      assert.equal(refusal.reason, 'malformed', JSON.stringify(headers));
      assert.match(refusal.message, message);
      assertClean(refusal.message, secret);
    }
  });

  it('HOOK-HDR-SIGNATURE-SHA256: a header that came twice is malformed, even when one of the values is right', async () => {
    const good = await octokitSign(secret, body);
    assert.equal(failure(verify(secret, body, { 'x-hub-signature-256': [good, good] })).reason, 'malformed');
    // node:http joins a repeated unknown header with ", ".
    assert.equal(failure(verify(secret, body, { 'x-hub-signature-256': `${good}, ${good}` })).reason, 'malformed');
    assert.equal(failure(verify(secret, body, { 'x-hub-signature-256': good, 'X-Hub-Signature-256': good })).reason, 'malformed');
  });

  it('HOOK-AUTH-HMAC: a body changed by one byte, or re-serialised, is a mismatch — the HMAC is over the raw bytes', async () => {
    const signature = await octokitSign(secret, body);
    const bytes = Buffer.from(body);
    for (const index of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[index] = changed[index]! ^ 0x01;
      const refusal = failure(verify(secret, changed, { 'x-hub-signature-256': signature }));
      assert.equal(refusal.reason, 'mismatch');
      assertClean(refusal.message, secret);
    }
    const spaced = '{ "action": "opened",\n  "number": 1 }';
    const spacedSignature = await octokitSign(secret, spaced);
    assert.equal(verify(secret, spaced, { 'x-hub-signature-256': spacedSignature }).ok, true);
    assert.equal(failure(verify(secret, JSON.stringify(JSON.parse(spaced)), { 'x-hub-signature-256': spacedSignature })).reason, 'mismatch');
  });

  it('HOOK-AUTH-HMAC: bytes that are not UTF-8 are signed and checked as they are', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const expected = `sha256=${createHmac('sha256', secret).update(bytes).digest('hex')}`;
    assert.equal(sign(secret, bytes), expected);
    assert.deepEqual(verify(secret, new Uint8Array(bytes), { 'x-hub-signature-256': expected }), { ok: true, algorithm: 'sha256', secretIndex: 0 });
    // Decoding first (U+FFFD for each bad byte) would change what is signed.
    assert.equal(failure(verify(secret, bytes.toString('utf8'), { 'x-hub-signature-256': expected })).reason, 'mismatch');
  });

  it('HOOK-AUTH-HMAC: several secrets for rotation — any may match and the result says which', async () => {
    const secrets = ['whsec-old-5b0e7a3c', 'whsec-new-9d42f1e6', 'whsec-next-3a8c6b07'];
    for (const [index, key] of secrets.entries()) {
      assert.deepEqual(verify(secrets, body, { 'x-hub-signature-256': await octokitSign(key, body) }), { ok: true, algorithm: 'sha256', secretIndex: index });
      assert.deepEqual(verify(secrets, body, { 'x-hub-signature': sha1Of(key, body) }), { ok: true, algorithm: 'sha1', secretIndex: index });
    }
    const refusal = failure(verify(secrets, body, { 'x-hub-signature-256': await octokitSign('none of them', body) }));
    assert.equal(refusal.reason, 'mismatch');
    assert.match(refusal.message, /any of the 3 secrets/);
    assertClean(refusal.message, ...secrets, 'none of them');
  });

  it('HOOK-AUTH-HMAC: no signature header is missing; an empty one is malformed', () => {
    const refusal = failure(verify(secret, body, { 'content-type': 'application/json' }));
    assert.equal(refusal.reason, 'missing');
    assert.match(refusal.message, /neither X-Hub-Signature-256 nor X-Hub-Signature/);
    assert.match(failure(verify(secret, body, {}, { allowSha1: false })).message, /no X-Hub-Signature-256 came/);
    assert.equal(failure(verify(secret, body, { 'x-hub-signature-256': undefined })).reason, 'missing');
    assert.equal(failure(verify(secret, body, { 'x-hub-signature-256': '' })).reason, 'malformed');
  });

  it('readSignatureClaim checks presence and form without the body', async () => {
    const claim = readSignatureClaim({ 'x-hub-signature-256': await octokitSign(secret, body) });
    assert.ok(claim.ok);
    assert.equal(claim.claim.algorithm, 'sha256');
    assert.equal(claim.claim.digest.length, 32);
    assert.equal(readSignatureClaim({ 'x-hub-signature': sha1Of(secret, body) }, { allowSha1: false }).ok, false);
  });

  it('wrong argument types are a UsageError naming the function, and no secret', () => {
    const calls: Array<[string, () => unknown]> = [
      ['sign', () => sign('', body)],
      ['sign', () => sign(undefined as never, body)],
      ['sign', () => sign(secret, 42 as never)],
      ['sign', () => sign(secret, undefined as never)],
      ['sign', () => sign(secret, body, 'md5' as never)],
      ['verify', () => verify([], body, {})],
      ['verify', () => verify([secret, ''], body, {})],
      ['verify', () => verify(42 as never, body, {})],
      ['verify', () => verify(secret, null as never, {})],
      ['verify', () => verify(secret, body, null as never)],
      ['verify', () => verify(secret, body, 'x-hub-signature-256: sha256=00' as never)],
      ['verify', () => verify(secret, body, {}, 'no sha1' as never)],
      ['verify', () => verify(secret, body, {}, { allowSha1: 'no' as never })],
    ];
    for (const [name, call] of calls) {
      assert.throws(call, (error: unknown) => {
        assert.ok(error instanceof UsageError, `${String(error)}`);
        assert.ok(error instanceof GantryError);
        assert.equal(error.exitCode, 2);
        assert.match(error.message, new RegExp(`^${name}: `));
        assert.ok(!error.message.includes(secret));
        return true;
      });
    }
  });
});

// What a caller notices beyond the common paths: the exact refusals, the header sources verify reads and the ones it
// does not, whitespace around a header's value, the streaming check's order and the first matching secret.
describe('webhooks: signature details a caller sees (HOOK-AUTH-HMAC)', () => {
  const good = sign(secret, body);
  const hex = good.slice('sha256='.length);

  it('MUTATION-WEBHOOKS: every wrong argument is refused with the name of the argument and what it takes', () => {
    const claim = { algorithm: 'sha256', digest: Buffer.alloc(32) } as const;
    const calls: Array<[() => unknown, string]> = [
      [() => sign('', body), 'sign: secret must be a non-empty string (the webhook secret), got an empty string'],
      [() => sign(secret, 42 as never), 'sign: body must be a Buffer, a Uint8Array or a string (the raw bytes received), got a number'],
      [() => sign(secret, body, 'md5' as never), "sign: algorithm must be 'sha256' or 'sha1', got a string"],
      [() => verify('', body, {}), 'verify: secret must be a non-empty string or an array of them (the webhook secrets), got an empty string'],
      [() => verify([], body, {}), 'verify: secrets must be a non-empty string or a non-empty array of them, got an array'],
      [() => verify(42 as never, body, {}), 'verify: secrets must be a non-empty string or a non-empty array of them, got a number'],
      [() => verify([secret, 7] as never, body, {}), 'verify: secrets[1] must be a non-empty string, got a number'],
      [() => verify(secret, body, null as never), 'verify: headers must be an object of request headers, got null'],
      [() => verify(secret, body, {}, 'no' as never), 'verify: options must be an object (or left out), got a string'],
      [() => verify(secret, body, {}, { allowSha1: 1 as never }), 'verify: options.allowSha1 must be true or false, got a number'],
      [() => readSignatureClaim([] as never), 'readSignatureClaim: headers must be an object of request headers, got an array'],
      [() => readSignatureClaim({}, 'no' as never), 'readSignatureClaim: options must be an object (or left out), got a string'],
      [() => readSignatureClaim({}, { allowSha1: 'no' as never }), 'readSignatureClaim: options.allowSha1 must be true or false, got a string'],
      [() => matchSignatureClaim([], body, claim), 'matchSignatureClaim: secrets must be a non-empty string or a non-empty array of them, got an array'],
      [
        () => matchSignatureClaim([secret], {} as never, claim),
        'matchSignatureClaim: body must be a Buffer, a Uint8Array or a string (the raw bytes received), got an object',
      ],
      [() => matchSignatureClaim([secret], body, null as never), 'matchSignatureClaim: claim must be a claim from readSignatureClaim, got null'],
      [
        () => matchSignatureClaim([secret], body, { ...claim, algorithm: 'md5' } as never),
        "matchSignatureClaim: algorithm must be 'sha256' or 'sha1', got a string",
      ],
      [() => matchSignatureClaim([secret], body, { ...claim, digest: hex } as never), 'matchSignatureClaim: claim.digest must be a Buffer, got a string'],
    ];
    for (const [call, message] of calls) {
      assert.throws(call, (error: unknown) => error instanceof UsageError && error.message === message, message);
    }
  });

  it('MUTATION-WEBHOOKS: a Uint8Array that views part of a larger buffer is signed and verified as the bytes it views', () => {
    const whole = Buffer.from(`xx${body}yy`);
    const view = new Uint8Array(whole.buffer, whole.byteOffset + 2, Buffer.byteLength(body));
    assert.equal(sign(secret, view), good);
    assert.deepEqual(verify(secret, view, { 'x-hub-signature-256': good }), { ok: true, algorithm: 'sha256', secretIndex: 0 });
  });

  it('HOOK-HDR-SIGNATURE-SHA256: a Fetch Headers object without the header is missing, not malformed', () => {
    assert.equal(failure(verify(secret, body, new Headers({ 'content-type': 'application/json' }) as never)).reason, 'missing');
    // Any source read through its get, a Map too: a name it lacks is missing.
    assert.equal(failure(verify(secret, body, new Map([['content-type', 'application/json']]) as never)).reason, 'missing');
    assert.equal(verify(secret, body, new Map([['x-hub-signature-256', good]]) as never).ok, true);
    assert.deepEqual(verify(secret, body, new Headers({ 'X-Hub-Signature': sha1Of(secret, body) }) as never), { ok: true, algorithm: 'sha1', secretIndex: 0 });
  });

  it('HOOK-HDR-SIGNATURE-SHA256: a plain object is read by its own keys — a header named get is a header, an inherited key is none', () => {
    const withGet = { get: () => 'sha256=' + '0'.repeat(64), 'x-hub-signature-256': good };
    assert.deepEqual(verify(secret, body, withGet as never), { ok: true, algorithm: 'sha256', secretIndex: 0 });
    const inherited = Object.create({ 'x-hub-signature-256': good }) as Record<string, string>;
    assert.equal(failure(verify(secret, body, inherited)).reason, 'missing');
  });

  it('HOOK-HDR-SIGNATURE-SHA256: spaces and tabs around the value are not part of it; inside the digest they are no hex digit', () => {
    for (const value of [` ${good}`, `${good} `, `\t ${good}  \t`, `  ${good}`]) {
      assert.deepEqual(verify(secret, body, { 'x-hub-signature-256': value }), { ok: true, algorithm: 'sha256', secretIndex: 0 }, JSON.stringify(value));
    }
    for (const value of [`sha256=${hex.slice(0, 32)} ${hex.slice(32)}`, ` sha256=${hex.slice(0, 32)} ${hex.slice(32)}\t`, `sha256= ${hex}`, `sha256 =${hex}`]) {
      assert.equal(failure(verify(secret, body, { 'x-hub-signature-256': value })).reason, 'malformed', JSON.stringify(value));
    }
  });

  it('HOOK-HDR-SIGNATURE-SHA256: each malformed value is refused with the reason it is malformed and the form it must have', () => {
    const form256 = 'it must be sha256= followed by 64 hex digits';
    const cases: Array<[unknown, string]> = [
      [[good, good], `X-Hub-Signature-256 is malformed: it came 2 times; ${form256}`],
      [42, `X-Hub-Signature-256 is malformed: it is not text; ${form256}`],
      [`${good},${good}`, `X-Hub-Signature-256 is malformed: it holds several values; ${form256}`],
      [hex, `X-Hub-Signature-256 is malformed: it does not start with sha256=; ${form256}`],
      [`=${hex}`, `X-Hub-Signature-256 is malformed: it does not start with sha256=; ${form256}`],
      [`a-very-long-name1=${hex}`, `X-Hub-Signature-256 is malformed: it does not start with sha256=; ${form256}`],
      [`sha_256=${hex}`, `X-Hub-Signature-256 is malformed: it does not start with sha256=; ${form256}`],
      [`x sha256=${hex}`, `X-Hub-Signature-256 is malformed: it does not start with sha256=; ${form256}`],
      [`Sha256=${hex}`, `X-Hub-Signature-256 is malformed: it names sha256 in another case, not sha256; ${form256}`],
      [`sha-512=${hex}`, `X-Hub-Signature-256 is malformed: it names another algorithm, not sha256; ${form256}`],
      [`a-long-name-of16=${hex}`, `X-Hub-Signature-256 is malformed: it names another algorithm, not sha256; ${form256}`],
      [`sha256=${hex.slice(1)}x`, `X-Hub-Signature-256 is malformed: the digest holds a character that is not a hex digit; ${form256}`],
      [`sha256=x${hex.slice(1)}`, `X-Hub-Signature-256 is malformed: the digest holds a character that is not a hex digit; ${form256}`],
      [`sha256=${hex}${hex.slice(0, 2)}`, `X-Hub-Signature-256 is malformed: the digest has 66 hex digits; ${form256}`],
    ];
    for (const [value, message] of cases) {
      const refusal = failure(verify(secret, body, { 'x-hub-signature-256': value as string }));
      assert.deepEqual(refusal, { ok: false, reason: 'malformed', message }, JSON.stringify(value));
    }
    assert.deepEqual(failure(verify(secret, body, { 'x-hub-signature': 'sha1=zz' })), {
      ok: false,
      reason: 'malformed',
      message: 'X-Hub-Signature is malformed: the digest holds a character that is not a hex digit; it must be sha1= followed by 40 hex digits',
    });
  });

  it('HOOK-HDR-SIGNATURE-SHA256: every hex digit, either case, reads as the bytes it encodes', () => {
    const digest = Buffer.from('0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789abcdef0123', 'hex');
    for (const value of [digest.toString('hex'), digest.toString('hex').toUpperCase()]) {
      const claim = readSignatureClaim({ 'x-hub-signature-256': `sha256=${value}` });
      assert.ok(claim.ok, value);
      assert.deepEqual(claim.claim, { algorithm: 'sha256', digest });
    }
  });

  it('HOOK-HDR-SIGNATURE-SHA1: the refusals say which header came and what to set', () => {
    assert.deepEqual(failure(verify(secret, body, { 'x-hub-signature': sha1Of(secret, body) }, { allowSha1: false })), {
      ok: false,
      reason: 'sha1-refused',
      message:
        'only X-Hub-Signature (SHA-1) came, and SHA-1 signatures are refused here (allowSha1: false); the platform sends X-Hub-Signature-256 with every delivery of a webhook that has a secret',
    });
    assert.deepEqual(failure(verify(secret, body, {})), {
      ok: false,
      reason: 'missing',
      message: 'the delivery is not signed: neither X-Hub-Signature-256 nor X-Hub-Signature came; set the same secret on the webhook and here',
    });
    assert.deepEqual(failure(verify(secret, body, {}, { allowSha1: false })), {
      ok: false,
      reason: 'missing',
      message: 'the delivery is not signed: no X-Hub-Signature-256 came; set the same secret on the webhook and here',
    });
    assert.deepEqual(readSignatureClaim({ 'x-hub-signature': sha1Of(secret, body) }), {
      ok: true,
      claim: { algorithm: 'sha1', digest: Buffer.from(sha1Of(secret, body).slice(5), 'hex') },
    });
  });

  it('HOOK-AUTH-HMAC: a mismatch names the header and how many secrets were tried', () => {
    assert.deepEqual(failure(verify(secret, body, { 'x-hub-signature-256': sign('other', body) })), {
      ok: false,
      reason: 'mismatch',
      message:
        "X-Hub-Signature-256 does not match the body with the secret: the body was changed on the way, or the webhook's secret is not one of those given",
    });
    assert.match(
      failure(verify([secret, 'b'], body, { 'x-hub-signature': sha1Of('other', body) })).message,
      /^X-Hub-Signature does not match the body with any of the 2 secrets:/,
    );
  });

  it('HOOK-AUTH-HMAC: the same secret given twice matches as the first; a claim whose digest has the wrong length is a mismatch, never thrown on', () => {
    assert.deepEqual(verify(['a', secret, secret], body, { 'x-hub-signature-256': good }), { ok: true, algorithm: 'sha256', secretIndex: 1 });
    assert.deepEqual(verify([secret, secret], body, { 'x-hub-signature-256': good }), { ok: true, algorithm: 'sha256', secretIndex: 0 });
    const short = { algorithm: 'sha256' as const, digest: Buffer.from(hex.slice(0, 40), 'hex') };
    assert.equal(failure(matchSignatureClaim([secret], body, short)).reason, 'mismatch');
  });

  it('HOOK-AUTH-HMAC: requestSignatureClaim reads node:http headers — an array is each value, the sha1 header only when allowed', () => {
    const twice = requestSignatureClaim({ 'x-hub-signature-256': [good, good] } as never, true);
    assert.deepEqual(twice, {
      ok: false,
      reason: 'malformed',
      message: 'X-Hub-Signature-256 is malformed: it came 2 times; it must be sha256= followed by 64 hex digits',
    });
    assert.deepEqual(requestSignatureClaim({ 'x-hub-signature-256': good }, true), {
      ok: true,
      claim: { algorithm: 'sha256', digest: Buffer.from(hex, 'hex') },
    });
    assert.equal(requestSignatureClaim({ 'x-hub-signature': sha1Of(secret, body) }, true).ok, true);
    assert.deepEqual(requestSignatureClaim({ 'x-hub-signature': sha1Of(secret, body) }, false).ok, false);
    assert.equal((requestSignatureClaim({}, true) as { reason: string }).reason, 'missing');
  });

  it('HOOK-AUTH-HMAC: signatureCheck hashes the chunks in order, and is read once', () => {
    const claim = readSignatureClaim({ 'x-hub-signature-256': good });
    assert.ok(claim.ok);
    const check = signatureCheck(['other', secret], claim.claim);
    const bytes = Buffer.from(body);
    check.update(bytes.subarray(0, 10));
    check.update(bytes.subarray(10));
    assert.deepEqual(check.result(), { ok: true, algorithm: 'sha256', secretIndex: 1 });
    const misuse = (message: string) => (error: unknown) =>
      error instanceof UsageError && error.message === message && error.code === 'INVALID_ARGUMENT' && error.exitCode === 2;
    assert.throws(() => check.update(bytes), misuse('signatureCheck: update after result'));
    assert.throws(() => check.result(), misuse('signatureCheck: result called twice'));
  });
});
