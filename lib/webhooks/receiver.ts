/**
 * The webhook receiver: a node `http` handler (and a Connect/Express middleware) that reads a delivery
 * (lib/webhooks/delivery.ts: headers, the 25 MB cap while streaming, the signature over the raw bytes), checks its
 * payload against the event catalogue, and puts it on the job queue — then waits a few seconds for the handlers.
 *
 * The platform gives a delivery 10 seconds. Done by then: 200 (or 500 when a handler failed, so the platform shows
 * the delivery failed and a redelivery runs it again). Still running: 202, and the work goes on; a handler error
 * after that is logged with the delivery's GUID and passed to `onError`, never lost. A GUID that finished is
 * acknowledged and not run again (a redelivery).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { expectFunction, expectOptions, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { getLogger, type Logger } from '../log.js';
import { deliveryPayloadReader, sendRefusal, type DeliveryPayload } from './delivery.js';
import { WebhookDeliveryError } from './errors.js';
import { checkPayload } from './payload.js';
import { MemoryQueue, type JobQueue, type WebhookJob } from './queue.js';
import { optionKeys, refuseUnknownOptions } from '../settings.js';
import type { WebhookErrorCode } from './errors.js';

/** The answer to a delivery handled (or recorded) in full. */
const DONE = `${JSON.stringify({ status: 'done' })}\n`;
const DONE_HEADERS = Object.freeze({ 'content-type': 'application/json', 'content-length': Buffer.byteLength(DONE) });

/** Bodies declared larger than this (or of unknown length) wait for one of the `largeReads` slots. */
const LARGE_BODY_BYTES = 1024 * 1024;

export interface WebhookContext {
  id: string;
  event: string;
  action: string | undefined;
  installationId: number | undefined;
  payload: Record<string, unknown>;
  /** 1 for the first run, more when a failed delivery was delivered again or a worker died mid-job. */
  attempt: number;
  /** Aborted when the job runs out of time or the queue closes. */
  signal: AbortSignal;
  log: Logger;
}

export type WebhookHandler = (context: WebhookContext) => Promise<void> | void;

export interface ReceiverOptions {
  /** The webhook secrets (several while rotating); else GANTRY_WEBHOOK_SECRET and GANTRY_WEBHOOK_SECRETS. */
  secrets?: string | readonly string[];
  /** Accept `X-Hub-Signature` (sha1) when no sha256 signature came; default true. */
  allowSha1?: boolean;
  /** The largest body read; default 25 MiB (HOOK-LIM-PAYLOAD-25MB). */
  maxBytes?: number;
  /**
   * How many bodies over 1 MiB are read (and parsed) at once; default 1. The others wait with their sockets paused
   * (TCP holds the senders), so 20 deliveries of 25 MB arriving together take what one does, not 20 times that: a
   * 25 MB body is also, for a moment, its text and a parsed object graph half as large again. Reading them one after
   * another costs no time: parsing is CPU-bound on the one thread either way.
   */
  largeReads?: number;
  /**
   * How long the receiver waits for the handlers before answering 202; default 5 s. The platform gives 10 s, but a
   * gate running Lighthouse in this process stalls the event loop for up to 2 s at a time on a small machine, so
   * the timer that ends the wait may fire late: 5 s keeps the answer well inside.
   */
  ackWithinMs?: number;
  /** Where jobs wait; default a `MemoryQueue` in this process. */
  queue?: JobQueue;
  /** Run the handlers here (default); false for a receiver whose jobs workers elsewhere run (`gantry hooks worker`). */
  work?: boolean;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
}

const receiverOptionKeys = optionKeys<ReceiverOptions>({
  secrets: true,
  allowSha1: true,
  maxBytes: true,
  largeReads: true,
  ackWithinMs: true,
  queue: true,
  work: true,
  logger: true,
  env: true,
});

/** One line per delivery, for logs and tests. */
export interface DeliveryRecord {
  id: string | undefined;
  event: string | undefined;
  action: string | undefined;
  status: number;
  /** accepted (202), done, failed, duplicate, or the refusal's reason. */
  outcome: string;
  ms: number;
}

