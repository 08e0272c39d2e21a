/**
 * The platform's secondary limits as data, with the specification's numbers as defaults (RATE-SEC-*, RATE-COST-*),
 * and what a request is in their terms: its endpoint (method + path template), its cost in points, whether it
 * creates content, and the primary resource it counts against. The platform says the limits may change without
 * notice (RATE-SEC-MAY-CHANGE), so every number here can be configured.
 */
import { UsageError } from '../errors.js';

export interface PlatformLimits {
  /** Requests in flight at once, for every client of the process (RATE-SEC-CONCURRENCY). */
  concurrency: number;
  /** Points per REST endpoint per minute (RATE-SEC-POINTS-REST). */
  pointsPerMinute: number;
  /** Cost of a GET, HEAD or OPTIONS (RATE-COST-REST-READ). */
  readCost: number;
  /** Cost of a POST, PATCH, PUT or DELETE (RATE-COST-REST-WRITE). */
  writeCost: number;
  /** Content-creating requests per minute and per hour (RATE-SEC-CONTENT-CREATION). */
  creationsPerMinute: number;
  creationsPerHour: number;
  /** Estimated server CPU time (response time) per 60 s of real time, in ms (RATE-SEC-CPU-TIME). */
  cpuMsPerMinute: number;
  /** Retries after a rate-limit answer (secondary or primary) before giving up (RATE-ERR-SECONDARY-BACKOFF). */
  rateLimitRetries: number;
  /** The first wait after a secondary limit without retry-after or exhausted primary, in ms (at least a minute). */
  secondaryWaitMs: number;
  /** Growth of that wait per further refusal. */
  backoffFactor: number;
  /** The longest single wait the client accepts (a hold until reset, a retry-after); longer is an error at once. */
  maxWaitMs: number;
  /** Added to `x-ratelimit-reset` before sending again, for clock skew between the platform and this machine. */
  resetSkewMs: number;
  /** Retries of a 5xx or a network failure, for idempotent methods only. */
  serverErrorRetries: number;
}

export const defaultPlatformLimits: Readonly<PlatformLimits> = Object.freeze({
  concurrency: 100,
  pointsPerMinute: 900,
  readCost: 1,
  writeCost: 5,
  creationsPerMinute: 80,
  creationsPerHour: 500,
  cpuMsPerMinute: 90_000,
  rateLimitRetries: 3,
  secondaryWaitMs: 60_000,
  backoffFactor: 2,
  maxWaitMs: 61 * 60_000,
  resetSkewMs: 1_000,
  serverErrorRetries: 2,
});

/** The defaults with `overrides` on top; every value must be a number ≥ 0 (concurrency, costs and budgets ≥ 1). */
export function resolveLimits(overrides: unknown, where = 'PlatformClient'): PlatformLimits {
  if (overrides === undefined) return { ...defaultPlatformLimits };
  if (overrides === null || typeof overrides !== 'object' || Array.isArray(overrides)) {
    throw new UsageError(`${where}: limits must be an object of numbers (e.g. { concurrency: 50 }), got ${overrides === null ? 'null' : typeof overrides}`, {
      code: 'INVALID_ARGUMENT',
    });
  }
  const limits: PlatformLimits = { ...defaultPlatformLimits };
  const atLeastOne = new Set(['concurrency', 'pointsPerMinute', 'creationsPerMinute', 'creationsPerHour', 'cpuMsPerMinute', 'backoffFactor']);
  for (const [name, value] of Object.entries(overrides)) {
    if (!(name in defaultPlatformLimits)) {
      throw new UsageError(`${where}: limits.${name} is not a limit; the limits are ${Object.keys(defaultPlatformLimits).join(', ')}`, {
        code: 'INVALID_ARGUMENT',
      });
    }
    if (value === undefined) continue;
    const least = atLeastOne.has(name) ? 1 : 0;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < least) {
      throw new UsageError(`${where}: limits.${name} must be a number ≥ ${least}, got ${JSON.stringify(value)}`, { code: 'INVALID_ARGUMENT' });
    }
    (limits as unknown as Record<string, number>)[name] = value;
  }
  return limits;
}

const readMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Points a request costs: reads 1, writes 5 by default (RATE-COST-REST-READ, RATE-COST-REST-WRITE). */
export function pointsOf(method: string, limits: PlatformLimits): number {
  return readMethods.has(method.toUpperCase()) ? limits.readCost : limits.writeCost;
}

