import { networkErrorCodes, type RetryPolicy } from '../http/index.js';
import type { ResolvedSecretsConfig } from './config.js';

/**
 * Retry policy of the secrets client, as the Vault Go client's: 2 retries, waits jittered between 1 s and 1.5 s
 * (then 2-3 s: the core's doubling matches Vault's linear jitter for the first two retries), Retry-After honoured.
 * Retried: 412 (not consistent yet), 429 (standby), 500, 502, 503 (sealed or maintenance), 504 and connection errors.
 * Never: 400, 401, 403, 404, 405, 413, 415, 501 - retrying cannot change their answer.
 */
export const retriedStatuses = [412, 429, 500, 502, 503, 504] as const;

/**
 * Errors raised before the request left this machine: a write is safe to retry after these. A write whose connection
 * broke after it was sent (reset, timeout) may have been applied, and a kv v2 write is not idempotent (it would
 * create a second version), so those are not retried for writes.
 */
export const notSentErrorCodes = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH'] as const;

const idempotentMethods = new Set(['GET', 'HEAD', 'LIST', 'DELETE']);

export function isIdempotent(method: string): boolean {
  return idempotentMethods.has(method.toUpperCase());
}

export function secretsRetryPolicy(
  config: Pick<ResolvedSecretsConfig, 'maxRetries' | 'retryWaitMinMs' | 'retryWaitMaxMs' | 'timeoutMs'>,
  method: string,
): RetryPolicy {
  const max = Math.max(config.retryWaitMaxMs, 1);
  return {
    retries: config.maxRetries,
    statuses: [...retriedStatuses],
    errorCodes: isIdempotent(method) ? [...networkErrorCodes] : [...notSentErrorCodes],
    backoff: { initialMs: max, maxMs: max * 2 ** Math.max(0, config.maxRetries), factor: 2, jitter: 1 - config.retryWaitMinMs / max },
    // A server asking for a longer pause than a whole request may take is not waited for.
    retryAfterMaxMs: Math.max(config.timeoutMs, 1),
    budgetMs: Number.MAX_SAFE_INTEGER,
  };
}
