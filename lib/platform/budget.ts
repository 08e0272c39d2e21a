/**
 * Where the budgets live. `BudgetStore` is the seam for sharing them between processes and machines (Redis, later):
 * `reserve` checks every budget a request touches and takes them all, or none, in one step — a store shared by
 * several processes does it atomically (a script on the server), so two workers never both take the last point.
 * `MemoryBudgetStore` keeps them in this process; one of it (`processBudgetStore`) is shared by every client of the
 * process that is given no store, so the in-flight cap holds for one client or many (RATE-SEC-CONCURRENCY).
 */
import type { PlatformLimits } from './limits.js';

/** What one attempt of a request takes from the budgets. */
export interface Reservation {
  /** `Identity.key`: a hash of the credential. */
  identity: string;
  /** Method + path template (`GET /repos/{}/{}/issues`). */
  endpoint: string;
  /** The primary resource it is expected to count against (core, search, …). */
  resource: string;
  points: number;
  creation: boolean;
  /** False for `GET /rate_limit` (RATE-EP-STATUS). */
  countsPrimary: boolean;
  limits: PlatformLimits;
}

/** What the `x-ratelimit-*` headers said about a resource (RATE-HDR-*). */
export interface PrimaryObservation {
  resource: string;
  limit: number;
  remaining: number;
  used: number | undefined;
  /** Epoch seconds. */
  reset: number;
}

export type Scope = 'concurrency' | 'cpu' | 'endpoint' | 'resource' | 'creation';

export type ReserveResult =
  | { granted: true }
  /** `retryAt` (epoch ms) when time frees the budget; undefined when a request ending does (concurrency, a probe). */
  | { granted: false; scope: Scope; retryAt: number | undefined; reason: string };

export interface ReleaseInfo {
  now: number;
  /** How long the platform took to answer, the estimate of its CPU time (RATE-SEC-CPU-TIME). */
  durationMs: number;
  /** The headers of the answer, when it had them. */
  observation?: PrimaryObservation | undefined;
  /** True when the answer came without rate-limit headers: the resource is not probed again. */
  answered: boolean;
}

export interface ResourceState {
  limit: number | undefined;
  remaining: number | undefined;
  used: number | undefined;
  /** Epoch seconds. */
  reset: number | undefined;
  inFlight: number;
  heldUntil: number | undefined;
}

export interface BudgetSnapshot {
  inFlight: number;
  resources: Record<string, ResourceState>;
  /** Points used in the last minute, per endpoint. */
  points: Record<string, number>;
  creationsLastMinute: number;
  creationsLastHour: number;
  cpuMsLastMinute: number;
  holds: Record<string, number>;
}

export interface BudgetStore {
  reserve(reservation: Reservation, now: number): Promise<ReserveResult>;
  release(reservation: Reservation, info: ReleaseInfo): Promise<void>;
  /** Holds a scope until `until` (epoch ms): `endpoint:<endpoint>`, `resource:<resource>` or `creation`. */
  hold(identity: string, scope: string, until: number): Promise<void>;
  snapshot(identity: string, now: number): Promise<BudgetSnapshot>;
  /** Called when a reservation is released, so waiters in this process try again at once. */
  onRelease(listener: () => void): () => void;
}

const minute = 60_000;
const hour = 60 * minute;

interface Resource {
  limit: number | undefined;
  remaining: number | undefined;
  used: number | undefined;
  reset: number | undefined;
  inFlight: number;
  /** The platform has answered for this resource (with or without headers): no more probing. */
  answered: boolean;
}

interface IdentityState {
  points: Map<string, Array<[at: number, points: number]>>;
  creations: number[];
  cpu: Array<[at: number, ms: number]>;
  resources: Map<string, Resource>;
  holds: Map<string, number>;
}

/** The sum of `[at, n]` entries within `window` before `now`, dropping older ones. */
function windowSum(entries: Array<[number, number]>, now: number, window: number): number {
  while (entries.length > 0 && entries[0]![0] <= now - window) entries.shift();
  let sum = 0;
  for (const [, n] of entries) sum += n;
  return sum;
}

/** When enough of `entries` will have left the window for `need` more to fit under `cap`. */
function whenFits(entries: Array<[number, number]>, window: number, cap: number, need: number): number {
  let sum = 0;
  for (const [, n] of entries) sum += n;
  for (const [at, n] of entries) {
    sum -= n;
    if (sum + need <= cap) return at + window;
  }
  return (entries.at(-1)?.[0] ?? 0) + window;
}

