/**
 * Retry policies are data: each service family states which statuses and network errors it retries, its backoff,
 * whether it honours Retry-After, and how long it may spend waiting in total. Anything not named is never retried.
 */
export interface Backoff {
  /** Delay before the first retry, in ms. */
  initialMs: number;
  /** Upper bound of any single computed delay, in ms. */
  maxMs: number;
  /** Growth per attempt (1 = constant). */
  factor: number;
  /** Fraction of the delay that is random: the delay is uniform in [d × (1 − jitter), d]. */
  jitter: number;
}

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  statuses: readonly number[];
  /** Node network error codes, e.g. ECONNRESET; `ETIMEDOUT` covers our own timeouts. */
  errorCodes: readonly string[];
  /** Methods that may be retried; all when absent. */
  methods?: readonly string[];
  /** A poll for something expected to come up (a driver binding its port), not a failure: its retries are not said. */
  quiet?: boolean;
  backoff: Backoff;
  /**
   * Statuses retried only when the error body names one of these reasons (the `error.errors[].reason` of Google's
   * APIs): a 403 is retried for `rateLimitExceeded`, never for `insufficientPermissions`.
   */
  reasons?: Readonly<Record<number, readonly string[]>>;
  /** A gentler schedule for particular statuses (e.g. 503 while a service is sealed or in maintenance). */
  statusBackoff?: Readonly<Record<number, Partial<Backoff>>>;
  /** Honour Retry-After (seconds or HTTP date) up to this many ms; longer waits are not retried. 0 ignores it. */
  retryAfterMaxMs: number;
  /** Total time all waits together may take, in ms. */
  budgetMs: number;
  /**
   * How many times `afterResponse` hooks may send a request once more outside `retries` (a renewed credential, a
   * rate limit's hold), so that none can loop; default 3.
   */
  hookResends?: number;
}

export const networkErrorCodes = [
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
] as const;

export const noRetry: RetryPolicy = {
  retries: 0,
  statuses: [],
  errorCodes: [],
  backoff: { initialMs: 0, maxMs: 0, factor: 1, jitter: 0 },
  retryAfterMaxMs: 0,
  budgetMs: 0,
};

/** A sensible default for idempotent reads of a public API. */
export const defaultRetryPolicy: RetryPolicy = {
  retries: 3,
  statuses: [408, 429, 500, 502, 503, 504],
  errorCodes: networkErrorCodes,
  methods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'LIST'],
  backoff: { initialMs: 250, maxMs: 8_000, factor: 2, jitter: 0.5 },
  statusBackoff: { 503: { initialMs: 1_000, factor: 2 } },
  retryAfterMaxMs: 60_000,
  budgetMs: 120_000,
};

export function definePolicy(overrides: Partial<RetryPolicy>, base: RetryPolicy = defaultRetryPolicy): RetryPolicy {
  return { ...base, ...overrides, backoff: { ...base.backoff, ...overrides.backoff } };
}

/** Parses Retry-After (delta-seconds or HTTP date) into ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const text = raw.trim();
  // Clamped: 400 digits are Infinity, which a caller's arithmetic or a timer would not survive; 285 millennia is as long.
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, Number.MAX_SAFE_INTEGER);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

export type RetryDecision = { retry: true; delayMs: number; reason: string } | { retry: false; reason: string };

export interface RetryInput {
  policy: RetryPolicy;
  /** 0 for the first retry. */
  retryIndex: number;
  method: string;
  status?: number;
  errorCode?: string;
  retryAfter?: string | string[];
  /** The reasons the error body gives (see `RetryPolicy.reasons`). */
  reasons?: readonly string[];
  /** Time already spent waiting on earlier retries, in ms. */
  waitedMs: number;
  random?: () => number;
}

export function decideRetry(input: RetryInput): RetryDecision {
  const { policy, retryIndex, method, status, errorCode } = input;
  const what = status !== undefined ? `status ${status}` : `network error ${errorCode ?? 'unknown'}`;
  if (retryIndex >= policy.retries) return { retry: false, reason: `${what}; no retries left (${policy.retries} allowed)` };
  if (policy.methods && !policy.methods.includes(method.toUpperCase())) return { retry: false, reason: `${what}; ${method} is not retried` };
  const named = status !== undefined ? input.reasons?.find((reason) => policy.reasons?.[status]?.includes(reason)) : undefined;
  const retriable =
    status !== undefined ? policy.statuses.includes(status) || named !== undefined : errorCode !== undefined && policy.errorCodes.includes(errorCode);
  if (!retriable) return { retry: false, reason: `${what}${input.reasons?.length ? ` (${input.reasons.join(', ')})` : ''} is not retried` };

  const backoff = { ...policy.backoff, ...(status !== undefined ? policy.statusBackoff?.[status] : undefined) };
  const exponential = Math.min(backoff.maxMs, backoff.initialMs * backoff.factor ** retryIndex);
  const random = input.random ?? Math.random;
  let delayMs = Math.round(exponential * (1 - backoff.jitter * random()));

  if (policy.retryAfterMaxMs > 0) {
    const asked = parseRetryAfter(input.retryAfter);
    if (asked !== undefined) {
      if (asked > policy.retryAfterMaxMs) {
        return {
          retry: false,
          reason: `${what}; the server asked to wait ${Math.ceil(asked / 1000)} s, more than the ${Math.ceil(policy.retryAfterMaxMs / 1000)} s allowed`,
        };
      }
      delayMs = Math.max(delayMs, asked);
    }
  }
  if (input.waitedMs + delayMs > policy.budgetMs) {
    return { retry: false, reason: `${what}; the retry budget of ${Math.ceil(policy.budgetMs / 1000)} s is spent` };
  }
  return { retry: true, delayMs, reason: named ? `${what} (${named})` : what };
}

/** The reasons of an error body in Google's shape, `{error: {errors: [{reason}]}}`; empty for any other shape. */
export function errorReasons(body: unknown): string[] {
  const errors = (body as { error?: { errors?: unknown } } | undefined)?.error?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.map((entry) => (entry as { reason?: unknown } | null)?.reason).filter((reason): reason is string => typeof reason === 'string');
}
