// The platform's rate limits as the embedded API enforces them (spec §Limits, RATE-*): a primary budget per identity and
// resource per hour, and the secondary limits — concurrency, points per endpoint per minute, content creation per
// minute and per hour. Every window is multiplied by `windowScale` (1 unless a test or `--window-scale` asks).

/** The numbers of spec §Limits; every one can be overridden (RATE-SEC-MAY-CHANGE), these are the defaults. */
export interface PlatformLimits {
  unauthenticated: number;
  user: number;
  userEnterprise: number;
  installationMin: number;
  installationEnterprise: number;
  installationCap: number;
  /** Extra requests per hour per repository and per organization user beyond `installationFreeCount`. */
  installationStep: number;
  installationFreeCount: number;
  oauthApp: number;
  oauthAppEnterprise: number;
  workflow: number;
  workflowEnterprise: number;
  /** An app authenticating as itself (a JWT): GitHub documents no number; 5,000 as a user's. */
  app: number;
  /** The search resource, per minute: 30 authenticated, 10 unauthenticated (GitHub's numbers; the spec only says "stricter"). */
  searchAuthenticated: number;
  searchUnauthenticated: number;
  /** GraphQL's own budget (RATE-PRI-GRAPHQL-SEPARATE), reported by /rate_limit; no GraphQL endpoint is served. */
  graphql: number;
  concurrency: number;
  pointsPerMinute: number;
  creationPerMinute: number;
  creationPerHour: number;
}

export const SPEC_LIMITS: Readonly<PlatformLimits> = Object.freeze({
  unauthenticated: 60,
  user: 5000,
  userEnterprise: 15000,
  installationMin: 5000,
  installationEnterprise: 15000,
  installationCap: 12500,
  installationStep: 50,
  installationFreeCount: 20,
  oauthApp: 5000,
  oauthAppEnterprise: 15000,
  workflow: 1000,
  workflowEnterprise: 15000,
  app: 5000,
  searchAuthenticated: 30,
  searchUnauthenticated: 10,
  graphql: 5000,
  concurrency: 100,
  pointsPerMinute: 900,
  creationPerMinute: 80,
  creationPerHour: 500,
});

export const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;

export type Resource = 'core' | 'search' | 'graphql';

/** One budget window: fixed, opened by the first counted request, closed `lengthMs` later (as GitHub's). */
export class FixedWindow {
  private start: number | undefined;
  used = 0;

  constructor(
    readonly limit: number,
    private readonly lengthMs: number,
  ) {}

  private roll(now: number): void {
    if (this.start !== undefined && now >= this.start + this.lengthMs) {
      this.start = undefined;
      this.used = 0;
    }
  }

  /** The state at `now`: what a response's headers say. */
  peek(now: number): { limit: number; used: number; remaining: number; resetMs: number } {
    this.roll(now);
    const resetMs = (this.start ?? now) + this.lengthMs;
    return { limit: this.limit, used: this.used, remaining: Math.max(0, this.limit - this.used), resetMs };
  }

  /** Counts one request if the budget allows it; false when it is spent. */
  take(now: number): boolean {
    this.roll(now);
    if (this.used >= this.limit) return false;
    this.start ??= now;
    this.used++;
    return true;
  }
}

/** A sliding window of weighted events (points, creations). */
export class SlidingWindow {
  private events: { at: number; weight: number }[] = [];
  private total = 0;

  constructor(
    readonly limit: number,
    private readonly lengthMs: number,
  ) {}

  private prune(now: number): void {
    let drop = 0;
    while (drop < this.events.length && this.events[drop]!.at <= now - this.lengthMs) this.total -= this.events[drop++]!.weight;
    if (drop > 0) this.events.splice(0, drop);
  }

  /** 0 when `weight` more keeps the window within its limit; else how long until it would (ms). Changes nothing. */
  wait(now: number, weight: number): number {
    this.prune(now);
    if (this.total + weight <= this.limit) return 0;
    // The earliest moment enough weight has left the window.
    let freed = 0;
    for (const event of this.events) {
      freed += event.weight;
      if (this.total - freed + weight <= this.limit) return Math.max(1, event.at + this.lengthMs - now);
    }
    return this.lengthMs;
  }

  add(now: number, weight: number): void {
    this.prune(now);
    this.events.push({ at: now, weight });
    this.total += weight;
  }

  used(now: number): number {
    this.prune(now);
    return this.total;
  }
}