export class MemoryBudgetStore implements BudgetStore {
  private inFlight = 0;
  private readonly identities = new Map<string, IdentityState>();
  private readonly listeners = new Set<() => void>();
  /** The points entry and creation stamp each granted reservation took, re-stamped when its answer comes. */
  private readonly taken = new WeakMap<Reservation, { points: [number, number]; creation: number | undefined }>();

  private state(identity: string): IdentityState {
    let state = this.identities.get(identity);
    if (!state) {
      state = { points: new Map(), creations: [], cpu: [], resources: new Map(), holds: new Map() };
      this.identities.set(identity, state);
    }
    return state;
  }

  private resource(state: IdentityState, name: string): Resource {
    let resource = state.resources.get(name);
    if (!resource) {
      resource = { limit: undefined, remaining: undefined, used: undefined, reset: undefined, inFlight: 0, answered: false };
      state.resources.set(name, resource);
    }
    return resource;
  }

  reserve(r: Reservation, now: number): Promise<ReserveResult> {
    return Promise.resolve(this.reserveNow(r, now));
  }

  private reserveNow(r: Reservation, now: number): ReserveResult {
    const { limits } = r;
    if (this.inFlight >= limits.concurrency) {
      return {
        granted: false,
        scope: 'concurrency',
        retryAt: undefined,
        reason: `${this.inFlight} requests in flight, the most allowed (RATE-SEC-CONCURRENCY)`,
      };
    }
    const state = this.state(r.identity);
    for (const [scope, key] of [
      ['resource', `resource:${r.resource}`],
      ['endpoint', `endpoint:${r.endpoint}`],
      ...(r.creation ? [['creation', 'creation']] : []),
    ] as Array<[Scope, string]>) {
      const until = state.holds.get(key);
      if (until !== undefined && until > now) return { granted: false, scope, retryAt: until, reason: `${key} is held until ${new Date(until).toISOString()}` };
    }
    const resource = this.resource(state, r.resource);
    if (r.countsPrimary) {
      if (resource.reset !== undefined && now >= resource.reset * 1000 + limits.resetSkewMs) {
        // A new window: the budget is unknown until the platform says it again.
        resource.remaining = undefined;
        resource.used = undefined;
        resource.reset = undefined;
        resource.answered = false;
      }
      if (resource.remaining !== undefined && resource.reset !== undefined && resource.remaining - resource.inFlight <= 0) {
        const until = resource.reset * 1000 + limits.resetSkewMs;
        return {
          granted: false,
          scope: 'resource',
          retryAt: until,
          reason: `the ${r.resource} budget is spent until ${new Date(resource.reset * 1000).toISOString()} (RATE-HDR-REMAINING)`,
        };
      }
      if (!resource.answered && resource.inFlight > 0) {
        // The first request to a resource goes alone: its answer tells the budget before the others spend it.
        return { granted: false, scope: 'resource', retryAt: undefined, reason: `waiting for the first answer about the ${r.resource} budget` };
      }
    }
    let points = state.points.get(r.endpoint);
    if (!points) {
      points = [];
      state.points.set(r.endpoint, points);
    }
    const used = windowSum(points, now, minute);
    if (used + r.points > limits.pointsPerMinute) {
      return {
        granted: false,
        scope: 'endpoint',
        retryAt: whenFits(points, minute, limits.pointsPerMinute, r.points),
        reason: `${r.endpoint} used ${used} of ${limits.pointsPerMinute} points this minute (RATE-SEC-POINTS-REST)`,
      };
    }
    if (r.creation) {
      state.creations = state.creations.filter((at) => at > now - hour);
      const creations = state.creations.map((at): [number, number] => [at, 1]);
      const lastHour = creations.length;
      const recent = creations.filter(([at]) => at > now - minute);
      if (recent.length + 1 > limits.creationsPerMinute) {
        return {
          granted: false,
          scope: 'creation',
          retryAt: whenFits(recent, minute, limits.creationsPerMinute, 1),
          reason: `${recent.length} content-creating requests this minute, the most allowed (RATE-SEC-CONTENT-CREATION)`,
        };
      }
      if (lastHour + 1 > limits.creationsPerHour) {
        return {
          granted: false,
          scope: 'creation',
          retryAt: whenFits(creations, hour, limits.creationsPerHour, 1),
          reason: `${lastHour} content-creating requests this hour, the most allowed (RATE-SEC-CONTENT-CREATION)`,
        };
      }
    }
    const cpu = windowSum(state.cpu, now, minute);
    if (cpu >= limits.cpuMsPerMinute) {
      return {
        granted: false,
        scope: 'cpu',
        retryAt: whenFits(state.cpu, minute, limits.cpuMsPerMinute, 1),
        reason: `an estimated ${Math.round(cpu / 1000)} s of the platform's CPU time this minute (RATE-SEC-CPU-TIME)`,
      };
    }
    this.inFlight += 1;
    const entry: [number, number] = [now, r.points];
    points.push(entry);
    if (r.creation) state.creations.push(now);
    this.taken.set(r, { points: entry, creation: r.creation ? now : undefined });
    if (r.countsPrimary) resource.inFlight += 1;
    return { granted: true };
  }

