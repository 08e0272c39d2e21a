/**
 * The metrics of Gantry's servers, in the Prometheus text format through prom-client. One `Registry` per server
 * instance — never prom-client's global one — so two servers in one process (tests) keep their own counts.
 *
 * Label values are names the code chose (an outcome, a refusal reason, a tool of the catalogue) or names the
 * platform signed (an event, an action); never a token, a URL, or a person. The platform identity of the budgets is
 * its kind and a short prefix of the hash lib/platform keys it by, never the credential.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Which server the registry belongs to: the `server` label of gantry_up and the process metrics' prefix stays gantry_. */
export type ServerKind = 'hooks-serve' | 'hooks-worker' | 'mcp-serve';

const secondsBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const gateBuckets = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** What a delivery's answer says, as `hooks serve` logs it (lib/webhooks' DeliveryRecord). */
export interface DeliveryObservation {
  event: string | undefined;
  action: string | undefined;
  status: number;
  outcome: string;
  ms: number;
}

/** A queue's counts at scrape time: jobs waiting and running in the whole queue (Redis) or this process (memory). */
export interface QueueCounts {
  waiting: number;
  running: number;
}

/** Where the queue's figures come from: its counts (asked at each scrape) and the jobs reclaimed from dead workers (kept by the queue). */
export interface QueueSource {
  counts(): Promise<QueueCounts>;
  reclaimed?: { readonly retried: number; readonly failed: number };
}

/** One platform identity's budgets at scrape time, as `client.budgets()` gives them. */
export interface BudgetReading {
  /** `kind:hash-prefix`, never the credential. */
  identity: string;
  resources: Record<string, { remaining: number | undefined; limit: number | undefined }>;
}

const signatureReasons = new Set(['signature-missing', 'signature-malformed', 'signature-mismatch', 'sha1-refused']);

/** A label value from outside: at most 64 characters of [A-Za-z0-9_.:-], the rest replaced, so no label carries prose or a URL. */
export function labelValue(value: string | undefined): string {
  if (value === undefined || value === '') return '-';
  return value.slice(0, 64).replace(/[^A-Za-z0-9_.:-]/g, '_');
}

export class ServerMetrics {
  readonly registry = new Registry();
  readonly deliveries: Counter<'event' | 'action' | 'verdict'>;
  readonly signatureRefusals: Counter<'reason'>;
  readonly deliverySeconds: Histogram<'verdict'>;
  readonly jobs: Counter<'event' | 'outcome'>;
  readonly jobSeconds: Histogram<'event' | 'outcome'>;
  readonly gateSeconds: Histogram<'decision'>;
  readonly jobsReclaimed: Counter<'outcome'>;
  readonly heldSeconds: Counter<'limit'>;
  readonly platformRefusals: Counter<'limit'>;
  readonly mcpRequests: Counter<'tool' | 'outcome'>;
  readonly authRefusals: Counter<'reason'>;
  readonly jwksRefreshes: Counter;
  /** What the gauges read at each scrape (set by readQueue, readBudgets). */
  private readonly sources: { queue?: QueueSource; budgets?: () => Promise<BudgetReading[]> } = {};

