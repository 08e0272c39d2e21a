// A tiny record store over HTTP: the remote side of the harness's test-only dynamic resource
// (test/harness/fixtures/gantry-test-records). Bearer-token auth, JSON bodies, versions that
// increase on every write, and 422 with an `errors` array for values it refuses.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface StoredRecord {
  key: string;
  value: string;
  version: number;
}

export interface RecordStore {
  name: 'record-store';
  url: string;
  /** The bearer token the store accepts. */
  token: string;
  /** The store's contents, for assertions and for out-of-band changes (drift) made by a test. */
  records: Map<string, StoredRecord>;
  /** Every request line and Authorization header seen, so tests can check what the provider sent. */
  requests: Array<{ method: string; path: string; authorization: string | undefined }>;
  stop(): Promise<void>;
}

export const MAX_VALUE_LENGTH = 64;
const MAX_BODY_BYTES = 16 * 1024;
const KEY_PATH = /^\/records\/([a-z0-9][a-z0-9-]{0,62})$/;

export async function startRecordStore(options: { token?: string } = {}): Promise<RecordStore> {
  const token = options.token ?? randomBytes(16).toString('hex');
  const records = new Map<string, StoredRecord>();
  const requests: RecordStore['requests'] = [];

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      send(res, 500, { errors: [`record store failed: ${(error as Error).message}`] });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://store').pathname;
    requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization });
    if (req.headers.authorization !== `Bearer ${token}`) {
      send(res, 401, { errors: ['missing or wrong bearer token'] });
      return;
    }
    const match = KEY_PATH.exec(path);
    if (!match) {
      send(res, 404, { errors: [`no route for ${path}`] });
      return;
    }
    const key = match[1]!;
    const existing = records.get(key);
    switch (req.method) {
      case 'GET':
        if (existing) send(res, 200, existing);
        else send(res, 404, { errors: [`record ${key} not found`] });
        return;
      case 'PUT': {
        const body = await readJson(req);
        if (body === undefined) {
          send(res, 400, { errors: ['body is not JSON or is larger than 16 KiB'] });
          return;
        }
        const value = (body as { value?: unknown }).value;
        if (typeof value !== 'string') {
          send(res, 422, { errors: ['value must be a string'] });
          return;
        }
        if (value.length > MAX_VALUE_LENGTH) {
          send(res, 422, { errors: [`value is ${value.length} characters; the store keeps at most ${MAX_VALUE_LENGTH}`] });
          return;
        }
        const record = { key, value, version: (existing?.version ?? 0) + 1 };
        records.set(key, record);
        send(res, existing ? 200 : 201, record);
        return;
      }
      case 'DELETE':
        if (!existing) {
          send(res, 404, { errors: [`record ${key} not found`] });
          return;
        }
        records.delete(key);
        res.writeHead(204).end();
        return;
      default:
        send(res, 405, { errors: [`${req.method} is not allowed`] });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    name: 'record-store',
    url: `http://127.0.0.1:${port}`,
    token,
    records,
    requests,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}
