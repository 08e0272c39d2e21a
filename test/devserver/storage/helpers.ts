// Shared helpers of the storage server's tests: a server in a temp folder and plain fetch calls with its token.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStorageServer, type StorageServer, type StorageServerOptions } from '../../../devserver/storage/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON of many shapes
export type Json = any;

export const TOKEN = 'ya29.storage-test-token';

export interface Harness {
  server: StorageServer;
  dir: string;
  api(method: string, pathAndQuery: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: Json }>;
  raw(method: string, pathAndQuery: string, body?: string | Uint8Array, headers?: Record<string, string>): Promise<Response>;
  admin(method: string, sub: string, body?: unknown): Promise<Json>;
  close(): Promise<void>;
}

export async function harness(options: Partial<StorageServerOptions> = {}, dir?: string): Promise<Harness> {
  const folder = dir ?? (await mkdtemp(path.join(tmpdir(), 'gantry-storage-')));
  const server = await startStorageServer({ dir: folder, token: TOKEN, ...options });
  const raw = (method: string, pathAndQuery: string, body?: string | Uint8Array, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${pathAndQuery}`, { method, body, headers: { authorization: `Bearer ${TOKEN}`, ...headers } });
  return {
    server,
    dir: folder,
    raw,
    api: async (method, pathAndQuery, body, headers = {}) => {
      const res = await raw(
        method,
        pathAndQuery,
        body === undefined ? undefined : JSON.stringify(body),
        body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      );
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    },
    admin: async (method, sub, body) => {
      const res = await fetch(`${server.url}/_gantry/${sub}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return res.json();
    },
    close: async () => {
      await server.stop();
      if (!dir) await rm(folder, { recursive: true, force: true });
    },
  };
}

/** Asserts Drive's error shape and returns the first reason. */
export function reasonOf(body: Json): string {
  if (!body?.error || typeof body.error.code !== 'number' || typeof body.error.message !== 'string' || !Array.isArray(body.error.errors))
    throw new Error(`not Drive's error shape: ${JSON.stringify(body)}`);
  const [first] = body.error.errors;
  if (typeof first?.domain !== 'string' || typeof first.reason !== 'string' || typeof first.message !== 'string')
    throw new Error(`not Drive's error item: ${JSON.stringify(first)}`);
  return first.reason;
}

export async function jsonOf(res: Response): Promise<Json> {
  return res.json();
}
