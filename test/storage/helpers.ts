// The storage client's tests: the embedded storage server (devserver/storage) on 127.0.0.1 in a temp folder, and
// a client with a fast retry policy whose log lines are kept, so that a test can look for a token in them.
import assert from 'node:assert/strict';
import { definePolicy } from '../../lib/http/index.js';
import { createLogger, type Logger } from '../../lib/log.js';
import { createStorageClient, type StorageClient, type StorageClientOptions } from '../../lib/storage/index.js';
import { storageRetryPolicy } from '../../lib/storage/transport.js';
import type { StorageServerOptions } from '../../devserver/storage/index.js';
import { harness, TOKEN, type Harness, type Json } from '../devserver/storage/helpers.js';

export { TOKEN };

/** Drive's schedule, shrunk: 3 retries 10, 20, 40 ms apart (no jitter). */
export const fastRetry = definePolicy({ retries: 3, backoff: { initialMs: 10, maxMs: 40, factor: 2, jitter: 0 }, budgetMs: 10_000 }, storageRetryPolicy);

export interface Setup {
  h: Harness;
  client: StorageClient;
  /** Every line the client logged (redacted as a user would see it). */
  logs: string[];
  /** The logger that fills `logs`. */
  logger: Logger;
  /** Every `METHOD pathname status` line of the server. */
  served: string[];
  /** A client of the same server with other options. */
  clientWith(options: Partial<StorageClientOptions>): StorageClient;
  /** Requests the server has counted so far. */
  requests(): Promise<number>;
  admin(method: string, sub: string, body?: unknown): Promise<Json>;
  close(): Promise<void>;
}

export async function setup(options: Partial<StorageServerOptions> = {}): Promise<Setup> {
  const served: string[] = [];
  const h = await harness({ ...options, log: (line) => served.push(line) });
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(line) });
  const made: StorageClient[] = [];
  const clientWith = (more: Partial<StorageClientOptions>) => {
    const client = createStorageClient({ baseUrl: h.server.url, token: TOKEN, retry: fastRetry, logger, ...more });
    made.push(client);
    return client;
  };
  const client = clientWith({});
  return {
    h,
    client,
    logs,
    logger,
    served,
    clientWith,
    requests: async () => (await h.admin('GET', 'stats')).requests as number,
    admin: (method, sub, body) => h.admin(method, sub, body),
    close: async () => {
      for (const c of made) c.close();
      await h.close();
    },
  };
}

/** The error a promise rejects with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  assert.fail('expected the call to fail');
}

/** Everything an error shows a user or a log: message, hint, stack, JSON and own fields. */
export function everythingSaid(error: unknown): string {
  const e = error as Record<string, unknown>;
  return [
    String(e.message),
    String(e.hint ?? ''),
    String(e.stack ?? ''),
    JSON.stringify(e),
    ...Object.values(e).map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))),
  ].join('\n');
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
