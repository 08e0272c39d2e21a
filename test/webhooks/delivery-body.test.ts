// A delivery's body read as the receiver reads it, called in process (no socket needed): deliveryBodyPayload — the
// media type, the JSON or form body, the object — and the options deliveryPayloadReader checks once. Each refusal is
// held to what a sender is told: its reason, status, message, hint and the headers of the answer.
import assert from 'node:assert/strict';
import { UsageError } from '../../lib/errors.js';
import { deliveryBodyPayload, deliveryPayloadReader } from '../../lib/webhooks/delivery.js';
import { WebhookDeliveryError } from '../../lib/webhooks/errors.js';

const object = { action: 'opened', number: 1 };
const json = JSON.stringify(object);

function refusal(call: () => unknown): WebhookDeliveryError {
  try {
    call();
  } catch (error) {
    assert.ok(error instanceof WebhookDeliveryError, String(error));
    return error;
  }
  assert.fail('expected a WebhookDeliveryError');
}

const form = (text: string) => Buffer.from(text, 'latin1');

describe('webhooks: a delivery body read as the receiver reads it (HOOK-DEL-REQUEST, HOOK-HDR-CONTENT-TYPE)', () => {
  describe('HOOK-HDR-CONTENT-TYPE: the media type', () => {
    it('HOOK-HDR-CONTENT-TYPE: JSON and form, any case, with spaces and parameters, and a charset that is UTF-8 or ASCII', () => {
      const types = [
        'application/json',
        ' application/json ',
        'APPLICATION/JSON',
        'application/json;charset=utf-8',
        'application/json; charset=UTF8',
        'application/json; charset="utf-8"',
        'application/json; Charset = us-ascii',
        'application/json; foo=bar; charset=utf-8',
        'application/json; boundary',
      ];
      for (const type of types) assert.deepEqual(deliveryBodyPayload(type, Buffer.from(json)), object, type);
      const body = form(`payload=${encodeURIComponent(json)}`);
      for (const type of ['application/x-www-form-urlencoded', 'Application/X-WWW-Form-Urlencoded; charset=utf-8']) {
        assert.deepEqual(deliveryBodyPayload(type, body), object, type);
      }
      // A form read as JSON, or JSON as a form, is refused: the media type decides how the bytes are read.
      assert.equal(refusal(() => deliveryBodyPayload('application/json', body)).reason, 'malformed-json');
      assert.equal(refusal(() => deliveryBodyPayload('application/x-www-form-urlencoded', Buffer.from(json))).reason, 'missing-form-payload');
    });

    it('HOOK-HDR-CONTENT-TYPE: none, another type or another charset is 415, saying why, with Accept-Post, and the connection closes', () => {
      const cases: Array<[string | undefined, string]> = [
        [undefined, 'no Content-Type came'],
        ['', 'the Content-Type is not a media type a delivery has'],
        ['text/json', 'the Content-Type is not a media type a delivery has'],
        ['application/json-seq', 'the Content-Type is not a media type a delivery has'],
        ['application/json; charset=latin1', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; CHARSET=utf-16', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; charset', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; charset="utf-8', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; charset=utf-8"', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; charset=x"utf-8"', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; charset=utf-8; charset=latin1', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; charset = latin1', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; charset=utf-8""', 'the Content-Type names a charset other than UTF-8'],
        ['application/json; charset=""utf-8', 'the Content-Type names a charset other than UTF-8'],
      ];
      for (const [type, why] of cases) {
        const error = refusal(() => deliveryBodyPayload(type, Buffer.from(json), 'guid-1'));
        assert.equal(error.reason, 'unsupported-media-type', String(type));
        assert.equal(error.status, 415);
        assert.equal(error.message, `${why}: a delivery is application/json or application/x-www-form-urlencoded (HOOK-HDR-CONTENT-TYPE)`, String(type));
        assert.equal(error.hint, "set the webhook's content type to json or form");
        assert.deepEqual({ ...error.headers }, { connection: 'close', 'accept-post': 'application/json, application/x-www-form-urlencoded' });
        assert.equal(error.deliveryId, 'guid-1');
      }
    });
  });

  describe('HOOK-DEL-EXAMPLE-BODY: a JSON body', () => {
    it('HOOK-DEL-EXAMPLE-BODY: UTF-8 is read as UTF-8, a leading byte order mark is dropped, other bytes are refused', () => {
      assert.deepEqual(deliveryBodyPayload('application/json', Buffer.from('{"title":"é ☃ 😀"}')), { title: 'é ☃ 😀' });
      const bom = Buffer.from([0xef, 0xbb, 0xbf]);
      assert.deepEqual(deliveryBodyPayload('application/json', Buffer.concat([bom, Buffer.from(json)])), object);
      assert.deepEqual(deliveryBodyPayload('application/json', Buffer.concat([bom, Buffer.from('{"a":"é"}')])), { a: 'é' });
      // A byte order mark alone leaves no JSON; one in the middle is a character JSON does not allow there.
      assert.match(refusal(() => deliveryBodyPayload('application/json', bom)).message, /^the JSON body is not valid JSON: at line 1, column 1 it expected/);
      assert.equal(refusal(() => deliveryBodyPayload('application/json', Buffer.concat([Buffer.from(' '), bom, Buffer.from(json)]))).reason, 'malformed-json');
      assert.equal(refusal(() => deliveryBodyPayload('application/json', Buffer.from([0xef, 0xbb]))).reason, 'malformed-json');
      const latin1 = refusal(() => deliveryBodyPayload('application/json', Buffer.from('{"a":"\xe9"}', 'latin1'), 'guid-2'));
      assert.equal(latin1.message, 'the JSON body is not valid UTF-8');
      assert.equal(latin1.status, 400);
      assert.equal(latin1.deliveryId, 'guid-2');
    });

    it('HOOK-DEL-EXAMPLE-BODY: only the three bytes EF BB BF are a byte order mark — a mark alone leaves nothing; a character sharing two of its bytes is no mark', () => {
      const expectedValue = 'a JSON value: an object {…}, an array […], a string in double quotes, a number, true, false or null';
      assert.equal(
        refusal(() => deliveryBodyPayload('application/json', Buffer.from([0xef, 0xbb, 0xbf]))).message,
        `the JSON body is not valid JSON: at line 1, column 1 it expected ${expectedValue} and found the end of the input`,
      );
      // U+2EFF, U+F03F and U+FEC0 are E2 BB BF, EF 80 BF and EF BB 80: no mark, so the body starts with a character JSON does not allow.
      for (const text of ['\u2EFF{}', '\uF03F{}', '\uFEC0{}']) {
        assert.equal(
          refusal(() => deliveryBodyPayload('application/json', Buffer.from(text))).message,
          `the JSON body is not valid JSON: at line 1, column 1 it expected ${expectedValue} and found a non-ASCII character`,
          JSON.stringify(text),
        );
      }
      // 22 C2 BF 22: its third byte is the mark's last.
      assert.equal(
        refusal(() => deliveryBodyPayload('application/json', Buffer.from('"¿"'))).message,
        'the JSON body is JSON but a string, not an object: a payload is an object (HOOK-DEL-EXAMPLE-BODY)',
      );
      assert.equal(refusal(() => deliveryBodyPayload('application/json', Buffer.from([0xef, 0xbb]))).message, 'the JSON body is not valid UTF-8');
    });

    it('HOOK-DEL-EXAMPLE-BODY: JSON that does not parse is refused where it breaks, without quoting the body', () => {
      const error = refusal(() => deliveryBodyPayload('application/json', Buffer.from('{\n "secret-ish": 1,\n}'), 'guid-3'));
      assert.equal(error.reason, 'malformed-json');
      assert.match(error.message, /^the JSON body is not valid JSON: at line 3, column 1 it expected .+ and found .+$/);
      assert.ok(!error.message.includes('secret-ish'));
      assert.equal(error.deliveryId, 'guid-3');
    });

    it('HOOK-DEL-EXAMPLE-BODY: JSON that is not an object is refused naming what it is', () => {
      const cases: Array<[string, string]> = [
        ['null', 'null'],
        ['[{}]', 'an array'],
        ['"push"', 'a string'],
        ['42', 'a number'],
        ['true', 'a boolean'],
      ];
      for (const [text, kind] of cases) {
        const error = refusal(() => deliveryBodyPayload('application/json', Buffer.from(text), 'guid-4'));
        assert.equal(error.reason, 'payload-not-object', text);
        assert.equal(error.message, `the JSON body is JSON but ${kind}, not an object: a payload is an object (HOOK-DEL-EXAMPLE-BODY)`);
        assert.equal(error.deliveryId, 'guid-4');
      }
      const inForm = refusal(() => deliveryBodyPayload('application/x-www-form-urlencoded', form('payload=%5B%5D')));
      assert.equal(inForm.message, "the form's payload field is JSON but an array, not an object: a payload is an object (HOOK-DEL-EXAMPLE-BODY)");
    });
  });

  describe('HOOK-DEL-REQUEST: a form body', () => {
    it('HOOK-DEL-REQUEST: the payload field is found by its decoded name, its value decoded with + as a space; empty and other fields are skipped', () => {
      const value = encodeURIComponent(JSON.stringify({ title: 'a b+c' }));
      const expected = { title: 'a b+c' };
      const bodies = [
        `payload=${value}`,
        `&&payload=${value}&`,
        `pay%6Coad=${value}`,
        `%zz=1&payload=${value}&x=%E9`,
        `a=1&payload=${value.replace(/%20/g, '+')}&b`,
        `x=a b~&payload=${value}\r\n`,
        `x=\ty&payload=${value}`,
      ];
      for (const body of bodies) assert.deepEqual(deliveryBodyPayload('application/x-www-form-urlencoded', form(body)), expected, body);
      assert.deepEqual(deliveryBodyPayload('application/x-www-form-urlencoded', form('payload=%7B%22a%22%3A%22x+y%22%7D')), { a: 'x y' });
      // `payload` alone, without `=`, is the field with an empty value: not JSON.
      const bare = refusal(() => deliveryBodyPayload('application/x-www-form-urlencoded', form('payload&x=1')));
      assert.equal(bare.reason, 'malformed-json');
      assert.match(bare.message, /^the form's payload field is not valid JSON/);
      assert.match(bare.message, /found the end of the input$/);
      // A value may hold `=`: only the first one ends the name.
      assert.deepEqual(deliveryBodyPayload('application/x-www-form-urlencoded', form(`payload=${encodeURIComponent('{"a":"=x"}').replace(/%3D/g, '=')}`)), {
        a: '=x',
      });
    });

    it('HOOK-DEL-REQUEST: a form with bytes no URL-encoded form has, no payload, two, or one that is not UTF-8 is refused saying which', () => {
      const payload = `payload=${encodeURIComponent(json)}`;
      const cases: Array<[Buffer, string, string]> = [
        [form(`${payload}&x=\x7f`), 'malformed-form', 'the form body holds bytes a URL-encoded form cannot have (non-ASCII or control characters)'],
        [form(`${payload}&x=\x1f`), 'malformed-form', 'the form body holds bytes a URL-encoded form cannot have (non-ASCII or control characters)'],
        [form(`${payload}&x=\x00`), 'malformed-form', 'the form body holds bytes a URL-encoded form cannot have (non-ASCII or control characters)'],
        [form(`${payload}&x=\xe9`), 'malformed-form', 'the form body holds bytes a URL-encoded form cannot have (non-ASCII or control characters)'],
        [form('payload=%E9%7B%7D'), 'malformed-form', "the form's payload field is not valid percent-encoded UTF-8"],
        [form('payload=%7B%7D%'), 'malformed-form', "the form's payload field is not valid percent-encoded UTF-8"],
        [form(''), 'missing-form-payload', 'the form body has no payload field: a form delivery is payload=<the JSON payload>'],
        [
          form('payloads=%7B%7D&Payload=%7B%7D&=%7B%7D'),
          'missing-form-payload',
          'the form body has no payload field: a form delivery is payload=<the JSON payload>',
        ],
        [form(`${payload}&${payload}&${payload}`), 'duplicate-form-payload', 'the form body has 3 payload fields; a delivery has one'],
        [form(`${payload}&payload`), 'duplicate-form-payload', 'the form body has 2 payload fields; a delivery has one'],
      ];
      for (const [body, reason, message] of cases) {
        const error = refusal(() => deliveryBodyPayload('application/x-www-form-urlencoded', body, 'guid-5'));
        assert.deepEqual([error.reason, error.status, error.message, error.deliveryId], [reason, 400, message, 'guid-5'], body.toString('latin1'));
      }
    });
  });

  it('MUTATION-WEBHOOKS: deliveryPayloadReader checks its options once, naming each wrong one', () => {
    const cases: Array<[unknown, string]> = [
      [undefined, 'readDelivery: options must be an object ({ secrets, allowSha1?, maxBytes?, requireSignature? }), got nothing'],
      [{}, 'readDelivery: options.secrets must be an array of the webhook secrets (empty only with requireSignature: false), got nothing'],
      [{ secrets: ['a', ''] }, 'readDelivery: options.secrets[1] must be a non-empty string, got an empty string'],
      [{ secrets: ['a'], allowSha1: 'no' }, 'readDelivery: options.allowSha1 must be true or false, got a string'],
      [{ secrets: ['a'], requireSignature: 1 }, 'readDelivery: options.requireSignature must be true or false, got a number'],
      [{ secrets: ['a'], maxBytes: 0 }, 'readDelivery: options.maxBytes must be a positive whole number of bytes, got a number'],
      [{ secrets: ['a'], maxBytes: -1 }, 'readDelivery: options.maxBytes must be a positive whole number of bytes, got a number'],
      [{ secrets: ['a'], maxBytes: 1.5 }, 'readDelivery: options.maxBytes must be a positive whole number of bytes, got a number'],
      [{ secrets: ['a'], maxBytes: Infinity }, 'readDelivery: options.maxBytes must be a positive whole number of bytes, got a number'],
      [{ secrets: ['a'], maxBytes: '10' }, 'readDelivery: options.maxBytes must be a positive whole number of bytes, got a string'],
      [{ secrets: [], requireSignature: true }, "readDelivery: options.requireSignature is true but options.secrets is empty: give the webhook's secret"],
    ];
    for (const [options, message] of cases) {
      assert.throws(
        () => deliveryPayloadReader(options as never),
        (error: unknown) => error instanceof UsageError && error.message === message,
        message,
      );
    }
    for (const options of [
      { secrets: [] },
      { secrets: [], requireSignature: false },
      { secrets: ['a'], maxBytes: 1 },
      { secrets: ['a'], allowSha1: false, requireSignature: true },
    ]) {
      assert.equal(typeof deliveryPayloadReader(options), 'function', JSON.stringify(options));
    }
  });
});
