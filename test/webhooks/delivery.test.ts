// readDelivery against real sockets: a node:http server on 127.0.0.1 reads each delivery with readDelivery and
// answers refusals with sendRefusal; the clients are node:http and raw TCP sockets (for bodies that lie about their
// length and for slow streams). Signatures come from an independent signer: @octokit/webhooks-methods for sha256,
// node:crypto written out here for sha1.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { UsageError } from '../../lib/errors.js';
import {
  deliveryPayloadReader,
  readDelivery,
  sendRefusal,
  type Delivery,
  type DeliveryPayload,
  type ReadDeliveryOptions,
  type SendRefusalOptions,
} from '../../lib/webhooks/delivery.js';
import { sign } from '../../lib/webhooks/verify.js';
import { WebhookDeliveryError } from '../../lib/webhooks/errors.js';

const MiB = 1024 * 1024;
const secret = 'whsec-7f3a2c91d4e8';
/** A canary in every body: no refusal message may quote it. */
const canary = 'CANARY-body-content-91b2';
const payload = { action: 'opened', issue: { number: 1, title: canary }, repository: { full_name: 'octo/hello' }, sender: { login: 'octocat' } };
const json = JSON.stringify(payload);

function sha1Of(key: string, bytes: string | Buffer): string {
  return `sha1=${createHmac('sha1', key).update(bytes).digest('hex')}`;
}

/** The headers the platform sends (GitHub's documented example, renamed), signed both ways over `body`. */
async function platformHeaders(body: string, key = secret): Promise<Record<string, string>> {
  return {
    'x-platform-hook-id': '292430182',
    'x-platform-event': 'issues',
    'x-platform-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    'x-platform-hook-installation-target-type': 'repository',
    'x-platform-hook-installation-target-id': '79929171',
    'user-agent': 'Platform-Hookshot/044aadd',
    'content-type': 'application/json',
    // @octokit/webhooks-methods refuses to sign an empty payload; node:crypto signs that one.
    'x-hub-signature-256': body === '' ? `sha256=${createHmac('sha256', key).update('').digest('hex')}` : await octokitSign(key, body),
    'x-hub-signature': sha1Of(key, body),
  };
}

