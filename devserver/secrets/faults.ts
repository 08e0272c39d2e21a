/**
 * Fault injection for tests: a rule answers matching requests with a chosen status (412, 429 with Retry-After, 5xx),
 * adds latency, or drops the connection, for a number of requests or until cleared. Rules are checked in order
 * before anything else the server does, like a misbehaving proxy in front of it.
 */
export interface FaultRule {
  /** HTTP method to match (GET, POST, LIST ...); any when absent or '*' */
  method?: string;
  /** URL path pattern, `*` matching any characters (e.g. `/v1/secret/data/*`); any when absent */
  path?: string;
  /** status to answer with; absent for a latency-only rule */
  status?: number;
  /** how many requests this rule affects; unlimited when absent */
  count?: number;
  /** seconds, sent as Retry-After (useful with 429 and 503) */
  retryAfter?: number;
  /** delay before answering (or before handling, for a latency-only rule) */
  latencyMs?: number;
  /** destroy the connection without an answer */
  reset?: boolean;
  /** the errors array of the body; a default message is used when absent */
  errors?: string[];
}

const ALLOWED_STATUS = new Set([400, 403, 404, 405, 412, 413, 415, 429, 472, 473, 500, 501, 502, 503, 504]);

export function validateFaults(raw: unknown): FaultRule[] {
  if (!Array.isArray(raw)) throw new Error('faults must be an array of rules');
  return raw.map((r, i) => {
    if (!r || typeof r !== 'object') throw new Error(`fault ${i}: must be an object`);
    const rule = r as FaultRule;
    if (rule.status !== undefined && !ALLOWED_STATUS.has(rule.status)) throw new Error(`fault ${i}: status ${rule.status} is not one the server can inject`);
    if (rule.count !== undefined && (!Number.isInteger(rule.count) || rule.count < 0)) throw new Error(`fault ${i}: count must be a non-negative integer`);
    if (rule.latencyMs !== undefined && (typeof rule.latencyMs !== 'number' || rule.latencyMs < 0)) throw new Error(`fault ${i}: latencyMs must be >= 0`);
    if (rule.status === undefined && !rule.latencyMs && !rule.reset) throw new Error(`fault ${i}: give a status, latencyMs or reset`);
    return { ...rule };
  });
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

export class FaultInjector {
  private rules: FaultRule[] = [];

  set(rules: FaultRule[]) {
    this.rules = validateFaults(rules);
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** The rule that applies to this request, consuming one of its uses. */
  take(method: string, path: string): FaultRule | undefined {
    for (const rule of this.rules) {
      if (rule.count !== undefined && rule.count <= 0) continue;
      if (rule.method && rule.method !== '*' && rule.method.toUpperCase() !== method) continue;
      if (rule.path && !globToRegExp(rule.path).test(path)) continue;
      if (rule.count !== undefined) rule.count--;
      return rule;
    }
    return undefined;
  }
}

export function defaultFaultMessage(status: number): string {
  switch (status) {
    case 412:
      return 'injected fault: request cannot be processed yet (eventually consistent data), retry with backoff';
    case 429:
      return 'injected fault: too many requests';
    case 503:
      return 'injected fault: service unavailable (maintenance)';
    default:
      return `injected fault: status ${status}`;
  }
}
