// readDelivery and deliveryPayloadReader on a real http.IncomingMessage whose body the test pushes piece by piece, in
// process: the test decides what has arrived when — the large-body buffer taken while a body is read and given back
// after it, a body longer or shorter than its Content-Length (node:http's parser never hands over one, a request made
// by hand can), a sender going away with or without an error, the cap passed while streaming — and the options and
// sendRefusal's arguments that take no socket.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { mock } from 'node:test';
import { UsageError } from '../../lib/errors.js';
import {
  deliveryPayloadReader,
  dropSpareBuffer,
  readDelivery,
  sendRefusal,
  spareBufferBytes,
  type Delivery,
  type DeliveryPayload,
} from '../../lib/webhooks/delivery.js';
import { WebhookDeliveryError } from '../../lib/webhooks/errors.js';

const MiB = 1024 * 1024;
const secret = 'whsec_q8Vt3LxR2mN7cK5pZ9wJ';
const read = deliveryPayloadReader({ secrets: [secret] });

/** A JSON object of exactly `size` bytes. */
function jsonOf(size: number, fill = 'x'): Buffer {
  return Buffer.from(`{"pad":"${fill.repeat(size - 10)}"}`);
}

function headersFor(body: Buffer, extra: Record<string, string | string[] | undefined> = {}): Record<string, string | string[]> {
  const headers: Record<string, string | string[] | undefined> = {
    'x-platform-hook-id': '292430182',
    'x-platform-event': 'push',
    'x-platform-delivery': 'guid-fed-1',
    'user-agent': 'Platform-Hookshot/044aadd',
    'content-type': 'application/json',
    'content-length': String(body.length),
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    ...extra,
  };
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string | string[]] => entry[1] !== undefined));
}

/** A request as node:http makes it, with nothing of its body yet: the test pushes it. */
function request(headers: Record<string, string | string[]>, method = 'POST'): IncomingMessage {
  const message = new IncomingMessage(new Socket());
  message.method = method;
  message.headers = headers;
  return message;
}

const arrived = () => new Promise((resolve) => setImmediate(resolve));

/** `body` in `pieces` pieces of about equal size. */
function piecesOf(body: Buffer, pieces: number): Buffer[] {
  const size = Math.ceil(body.length / pieces);
  const out: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) out.push(body.subarray(at, at + size));
  return out;
}

/** The value a promise gives, or what it rejects with. */
function settled<T>(promise: Promise<T>): Promise<T | unknown> {
  return promise.then(
    (value) => value,
    (error: unknown) => error,
  );
}

/** Reads `body` with `reader`, pushing its first piece, then (once it arrived) calling `during`, then the rest. */
async function readInPieces<T>(reader: (message: IncomingMessage) => Promise<T>, body: Buffer, during: () => void = () => undefined): Promise<T> {
  const message = request(headersFor(body));
  const outcome = reader(message);
  const [first, ...rest] = piecesOf(body, 4);
  message.push(first);
  await arrived();
  during();
  for (const piece of rest) message.push(piece);
  message.push(null);
  return outcome;
}

function refusal(outcome: unknown, reason: string): WebhookDeliveryError {
  assert.ok(outcome instanceof WebhookDeliveryError, `expected a refusal, got ${String(outcome)}`);
  assert.equal(outcome.reason, reason, outcome.message);
  return outcome;
}