  constructor(server: ServerKind) {
    const registers = [this.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: L[]) => new Counter<L>({ name, help, labelNames, registers });
    const histogram = <L extends string>(name: string, help: string, labelNames: L[], buckets: number[]) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers });
    collectDefaultMetrics({ register: this.registry, prefix: 'gantry_' });
    new Gauge({ name: 'gantry_up', help: 'The server is running (1), by kind', labelNames: ['server'], registers }).set({ server }, 1);
    this.deliveries = counter(
      'gantry_webhook_deliveries_total',
      'Deliveries answered, by event, action and verdict (done, accepted, failed, duplicate, queue-error, or the refusal reason)',
      ['event', 'action', 'verdict'],
    );
    this.signatureRefusals = counter('gantry_webhook_signature_refusals_total', 'Deliveries refused for their signature (401), by reason', ['reason']);
    this.deliverySeconds = histogram(
      'gantry_webhook_delivery_duration_seconds',
      'From a delivery arriving to its answer, by verdict',
      ['verdict'],
      secondsBuckets,
    );
    this.jobs = counter('gantry_webhook_jobs_total', "Jobs run by this process's handlers, by event and outcome (done, failed)", ['event', 'outcome']);
    this.jobSeconds = histogram(
      'gantry_webhook_job_duration_seconds',
      "A job's handlers, by event and outcome",
      ['event', 'outcome'],
      [...secondsBuckets, 30, 60, 300, 600],
    );
    this.gateSeconds = histogram(
      'gantry_gate_duration_seconds',
      'Deciding a deployment protection rule (gates included), by decision (approved, rejected, error)',
      ['decision'],
      gateBuckets,
    );
    const sources = this.sources;
    this.jobsReclaimed = new Counter({
      name: 'gantry_webhook_jobs_reclaimed_total',
      help: 'Jobs whose worker died mid-job (its lease ran out), found by this process: run again (retried) or failed after too many starts (failed)',
      labelNames: ['outcome'],
      registers,
      collect() {
        const reclaimed = sources.queue?.reclaimed;
        if (!reclaimed) return;
        this.reset();
        this.inc({ outcome: 'retried' }, reclaimed.retried);
        this.inc({ outcome: 'failed' }, reclaimed.failed);
      },
    });
    new Gauge({
      name: 'gantry_webhook_queue_jobs',
      help: 'Jobs in the queue now, by state (waiting, running): the whole Redis queue, or this process',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        const counts = await sources.queue?.counts().catch(() => undefined);
        if (!counts) return;
        this.set({ state: 'waiting' }, counts.waiting);
        this.set({ state: 'running' }, counts.running);
      },
    });
    new Gauge({
      name: 'gantry_platform_rate_limit_remaining',
      help: 'Primary rate-limit budget remaining, by resource and identity (kind and a short hash), as the platform last said',
      labelNames: ['resource', 'identity'],
      registers,
      async collect() {
        this.reset();
        for (const reading of (await sources.budgets?.().catch(() => undefined)) ?? [])
          for (const [resource, state] of Object.entries(reading.resources))
            if (state.remaining !== undefined) this.set({ resource: labelValue(resource), identity: reading.identity }, state.remaining);
      },
    });
    this.heldSeconds = counter('gantry_platform_rate_limit_held_seconds_total', 'Time announced as held by a rate limit, by limit (primary, secondary)', [
      'limit',
    ]);
    this.platformRefusals = counter('gantry_platform_refusals_total', 'Requests the platform refused for a rate limit (403/429), by limit: must stay 0', [
      'limit',
    ]);
    this.mcpRequests = counter(
      'gantry_mcp_requests_total',
      'Requests to the context server, by tool (or JSON-RPC method) and outcome (ok, refused, bad-request, error)',
      ['tool', 'outcome'],
    );
    this.authRefusals = counter(
      'gantry_mcp_authorization_refusals_total',
      'Requests refused by authorization, by reason (no-token, malformed, expired, wrong-audience, invalid-token, insufficient-scope, unavailable)',
      ['reason'],
    );
    this.jwksRefreshes = new Counter({ name: 'gantry_mcp_jwks_fetches_total', help: "Fetches of the authorization server's keys (JWKS)", registers });
    // Counters that exist from the start, so a query sees 0 rather than nothing.
    this.platformRefusals.inc({ limit: 'primary' }, 0);
    this.platformRefusals.inc({ limit: 'secondary' }, 0);
  }

  /** Reads the queue's figures at each scrape. */
  readQueue(source: QueueSource): void {
    this.sources.queue = source;
  }

  /** Reads the platform budgets at each scrape. */
  readBudgets(source: () => Promise<BudgetReading[]>): void {
    this.sources.budgets = source;
  }

  /** A delivery answered (the receiver's onDelivery). */
  delivery(record: DeliveryObservation): void {
    // A refusal's headers were not signed: its event and action are anyone's words, so they are not labels.
    const refused = record.status >= 400 && record.status !== 500 && record.status !== 503;
    const event = refused ? '-' : labelValue(record.event);
    const action = refused ? '-' : labelValue(record.action);
    const verdict = labelValue(record.outcome);
    this.deliveries.inc({ event, action, verdict });
    this.deliverySeconds.observe({ verdict }, record.ms / 1000);
    if (signatureReasons.has(record.outcome)) this.signatureRefusals.inc({ reason: record.outcome });
  }

  /** A job run by this process's handlers. */
  job(event: string, outcome: 'done' | 'failed', ms: number): void {
    this.jobs.inc({ event: labelValue(event), outcome });
    this.jobSeconds.observe({ event: labelValue(event), outcome }, ms / 1000);
  }

  /** A platform rate-limit wait announced (lib/waits.ts): its length, and whether the platform refused. */
  rateLimitWait(limit: 'primary' | 'secondary', heldMs: number, refused: boolean): void {
    if (heldMs > 0) this.heldSeconds.inc({ limit }, heldMs / 1000);
    if (refused) this.platformRefusals.inc({ limit });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
