import type { MountInfo, ResponseEnvelope } from './types.js';

/**
 * One call to the secrets service, as the client sends it and the kv engine asks for it. Its own module so that the
 * engine depends on what it calls, not on the client that creates engines (client.ts → kv.ts → call.ts, one way).
 */

export type SecretsMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'LIST';

export interface CallOptions {
  method: SecretsMethod;
  /** Path under `/v1/`, already checked and encoded (see paths.ts). */
  path: string;
  query?: Record<string, string>;
  /** A JSON value, checked against the request limits before sending. */
  body?: unknown;
  contentType?: string;
  /** Namespace relative to the client's. */
  namespace?: string | undefined;
  /** Send the token (default true; login endpoints need none: SEC-AUTH-LOGIN-NO-AUTH). */
  authenticated?: boolean;
  /** Return a 404 instead of throwing (reads: a missing secret, a deleted version, an empty list). */
  allowNotFound?: boolean;
}

export interface CallResult<Data = Record<string, unknown>> {
  status: number;
  envelope: ResponseEnvelope<Data> | undefined;
  /** The raw parsed body (help answers are not enveloped). */
  body: unknown;
  warnings: string[];
  errors: string[];
}

/** What a kv engine needs of its client; `SecretsClient` is one. */
export interface SecretsCaller {
  call<Data = Record<string, unknown>>(options: CallOptions): Promise<CallResult<Data>>;
  /** The mount's kv version and options, detected once and cached by the client. */
  mountInfo(path: string, options?: { namespace?: string }): Promise<MountInfo>;
}

/** The keys of a LIST answer; none for a 404 (an empty folder). */
export function keysOf(result: CallResult<{ keys?: unknown }>): string[] {
  if (result.status === 404) return [];
  const keys = result.envelope?.data?.keys;
  return Array.isArray(keys) ? keys.map(String) : [];
}