/** The secrets from the options or GANTRY_WEBHOOK_SECRET and GANTRY_WEBHOOK_SECRETS (comma- or newline-separated). */
export function webhookSecrets(where: string, option: string | readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const list =
    option === undefined
      ? [env.GANTRY_WEBHOOK_SECRET, ...(env.GANTRY_WEBHOOK_SECRETS ?? '').split(/[,\n]/)]
          .filter((s): s is string => typeof s === 'string')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : typeof option === 'string'
        ? [option]
        : [...option];
  list.forEach((secret, index) => expectString(where, `secrets[${index}]`, secret, 'a webhook secret'));
  if (list.length === 0) {
    throw new UsageError(`${where}: no webhook secret: set GANTRY_WEBHOOK_SECRET (and GANTRY_WEBHOOK_SECRETS while rotating) or pass secrets`, {
      code: 'WEBHOOK_NO_SECRET' satisfies WebhookErrorCode,
      hint: 'the secret is the one given to the platform with the webhook; a receiver without one would run anything anyone posts',
    });
  }
  return [...new Set(list)];
}

function installationOf(payload: Record<string, unknown>): number | undefined {
  const installation = payload.installation;
  const id = installation && typeof installation === 'object' ? (installation as Record<string, unknown>).id : undefined;
  return typeof id === 'number' && Number.isInteger(id) ? id : undefined;
}

export class WebhookReceiver {
  private readonly handlers = new Map<string, WebhookHandler[]>();
  private readonly errorHandlers: Array<(error: Error, context: { id: string; event: string; action: string | undefined }) => void> = [];
  private readonly deliveryListeners: Array<(record: DeliveryRecord) => void> = [];
  private readonly jobListeners: Array<(job: WebhookJob, outcome: 'done' | 'failed', ms: number) => void> = [];
  private readonly readPayload: (request: IncomingMessage, checkOnly: boolean) => Promise<DeliveryPayload>;
  /** Per event: whether its deliveries need no job (needsNoJob); forgotten when a handler is added. */
  private readonly noJobEvents = new Map<string, boolean>();
  /** Counts the handlers added: a decision taken before a body was read holds if none came since. */
  private handlersAdded = 0;
  private readonly ackWithinMs: number;
  private readonly largeReads: number;
  private largeReading = 0;
  private readonly largeWaiting: Array<() => void> = [];
  readonly queue: JobQueue;
  private readonly logger: Logger;
  /** This receiver runs its queue's jobs (`work`, or `startWorking`). */
  private working = false;

  constructor(options: ReceiverOptions = {}) {
    const where = 'WebhookReceiver';
    expectOptions(where, options);
    refuseUnknownOptions(where, options, receiverOptionKeys);
    const secrets = webhookSecrets(where, options.secrets, options.env ?? process.env);
    this.readPayload = deliveryPayloadReader({
      secrets,
      allowSha1: options.allowSha1 ?? true,
      ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
    });
    const ack = options.ackWithinMs ?? 5_000;
    if (typeof ack !== 'number' || !(ack >= 0 && ack <= 10_000))
      throw new UsageError(`${where}: ackWithinMs must be 0 to 10,000 (the platform waits 10 s), got ${JSON.stringify(ack)}`, { code: 'INVALID_ARGUMENT' });
    this.ackWithinMs = ack;
    const largeReads = options.largeReads ?? 1;
    if (!Number.isInteger(largeReads) || largeReads < 1)
      throw new UsageError(`${where}: largeReads must be a whole number ≥ 1, got ${JSON.stringify(largeReads)}`, { code: 'INVALID_ARGUMENT' });
    this.largeReads = largeReads;
    this.logger = options.logger ?? getLogger();
    this.queue = options.queue ?? new MemoryQueue();
    if (options.work !== false) this.startWorking();
  }

  /**
   * Runs this receiver's handlers on its queue's jobs: what `work: true` (the default) does when the receiver is
   * made, for a receiver made with `work: false` that is to work once its queue is known to answer.
   */
  startWorking(): this {
    this.queue.process(async (job, context) => {
      const started = Date.now();
      let outcome: 'done' | 'failed' = 'failed';
      try {
        await this.run(job, context);
        outcome = 'done';
      } finally {
        for (const listener of this.jobListeners) listener(job, outcome, Date.now() - started);
      }
    });
    this.working = true;
    return this;
  }