describe('webhooks: a delivery fed to readDelivery piece by piece (HOOK-DEL-REQUEST, HOOK-HDR-CONTENT-LENGTH, HOOK-LIM-PAYLOAD-25MB)', function () {
  this.timeout(20_000);

  describe('HOOK-LIM-PAYLOAD-25MB: one buffer for large bodies, reused from one to the next', () => {
    beforeEach(() => dropSpareBuffer());
    after(() => dropSpareBuffer());

    it('HOOK-LIM-PAYLOAD-25MB: a large body read in pieces leaves its buffer as the spare; one smaller, or as large, takes it while it is read', async () => {
      assert.equal(spareBufferBytes(), 0);
      const first = jsonOf(2 * MiB);
      const payload = (await readInPieces(
        (message) => read(message, false),
        first,
        () => assert.equal(spareBufferBytes(), 0),
      )) as DeliveryPayload;
      assert.equal((payload.payload.pad as string).length, 2 * MiB - 10);
      assert.equal(spareBufferBytes(), 2 * MiB, 'the buffer is kept for the next large body');
      for (const size of [MiB + MiB / 2, 2 * MiB]) {
        const body = jsonOf(size, 'y');
        const next = (await readInPieces(
          (message) => read(message, false),
          body,
          () => assert.equal(spareBufferBytes(), 0, `a body of ${size} bytes took the spare`),
        )) as DeliveryPayload;
        assert.equal(next.payload.pad, 'y'.repeat(size - 10));
        assert.equal(spareBufferBytes(), 2 * MiB, 'given back');
      }
    });

    it('HOOK-LIM-PAYLOAD-25MB: a larger body allocates its own, which becomes the spare; of two read at once the larger buffer stays', async () => {
      await readInPieces((message) => read(message, false), jsonOf(MiB + 10));
      assert.equal(spareBufferBytes(), MiB + 10);
      const larger = jsonOf(2 * MiB, 'z');
      const payload = (await readInPieces(
        (message) => read(message, false),
        larger,
        () => assert.equal(spareBufferBytes(), MiB + 10, 'a smaller spare is not taken'),
      )) as DeliveryPayload;
      assert.equal(payload.payload.pad, 'z'.repeat(2 * MiB - 10));
      assert.equal(spareBufferBytes(), 2 * MiB, 'the larger buffer replaced the smaller');
      // Two at once: the first takes the spare, the second (smaller) allocates; both given back, the larger stays.
      const big = jsonOf(2 * MiB, 'a');
      const small = jsonOf(MiB + 20, 'b');
      const [bigMessage, smallMessage] = [request(headersFor(big)), request(headersFor(small))];
      const outcomes = [read(bigMessage, false), read(smallMessage, false)];
      bigMessage.push(big.subarray(0, 100));
      smallMessage.push(small.subarray(0, 100));
      await arrived();
      assert.equal(spareBufferBytes(), 0);
      bigMessage.push(big.subarray(100));
      bigMessage.push(null);
      await outcomes[0];
      assert.equal(spareBufferBytes(), 2 * MiB);
      smallMessage.push(small.subarray(100));
      smallMessage.push(null);
      assert.equal(((await outcomes[1]) as DeliveryPayload).payload.pad, 'b'.repeat(MiB + 10));
      assert.equal(spareBufferBytes(), 2 * MiB, 'the smaller buffer did not replace the larger');
    });

    it('HOOK-LIM-PAYLOAD-25MB: from exactly 1 MiB a body is read into the reusable buffer; below it, or in one piece, or longer than declared, none is kept', async () => {
      await readInPieces((message) => read(message, false), jsonOf(MiB - 1));
      assert.equal(spareBufferBytes(), 0, 'a body under 1 MiB');
      await readInPieces((message) => read(message, false), jsonOf(MiB));
      assert.equal(spareBufferBytes(), MiB, 'a body of exactly 1 MiB');
      await readInPieces((message) => read(message, false), jsonOf(2 * MiB));
      await readInPieces(
        (message) => read(message, false),
        jsonOf(MiB - 1),
        () => assert.equal(spareBufferBytes(), 2 * MiB, 'a body under 1 MiB does not take the spare'),
      );
      await readInPieces(
        (message) => read(message, false),
        jsonOf(MiB),
        () => assert.equal(spareBufferBytes(), 0, 'a body of exactly 1 MiB takes the spare'),
      );
      assert.equal(spareBufferBytes(), 2 * MiB);
      dropSpareBuffer();
      const whole = jsonOf(2 * MiB);
      const message = request(headersFor(whole));
      const outcome = read(message, false);
      message.push(whole);
      message.push(null);
      assert.equal(((await outcome) as DeliveryPayload).contentLength, 2 * MiB);
      assert.equal(spareBufferBytes(), 0, 'a body that came in one piece is that piece');
      const long = request(headersFor(jsonOf(MiB), { 'content-length': String(MiB) }));
      const refused = settled(read(long, false));
      long.push(jsonOf(MiB + 10));
      long.push(null);
      refusal(await refused, 'content-length-mismatch');
      assert.equal(spareBufferBytes(), 0, 'a first piece longer than declared is kept as it is');
    });

    it('HOOK-LIM-PAYLOAD-25MB: a raw body handed out (readDelivery) never takes the spare nor becomes it', async () => {
      await readInPieces((message) => read(message, false), jsonOf(2 * MiB));
      const body = jsonOf(MiB + 100, 'r');
      const delivery = (await readInPieces(
        (message) => readDelivery(message, { secrets: [secret] }),
        body,
        () => assert.equal(spareBufferBytes(), 2 * MiB, 'a raw body does not take the spare'),
      )) as Delivery;
      assert.ok(delivery.rawBody.equals(body));
      dropSpareBuffer();
      await readInPieces((message) => readDelivery(message, { secrets: [secret] }), jsonOf(2 * MiB));
      assert.equal(spareBufferBytes(), 0, 'a raw body is not given back');
    });

    it('HOOK-LIM-PAYLOAD-25MB: the spare is let go 30 s after its last use', async () => {
      mock.timers.enable({ apis: ['setTimeout'] });
      try {
        await readInPieces((message) => read(message, false), jsonOf(MiB));
        assert.equal(spareBufferBytes(), MiB);
        mock.timers.tick(29_999);
        assert.equal(spareBufferBytes(), MiB);
        mock.timers.tick(1);
        assert.equal(spareBufferBytes(), 0);
      } finally {
        mock.timers.reset();
      }
    });
  });

  describe('HOOK-HDR-CONTENT-LENGTH: the body against its declared length, and a sender going away', () => {
    it('HOOK-HDR-CONTENT-LENGTH: a body longer or shorter than its Content-Length is refused as content-length-mismatch (400), saying both', async () => {
      for (const [declared, pieces] of [
        [10, ['{"a":', '1234', '5678', '9}']],
        [10, ['{"a":1}']],
        [7, ['{"a":1}', '  ']],
      ] as const) {
        const message = request(headersFor(Buffer.from('{"a":1}'), { 'content-length': String(declared) }));
        const outcome = settled(read(message, false));
        for (const piece of pieces) message.push(Buffer.from(piece));
        message.push(null);
        const error = refusal(await outcome, 'content-length-mismatch');
        const total = pieces.join('').length;
        assert.deepEqual(
          [error.status, error.message, error.deliveryId],
          [400, `the body has ${total} bytes but Content-Length said ${declared} (HOOK-HDR-CONTENT-LENGTH)`, 'guid-fed-1'],
        );
      }
    });

    it('HOOK-HDR-CONTENT-LENGTH: a body without Content-Length (chunked) is read whole, in pieces', async () => {
      const body = Buffer.from(JSON.stringify({ action: 'created', list: [1, 2, 3] }));
      const message = request(headersFor(body, { 'content-length': undefined }));
      const outcome = read(message, false);
      for (const piece of piecesOf(body, 3)) message.push(piece);
      message.push(null);
      const delivery = await outcome;
      assert.deepEqual([delivery.contentLength, delivery.payload], [body.length, { action: 'created', list: [1, 2, 3] }]);
    });

    it('HOOK-HDR-CONTENT-LENGTH: a Content-Length that is no number of bytes (up to 16 digits) is 400 invalid-header, before the body', async () => {
      const body = Buffer.from('{"a":1}');
      for (const length of ['abc', '7x', 'x7', '+7', '7 ', '1'.repeat(17)]) {
        const error = refusal(await settled(read(request(headersFor(body, { 'content-length': length })), false)), 'invalid-header');
        assert.deepEqual(
          [error.status, error.message, error.header, error.deliveryId, error.headers.connection],
          [400, 'Content-Length is not a number of bytes (HOOK-HDR-CONTENT-LENGTH)', 'content-length', 'guid-fed-1', 'close'],
          length,
        );
      }
      const message = request(headersFor(body, { 'content-length': '0'.repeat(15) + '7' }));
      const outcome = read(message, false);
      message.push(body);
      message.push(null);
      assert.equal((await outcome).contentLength, 7);
    });

    it('HOOK-HDR-CONTENT-LENGTH: a sender going away mid-body is aborted (exit code 3): its error is the cause; a close without one has none', async () => {
      const body = jsonOf(100);
      for (const cause of [new Error('read ECONNRESET'), undefined]) {
        const message = request(headersFor(body));
        const outcome = settled(read(message, false));
        message.push(body.subarray(0, 30));
        await arrived();
        message.destroy(cause);
        const error = refusal(await outcome, 'aborted');
        assert.deepEqual(
          [error.status, error.exitCode, error.message, error.cause],
          [400, 3, 'the sender closed the connection after 30 of 100 bytes of the body', cause],
          String(cause),
        );
      }
    });

    it('HOOK-LIM-PAYLOAD-25MB: past the cap while streaming, reading stops — nothing listens for more, the stream stays paused — and the answer closes the connection', async () => {
      const capped = deliveryPayloadReader({ secrets: [secret], maxBytes: 100 });
      const message = request(headersFor(jsonOf(120), { 'content-length': undefined }));
      const outcome = settled(capped(message, false));
      message.push(jsonOf(120).subarray(0, 60));
      message.push(jsonOf(120).subarray(60));
      const error = refusal(await outcome, 'payload-too-large');
      assert.deepEqual(
        [error.status, error.message, error.hint, { ...error.headers }],
        [
          413,
          "the delivery's body passed the 100 bytes cap while it streamed in (HOOK-LIM-PAYLOAD-25MB); reading stopped after 120 bytes",
          'the platform never delivers a payload over 25 MB; this did not come from it, or the cap (maxBytes) is set below its payloads',
          { connection: 'close' },
        ],
      );
      assert.equal(message.listenerCount('data'), 0);
      assert.equal(message.isPaused(), true);
    });

    it('HOOK-LIM-PAYLOAD-25MB: a Content-Length over the cap is refused unread, in MiB when the cap is whole MiB, with the hint', async () => {
      const capped = deliveryPayloadReader({ secrets: [secret], maxBytes: MiB });
      const error = refusal(await settled(capped(request(headersFor(jsonOf(MiB + 1))), false)), 'payload-too-large');
      assert.deepEqual(
        [error.message, error.hint, error.headers.connection],
        [
          `the delivery declares ${MiB + 1} bytes (Content-Length), over the 1 MiB cap (HOOK-LIM-PAYLOAD-25MB); nothing of it was read`,
          'the platform never delivers a payload over 25 MB; this did not come from it, or the cap (maxBytes) is set below its payloads',
          'close',
        ],
      );
    });
  });

  describe('HOOK-DEL-REQUEST: the request, its headers and the payload', () => {
    it('HOOK-HDR-EVENT: a header given as a list (as a request made by hand may have it) is its values joined with ", ", as node:http joins a repeated one', async () => {
      const body = Buffer.from('{"a":1}');
      const message = request(headersFor(body, { 'x-platform-event': ['push', 'push'] }));
      const outcome = settled(read(message, false));
      message.push(body);
      message.push(null);
      const error = refusal(await outcome, 'invalid-header');
      assert.equal(error.header, 'x-platform-event');
      const joined = request(headersFor(body, { 'user-agent': ['Platform-Hookshot/1', 'x'] }));
      const read2 = read(joined, false);
      joined.push(body);
      joined.push(null);
      assert.equal((await read2).userAgent, 'Platform-Hookshot/1, x');
    });

    it('MUTATION-WEBHOOKS: a request read in part, ended, or set to text, and options asking for a signature without a secret, are UsageErrors (INVALID_ARGUMENT)', async () => {
      const body = Buffer.from('{"a":1}');
      const partly = request(headersFor(body, { 'content-length': '14' }));
      partly.push(body);
      partly.read();
      assert.equal(partly.readableEnded, false);
      const ended = request(headersFor(body));
      ended.push(null);
      ended.resume();
      await arrived();
      const text = request(headersFor(body));
      text.setEncoding('utf8');
      for (const [message, said] of [
        [partly, /already read/],
        [ended, /already read/],
        [text, /has an encoding set/],
      ] as const) {
        const error = await settled(readDelivery(message, { secrets: [secret] }));
        assert.ok(error instanceof UsageError, String(error));
        assert.match(error.message, said);
        assert.equal(error.code, 'INVALID_ARGUMENT');
      }
      assert.throws(
        () => deliveryPayloadReader({ secrets: [], requireSignature: true }),
        (error: unknown) => error instanceof UsageError && error.code === 'INVALID_ARGUMENT',
      );
    });

    it('HOOK-LIM-PAYLOAD-25MB: a large form-typed body whose bytes are a JSON object is a form without payload, also when only checked', async () => {
      const body = jsonOf(300 * 1024);
      for (const checkOnly of [true, false]) {
        const message = request(headersFor(body, { 'content-type': 'application/x-www-form-urlencoded' }));
        const outcome = settled(read(message, checkOnly));
        message.push(body);
        message.push(null);
        refusal(await outcome, 'missing-form-payload');
      }
    });

    it('HOOK-LIM-PAYLOAD-25MB: the members of a checked-only payload are plain properties, as JSON.parse makes them', async () => {
      const body = Buffer.from(JSON.stringify({ action: 'opened', pad: 'x'.repeat(300 * 1024) }));
      const message = request(headersFor(body));
      const outcome = read(message, true);
      message.push(body);
      message.push(null);
      const checked = await outcome;
      assert.equal(checked.checkOnly, true);
      assert.deepEqual(Object.getOwnPropertyDescriptor(checked.payload, 'action'), { value: 'opened', writable: true, enumerable: true, configurable: true });
      checked.payload.action = 'closed';
      assert.equal(checked.payload.action, 'closed');
    });

    it("HOOK-DEL-EXAMPLE-BODY: a form delivery whose payload field is no JSON is refused naming the form's payload field", async () => {
      const body = Buffer.from('payload=%7B%22a%22');
      const message = request(headersFor(body, { 'content-type': 'application/x-www-form-urlencoded' }));
      const outcome = settled(read(message, false));
      message.push(body);
      message.push(null);
      assert.match(refusal(await outcome, 'malformed-json').message, /^the form's payload field is not valid JSON: at line 1, column 5 /);
    });
  });

  it('MUTATION-WEBHOOKS: sendRefusal takes a linger of 0 ms and 0 bytes, and refuses an endless one', () => {
    const error = new WebhookDeliveryError({ reason: 'malformed-json', message: 'the JSON body is not valid JSON' });
    const response = () => new ServerResponse(request({}));
    assert.doesNotThrow(() => sendRefusal(response(), error, { lingerMs: 0, lingerBytes: 0 }));
    assert.throws(
      () => sendRefusal(response(), error, { lingerMs: Infinity }),
      (failure: unknown) => failure instanceof UsageError && failure.message === 'sendRefusal: options.lingerMs must be a number of milliseconds, got a number',
    );
  });
});
