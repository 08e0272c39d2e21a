import { definePolicy, networkErrorCodes, type RetryPolicy } from '../http/index.js';

/**
 * The registry's retry policy (spec §B Errors): 429 slows down and honours Retry-After (REG-STATUS-429-LOAD); 5xx
 * are retried a bounded number of times (REG-STATUS-5XX-RETRY); 503 is load shedding and waits on a gentler schedule
 * (REG-STATUS-503-SHEDDING); no other 4xx is ever retried (REG-STATUS-4XX-NO-RETRY). Only GET is used. Resets,
 * refusals and timeouts are retried; a host name that does not resolve is not.
 */
export const registryRetryPolicy: RetryPolicy = definePolicy({
  retries: 4,
  statuses: [429, 500, 502, 503, 504],
  // A name that does not resolve is a typo or a wrong host, not a passing fault: fail at once (as Terraform does).
  errorCodes: networkErrorCodes.filter((code) => code !== 'ENOTFOUND'),
  methods: ['GET'],
  backoff: { initialMs: 250, maxMs: 4_000, factor: 2, jitter: 0.3 },
  statusBackoff: { 503: { initialMs: 2_000, factor: 2, maxMs: 20_000 } },
  retryAfterMaxMs: 60_000,
  budgetMs: 90_000,
});