  /** Whether any handler would run for the event and action. */
  private handles(event: string, action: string | undefined): boolean {
    return this.handlers.has(event) || this.handlers.has('*') || (action !== undefined && this.handlers.has(`${event}.${action}`));
  }

  /**
   * Whether a delivery of `event` needs no job: the jobs run here, on the in-process queue, and no handler is for the
   * event (any action). Its payload is then only checked, never parsed, and only its GUID is recorded.
   */
  private needsNoJob(event: unknown): boolean {
    if (!this.working || !(this.queue instanceof MemoryQueue) || typeof event !== 'string' || this.handlers.has('*')) return false;
    let none = this.noJobEvents.get(event);
    if (none === undefined) {
      none = true;
      for (const name of this.handlers.keys()) if (name === event || name.startsWith(`${event}.`)) none = false;
      // Any string can come as an event name: at most 1,000 are remembered.
      if (this.noJobEvents.size < 1000) this.noJobEvents.set(event, none);
    }
    return none;
  }

  /**
   * The answers made in this turn of the event loop, written together at its end (setImmediate), one after another,
   * instead of each as it is made. Behind a proxy on the same machine — `gantry hooks serve` listens on 127.0.0.1 by
   * default — each answer's write wakes the proxy; written back to back, a turn's answers wake it about once. The
   * wait is the rest of the turn (microseconds to a few milliseconds); the platform gives 10 s. On loopback this took
   * the receiver's CPU per delivery below @octokit/webhooks' (bench/webhooks, docs/performance.md).
   */
  private answers: Array<{ response: ServerResponse; status: number; headers: OutgoingHttpHeaders; text: string }> = [];
  private readonly writeAnswers = (): void => {
    const answers = this.answers;
    this.answers = [];
    for (const { response, status, headers, text } of answers) {
      if (response.headersSent || response.destroyed) continue;
      response.writeHead(status, headers);
      response.end(text);
    }
  };

  /** Answers a delivery (a JSON body, or its text) at the end of this turn, and tells the onDelivery listeners. */
  private answer(
    response: ServerResponse,
    started: number,
    status: number,
    body: Record<string, unknown> | string,
    record: Omit<DeliveryRecord, 'status' | 'ms'>,
  ): DeliveryRecord {
    if (!response.headersSent) {
      const text = typeof body === 'string' ? body : `${JSON.stringify(body)}\n`;
      const headers = text === DONE ? DONE_HEADERS : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
      if (this.answers.push({ response, status, headers, text }) === 1) setImmediate(this.writeAnswers);
    }
    const full: DeliveryRecord = { id: record.id, event: record.event, action: record.action, status, outcome: record.outcome, ms: Date.now() - started };
    for (const listener of this.deliveryListeners) listener(full);
    return full;
  }

  /** Records a delivery that needs no job and answers it (200 done, or duplicate), as the queue would have. */
  private recordOnly(response: ServerResponse, started: number, delivery: DeliveryPayload, action: string | undefined): DeliveryRecord {
    const { id, event } = delivery;
    let recorded;
    try {
      recorded = (this.queue as MemoryQueue).record(id);
    } catch (error) {
      this.logger.error(`webhook ${id}: the queue refused it: ${error instanceof Error ? error.message : String(error)}`, { delivery: id });
      return this.answer(
        response,
        started,
        503,
        { message: 'the receiver cannot queue deliveries now; the platform can redeliver it' },
        { id, event, action, outcome: 'queue-error' },
      );
    }
    if (!recorded.added)
      return this.answer(
        response,
        started,
        200,
        { status: 'duplicate', state: recorded.state, message: `delivery ${id} was received before (${recorded.state}); not run again` },
        { id, event, action, outcome: 'duplicate' },
      );
    return this.answer(response, started, 200, DONE, { id, event, action, outcome: 'done' });
  }

  /** Handle `event` (every action) or `event.action`; `*` for every delivery. */
  on(event: string | readonly string[], handler: WebhookHandler): this {
    expectFunction('WebhookReceiver.on', 'handler', handler, 'a function (context) => …');
    for (const name of typeof event === 'string' ? [event] : event) {
      expectString('WebhookReceiver.on', 'event', name, 'an event name such as "deployment_protection_rule" or "push", with ".action" or not');
      const list = this.handlers.get(name) ?? [];
      list.push(handler);
      this.handlers.set(name, list);
    }
    this.noJobEvents.clear();
    this.handlersAdded += 1;
    return this;
  }