/** `GET /rate_limit` does not count against the primary limit, though it does against the secondary ones (RATE-EP-STATUS). */
export function isRateLimitStatus(method: string, path: string): boolean {
  return method.toUpperCase() === 'GET' && /^\/rate_limit\/?$/.test(path);
}

/**
 * Whether a request creates content (RATE-SEC-CONTENT-CREATION). The specification does not list which requests do;
 * GitHub counts creating issues, comments, pull requests, statuses and the like. Every POST counts, except those
 * known to create nothing a user sees (an installation token, rendering markdown, GraphQL — its own budget); a
 * caller can say otherwise per request (`creates`).
 */
export function isCreation(method: string, path: string): boolean {
  if (method.toUpperCase() !== 'POST') return false;
  return !/^\/app\/installations\/[^/]+\/access_tokens$|^\/markdown(\/raw)?$|^\/graphql$/.test(path);
}

/**
 * The primary resource a request counts against before the platform says (`x-ratelimit-resource` then decides):
 * search has its own, stricter budget (RATE-PRI-STRICTER-ENDPOINTS), GraphQL its own (RATE-PRI-GRAPHQL-SEPARATE).
 */
export function resourceOf(path: string): string {
  if (path === '/graphql') return 'graphql';
  if (/^\/search\/code(\/|$)/.test(path)) return 'code_search';
  if (/^\/search\//.test(path)) return 'search';
  return 'core';
}

/** After these, every remaining segment is one value (a ref like `heads/main`, a file path). */
const restIsValue = new Set([
  'statuses',
  'status',
  'check-runs',
  'check-suites',
  'commits',
  'refs',
  'ref',
  'branches',
  'contents',
  'tags',
  'compare',
  'tarball',
  'zipball',
  'readme',
]);
/** After these, the next segment is a name or number. */
const nextIsValue = new Set([
  'repos',
  'users',
  'orgs',
  'enterprises',
  'gists',
  'teams',
  'installations',
  'issues',
  'pulls',
  'comments',
  'releases',
  'hooks',
  'deployments',
  'runs',
  'jobs',
  'workflows',
  'milestones',
  'labels',
  'keys',
  'assets',
  'artifacts',
  'reviews',
  'invitations',
  'projects',
  'columns',
  'cards',
  'members',
  'collaborators',
  'environments',
  'secrets',
  'variables',
  'rulesets',
  'alerts',
  'marketplace_listing',
  'memberships',
  'threads',
  'notifications',
  'codespaces',
  'packages',
  'versions',
  'events',
  'deliveries',
  'autolinks',
  'check_runs',
]);

/**
 * The endpoint a path belongs to, as a template (`/repos/{}/{}/statuses/{}`): the secondary points budget is per
 * endpoint (RATE-SEC-POINTS-REST), so requests to different issues of one repository share it. The specification
 * gives no route list; the template is inferred from GitHub's URL conventions: a name or number follows a collection
 * (`repos`, `issues`, …), everything after `statuses`/`contents`/`refs`/… is one value, and any all-digit or
 * commit-hash segment is a value. Grouping two endpoints into one only makes the client more careful; splitting one
 * would let it overrun, so the rules lean towards grouping. A caller who knows the template passes it (`{name}`
 * placeholders and `params`).
 */
export function pathTemplate(path: string): string {
  // A template the caller wrote (`/repos/{owner}/{repo}/commits/{ref}/status`) is the endpoint as it stands: only a
  // concrete path needs its values guessed.
  if (/\{[^}]*\}/.test(path)) return path.split('?')[0]!.replace(/\{[^}]*\}/g, '{}');
  const segments = path.split('/').slice(1);
  const out: string[] = [];
  for (let i = 0; i < segments.length; i += 1) {
    const segment = segments[i]!;
    if (/^\{[^}]*\}$/.test(segment) || /^\d+$/.test(segment) || /^[0-9a-f]{40}$|^[0-9a-f]{64}$/i.test(segment)) {
      out.push('{}');
      continue;
    }
    out.push(segment);
    const previous = segments[i - 1];
    if (restIsValue.has(segment) && i + 1 < segments.length && !(segment === 'commits' && previous === 'git')) {
      out.push('{}');
      break;
    }
    if (nextIsValue.has(segment) && i + 1 < segments.length) {
      out.push('{}');
      i += 1;
      // /repos/{owner}/{repo}: the repository takes two segments.
      if (segment === 'repos' && i + 1 < segments.length) {
        out.push('{}');
        i += 1;
      }
    }
  }
  return `/${out.join('/')}`;
}

export function endpointOf(method: string, path: string): string {
  return `${method.toUpperCase()} ${pathTemplate(path)}`;
}