interface Outcome {
  delivery?: Delivery;
  error?: unknown;
  /** The server socket's bytes read when readDelivery settled, and when the socket closed. */
  bytesReadAtOutcome: number;
  bytesReadAtClose: Promise<number>;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('webhooks: readDelivery over real sockets (HOOK-DEL-REQUEST)', function () {
  this.timeout(60_000);
  let server: http.Server;
  let port: number;
  let options: ReadDeliveryOptions;
  const outcomes: Outcome[] = [];
  const waiting: Array<(outcome: Outcome) => void> = [];

  function record(outcome: Outcome) {
    const waiter = waiting.shift();
    if (waiter) waiter(outcome);
    else outcomes.push(outcome);
  }

  function nextOutcome(): Promise<Outcome> {
    const ready = outcomes.shift();
    return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
  }

  before(async () => {
    server = http.createServer((request, response) => {
      const socket = request.socket;
      const bytesReadAtClose = new Promise<number>((resolve) => socket.once('close', () => resolve(socket.bytesRead)));
      readDelivery(request, options).then(
        (delivery) => {
          record({ delivery, bytesReadAtOutcome: socket.bytesRead, bytesReadAtClose });
          const summary = { id: delivery.id, event: delivery.event, signature: delivery.signature, contentLength: delivery.contentLength };
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify(summary));
        },
        (error: unknown) => {
          record({ error, bytesReadAtOutcome: socket.bytesRead, bytesReadAtClose });
          if (error instanceof WebhookDeliveryError) sendRefusal(response, error);
          else {
            response.writeHead(500);
            response.end(String(error));
          }
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    options = { secrets: [secret] };
    outcomes.length = 0;
  });

  /** POST (or `method`) through node:http; Content-Length is set from the body unless `headers` says otherwise. */
  function send(body: string | Buffer, headers: Record<string, string | undefined>, method = 'POST'): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const clean = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
      const request = http.request(
        { host: '127.0.0.1', port, method, path: '/hooks', headers: { 'content-length': String(Buffer.byteLength(body)), ...clean }, agent: false },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  /** A delivery that must be refused: the answer's status and reason, and the error readDelivery rejected with. */
  async function refused(
    body: string | Buffer,
    headers: Record<string, string | undefined>,
    status: number,
    reason: string,
    method = 'POST',
  ): Promise<{ answer: Answer; error: WebhookDeliveryError; outcome: Outcome }> {
    const [answer, outcome] = await Promise.all([send(body, headers, method), nextOutcome()]);
    assert.ok(outcome.error instanceof WebhookDeliveryError, `expected a refusal, got ${outcome.error ? String(outcome.error) : 'a delivery'}`);
    const error = outcome.error;
    assert.equal(error.reason, reason, error.message);
    assert.equal(error.status, status);
    assert.equal(answer.status, status);
    assert.equal(JSON.parse(answer.body).reason, reason);
    assertClean(error.message);
    assertClean(answer.body);
    return { answer, error, outcome };
  }

  async function accepted(body: string | Buffer, headers: Record<string, string | undefined>): Promise<Delivery> {
    const [answer, outcome] = await Promise.all([send(body, headers), nextOutcome()]);
    assert.equal(outcome.error, undefined, `refused: ${String(outcome.error)}`);
    assert.equal(answer.status, 200);
    return outcome.delivery!;
  }

  function assertClean(text: string) {
    assert.ok(!text.includes(canary), `quotes the body: ${text}`);
    assert.ok(!text.includes(secret), `quotes the secret: ${text}`);
    assert.doesNotMatch(text, /[0-9a-f]{32,}/, `quotes a digest: ${text}`);
  }

  describe('accepted deliveries', () => {
    it('HOOK-DEL-REQUEST, HOOK-HDR-HOOK-ID, HOOK-HDR-EVENT, HOOK-HDR-DELIVERY, HOOK-HDR-USER-AGENT, HOOK-HDR-TARGET-TYPE, HOOK-HDR-TARGET-ID, HOOK-HDR-CONTENT-TYPE, HOOK-HDR-CONTENT-LENGTH, HOOK-HDR-SIGNATURE-SHA256: a signed JSON delivery with every header', async () => {
      const delivery = await accepted(json, await platformHeaders(json));
      assert.deepEqual(
        { ...delivery, rawBody: delivery.rawBody.toString('utf8') },
        {
          id: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
          event: 'issues',
          hookId: '292430182',
          targetType: 'repository',
          targetId: '79929171',
          userAgent: 'Platform-Hookshot/044aadd',
          contentType: 'json',
          contentLength: Buffer.byteLength(json),
          rawBody: json,
          payload,
          signature: 'sha256',
        },
      );
    });

    it('HOOK-HDR-SIGNATURE-SHA1: only X-Hub-Signature came — accepted (allowSha1 by default), signature sha1', async () => {
      const headers = await platformHeaders(json);
      delete headers['x-hub-signature-256'];
      assert.equal((await accepted(json, headers)).signature, 'sha1');
    });

    it('HOOK-AUTH-HMAC: rotation — the second of two secrets matches', async () => {
      options = { secrets: ['whsec-old-5b0e7a3c', 'whsec-new-9d42f1e6'] };
      const delivery = await accepted(json, await platformHeaders(json, 'whsec-new-9d42f1e6'));
      assert.equal(delivery.signature, 'sha256');
    });

    it('HOOK-HDR-TARGET-TYPE, HOOK-HDR-TARGET-ID: read when present, not required (logged only)', async () => {
      const headers: Record<string, string | undefined> = await platformHeaders(json);
      headers['x-platform-hook-installation-target-type'] = undefined;
      headers['x-platform-hook-installation-target-id'] = undefined;
      const delivery = await accepted(json, headers);
      assert.equal(delivery.targetType, undefined);
      assert.equal(delivery.targetId, undefined);
    });

    it('HOOK-HDR-CONTENT-TYPE: parameters and case — application/json; charset=utf-8 and Application/JSON are JSON', async () => {
      for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset="UTF-8"']) {
        const delivery = await accepted(json, { ...(await platformHeaders(json)), 'content-type': type });
        assert.equal(delivery.contentType, 'json', type);
      }
    });

    it('HOOK-DEL-REQUEST: a form body is payload=<json>; other fields are ignored; the signature covers the raw form bytes', async () => {
      const form = `ref=refs%2Fheads%2Fmain&payload=${encodeURIComponent(json).replace(/%20/g, '+')}&extra=%ZZ&flag`;
      const headers = { ...(await platformHeaders(form)), 'content-type': 'application/x-www-form-urlencoded' };
      const delivery = await accepted(form, headers);
      assert.equal(delivery.contentType, 'form');
      assert.deepEqual(delivery.payload, payload);
      assert.equal(delivery.rawBody.toString('latin1'), form);
      assert.equal(delivery.signature, 'sha256');
    });

    it('HOOK-AUTH-HMAC: no secrets and requireSignature false — accepted unsigned, signature none', async () => {
      options = { secrets: [], requireSignature: false };
      const headers: Record<string, string | undefined> = await platformHeaders(json);
      headers['x-hub-signature-256'] = undefined;
      headers['x-hub-signature'] = undefined;
      assert.equal((await accepted(json, headers)).signature, 'none');
      options = { secrets: [secret], requireSignature: false };
      assert.equal((await accepted(json, headers)).signature, 'none');
      // A signature that came is still checked when a secret is known.
      await refused(json, { ...headers, 'x-hub-signature-256': await octokitSign('wrong', json) }, 401, 'signature-mismatch');
    });

    it('HOOK-LIM-PAYLOAD-25MB: a body of exactly the cap is read; one byte more is refused', async () => {
      options = { secrets: [secret], maxBytes: 4096 };
      const fill = (size: number) => JSON.stringify({ pad: 'x'.repeat(size - 10) });
      const exact = fill(4096);
      assert.equal(exact.length, 4096);
      assert.equal((await accepted(exact, await platformHeaders(exact))).contentLength, 4096);
      const over = fill(4097);
      await refused(over, await platformHeaders(over), 413, 'payload-too-large');
    });
  });

  describe('refused: method and headers, before the body is read', () => {
    it('HOOK-DEL-REQUEST: a method other than POST is 405 with Allow: POST', async () => {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const { answer } = await refused(method === 'GET' ? '' : json, await platformHeaders(json), 405, 'method-not-allowed', method);
        assert.equal(answer.headers.allow, 'POST');
      }
    });

    it('HOOK-HDR-EVENT, HOOK-HDR-DELIVERY, HOOK-HDR-HOOK-ID, HOOK-HDR-USER-AGENT: each missing header is 400 naming it', async () => {
      const names: Record<string, string> = {
        'x-platform-event': 'X-Platform-Event',
        'x-platform-delivery': 'X-Platform-Delivery',
        'x-platform-hook-id': 'X-Platform-Hook-ID',
        'user-agent': 'User-Agent',
      };
      for (const [header, title] of Object.entries(names)) {
        const headers: Record<string, string | undefined> = { ...(await platformHeaders(json)), [header]: undefined };
        const { error } = await refused(json, headers, 400, 'missing-header');
        assert.equal(error.header, header);
        assert.match(error.message, new RegExp(`lacks ${title}:`));
      }
      const { error } = await refused(
        json,
        { ...(await platformHeaders(json)), 'x-platform-event': undefined, 'x-platform-delivery': undefined },
        400,
        'missing-header',
      );
      assert.match(error.message, /lacks X-Platform-Event, X-Platform-Delivery: the platform sends them/);
    });

    it('HOOK-HDR-USER-AGENT: a User-Agent not starting with Platform-Hookshot/ is 400', async () => {
      for (const agent of [
        'GitHub-Hookshot/044aadd',
        'curl/8.5.0',
        'platform-hookshot/044aadd',
        'Platform-Hookshot',
        'Platform-Hookshot 1',
        'Mozilla/5.0 Platform-Hookshot/1',
      ]) {
        const { error } = await refused(json, { ...(await platformHeaders(json)), 'user-agent': agent }, 400, 'bad-user-agent');
        if (!'Platform-Hookshot/'.includes(agent)) assert.ok(!error.message.includes(agent), 'the user agent is not quoted');
      }
    });

    it('HOOK-HDR-EVENT, HOOK-HDR-DELIVERY, HOOK-HDR-HOOK-ID: values that are no event name, GUID or id are 400', async () => {
      const cases: Array<[string, string]> = [
        ['x-platform-event', 'Push Event'],
        ['x-platform-event', 'issues.opened'],
        ['x-platform-delivery', 'a b'],
        ['x-platform-delivery', 'x'.repeat(129)],
        ['x-platform-hook-id', '12/34'],
      ];
      for (const [header, value] of cases) {
        const { error } = await refused(json, { ...(await platformHeaders(json)), [header]: value }, 400, 'invalid-header');
        assert.equal(error.header, header);
      }
    });

    it('HOOK-HDR-CONTENT-TYPE: any other media type, none, or another charset is 415 with Accept-Post', async () => {
      for (const type of ['text/plain', 'application/jsonx', 'multipart/form-data; boundary=x', 'application/json; charset=iso-8859-1', undefined]) {
        const { answer } = await refused(json, { ...(await platformHeaders(json)), 'content-type': type }, 415, 'unsupported-media-type');
        assert.equal(answer.headers['accept-post'], 'application/json, application/x-www-form-urlencoded');
      }
    });

    it('HOOK-AUTH-HMAC: an unsigned delivery is 401 signature-missing when a secret is set', async () => {
      const headers: Record<string, string | undefined> = { ...(await platformHeaders(json)), 'x-hub-signature-256': undefined, 'x-hub-signature': undefined };
      const { outcome } = await refused(json, headers, 401, 'signature-missing');
      // Refused from the headers: the body was never read into a delivery.
      assert.ok(outcome.bytesReadAtOutcome < 4096);
    });

    it('HOOK-HDR-SIGNATURE-SHA1: only X-Hub-Signature with allowSha1 false is 401 sha1-refused, with its own message', async () => {
      options = { secrets: [secret], allowSha1: false };
      const headers: Record<string, string | undefined> = { ...(await platformHeaders(json)), 'x-hub-signature-256': undefined };
      const { error } = await refused(json, headers, 401, 'sha1-refused');
      assert.match(error.message, /only X-Hub-Signature \(SHA-1\) came/);
      assert.match(error.hint ?? '', /allowSha1/);
    });

    it('HOOK-HDR-SIGNATURE-SHA256: a signature of the wrong length, with a non-hex digit or a wrong prefix is 401 signature-malformed', async () => {
      const good = await octokitSign(secret, json);
      const hex = good.slice(7);
      for (const value of [`sha256=${hex.slice(0, -2)}`, `sha256=${hex}ab`, `sha256=${hex.slice(0, -1)}x`, `sha1=${hex}`, hex, `sha256 ${hex}`]) {
        const { error } = await refused(json, { ...(await platformHeaders(json)), 'x-hub-signature-256': value }, 401, 'signature-malformed');
        assert.match(error.message, /X-Hub-Signature-256 is malformed/);
      }
    });
  });

  describe('refused: the signature and the body, after reading it', () => {
    it('HOOK-HDR-SIGNATURE-SHA256, HOOK-HDR-SIGNATURE-SHA1: a wrong sha256 beside a right sha1 is 401 — the sha256 header wins', async () => {
      const headers: Record<string, string> = { ...(await platformHeaders(json)), 'x-hub-signature-256': await octokitSign('not the secret', json) };
      assert.equal(headers['x-hub-signature'], sha1Of(secret, json));
      const { error } = await refused(json, headers, 401, 'signature-mismatch');
      assert.match(error.message, /X-Hub-Signature-256 does not match/);
    });

    it('HOOK-AUTH-HMAC: a body changed by one byte is 401 signature-mismatch', async () => {
      const headers = await platformHeaders(json);
      const changed = Buffer.from(json);
      changed[changed.length - 2] = changed[changed.length - 2]! ^ 0x20;
      await refused(changed, headers, 401, 'signature-mismatch');
    });

    it('HOOK-AUTH-HMAC: a signature made with a secret that is not among the secrets is 401', async () => {
      options = { secrets: ['whsec-old-5b0e7a3c', 'whsec-new-9d42f1e6'] };
      const { error } = await refused(json, await platformHeaders(json, 'a third secret'), 401, 'signature-mismatch');
      assert.match(error.message, /any of the 2 secrets/);
    });

    it('HOOK-DEL-EXAMPLE-BODY: malformed JSON is 400 saying where it breaks, without quoting it', async () => {
      const broken = `{"action":"opened","issue":{"title":"${canary}"},}`;
      const { error } = await refused(broken, await platformHeaders(broken), 400, 'malformed-json');
      assert.match(error.message, /^the JSON body is not valid JSON: at line 1, column \d+ it expected/);
      for (const body of ['', '{"a":', 'nul']) await refused(body, await platformHeaders(body), 400, 'malformed-json');
      const latin1 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]);
      const headers = { ...(await platformHeaders('')), 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(latin1).digest('hex')}` };
      const { error: notUtf8 } = await refused(latin1, headers, 400, 'malformed-json');
      assert.match(notUtf8.message, /not valid UTF-8/);
    });

    it('HOOK-DEL-EXAMPLE-BODY: JSON that is not an object (an array, a string, null) is 400', async () => {
      for (const body of ['[1,2]', '"push"', 'null', '42']) {
        const { error } = await refused(body, await platformHeaders(body), 400, 'payload-not-object');
        assert.match(error.message, /not an object/);
      }
    });

    it('HOOK-DEL-REQUEST: a form without payload, with two, or with a payload that is not a JSON object is 400', async () => {
      const form = (body: string) => ({ body, type: 'application/x-www-form-urlencoded' });
      const cases: Array<[ReturnType<typeof form>, string]> = [
        [form(`data=${encodeURIComponent(json)}&x=1`), 'missing-form-payload'],
        [form(''), 'missing-form-payload'],
        [form(`payload=${encodeURIComponent(json)}&payload=${encodeURIComponent(json)}`), 'duplicate-form-payload'],
        [form(`payload=${encodeURIComponent(json).slice(0, -3)}`), 'malformed-json'],
        [form('payload=%5B1%5D'), 'payload-not-object'],
        [form('payload=%E9%7B%7D'), 'malformed-form'],
        [form(json), 'missing-form-payload'],
      ];
      for (const [{ body, type }, reason] of cases) {
        await refused(body, { ...(await platformHeaders(body)), 'content-type': type }, 400, reason);
      }
      const raw = Buffer.concat([Buffer.from('payload='), Buffer.from('{"a":"é"}')]);
      const headers = {
        ...(await platformHeaders('')),
        'content-type': 'application/x-www-form-urlencoded',
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`,
      };
      await refused(raw, headers, 400, 'malformed-form');
    });
  });

  describe('HOOK-LIM-PAYLOAD-25MB: the cap, while streaming', () => {
    /** The raw head of a delivery; the body follows separately. */
    async function head(extra: string[]): Promise<string> {
      const headers = await platformHeaders(json);
      const lines = ['POST /hooks HTTP/1.1', 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), ...extra];
      return `${lines.join('\r\n')}\r\n\r\n`;
    }

    interface Stream {
      /** Body bytes handed to the socket when the first byte of the answer came. */
      sentAtAnswer: number | undefined;
      sent: number;
      finished: boolean;
      answer: string;
      status: number | undefined;
      peakArrayBuffers: number;
      peakHeap: number;
    }

    /**
     * Connects, sends `headText`, then `total` body bytes in `chunkBytes` pieces with a pause after each, stopping
     * when the answer arrives (or, with `ignoreAnswer`, only when the socket fails). Samples this process's memory
     * all along; one chunk buffer is reused, so the sender itself keeps nothing.
     */
    async function streamSlowly(
      headText: string,
      total: number,
      settings: { chunked: boolean; chunkBytes?: number; pauseMs?: number; ignoreAnswer?: boolean },
    ): Promise<Stream> {
      const chunkBytes = settings.chunkBytes ?? 64 * 1024;
      const chunk = Buffer.alloc(chunkBytes, 0x20);
      const base = process.memoryUsage();
      const result: Stream = { sentAtAnswer: undefined, sent: 0, finished: false, answer: '', status: undefined, peakArrayBuffers: 0, peakHeap: 0 };
      const sample = () => {
        const now = process.memoryUsage();
        result.peakArrayBuffers = Math.max(result.peakArrayBuffers, now.arrayBuffers - base.arrayBuffers);
        result.peakHeap = Math.max(result.peakHeap, now.heapUsed - base.heapUsed);
      };
      const sampler = setInterval(sample, 5);
      const socket: Socket = net.connect({ host: '127.0.0.1', port });
      let failed = false;
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.on('error', () => {
        failed = true;
      });
      socket.on('data', (data: Buffer) => {
        if (result.sentAtAnswer === undefined) result.sentAtAnswer = result.sent;
        result.answer += data.toString('latin1');
      });
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      socket.write(headText);
      try {
        while (result.sent < total && !failed && !socket.destroyed && (settings.ignoreAnswer || result.sentAtAnswer === undefined)) {
          const size = Math.min(chunkBytes, total - result.sent);
          const piece = size === chunkBytes ? chunk : chunk.subarray(0, size);
          const flushed = settings.chunked ? socket.write(`${size.toString(16)}\r\n`) && socket.write(piece) && socket.write('\r\n') : socket.write(piece);
          result.sent += size;
          if (!flushed) {
            await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed, sleep(10_000)]);
          }
          sample();
          await sleep(settings.pauseMs ?? 1);
        }
        if (result.sent >= total && !failed && !socket.destroyed) {
          result.finished = true;
          if (settings.chunked) socket.write('0\r\n\r\n');
        }
        await Promise.race([closed, sleep(5000)]);
      } finally {
        clearInterval(sampler);
        socket.destroy();
      }
      result.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(result.answer)?.[1]) || undefined;
      return result;
    }

    it('HOOK-LIM-PAYLOAD-25MB, HOOK-HDR-CONTENT-LENGTH: a 26 MiB body declared by Content-Length and sent slowly is 413 before it is read; memory flat', async () => {
      const total = 26 * MiB;
      const stream = await streamSlowly(await head([`Content-Length: ${total}`]), total, { chunked: false, pauseMs: 2 });
      const outcome = await nextOutcome();
      assert.ok(outcome.error instanceof WebhookDeliveryError);
      assert.equal(outcome.error.reason, 'payload-too-large');
      assert.match(outcome.error.message, /declares 27262976 bytes \(Content-Length\), over the 25 MiB cap/);
      assert.equal(stream.status, 413, stream.answer.slice(0, 200));
      assert.ok(stream.sentAtAnswer !== undefined && stream.sentAtAnswer < 6 * MiB, `the answer came after ${stream.sentAtAnswer} bytes had been sent`);
      assert.equal(stream.finished, false);
      assert.ok(outcome.bytesReadAtOutcome < 1 * MiB, `the server had read ${outcome.bytesReadAtOutcome} bytes when it refused`);
      const readInAll = await outcome.bytesReadAtClose;
      assert.ok(readInAll < 8 * MiB, `the server read ${readInAll} bytes in all`);
      assert.ok(stream.peakArrayBuffers < 8 * MiB, `buffers grew by ${stream.peakArrayBuffers} bytes`);
      assert.ok(stream.peakHeap < 16 * MiB, `the heap grew by ${stream.peakHeap} bytes`);
    });

    it('HOOK-LIM-PAYLOAD-25MB: a 26 MiB chunked body (no Content-Length) is 413 as soon as it passes 25 MiB, never read to its end', async () => {
      const total = 26 * MiB;
      const stream = await streamSlowly(await head(['Transfer-Encoding: chunked']), total, { chunked: true, pauseMs: 0 });
      const outcome = await nextOutcome();
      assert.ok(outcome.error instanceof WebhookDeliveryError);
      assert.equal(outcome.error.reason, 'payload-too-large');
      assert.match(outcome.error.message, /passed the 25 MiB cap while it streamed in/);
      assert.equal(stream.status, 413, stream.answer.slice(0, 200));
      assert.equal(stream.finished, false, 'the sender could not send all 26 MiB');
      // Read up to the cap and at most one socket read past it (plus the head and chunk framing).
      assert.ok(outcome.bytesReadAtOutcome <= 25 * MiB + 256 * 1024, `read ${outcome.bytesReadAtOutcome} bytes before refusing`);
      assert.ok(stream.sentAtAnswer !== undefined && stream.sentAtAnswer < total, `answered after ${stream.sentAtAnswer}`);
      // What was kept never passed the cap (no second copy either: the body is only joined once it is complete).
      assert.ok(stream.peakArrayBuffers < 25 * MiB + 8 * MiB, `buffers grew by ${stream.peakArrayBuffers} bytes`);
    });

    it('HOOK-LIM-PAYLOAD-25MB: with a 1 MiB cap, a 26 MiB chunked body streamed slowly is refused after 1 MiB, memory flat', async () => {
      options = { secrets: [secret], maxBytes: MiB };
      const total = 26 * MiB;
      const stream = await streamSlowly(await head(['Transfer-Encoding: chunked']), total, { chunked: true, pauseMs: 1 });
      const outcome = await nextOutcome();
      assert.ok(outcome.error instanceof WebhookDeliveryError);
      assert.equal(outcome.error.reason, 'payload-too-large');
      assert.equal(stream.status, 413);
      assert.ok(outcome.bytesReadAtOutcome < 2 * MiB, `read ${outcome.bytesReadAtOutcome} bytes before refusing`);
      assert.ok(stream.sentAtAnswer !== undefined && stream.sentAtAnswer < 6 * MiB, `answered after ${stream.sentAtAnswer}`);
      assert.ok((await outcome.bytesReadAtClose) < 12 * MiB);
      assert.ok(stream.peakArrayBuffers < 8 * MiB, `buffers grew by ${stream.peakArrayBuffers} bytes`);
    });

    it('HOOK-LIM-PAYLOAD-25MB: a sender that ignores the 413 and keeps sending is cut off — the server does not read its 26 MiB', async () => {
      const total = 26 * MiB;
      const stream = await streamSlowly(await head([`Content-Length: ${total}`]), total, { chunked: false, pauseMs: 0, ignoreAnswer: true });
      const outcome = await nextOutcome();
      assert.ok(outcome.error instanceof WebhookDeliveryError);
      assert.equal(stream.status, 413);
      assert.equal(stream.finished, false, 'the connection was closed before the sender was done');
      const readInAll = await outcome.bytesReadAtClose;
      assert.ok(readInAll < 16 * MiB, `the server read ${readInAll} bytes`);
    });

    it('HOOK-HDR-CONTENT-LENGTH: a Content-Length over the cap is 413 whatever follows (a lie of 30 MiB for 100 bytes)', async () => {
      const stream = await streamSlowly(await head([`Content-Length: ${30 * MiB}`]), 100, { chunked: false });
      const outcome = await nextOutcome();
      assert.ok(outcome.error instanceof WebhookDeliveryError);
      assert.equal(outcome.error.reason, 'payload-too-large');
      assert.equal(stream.status, 413);
    });

    it('HOOK-HDR-CONTENT-LENGTH: a Content-Length shorter than what is sent — the body is exactly what it declared, the rest is never part of it', async () => {
      const declared = Buffer.byteLength(json) - 10;
      // Signed over the declared bytes only: the signature verifies, so the body read was exactly those bytes, and
      // their JSON is cut short. What follows them is no part of this delivery (node:http parses it as a next
      // request and answers that garbage with its own 400).
      const headers = await platformHeaders(json.slice(0, declared));
      const lines = ['POST /hooks HTTP/1.1', 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${declared}`];
      const socket = net.connect({ host: '127.0.0.1', port });
      let answer = '';
      socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
      socket.on('error', () => undefined);
      socket.write(`${lines.join('\r\n')}\r\n\r\n${json}`);
      const outcome = await nextOutcome();
      await Promise.race([new Promise((resolve) => socket.once('close', resolve)), sleep(3000)]);
      socket.destroy();
      assert.ok(outcome.error instanceof WebhookDeliveryError);
      assert.equal(outcome.error.reason, 'malformed-json');
      assert.match(answer, /^HTTP\/1\.1 400 /);
    });

    it('HOOK-HDR-CONTENT-LENGTH: a Content-Length longer than what is sent, then the sender closes — refused as aborted, not waited on forever', async () => {
      const headers = await platformHeaders(json);
      const lines = [
        'POST /hooks HTTP/1.1',
        'Host: 127.0.0.1',
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
        `Content-Length: ${Buffer.byteLength(json) + 100}`,
      ];
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.on('error', () => undefined);
      socket.write(`${lines.join('\r\n')}\r\n\r\n${json}`);
      await sleep(100);
      socket.end();
      const outcome = await Promise.race([nextOutcome(), sleep(5000).then(() => undefined)]);
      socket.destroy();
      assert.ok(outcome, 'readDelivery settled');
      assert.ok(outcome.error instanceof WebhookDeliveryError, String(outcome.error));
      assert.equal(outcome.error.reason, 'aborted');
      assert.equal(outcome.error.exitCode, 3);
      assert.match(outcome.error.message, new RegExp(`after ${Buffer.byteLength(json)} of ${Buffer.byteLength(json) + 100} bytes`));
    });
  });

  describe('arguments', () => {
    it('wrong arguments are a UsageError naming readDelivery; a body already read cannot be verified', async () => {
      const bad: Array<[unknown, unknown, RegExp]> = [
        [undefined, { secrets: [secret] }, /^readDelivery: request must be an http.IncomingMessage/],
        [{}, { secrets: [secret] }, /^readDelivery: request must be an http.IncomingMessage/],
        ['x', 42, /^readDelivery: request must be/],
      ];
      for (const [request, opts, message] of bad) {
        await assert.rejects(readDelivery(request as never, opts as never), (error: unknown) => error instanceof UsageError && message.test(error.message));
      }
      // The rest with a real request, which the server below hands over.
      const probe = http.createServer(async (request, response) => {
        const results: string[] = [];
        for (const opts of [
          undefined,
          {},
          { secrets: 'one' },
          { secrets: [''] },
          { secrets: [], requireSignature: true },
          { secrets: [secret], maxBytes: 0 },
          { secrets: [secret], allowSha1: 'yes' },
        ]) {
          try {
            await readDelivery(request, opts as never);
            results.push('accepted');
          } catch (error) {
            results.push(error instanceof UsageError ? error.message : `not a UsageError: ${String(error)}`);
          }
        }
        request.resume();
        await new Promise((resolve) => request.once('end', resolve));
        try {
          await readDelivery(request, { secrets: [secret] });
          results.push('accepted');
        } catch (error) {
          results.push(error instanceof UsageError ? error.message : `not a UsageError: ${String(error)}`);
        }
        response.end(JSON.stringify(results));
      });
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      try {
        const probePort = (probe.address() as AddressInfo).port;
        const text = await new Promise<string>((resolve, reject) => {
          const request = http.request({ host: '127.0.0.1', port: probePort, method: 'POST', agent: false }, (response) => {
            let data = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (data += chunk));
            response.on('end', () => resolve(data));
          });
          request.on('error', reject);
          request.end(json);
        });
        const results = JSON.parse(text) as string[];
        assert.equal(results.length, 8);
        for (const result of results) assert.match(result, /^readDelivery: /);
        assert.match(results[4]!, /requireSignature is true but options.secrets is empty/);
        assert.match(results[7]!, /already read/);
      } finally {
        probe.closeAllConnections();
        await new Promise<void>((resolve) => probe.close(() => resolve()));
      }
    });
  });
});

// The receiver's reader (deliveryPayloadReader: options checked once, the payload without the raw bytes, large
// bodies only checked when no handler reads them, one large buffer reused) and sendRefusal's own arguments and answers.
describe('webhooks: deliveryPayloadReader and sendRefusal over real sockets (HOOK-DEL-REQUEST, HOOK-LIM-PAYLOAD-25MB)', function () {
  this.timeout(60_000);
  let server: http.Server;
  let port: number;
  let handle: (request: http.IncomingMessage, response: http.ServerResponse) => void;

  before(async () => {
    server = http.createServer((request, response) => handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Serves one delivery with `read`; resolves with what it gave or the error it threw, once answered. */
  async function serve<T>(read: (request: http.IncomingMessage) => Promise<T>, body: string | Buffer, headers: Record<string, string>): Promise<T | unknown> {
    const outcome = new Promise<T | unknown>((resolve) => {
      handle = (request, response) => {
        read(request).then(
          (value) => {
            resolve(value);
            response.end('ok');
          },
          (error: unknown) => {
            resolve(error);
            if (error instanceof WebhookDeliveryError) sendRefusal(response, error);
            else response.destroy();
          },
        );
      };
    });
    await new Promise<void>((resolve) => {
      const request = http.request(
        { host: '127.0.0.1', port, method: 'POST', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers }, agent: false },
        (response) => {
          response.resume();
          response.on('end', resolve);
          response.on('error', resolve);
        },
      );
      request.on('error', () => resolve());
      request.end(body);
    });
    return outcome;
  }

  async function headersFor(body: string | Buffer, type = 'application/json'): Promise<Record<string, string>> {
    return {
      'x-platform-hook-id': '292430182',
      'x-platform-event': 'push',
      'x-platform-delivery': 'guid-large-1',
      'user-agent': 'Platform-Hookshot/044aadd',
      'content-type': type,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    };
  }

  const reader = () => deliveryPayloadReader({ secrets: [secret] });

  it('HOOK-LIM-PAYLOAD-25MB: a JSON body of 256 KiB or more no handler reads is checked, not parsed — its root members as the catalogue check reads them', async () => {
    const big = { pad: 'x'.repeat(20_000) };
    const list = [{ a: 1 }, 'x'.repeat(20_000), null, 7, true, { b: 2 }, 's'];
    const exact = { p: 'x'.repeat(16_376) };
    assert.equal(JSON.stringify(exact).length, 16 * 1024);
    const above = { p: 'x'.repeat(16_377) };
    const payload = {
      action: 'opened',
      n: 1.5,
      s: 'str',
      small: { a: [1] },
      exact,
      above,
      big,
      list,
      sender: { login: 'octocat', pad: 'y'.repeat(20_000) },
      filler: 'z'.repeat(300_000),
    };
    const body = JSON.stringify(payload);
    const read = reader();
    const checked = (await serve((request) => read(request, true), body, await headersFor(body))) as DeliveryPayload;
    assert.ok(!(checked instanceof Error), String(checked));
    assert.deepEqual(checked, {
      id: 'guid-large-1',
      event: 'push',
      hookId: '292430182',
      targetType: undefined,
      targetId: undefined,
      userAgent: 'Platform-Hookshot/044aadd',
      contentType: 'json',
      contentLength: Buffer.byteLength(body),
      payload: { ...payload, above: {}, big: {}, list: [{}, {}, '', '', null, 0, 0] },
      signature: 'sha256',
      checkOnly: true,
    });
    // A handler that reads it gets all of it, parsed.
    const parsed = (await serve((request) => read(request, false), body, await headersFor(body))) as DeliveryPayload;
    assert.deepEqual(parsed.payload, payload);
    assert.equal(parsed.checkOnly, undefined);
    assert.equal('rawBody' in parsed, false);
  });

  it('HOOK-LIM-PAYLOAD-25MB: from exactly 256 KiB; a repeated key keeps its last value and "__proto__" stays a property, as JSON.parse reads them; a byte order mark is dropped', async () => {
    const read = reader();
    const text = (size: number, head = '') => {
      const shell = `{${head}"pad":""}`;
      return `{${head}"pad":"${'x'.repeat(size - shell.length)}"}`;
    };
    const at = text(256 * 1024);
    assert.equal(((await serve((request) => read(request, true), at, await headersFor(at))) as DeliveryPayload).checkOnly, true);
    const below = text(256 * 1024 - 1);
    assert.equal(((await serve((request) => read(request, true), below, await headersFor(below))) as DeliveryPayload).checkOnly, undefined);
    const odd = text(300_000, '"a":1,"a":2,"__proto__":{"x":1},');
    const checked = (await serve((request) => read(request, true), odd, await headersFor(odd))) as DeliveryPayload;
    assert.equal(checked.checkOnly, true);
    assert.equal(checked.payload.a, 2);
    assert.equal(Object.getPrototypeOf(checked.payload), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(checked.payload, '__proto__')?.value, { x: 1 });
    assert.deepEqual(Object.keys(checked.payload), ['a', '__proto__', 'pad']);
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(at)]);
    const bom = (await serve((request) => read(request, true), withBom, await headersFor(withBom))) as DeliveryPayload;
    assert.equal(bom.checkOnly, true);
    assert.equal((bom.payload.pad as string).length, 256 * 1024 - '{"pad":""}'.length);
  });

  it('HOOK-DEL-EXAMPLE-BODY: a large body that is no JSON object, or no UTF-8, is refused as the parse would refuse it; a large form is parsed', async () => {
    const read = reader();
    const array = `[${'1,'.repeat(150_000)}1]`;
    const notObject = await serve((request) => read(request, true), array, await headersFor(array));
    assert.ok(notObject instanceof WebhookDeliveryError);
    assert.equal(notObject.reason, 'payload-not-object');
    const latin1 = Buffer.from(`{"a":"${'\xe9'.repeat(300_000)}"}`, 'latin1');
    const notUtf8 = await serve((request) => read(request, true), latin1, await headersFor(latin1));
    assert.ok(notUtf8 instanceof WebhookDeliveryError);
    assert.equal(notUtf8.message, 'the JSON body is not valid UTF-8');
    const payload = { list: [{ a: 'x'.repeat(300_000) }] };
    const form = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const fromForm = (await serve((request) => read(request, true), form, await headersFor(form, 'application/x-www-form-urlencoded'))) as DeliveryPayload;
    assert.deepEqual(fromForm.payload, payload);
    assert.equal(fromForm.checkOnly, undefined);
  });

  it('HOOK-LIM-PAYLOAD-25MB: large bodies one after another, growing and shrinking, each arrive whole; a raw body handed out is never reused', async () => {
    const read = reader();
    const large = (size: number, fill: string) => JSON.stringify({ pad: fill.repeat(size) });
    const first = large(MiB + 100, 'a');
    const kept = (await serve((request) => readDelivery(request, { secrets: [secret] }), first, await headersFor(first))) as Delivery;
    assert.equal(kept.rawBody.toString('latin1'), first);
    for (const [size, fill] of [
      [MiB + 10, 'b'],
      [MiB + MiB / 2, 'c'],
      [MiB + 5, 'd'],
    ] as const) {
      const body = large(size, fill);
      const delivery = await serve((request) => read(request, size % 2 === 0), body, await headersFor(body));
      assert.ok(!(delivery instanceof Error), String(delivery));
      assert.equal(((delivery as DeliveryPayload).payload.pad as string).length, size);
      assert.ok(((delivery as DeliveryPayload).payload.pad as string).startsWith(fill.repeat(100)));
    }
    assert.equal(kept.rawBody.toString('latin1'), first, 'the raw body handed out is still its own');
  });

  it('HOOK-DEL-REQUEST: the refusals before the body name what is wrong, and which delivery', async () => {
    const read = reader();
    const body = JSON.stringify({ a: 1 });
    const base = await headersFor(body);
    const cases: Array<[Record<string, string>, string, string | undefined, string]> = [
      [
        { 'x-platform-event': '' },
        'missing-header',
        undefined,
        'the delivery lacks X-Platform-Event: the platform sends it with every delivery (HOOK-HDR-EVENT, HOOK-HDR-DELIVERY, HOOK-HDR-HOOK-ID, HOOK-HDR-USER-AGENT)',
      ],
      [{ 'x-platform-delivery': 'a b' }, 'invalid-header', undefined, 'X-Platform-Delivery is not a delivery GUID (letters, digits and - . _ :, at most 128)'],
      [{ 'x-platform-event': 'Push' }, 'invalid-header', 'guid-large-1', 'X-Platform-Event is not an event name (lower-case letters, digits and _)'],
      [{ 'x-platform-event': '1push' }, 'invalid-header', 'guid-large-1', 'X-Platform-Event is not an event name (lower-case letters, digits and _)'],
      [
        { 'x-platform-event': `a${'b'.repeat(100)}` },
        'invalid-header',
        'guid-large-1',
        'X-Platform-Event is not an event name (lower-case letters, digits and _)',
      ],
      [
        { 'x-platform-hook-id': '.1' },
        'invalid-header',
        'guid-large-1',
        'X-Platform-Hook-ID is not a webhook identifier (letters, digits and - . _ :, at most 128)',
      ],
      [
        { 'x-platform-hook-id': `1${'2'.repeat(128)}` },
        'invalid-header',
        'guid-large-1',
        'X-Platform-Hook-ID is not a webhook identifier (letters, digits and - . _ :, at most 128)',
      ],
      [
        { 'x-platform-hook-id': '1 2' },
        'invalid-header',
        'guid-large-1',
        'X-Platform-Hook-ID is not a webhook identifier (letters, digits and - . _ :, at most 128)',
      ],
      [
        { 'user-agent': 'x Platform-Hookshot/1' },
        'bad-user-agent',
        'guid-large-1',
        "the User-Agent does not start with Platform-Hookshot/, as every delivery's does (HOOK-HDR-USER-AGENT)",
      ],
    ];
    for (const [change, reason, deliveryId, message] of cases) {
      const error = await serve((request) => read(request, false), body, { ...base, ...change });
      assert.ok(error instanceof WebhookDeliveryError, JSON.stringify(change));
      assert.deepEqual(
        [error.reason, error.deliveryId, error.message, error.headers.connection],
        [reason, deliveryId, message, 'close'],
        JSON.stringify(change),
      );
    }
    // The longest names and identifiers, and every character they may hold, are taken.
    const taken: Array<Record<string, string>> = [
      { 'x-platform-event': `a${'b_9'.repeat(33)}` },
      { 'x-platform-hook-id': `Z${'a.-_:9'.repeat(21)}x` },
      { 'x-platform-delivery': `0${'A'.repeat(127)}` },
      { 'user-agent': 'Platform-Hookshot/' },
    ];
    for (const change of taken) {
      const delivery = await serve((request) => read(request, false), body, { ...base, ...change });
      assert.ok(!(delivery instanceof Error), `${JSON.stringify(change)}: ${String(delivery)}`);
    }
  });

  it('HOOK-AUTH-HMAC: the signature refusals say what to do; with requireSignature false a malformed signature is still refused', async () => {
    const body = JSON.stringify({ a: 1 });
    const base = await headersFor(body);
    const cases: Array<[ReadDeliveryOptions, Record<string, string | undefined>, string, string]> = [
      [
        { secrets: [secret] },
        { 'x-hub-signature-256': undefined },
        'signature-missing',
        "check that the webhook has a secret and that it is one of the receiver's secrets",
      ],
      [
        { secrets: [secret] },
        { 'x-hub-signature-256': 'sha256=00' },
        'signature-malformed',
        "check that the webhook has a secret and that it is one of the receiver's secrets",
      ],
      [
        { secrets: [secret], requireSignature: false },
        { 'x-hub-signature-256': 'sha256=00' },
        'signature-malformed',
        "check that the webhook has a secret and that it is one of the receiver's secrets",
      ],
      [
        { secrets: [secret], allowSha1: false },
        { 'x-hub-signature-256': undefined, 'x-hub-signature': sha1Of(secret, body) },
        'sha1-refused',
        'have the platform send X-Hub-Signature-256, or allow SHA-1 (allowSha1, not --no-sha1)',
      ],
      [
        { secrets: [secret], allowSha1: false, requireSignature: false },
        { 'x-hub-signature-256': undefined, 'x-hub-signature': sha1Of(secret, body) },
        'sha1-refused',
        'have the platform send X-Hub-Signature-256, or allow SHA-1 (allowSha1, not --no-sha1)',
      ],
      [
        { secrets: [secret] },
        { 'x-hub-signature-256': sign('another', body) },
        'signature-mismatch',
        "check that the webhook's secret is one of the receiver's secrets, and that nothing between the platform and the receiver re-encodes the body",
      ],
    ];
    for (const [opts, change, reason, hint] of cases) {
      const headers = Object.fromEntries(Object.entries({ ...base, ...change }).filter((entry): entry is [string, string] => entry[1] !== undefined));
      const read = deliveryPayloadReader(opts);
      const error = await serve((request) => read(request, false), body, headers);
      assert.ok(error instanceof WebhookDeliveryError, `${reason}: ${String(error)}`);
      assert.deepEqual([error.reason, error.hint, error.deliveryId], [reason, hint, 'guid-large-1']);
      assert.match(error.message, / \(HOOK-AUTH-HMAC\)$/);
    }
    // Unsigned, and no secret needed: taken, signature none; a malformed one is not looked at without a secret.
    const unsigned = Object.fromEntries(Object.entries(base).filter(([name]) => name !== 'x-hub-signature-256'));
    for (const opts of [{ secrets: [] }, { secrets: [secret], requireSignature: false }]) {
      const read = deliveryPayloadReader(opts);
      assert.equal(((await serve((request) => read(request, false), body, unsigned)) as DeliveryPayload).signature, 'none');
    }
    const read = deliveryPayloadReader({ secrets: [] });
    assert.equal(
      ((await serve((request) => read(request, false), body, { ...unsigned, 'x-hub-signature-256': 'sha256=00' })) as DeliveryPayload).signature,
      'none',
    );
  });

  it('HOOK-LIM-PAYLOAD-25MB: a declared length over a cap that is not whole MiB is refused in bytes; a method that is no plain word is not quoted', async () => {
    const body = JSON.stringify({ a: 'x'.repeat(200) });
    const read = deliveryPayloadReader({ secrets: [secret], maxBytes: 100 });
    const error = await serve((request) => read(request, false), body, await headersFor(body));
    assert.ok(error instanceof WebhookDeliveryError);
    assert.equal(
      error.message,
      `the delivery declares ${Buffer.byteLength(body)} bytes (Content-Length), over the 100 bytes cap (HOOK-LIM-PAYLOAD-25MB); nothing of it was read`,
    );
    const mib = deliveryPayloadReader({ secrets: [secret], maxBytes: MiB + 1 });
    const big = JSON.stringify({ a: 'x'.repeat(MiB) });
    const over = await serve((request) => mib(request, false), big, await headersFor(big));
    assert.ok(over instanceof WebhookDeliveryError);
    assert.match(over.message, /over the 1048577 bytes cap/);
    for (const [method, said] of [
      ['M-SEARCH', 'this method'],
      ['PATCH', 'PATCH'],
    ]) {
      const refused = new Promise<unknown>((resolve) => {
        handle = (request, response) => {
          reader()(request, false).then(resolve, (failure: unknown) => {
            resolve(failure);
            if (failure instanceof WebhookDeliveryError) sendRefusal(response, failure);
          });
        };
      });
      const answer = await new Promise<number>((resolve, reject) => {
        const request = http.request({ host: '127.0.0.1', port, method, agent: false }, (response) => {
          response.resume();
          resolve(response.statusCode!);
        });
        request.on('error', reject);
        request.end();
      });
      const failure = await refused;
      assert.equal(answer, 405);
      assert.ok(failure instanceof WebhookDeliveryError);
      assert.equal(failure.message, `a delivery is a POST (HOOK-DEL-REQUEST), not ${said}`);
    }
  });

  it('HOOK-HDR-CONTENT-LENGTH: a chunked body whose sender goes away is aborted, saying how much came', async () => {
    const failure = new Promise<unknown>((resolve) => {
      handle = (request) => {
        reader()(request, false).then(resolve, resolve);
      };
    });
    const headers = await headersFor('{}');
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    const head = ['POST /hooks HTTP/1.1', 'Host: 127.0.0.1', 'Transfer-Encoding: chunked', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(`${head.join('\r\n')}\r\n\r\n5\r\n{"a":\r\n`);
    await sleep(100);
    socket.destroy();
    const error = await failure;
    assert.ok(error instanceof WebhookDeliveryError);
    assert.equal(error.message, 'the sender closed the connection after 5 bytes of the body');
    assert.equal(error.hint, 'the platform redelivers failed deliveries; nothing was handled');
  });

  it('MUTATION-WEBHOOKS: a request whose body is set to text, or is no request, is a UsageError before anything is read', async () => {
    const result = new Promise<unknown>((resolve) => {
      handle = (request, response) => {
        request.setEncoding('utf8');
        readDelivery(request, { secrets: [secret] }).then(resolve, resolve);
        response.end();
      };
    });
    await new Promise<void>((resolve) => {
      const request = http.request({ host: '127.0.0.1', port, method: 'POST', agent: false }, (response) => {
        response.resume();
        response.on('end', resolve);
      });
      request.on('error', () => resolve());
      request.end('{}');
    });
    const error = await result;
    assert.ok(error instanceof UsageError);
    assert.match(error.message, /^readDelivery: the request has an encoding set \(setEncoding\)/);
    const takes = 'readDelivery: request must be an http.IncomingMessage (the request a node:http server hands its handler), got an object';
    for (const fake of [
      { method: 'POST', headers: {} },
      { on: () => undefined, headers: {} },
      { on: () => undefined, method: 'POST', headers: null },
      { on: () => undefined, method: 'POST', headers: 'x' },
    ]) {
      await assert.rejects(
        readDelivery(fake as never, { secrets: [secret] }),
        (failure: unknown) => failure instanceof UsageError && failure.message === takes,
      );
    }
  });

  it('MUTATION-WEBHOOKS: sendRefusal names each wrong argument; an answer already started is only ended', async () => {
    const response = new http.ServerResponse(new http.IncomingMessage(new net.Socket()));
    const error = new WebhookDeliveryError({ reason: 'malformed-json', message: 'the JSON body is not valid JSON' });
    const cases: Array<[() => void, string]> = [
      [() => sendRefusal(null as never, error), 'sendRefusal: response must be an http.ServerResponse, got null'],
      [() => sendRefusal({} as never, error), 'sendRefusal: response must be an http.ServerResponse, got an object'],
      [() => sendRefusal(response, new Error('x') as never), 'sendRefusal: error must be a WebhookDeliveryError, got an object'],
      [() => sendRefusal(response, error, 'x' as never), 'sendRefusal: options must be an object (or left out), got a string'],
      [() => sendRefusal(response, error, { lingerMs: -1 }), 'sendRefusal: options.lingerMs must be a number of milliseconds, got a number'],
      [() => sendRefusal(response, error, { lingerMs: Number.NaN }), 'sendRefusal: options.lingerMs must be a number of milliseconds, got a number'],
      [() => sendRefusal(response, error, { lingerMs: '5' as never }), 'sendRefusal: options.lingerMs must be a number of milliseconds, got a string'],
      [() => sendRefusal(response, error, { lingerBytes: 1.5 }), 'sendRefusal: options.lingerBytes must be a whole number of bytes, got a number'],
      [() => sendRefusal(response, error, { lingerBytes: -1 }), 'sendRefusal: options.lingerBytes must be a whole number of bytes, got a number'],
      [() => sendRefusal(response, error, { lingerBytes: '5' as never }), 'sendRefusal: options.lingerBytes must be a whole number of bytes, got a string'],
    ];
    for (const [call, message] of cases) assert.throws(call, (failure: unknown) => failure instanceof UsageError && failure.message === message, message);
    assert.equal(response.headersSent, false);

    handle = (request, served) => {
      request.resume();
      request.on('end', () => {
        served.writeHead(202, { 'content-type': 'text/plain' });
        served.write('started');
        sendRefusal(served, error);
      });
    };
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method: 'POST', agent: false }, (served) => {
        let text = '';
        served.setEncoding('utf8');
        served.on('data', (chunk: string) => (text += chunk));
        served.on('end', () => resolve({ status: served.statusCode!, body: text }));
      });
      request.on('error', reject);
      request.end('{}');
    });
    assert.deepEqual(answer, { status: 202, body: 'started' });
  });

  /**
   * A sender that ignores the refusal: the head of a delivery without X-Platform-Event (refused before its body),
   * then `send` body bytes of the 8 MiB it declares, then it stays open and silent (half-open: the server's end does
   * not close it) until `done()` or for `waitMs`. Resolves with the answer's status and when the last byte was written.
   */
  async function ignoringSender(
    send: number,
    waitMs: number,
    done: () => boolean,
    then?: (socket: Socket) => void,
  ): Promise<{ status: number | undefined; lastWrite: number }> {
    const headers = Object.entries(await headersFor('{}')).filter(([name]) => name !== 'x-platform-event');
    const head = ['POST /hooks HTTP/1.1', 'Host: 127.0.0.1', `Content-Length: ${8 * MiB}`, ...headers.map(([k, v]) => `${k}: ${v}`)];
    const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    socket.on('error', () => undefined);
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    while (answer === '') await sleep(5);
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    for (let sent = 0; sent < send && !socket.destroyed; sent += chunk.length) {
      if (!socket.write(send - sent < chunk.length ? chunk.subarray(0, send - sent) : chunk)) {
        await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), sleep(200)]);
      }
    }
    const lastWrite = Date.now();
    then?.(socket);
    const deadline = lastWrite + waitMs;
    while (!done() && Date.now() < deadline) await sleep(10);
    socket.destroy();
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]) || undefined, lastWrite };
  }

  it('HOOK-LIM-PAYLOAD-25MB: after a refusal before the body, what the sender still sends is discarded — never to a listener, up to lingerBytes, for up to lingerMs', async () => {
    let toListener = 0;
    let options: SendRefusalOptions = {};
    let serverClosedAt: number | undefined;
    handle = (request, response) => {
      serverClosedAt = undefined;
      request.socket.once('close', () => (serverClosedAt = Date.now()));
      reader()(request, false).catch((failure: WebhookDeliveryError) => {
        // A listener added before the answer (a logger, a body parser) is not fed what is discarded.
        request.on('data', (chunk: Buffer) => (toListener += chunk.length));
        request.pause();
        sendRefusal(response, failure, options);
      });
    };
    // Past lingerBytes: cut off at once, long before lingerMs.
    options = { lingerBytes: 64 * 1024, lingerMs: 20_000 };
    const flood = await ignoringSender(4 * MiB, 4000, () => serverClosedAt !== undefined);
    assert.equal(flood.status, 400);
    assert.ok(serverClosedAt !== undefined && serverClosedAt - flood.lastWrite < 3000, 'a sender past lingerBytes is cut off');
    // Exactly lingerBytes, then silence: the connection stays open until lingerMs has passed.
    options = { lingerBytes: 48 * 1024, lingerMs: 700 };
    const quiet = await ignoringSender(48 * 1024, 4000, () => serverClosedAt !== undefined);
    assert.equal(quiet.status, 400);
    const after = serverClosedAt === undefined ? undefined : serverClosedAt - quiet.lastWrite;
    assert.ok(after !== undefined && after >= 300 && after < 3000, `closed ${after} ms after the last byte (lingerMs 700)`);
    assert.equal(toListener, 0, 'a listener added before the answer was fed what was discarded');
  });

  it('HOOK-DEL-REQUEST: a sender that resets the connection while its body is discarded is no error', async () => {
    const errors: unknown[] = [];
    const onUncaught = (error: unknown) => errors.push(error);
    handle = (request, response) => {
      reader()(request, false).catch((failure: WebhookDeliveryError) => sendRefusal(response, failure));
    };
    process.prependListener('uncaughtException', onUncaught);
    try {
      const result = await ignoringSender(
        32 * 1024,
        300,
        () => false,
        (socket) => socket.resetAndDestroy(),
      );
      assert.equal(result.status, 400);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    assert.deepEqual(errors, []);
  });

  it('HOOK-DEL-REQUEST: a refusal after the body was read is answered as JSON, keeping the connection', async () => {
    const body = '{"a":';
    handle = (request, response) => {
      reader()(request, false).then(
        () => response.end('ok'),
        (failure: unknown) => sendRefusal(response, failure as WebhookDeliveryError),
      );
    };
    const headers = { ...(await headersFor(body)), 'content-length': String(body.length) };
    const answer = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method: 'POST', headers }, (served) => {
        let text = '';
        served.setEncoding('utf8');
        served.on('data', (chunk: string) => (text += chunk));
        served.on('end', () => resolve({ status: served.statusCode!, headers: served.headers, body: text }));
      });
      request.on('error', reject);
      request.end(body);
    });
    assert.equal(answer.status, 400);
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(answer.headers['content-length'], String(Buffer.byteLength(answer.body)));
    assert.notEqual(answer.headers.connection, 'close');
    const refusal = JSON.parse(answer.body) as { error: string; reason: string };
    assert.equal(refusal.reason, 'malformed-json');
    assert.match(refusal.error, /^the JSON body is not valid JSON: at line 1, column 6 it expected /);
  });
});