  /** Told of every handler error (besides the log line), also those after the delivery was acknowledged. */
  onError(listener: (error: Error, context: { id: string; event: string; action: string | undefined }) => void): this {
    expectFunction('WebhookReceiver.onError', 'listener', listener, 'a function (error, context) => …');
    this.errorHandlers.push(listener);
    return this;
  }

  /** Told of every job this receiver's handlers ran (startWorking): its outcome and milliseconds, for the metrics. */
  onJob(listener: (job: WebhookJob, outcome: 'done' | 'failed', ms: number) => void): this {
    expectFunction('WebhookReceiver.onJob', 'listener', listener, 'a function (job, outcome, ms) => …');
    this.jobListeners.push(listener);
    return this;
  }

  /** Told of every delivery answered: the line `gantry hooks serve` logs. */
  onDelivery(listener: (record: DeliveryRecord) => void): this {
    expectFunction('WebhookReceiver.onDelivery', 'listener', listener, 'a function (record) => …');
    this.deliveryListeners.push(listener);
    return this;
  }

  /** The handlers of a job, as a worker runs them. */
  async run(job: WebhookJob, context: { attempt: number; signal: AbortSignal }): Promise<void> {
    const handlers = [
      ...(this.handlers.get(job.event) ?? []),
      ...(job.action ? (this.handlers.get(`${job.event}.${job.action}`) ?? []) : []),
      ...(this.handlers.get('*') ?? []),
    ];
    const errors: Error[] = [];
    for (const handler of handlers) {
      try {
        await handler({
          id: job.id,
          event: job.event,
          action: job.action,
          installationId: job.installationId,
          payload: job.payload,
          attempt: context.attempt,
          signal: context.signal,
          log: this.logger,
        });
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        errors.push(failure);
        this.logger.error(`webhook ${job.id} (${job.event}${job.action ? `.${job.action}` : ''}): a handler failed: ${failure.message}`, { delivery: job.id });
        for (const listener of this.errorHandlers) {
          try {
            listener(failure, { id: job.id, event: job.event, action: job.action });
          } catch {
            // A listener's own failure must not hide the handler's.
          }
        }
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} handlers failed: ${errors.map((e) => e.message).join('; ')}`);
  }

  /** A node `http` request listener. */
  handler(): (request: IncomingMessage, response: ServerResponse) => void {
    return (request, response) => {
      void this.receive(request, response);
    };
  }

  /** A Connect/Express middleware answering deliveries on `path` (default `/hooks`), passing other requests on. */
  middleware(options: { path?: string } = {}): (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void {
    const path = options.path ?? '/hooks';
    expectString('WebhookReceiver.middleware', 'path', path, 'a path such as "/hooks"');
    return (request, response, next) => {
      const url = (request as IncomingMessage & { originalUrl?: string }).originalUrl ?? request.url ?? '/';
      if (!(url === path || (url.startsWith(path) && url[path.length] === '?'))) {
        next();
        return;
      }
      // A body parser that ran first consumed the bytes the signature covers: say so instead of refusing every delivery.
      if ((request as IncomingMessage & { body?: unknown }).body !== undefined && request.readableEnded) {
        next(
          new UsageError(
            `WebhookReceiver.middleware: a body parser read the request before the receiver; mount the receiver on ${path} before express.json() or other body parsers`,
            { code: 'WEBHOOK_BODY_CONSUMED' satisfies WebhookErrorCode },
          ),
        );
        return;
      }
      void this.receive(request, response);
    };
  }

  /** Reads, checks and queues one delivery, and answers it (the answer is written at the end of this event-loop turn). */
  async receive(request: IncomingMessage, response: ServerResponse): Promise<DeliveryRecord> {
    const started = Date.now();
    let delivery: DeliveryPayload;
    let noJob = false;
    const handlersAdded = this.handlersAdded;
    const declared = Number(request.headers['content-length']);
    const large = !(declared <= LARGE_BODY_BYTES);
    try {
      if (large) await this.largeSlot();
      noJob = this.needsNoJob(request.headers['x-platform-event']);
      delivery = await this.readPayload(request, noJob);
    } catch (error) {
      if (error instanceof WebhookDeliveryError) {
        const id = request.headers['x-platform-delivery'];
        const event = request.headers['x-platform-event'];
        // Its own headers (Allow, Accept-Post), and a close that lets the answer reach a sender still sending.
        sendRefusal(response, error);
        return this.answer(
          response,
          started,
          error.status,
          {},
          {
            id: typeof id === 'string' ? id.slice(0, 64) : undefined,
            event: typeof event === 'string' ? event.slice(0, 64) : undefined,
            action: undefined,
            outcome: error.reason,
          },
        );
      }
      this.logger.error(`webhook: reading a delivery failed: ${error instanceof Error ? error.message : String(error)}`);
      return this.answer(
        response,
        started,
        500,
        { message: 'the receiver failed to read the delivery' },
        { id: undefined, event: undefined, action: undefined, outcome: 'receiver-error' },
      );
    } finally {
      if (large) this.releaseLargeSlot();
    }
    const check = checkPayload(delivery.event, delivery.payload);
    const action = typeof delivery.payload.action === 'string' ? delivery.payload.action : undefined;
    const base = { id: delivery.id, event: delivery.event, action };
    if (!check.ok) return this.answer(response, started, 400, { message: check.message }, { ...base, outcome: 'invalid-payload' });
    if (check.ghostSender)
      this.logger.debug(`webhook ${delivery.id}: the sender is the ghost placeholder (no user could be resolved)`, { delivery: delivery.id });
    // No handler here for it, and the jobs run here: nothing to run, so no job — only the GUID is recorded (a
    // redelivery is answered as one), at a fraction of a job's cost (its timers, abort signal, promises). A payload
    // that was only checked (checkOnly) never goes further than this.
    if (
      (noJob && handlersAdded === this.handlersAdded) ||
      delivery.checkOnly ||
      (this.working && this.queue instanceof MemoryQueue && !this.handles(delivery.event, action))
    )
      return this.recordOnly(response, started, delivery, action);
    const job: WebhookJob = {
      id: delivery.id,
      event: delivery.event,
      action,
      hookId: delivery.hookId,
      installationId: installationOf(delivery.payload),
      payload: delivery.payload,
      receivedAt: new Date(started).toISOString(),
    };
    let added;
    try {
      added = await this.queue.add(job);
    } catch (error) {
      this.logger.error(`webhook ${delivery.id}: the queue refused it: ${error instanceof Error ? error.message : String(error)}`, { delivery: delivery.id });
      return this.answer(
        response,
        started,
        503,
        { message: 'the receiver cannot queue deliveries now; the platform can redeliver it' },
        { ...base, outcome: 'queue-error' },
      );
    }
    if (!added.added)
      return this.answer(
        response,
        started,
        200,
        { status: 'duplicate', state: added.state, message: `delivery ${delivery.id} was received before (${added.state}); not run again` },
        { ...base, outcome: 'duplicate' },
      );
    const outcome = await this.queue.waitFor(job.id, this.ackWithinMs - (Date.now() - started));
    if (outcome.state === 'done') return this.answer(response, started, 200, DONE, { ...base, outcome: 'done' });
    if (outcome.state === 'failed')
      return this.answer(
        response,
        started,
        500,
        { status: 'failed', message: `a handler failed; the receiver's log has it under delivery ${delivery.id}` },
        { ...base, outcome: 'failed' },
      );
    // Still at it: acknowledged now, and the outcome logged when it comes.
    void this.queue.waitFor(job.id, 24 * 60 * 60_000).then((later) => {
      if (later.state === 'done')
        this.logger.info(
          `webhook ${delivery.id} (${delivery.event}${action ? `.${action}` : ''}): done after ${Math.round((Date.now() - started) / 100) / 10} s`,
        );
    });
    return this.answer(response, started, 202, { status: 'accepted' }, { ...base, outcome: 'accepted' });
  }

  private largeSlot(): Promise<void> {
    if (this.largeReading < this.largeReads) {
      this.largeReading += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.largeWaiting.push(resolve));
  }

  private releaseLargeSlot(): void {
    const next = this.largeWaiting.shift();
    if (next)
      next(); // the slot passes on
    else this.largeReading -= 1;
  }

  async close(timeoutMs?: number): Promise<void> {
    await this.queue.close(timeoutMs);
  }
}
