import assert from 'node:assert/strict';
import { webhookEvents } from '../../lib/webhooks/catalogue.js';
import { deliveryBodyPayload } from '../../lib/webhooks/delivery.js';
import { WebhookDeliveryError } from '../../lib/webhooks/errors.js';
import { scanJsonObject } from '../../lib/webhooks/json-scan.js';
import { checkPayload } from '../../lib/webhooks/payload.js';
import { nearJson } from './arbitraries.js';
import { check, fc, fromAlphabet, typed } from './fc.js';

const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/x-www-form-urlencoded',
    'Application/JSON; charset="UTF-8"',
    'application/json;charset=latin1',
    'text/plain',
    ';',
    '',
    'application/json; charset',
  ),
  fromAlphabet(['application/json', 'application/x-www-form-urlencoded', ';', ' ', '=', 'charset', '"', 'utf-8', 'x'], 6),
);
const formBody = fc
  .array(
    fc.tuple(
      fc.constantFrom('payload', 'pay%6Coad', 'other', '', 'payload+'),
      fc.oneof(nearJson.map(encodeURIComponent), nearJson, fromAlphabet(['%', '%2', '%zz', '+', '&', '=', '%7B%7D', '%C3'], 6)),
    ),
    { maxLength: 3 },
  )
  .map((fields) => fields.map(([k, v]) => `${k}=${v}`).join('&'));
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)),
  nearJson.map((t) => Buffer.from(t)),
  formBody.map((t) => Buffer.from(t, 'latin1')),
);
const jsonObject = fc
  .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 })
  .map((o) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>);

describe("PROP-WEBHOOK-DELIVERY: a delivery's body, JSON or form, read as the receiver reads it (HOOK-DEL-REQUEST, HOOK-DEL-EXAMPLE-BODY, HOOK-HDR-CONTENT-TYPE)", () => {
  it('PROP-WEBHOOK-DELIVERY: deliveryBodyPayload answers an object or a WebhookDeliveryError, whatever the Content-Type and bytes', () => {
    check(
      fc.tuple(fc.option(contentType, { nil: undefined }), bytes),
      ([type, body]) => {
        const answer = typed(() => deliveryBodyPayload(type, body, 'd-1'));
        if (answer.ok) assert.ok(answer.value !== null && typeof answer.value === 'object' && !Array.isArray(answer.value));
        else assert.ok(answer.error instanceof WebhookDeliveryError, answer.error.constructor.name);
      },
      800,
    );
  });

  it('PROP-WEBHOOK-DELIVERY: a payload printed as a JSON body or as a form (among other fields) reads back equal (HOOK-DEL-REQUEST)', () => {
    const other = fc.array(fc.tuple(fc.constantFrom('a', 'b c', 'é'), fc.string({ maxLength: 6 })), { maxLength: 2 });
    check(fc.tuple(jsonObject, other, fc.boolean()), ([payload, fields, form]) => {
      const text = JSON.stringify(payload);
      if (!form) {
        assert.deepEqual(deliveryBodyPayload('application/json', Buffer.from(text)), payload);
        return;
      }
      const body = new URLSearchParams([...fields, ['payload', text]]).toString();
      assert.deepEqual(deliveryBodyPayload('application/x-www-form-urlencoded', Buffer.from(body, 'latin1')), payload);
    });
  });

  it('PROP-WEBHOOK-DELIVERY: scanJsonObject names members only of a text JSON.parse reads as that object, and of every printed object', () => {
    check(
      fc.oneof(
        nearJson,
        jsonObject.map((o) => JSON.stringify(o)),
        jsonObject.map((o) => ` \n${JSON.stringify(o, null, 2)}\t`),
      ),
      (text) => {
        const raw = Buffer.from(text);
        const members = scanJsonObject(raw);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          assert.equal(members, undefined, 'members of a text JSON.parse refuses');
          return;
        }
        const isObject = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
        if (!isObject) return assert.equal(members, undefined);
        assert.notEqual(members, undefined, 'a JSON object the scan refused');
        const keys = members!.map((m) => JSON.parse(raw.subarray(m.keyStart, m.keyEnd).toString()) as string);
        assert.deepEqual([...new Set(keys)].sort(), Object.keys(parsed as object).sort());
        for (const m of members!) JSON.parse(raw.subarray(m.start, m.end).toString());
      },
      800,
    );
  });

  it('PROP-WEBHOOK-DELIVERY: checkPayload never throws on any JSON value, for every catalogued event and unknown ones', () => {
    const names = [...webhookEvents.map((e) => e.name), 'no_such_event', ''];
    check(
      fc.tuple(fc.constantFrom(...names), fc.oneof(jsonObject, fc.jsonValue({ maxDepth: 2 }))),
      ([event, payload]) => {
        const answer = typed(() => checkPayload(event, payload));
        if (answer.ok && !answer.value.ok) assert.ok(answer.value.message.length > 0);
      },
      500,
    );
  });
});
