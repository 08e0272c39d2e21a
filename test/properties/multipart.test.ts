import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { StorageFailure } from '../../devserver/storage/http.js';
import { boundaryOf, readMultipart } from '../../devserver/storage/multipart.js';
import { multipartParts, multipartStream } from '../../lib/storage/upload/multipart.js';
import { anyText, check, checkAsync, fc, fromAlphabet } from './fc.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gantry-prop-multipart-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The body cut into chunks at arbitrary places: a delimiter split across two reads is the case that matters. */
function chunked(body: Buffer, cuts: number[]): IncomingMessage {
  const ends = [...new Set(cuts.map((c) => c % (body.length + 1)).concat(body.length))].sort((a, b) => a - b);
  const pieces = ends.map((end, i) => body.subarray(i === 0 ? 0 : ends[i - 1], end)).filter((piece) => piece.length > 0);
  return Readable.from(pieces) as unknown as IncomingMessage;
}

const boundary = fc.stringMatching(/^[0-9a-f]{4,12}$/).map((hex) => `gantry_${hex}`);
/** Media made of the delimiter's own pieces: CR LF, dashes, the boundary's prefix. */
const media = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  fromAlphabet(['\r\n', '--', 'gantry_', 'gantry', '\r', '\n', '-', 'x', '\u0000', 'é'], 30).map((t) => Buffer.from(t)),
);
const metadata = fc
  .dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
  .map((o) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>);

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('PROP-MULTIPART: multipart/related upload bodies, as gantry writes them and the dev server reads them', () => {
  it('PROP-MULTIPART: a body multipartParts writes reads back as its metadata, media type and media bytes, however it is cut', async () => {
    let n = 0;
    await checkAsync(
      fc.tuple(
        boundary,
        metadata,
        fc.constantFrom('application/octet-stream', 'text/plain; charset=utf-8', 'image/png'),
        media,
        fc.array(fc.nat(), { maxLength: 5 }),
      ),
      async ([b, meta, type, bytes, cuts]) => {
        fc.pre(!bytes.includes(b));
        const parts = multipartParts(b, meta, type);
        const body = await collect(multipartStream(parts, Readable.from([bytes])));
        assert.equal(body.length, parts.length(bytes.length));
        assert.equal(boundaryOf(parts.contentType), b);
        const target = join(dir, `m${(n += 1)}`);
        const read = await readMultipart(chunked(body, cuts), b, target);
        assert.deepEqual(read.metadata, meta);
        assert.equal(read.mediaType, type);
        assert.equal(read.bytes, bytes.length);
        assert.deepEqual(await readFile(target), bytes);
      },
      150,
    );
  });

  it('PROP-MULTIPART: readMultipart answers a result or a 400 StorageFailure for any bytes, near-valid or not', async () => {
    let n = 0;
    const near = fc
      .tuple(
        fromAlphabet(['--gantry_ab', '\r\n', '\r\n\r\n', 'Content-Type: application/json', 'Content-Type: text/plain', '{}', '{"a":1}', '[', '--', 'x'], 14),
        fc.array(fc.nat(), { maxLength: 4 }),
      )
      .map(([t, cuts]) => ({ body: Buffer.from(t), cuts }));
    await checkAsync(
      fc.oneof(near, fc.record({ body: fc.uint8Array({ maxLength: 120 }).map((b) => Buffer.from(b)), cuts: fc.array(fc.nat(), { maxLength: 4 }) })),
      async ({ body, cuts }) => {
        try {
          await readMultipart(chunked(body, cuts), 'gantry_ab', join(dir, `r${(n += 1)}`));
        } catch (error) {
          assert.ok(error instanceof StorageFailure, `threw ${(error as Error).constructor.name}: ${(error as Error).message}`);
          assert.equal(error.status, 400);
        }
      },
      200,
    );
  });

  it('PROP-MULTIPART: boundaryOf answers the boundary or a 400 StorageFailure, whatever the Content-Type', () => {
    const near = fromAlphabet(['multipart/related', 'multipart/form-data', ';', ' ', 'boundary=', '"', 'gantry_ab', 'x'.repeat(71), 'BOUNDARY='], 6);
    check(
      anyText(near),
      (type) => {
        try {
          const b = boundaryOf(type);
          assert.ok(b.length >= 1 && b.length <= 70);
        } catch (error) {
          assert.ok(error instanceof StorageFailure, `threw ${(error as Error).constructor.name}`);
        }
      },
      500,
    );
  });
});