  release(r: Reservation, info: ReleaseInfo): Promise<void> {
    this.inFlight = Math.max(0, this.inFlight - 1);
    const state = this.state(r.identity);
    if (info.durationMs > 0) state.cpu.push([info.now, info.durationMs]);
    // The platform counts a request in its sliding windows when it admits it, after it was sent: counted from the
    // sending, a window would free a slot here before it frees there (the 81st creation of a minute refused by a few
    // milliseconds). So a request's points and creation count from its answer, which comes after the admission.
    const taken = this.taken.get(r);
    if (taken) {
      this.taken.delete(r);
      const points = state.points.get(r.endpoint);
      if (points) {
        const at = points.indexOf(taken.points);
        if (at >= 0) points.splice(at, 1);
        points.push([info.now, taken.points[1]]);
      }
      if (taken.creation !== undefined) {
        const at = state.creations.indexOf(taken.creation);
        if (at >= 0) state.creations.splice(at, 1);
        state.creations.push(info.now);
      }
    }
    if (r.countsPrimary) {
      const guessed = this.resource(state, r.resource);
      guessed.inFlight = Math.max(0, guessed.inFlight - 1);
      if (info.answered) guessed.answered = true;
    }
    const o = info.observation;
    if (o && r.countsPrimary) {
      const resource = this.resource(state, o.resource);
      resource.answered = true;
      // Answers arrive out of order: within one window the lowest remaining is the latest news.
      if (resource.reset === o.reset && resource.remaining !== undefined && resource.remaining < o.remaining) {
        resource.limit = o.limit;
      } else {
        Object.assign(resource, { limit: o.limit, remaining: o.remaining, used: o.used, reset: o.reset });
      }
    }
    for (const listener of this.listeners) listener();
    return Promise.resolve();
  }

  hold(identity: string, scope: string, until: number): Promise<void> {
    const holds = this.state(identity).holds;
    holds.set(scope, Math.max(holds.get(scope) ?? 0, until));
    return Promise.resolve();
  }

  snapshot(identity: string, now: number): Promise<BudgetSnapshot> {
    const state = this.state(identity);
    const resources: Record<string, ResourceState> = {};
    for (const [name, r] of state.resources) {
      const heldUntil = state.holds.get(`resource:${name}`);
      resources[name] = {
        limit: r.limit,
        remaining: r.remaining,
        used: r.used,
        reset: r.reset,
        inFlight: r.inFlight,
        heldUntil: heldUntil !== undefined && heldUntil > now ? heldUntil : undefined,
      };
    }
    const points: Record<string, number> = {};
    for (const [endpoint, entries] of state.points) {
      const used = windowSum(entries, now, minute);
      if (used > 0) points[endpoint] = used;
    }
    const holds: Record<string, number> = {};
    for (const [scope, until] of state.holds) if (until > now) holds[scope] = until;
    return Promise.resolve({
      inFlight: this.inFlight,
      resources,
      points,
      creationsLastMinute: state.creations.filter((at) => at > now - minute).length,
      creationsLastHour: state.creations.filter((at) => at > now - hour).length,
      cpuMsLastMinute: windowSum(state.cpu, now, minute),
      holds,
    });
  }

  onRelease(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The store of every client in this process that is given none. */
export const processBudgetStore: BudgetStore = new MemoryBudgetStore();
