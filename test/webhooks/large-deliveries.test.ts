// Large deliveries no handler reads: the receiver checks them without parsing them (lib/webhooks/json-scan.ts), so
// the scan is held to JSON.parse — it must never take for a JSON object what JSON.parse refuses — on GitHub's
// example payloads and on many small corruptions of them; and over a real socket, a large payload that no handler
// reads is still refused for malformed JSON or a missing or mistyped required property, de-duplicated by GUID, while
// one a handler reads reaches it whole (the large-body buffer is reused from one delivery to the next).
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { createLogger } from '../../lib/log.js';
import { scanJsonObject } from '../../lib/webhooks/json-scan.js';
import { WebhookReceiver, type WebhookContext } from '../../lib/webhooks/index.js';
import { exampleDeliveries, pushPayload } from './helpers/examples.js';

const SECRET = 'large deliveries: a webhook secret';

/** JSON.parse's verdict on the bytes as the receiver decodes them: a JSON object, or not. */
function parsesToObject(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The scan's verdict, its members rebuilt with JSON.parse of their bytes. */
function scanned(bytes: Buffer): Record<string, unknown> | undefined {
  const from = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const members = isUtf8(bytes) ? scanJsonObject(bytes, from) : undefined;
  if (members === undefined) return undefined;
  const object: Record<string, unknown> = {};
  for (const member of members) {
    const value: unknown = JSON.parse(bytes.toString('utf8', member.start, member.end));
    if (member.kind === 'array') {
      const list = value as unknown[];
      assert.deepEqual(member.elements, {
        count: list.length,
        objects: list.filter((item) => item !== null && typeof item === 'object' && !Array.isArray(item)).length,
        strings: list.filter((item) => typeof item === 'string').length,
        nulls: list.filter((item) => item === null).length,
      });
    }
    Object.defineProperty(object, JSON.parse(bytes.toString('utf8', member.keyStart, member.keyEnd)) as string, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return object;
}

function sameVerdict(bytes: Buffer, label: string): void {
  const parsed = parsesToObject(bytes);
  const scan = scanned(bytes);
  if (parsed === undefined) assert.equal(scan, undefined, `the scan took for an object what JSON.parse refuses: ${label}`);
  else assert.deepEqual(scan, parsed, `the scan and JSON.parse disagree: ${label}`);
}

describe('webhooks: large deliveries are checked without being parsed (HOOK-DEL-EXAMPLE-BODY, HOOK-LIM-PAYLOAD-25MB)', function () {
  this.timeout(120_000);

  describe('scanJsonObject agrees with JSON.parse', () => {
    it('HOOK-DEL-EXAMPLE-BODY: every example payload, compact and indented, and the edge cases of the grammar', () => {
      for (const delivery of exampleDeliveries()) {
        sameVerdict(Buffer.from(JSON.stringify(delivery.payload)), delivery.id);
        sameVerdict(Buffer.from(JSON.stringify(delivery.payload, null, 2).replace(/\n/g, '\r\n')), `${delivery.id}, indented`);
      }
      const cases = [
        '{}',
        ' \t\r\n{ } \n',
        '{"a":1}',
        '{"a":[]}',
        '{"a":[1,{"b":2},"x",null,[],true]}',
        '{"__proto__":{"x":1}}',
        '{"a":1,"a":[2]}',
        '{"a":-0.5e+10,"b":0,"c":-0,"d":1E-3}',
        '{"a":"\\u00e9\\ud800\\n\\"\\\\\\/\\b\\f\\r\\t"}',
        '{"é":"ü","k":"\u{1F600}"}',
        '{"a":{"b":{"c":[[[{}]]]}}}',
        '{"a":01}',
        '{"a":1.}',
        '{"a":.5}',
        '{"a":+1}',
        '{"a":1e}',
        '{"a":-}',
        '{"a":tru}',
        '{"a":nul}',
        '{"a":True}',
        '{"a":"\t"}',
        '{"a":"\u0001"}',
        '{"a":1,}',
        '{,"a":1}',
        '{"a" 1}',
        '{a:1}',
        "{'a':1}",
        '{"a":[1,]}',
        '{"a":[,1]}',
        '{"a":{"b":}}',
        '{"a":"\\x"}',
        '{"a":"\\u12"}',
        '{"a":"\\u12G4"}',
        '{"a":1}x',
        '{"a":1}{}',
        '{"a":1',
        '{"a":"b',
        '{"a":[1}',
        '{"a":{]}',
        '[1]',
        '"x"',
        '1',
        'null',
        '',
        ' ',
        '{"a":1}\u00a0',
        '\u00a0{"a":1}',
        '{"a":NaN}',
        '{"a":Infinity}',
        '{"a":1e400}',
        '{"a":undefined}',
        '{"a":1 2}',
        '{"a" :1 , "b" : [ 1 , 2 ] }',
      ];
      for (const text of cases) sameVerdict(Buffer.from(text), JSON.stringify(text));
      sameVerdict(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]), 'a byte order mark');
      sameVerdict(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d]), 'a string that is not UTF-8');
      sameVerdict(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]), 'an encoded surrogate');
    });

    it('HOOK-DEL-EXAMPLE-BODY: 30,000 example payloads each changed by one inserted, deleted or replaced character', () => {
      const bodies = exampleDeliveries().map((delivery) => JSON.stringify(delivery.payload, null, delivery.id.length % 2 === 0 ? 0 : 1));
      const symbols = ['{', '}', '[', ']', ',', ':', '"', '\\', ' ', '\n', '0', '1', '-', '+', '.', 'e', 'E', 'n', 't', 'f', 'u', '\u0001', 'x', 'é'];
      let seed = 13;
      const random = (below: number) => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed % below;
      };
      for (let round = 0; round < 30_000; round += 1) {
        const text = bodies[random(bodies.length)]!;
        const at = random(text.length);
        const symbol = symbols[random(symbols.length)]!;
        const change = random(3);
        const changed =
          change === 0
            ? text.slice(0, at) + symbol + text.slice(at)
            : change === 1
              ? text.slice(0, at) + text.slice(at + 1)
              : text.slice(0, at) + symbol + text.slice(at + 1);
        sameVerdict(Buffer.from(changed), `change ${round}`);
      }
    });
  });

  describe('a receiver with no handler for the event', () => {
    let server: Server | undefined;
    let receiver: WebhookReceiver | undefined;
    let url = '';
    const start = async () => {
      receiver = new WebhookReceiver({ secrets: [SECRET], logger: createLogger({ level: 'error', write: () => undefined }) });
      const handler = receiver.handler();
      server = createServer(handler);
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      return receiver;
    };
    afterEach(async () => {
      await receiver?.close(1_000);
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
      receiver = undefined;
    });

    async function deliver(event: string, body: string, id = randomUUID()): Promise<{ status: number; body: Record<string, unknown> }> {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Platform-Hookshot/abc123',
          'x-platform-event': event,
          'x-platform-delivery': id,
          'x-platform-hook-id': '42',
          'x-hub-signature-256': await octokitSign(SECRET, body),
        },
        body,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    }

    /** A push of about `bytes`, valid for the catalogue, its commits of the examples' shape. */
    function largePush(bytes: number, change: (push: Record<string, unknown>) => void = () => undefined): string {
      const commit = (i: number) => ({
        id: i.toString(16).padStart(40, '0'),
        message: `change ${i}: é ✓`,
        added: [`src/${i}.ts`],
        removed: [],
        modified: ['package.json'],
        author: { name: 'Octo', email: 'octo@example.com' },
      });
      const count = Math.ceil(bytes / JSON.stringify(commit(1)).length);
      const push: Record<string, unknown> = { ...pushPayload, commits: Array.from({ length: count }, (_, i) => commit(i)) };
      change(push);
      return JSON.stringify(push);
    }

    it('HOOK-LIM-PAYLOAD-25MB, HOOK-OVERVIEW-POST: a 3 MB push is answered done, and its redelivery is a duplicate', async () => {
      await start();
      const id = randomUUID();
      const body = largePush(3_000_000);
      assert.deepEqual(await deliver('push', body, id), { status: 200, body: { status: 'done' } });
      const again = await deliver('push', body, id);
      assert.equal(again.status, 200);
      assert.equal(again.body.status, 'duplicate');
    });

    it('HOOK-DEL-EXAMPLE-BODY: a 3 MB body that is not JSON is refused 400 saying where it breaks, as a small one is', async () => {
      await start();
      const body = largePush(3_000_000).replace('"forced":false', '"forced":fals');
      const answer = await deliver('push', body);
      assert.equal(answer.status, 400);
      assert.equal(answer.body.reason, 'malformed-json');
      assert.match(String(answer.body.error), /at line 1, column \d+/);
    });

    it('HOOK-EV-PUSH, HOOK-REQ-DEFAULT: a 3 MB push missing ref, or whose commits hold a number, is refused 400 naming the property', async () => {
      await start();
      const missing = await deliver(
        'push',
        largePush(3_000_000, (push) => {
          delete push.ref;
        }),
      );
      assert.equal(missing.status, 400);
      assert.match(String(missing.body.message), /missing the required property ref/);
      const mistyped = await deliver(
        'push',
        largePush(3_000_000, (push) => {
          (push.commits as unknown[]).push(7);
        }),
      );
      assert.equal(mistyped.status, 400);
      assert.match(String(mistyped.body.message), /commits must be array of objects/);
      const noRepository = await deliver(
        'push',
        largePush(3_000_000, (push) => {
          push.repository = 'gantry/demo';
        }),
      );
      assert.equal(noRepository.status, 400);
      assert.match(String(noRepository.body.message), /repository must be object/);
    });

    it('HOOK-AUTH-HMAC: a 3 MB push changed by one byte after signing is refused 401', async () => {
      await start();
      const body = largePush(3_000_000);
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Platform-Hookshot/abc123',
          'x-platform-event': 'push',
          'x-platform-delivery': randomUUID(),
          'x-platform-hook-id': '42',
          'x-hub-signature-256': await octokitSign(SECRET, body),
        },
        body: body.replace('"forced":false', '"forced":falsE'),
      });
      assert.equal(response.status, 401);
    });

    it('HOOK-OVERVIEW-POST: large pushes a handler reads reach it whole and each its own, also after ones no handler read', async () => {
      const receiver = await start();
      // First deliveries no handler reads (their buffer is then reused) …
      for (let i = 0; i < 2; i += 1) assert.equal((await deliver('push', largePush(2_000_000 + i * 500_000))).status, 200);
      const seen: Array<{ commits: number; first: string }> = [];
      receiver.on('push', (context: WebhookContext) => {
        const commits = context.payload.commits as Array<{ message: string }>;
        seen.push({ commits: commits.length, first: commits[0]!.message });
      });
      // … then ones it reads, one smaller than the last, so that the reused buffer holds older bytes past its end.
      const bodies = [
        largePush(2_400_000, (push) => {
          (push.commits as Array<{ message: string }>)[0]!.message = 'first of the larger';
        }),
        largePush(1_500_000, (push) => {
          (push.commits as Array<{ message: string }>)[0]!.message = 'first of the smaller';
        }),
      ];
      for (const body of bodies) assert.deepEqual(await deliver('push', body), { status: 200, body: { status: 'done' } });
      assert.deepEqual(
        seen,
        bodies.map((body) => {
          const commits = (JSON.parse(body) as { commits: Array<{ message: string }> }).commits;
          return { commits: commits.length, first: commits[0]!.message };
        }),
      );
    });
  });
});
