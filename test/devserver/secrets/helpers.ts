// Test client for the embedded kv server's own conformance tests: Node's built-in fetch over real sockets, not
// Gantry's secrets client, so the server is checked against the spec independently of the client.
import { startSecretsServer, type SecretsServer, type SecretsServerOptions } from '../../../devserver/secrets/index.js';

export const ROOT = 'test-root-token';

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
  namespace?: string;
}

export interface CallResult {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  headers: Headers;
}

export function client(server: SecretsServer) {
  return async function call(method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? server.rootToken : options.token;
    if (token !== null) headers['X-Secrets-Token'] = token;
    if (options.namespace !== undefined) headers['X-Secrets-Namespace'] = options.namespace;
    const init: RequestInit = { method, headers };
    if (options.raw !== undefined) init.body = options.raw;
    else if (options.body !== undefined) init.body = JSON.stringify(options.body);
    const response = await fetch(`${server.url}/v1/${path}`, init);
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: response.status, body, text, headers: response.headers };
  };
}

export async function withServer(options: SecretsServerOptions = {}) {
  const server = await startSecretsServer({ rootToken: ROOT, ...options });
  return { server, call: client(server) };
}

export const ENVELOPE_KEYS = ['request_id', 'lease_id', 'renewable', 'lease_duration', 'data', 'wrap_info', 'warnings', 'auth'];
