/**
 * `gantry hooks`: receive the platform's webhooks (`serve`), with deployment protection rules decided by gates;
 * check a saved delivery's signature (`verify`); list the event catalogue (`events`). lib/webhooks is imported inside
 * the actions, so `gantry --help` loads none of it.
 */
import { terminalText } from '../../../terminal-text.js';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Command } from 'commander';
import { ExitCode, GantryError } from '../../../errors.js';
import { readLocalFile } from '../../../local-paths.js';
import { redactUrl } from '../../../redact.js';
// Types only: each action loads lib/webhooks when it runs, and the gates (lib/analysis and the S3 client with them,
// ~25 MB of RSS that a receiver without gates never uses) only through loadDeploymentGates.
import type { HooksConfig, JobQueue, WebhookReceiver } from '../../../webhooks/index.js';
import { usage, type CliContext } from '../../context.js';
import {
  addListenOptions,
  addOpsOptions,
  checkPortFlag,
  drainDelayOf,
  opsPathsOf,
  serverLogger,
  serverOps,
  startOps,
  untilDrained,
  type OpsFlags,
} from '../../serving.js';
import type { PlatformApp } from '../../../platform/index.js';
import type { ServerKind, ServerOps } from '../../../ops/index.js';
import type { WebhookErrorCode } from '../../../webhooks/index.js';

const SECRET_HELP = `The webhook secret is read from GANTRY_WEBHOOK_SECRET, and while rotating also from GANTRY_WEBHOOK_SECRETS
(comma-separated) — never from a flag: a command line is visible to every user of the machine. Deployment protection
answers as the app: GANTRY_APP_ID and its key (GANTRY_APP_PRIVATE_KEY_FILE, GANTRY_APP_PRIVATE_KEY), the platform at
PLATFORM_API_URL.`;

const QUEUE_HELP = `Several receivers and workers share one queue in Redis: GANTRY_HOOKS_QUEUE_URL=redis://[:password@]host:port/db
(or --queue redis://host:port/db, which may not hold a password: a command line is visible to every user of the
machine). Each delivery runs once, on whichever worker takes it; a worker that dies mid-job has its job run again
elsewhere. SIGINT or SIGTERM: no new jobs, the running ones finish (up to 10 minutes), then it exits; a second one
stops at once (those jobs go to another worker when their lease runs out).`;

/** How long a stopping receiver or worker lets its running jobs finish: the job timeout, after which they are aborted anyway. */
const SHUTDOWN_MS = 10 * 60_000;

interface ServeFlags extends OpsFlags {
  port: string;
  host: string;
  path: string;
  config?: string;
  sha1: boolean;
  queue?: string;
  work: boolean;
  concurrency: string;
  securityEvents?: string;
}

interface WorkerFlags extends OpsFlags {
  config?: string;
  queue?: string;
  concurrency: string;
}

/** The queue's address: --queue (never with a password in it), else GANTRY_HOOKS_QUEUE_URL, else none (in process). */
export function queueAddress(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flag !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(flag);
    } catch {
      throw usage(
        '--queue must be a Redis address such as redis://127.0.0.1:6379/0',
        'with a password, put the address in GANTRY_HOOKS_QUEUE_URL instead of the command line',
      );
    }
    if (parsed.password) {
      throw usage(
        `--queue holds a password (${redactUrl(parsed)}): a command line is visible to every user of the machine`,
        'put the address in GANTRY_HOOKS_QUEUE_URL instead (GANTRY_HOOKS_QUEUE_URL=redis://:password@host:6379/0)',
      );
    }
    return flag;
  }
  const fromEnv = env.GANTRY_HOOKS_QUEUE_URL?.trim();
  return fromEnv ? fromEnv : undefined;
}

function parseConcurrency(text: string): number {
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 256)
    throw usage(`--concurrency must be a whole number from 1 to 256, got "${text.slice(0, 20)}"`);
  return Number(text);
}

/**
 * Loads the environments' gates and registers deployment protection on `receiver`; returns what closes the app.
 * With the app configured (GANTRY_APP_ID), every protection request is answered — an environment without a gate is
 * rejected with the reason — and the app is checked at start (GET /app), so a wrong id or key stops here, not at the
 * first deployment. Without it, a protection request cannot be answered: the job fails, saying so, and the delivery
 * shows failed on the platform.
 */
async function registerGates(
  receiver: WebhookReceiver,
  configFlag: string | undefined,
  context: CliContext,
  json: boolean,
  gateTimed?: (decision: string, ms: number) => void,
): Promise<{ config: HooksConfig | undefined; closeApp: () => void; app?: PlatformApp }> {
  const { existsSync } = await import('node:fs');
  const configFile = configFlag ?? (existsSync('gantry.hooks.json') ? 'gantry.hooks.json' : undefined);
  // The gates load lib/analysis: only when there is a configuration or an app to use them.
  const { loadDeploymentGates } = await import('../../../webhooks/index.js');
  const config = configFile !== undefined ? await (await loadDeploymentGates()).loadHooksConfig(configFile) : undefined;
  let closeApp = () => {};
  const gated = config !== undefined && (config.environments.size > 0 || config.deploymentStatus.gate);
  if (!process.env.GANTRY_APP_ID) {
    if (gated)
      throw usage(
        `${config.source} gates environments, and the answers must come from the app: set GANTRY_APP_ID and GANTRY_APP_PRIVATE_KEY_FILE (or GANTRY_APP_PRIVATE_KEY)`,
        'the app is the one whose deployment protection rule the environments use',
      );
    receiver.on('deployment_protection_rule.requested', () => {
      throw new Error(
        'a deployment protection rule asks for an answer, and no app is configured to give it (GANTRY_APP_ID and its key): the deployment waits until one is',
      );
    });
    return { config, closeApp };
  }
  const { PlatformApp } = await import('../../../platform/index.js');
  const { deploymentProtection, deploymentStatusGate, parseHooksConfig } = await loadDeploymentGates();
  const app = new PlatformApp({ logger: context.logger });
  closeApp = () => app.close();
  try {
    await app.appClient.request('GET', '/app');
  } catch (error) {
    closeApp();
    throw error;
  }
  const rules = config ?? parseHooksConfig({}, 'gantry.hooks.json (none found)');
  const decisions = new Map<string, string>();
  const protection = deploymentProtection({ config: rules, app, logger: context.logger }, (decision, job) => {
    decisions.set(job.id, decision.state);
    const line = {
      at: new Date().toISOString(),
      delivery: job.id,
      environment: decision.environment,
      decision: decision.state,
      gate: decision.gate?.status ?? null,
    };
    if (json) context.out.line(JSON.stringify(line));
    else
      context.out.line(
        `${line.at} deployment to ${terminalText(decision.environment)} ${decision.state}${decision.gate ? ` (gate ${decision.gate.status})` : ''} — delivery ${terminalText(job.id)}`,
      );
  });
  receiver.on('deployment_protection_rule.requested', async (job) => {
    const started = Date.now();
    try {
      await protection(job);
    } finally {
      gateTimed?.(decisions.get(job.id) ?? 'error', Date.now() - started);
      decisions.delete(job.id);
    }
  });
  if (rules.deploymentStatus.gate) receiver.on('deployment_status', deploymentStatusGate({ config: rules, app, logger: context.logger }));
  return { config, closeApp, app };
}

/** Checks that a Redis queue answers before taking work (exit 3 when it does not); closes it and the app then. */
async function queueReady(queue: JobQueue, closeApp: () => void): Promise<void> {
  const { RedisQueue } = await import('../../../webhooks/index.js');
  if (!(queue instanceof RedisQueue)) return;
  try {
    await queue.ready();
  } catch (error) {
    await queue.close(0);
    closeApp();
    throw error;
  }
}

/**
 * The health checks and metrics of a receiver or worker: the configuration (loaded by now), the Redis of the queue
 * and of the shared rate-limit budgets when they are used; the queue's counts and the app's budgets read at each scrape.
 */
async function hooksOps(kind: ServerKind, flags: OpsFlags, taken: string[], queue: JobQueue): Promise<ServerOps & { stop(): void }> {
  const ops = await serverOps(kind, opsPathsOf(flags, taken));
  ops.health.check('configuration', () => {});
  const { RedisQueue } = await import('../../../webhooks/index.js');
  if (queue instanceof RedisQueue)
    ops.health.check('queue-redis', async () => {
      await queue.counts();
    });
  const limitsUrl = process.env.GANTRY_PLATFORM_LIMITS_URL?.trim();
  if (limitsUrl) {
    const { budgetStoreFor } = await import('../../../platform/index.js');
    ops.health.check('platform-limits-redis', async () => {
      await budgetStoreFor(limitsUrl).snapshot('gantry-readiness', Date.now());
    });
  }
  if (queue.counts) ops.metrics.readQueue({ counts: () => queue.counts!(), ...(queue instanceof RedisQueue ? { reclaimed: queue.reclaimed } : {}) });
  return ops;
}

/** The app's rate-limit budgets in the metrics: every client it made (the app's own, each installation's), read at each scrape. */
function readAppBudgets(ops: ServerOps, app: PlatformApp | undefined): void {
  if (app)
    ops.metrics.readBudgets(() =>
      Promise.all(
        app.clientsInUse.map(async (client) => {
          const budgets = await client.budgets();
          return { identity: `${budgets.identity.kind}:${budgets.identity.key.slice(0, 8)}`, resources: budgets.kept.resources };
        }),
      ),
    );
}

/** A saved delivery: an HTTP request as text (request line optional, headers, a blank line, the body's exact bytes). */
export function parseSavedDelivery(bytes: Buffer): { headers: Record<string, string>; body: Buffer } {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  const [end, gap] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : [lf, 2];
  if (end < 0)
    throw usage(
      'the saved delivery has no blank line between its headers and its body',
      'save the request as the platform shows it: headers, a blank line, then the body exactly as sent',
    );
  const headers: Record<string, string> = {};
  const lines = bytes.subarray(0, end).toString('latin1').split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (index === 0 && /^[A-Z]+ \S+ HTTP\/\d/.test(line)) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw usage(`the saved delivery's header line ${index + 1} is not "Name: value"`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = bytes.subarray(end + gap);
  const length = headers['content-length'];
  if (length !== undefined && /^\d+$/.test(length) && Number(length) <= body.length) body = body.subarray(0, Number(length));
  return { headers, body };
}

/** `,"name":"value"` for a JSON line, or nothing when the value is undefined (as JSON.stringify leaves it out). */
function member(name: string, value: string | undefined): string {
  return value === undefined ? '' : `,"${name}":${JSON.stringify(value)}`;
}

export function register(program: Command, context: CliContext): void {
  const hooks = program
    .command('hooks')
    .description("receive the platform's webhooks: deployment protection rules decided by gates, signatures checked")
    .addHelpText('after', `\n${SECRET_HELP}`);

  const serve = addListenOptions(
    hooks
      .command('serve')
      .description('receive webhooks on http://<host>:<port><path>, verify each delivery, and answer deployment protection rules with a gate'),
    { port: '3000', path: '/hooks', pathIs: "the payload URL's path", hostNote: '0.0.0.0 to take deliveries from the platform' },
  )
    .option('--config <file>', "the environments' gates (default: gantry.hooks.json in the current folder, when it exists)")
    .option('--no-sha1', 'refuse X-Hub-Signature (sha1) deliveries: only X-Hub-Signature-256 is accepted')
    .option('--queue <url>', 'a Redis queue shared with other receivers and workers, redis://host:port/db (else GANTRY_HOOKS_QUEUE_URL; a password only there)')
    .option('--no-work', 'only queue deliveries: workers elsewhere (gantry hooks worker) run the handlers; needs a Redis queue')
    .option('--concurrency <n>', 'jobs this process runs at once', '4')
    .option(
      '--security-events <path>',
      "also take the authorization server's security events (RFC 8935 pushes) at this path: verified against GANTRY_AUTH_URL's keys for GANTRY_OAUTH_CLIENT_ID, they drop the stored gantry auth logins of the account they name",
    );
  addOpsOptions(serve, true);
  serve
    .addHelpText(
      'after',
      `
One line per delivery: time, event.action, delivery GUID, the status answered, what happened, milliseconds.
Answers: 200 handled (or a redelivery of one handled), 202 still running after 5 s (the platform waits 10),
400 a missing header or malformed payload, 401 a bad signature, 413 over 25 MB, 415 not JSON or form, 500 a handler failed,
503 the queue could not take it (Redis down).

gantry.hooks.json:
  {"environments": {"production": {"urls": ["https://example.com/"], "min": {"performance": 0.9},
                                   "audits": {"largest-contentful-paint": 2500}, "runs": 3, "engine": "local"}}}

${QUEUE_HELP}

${SECRET_HELP}`,
    )
    .action(async (flags: ServeFlags, command: Command) => {
      const { json, verbose } = context.globals(command);
      const serving: CliContext = { ...context, logger: serverLogger(flags, verbose) };
      const port = checkPortFlag(flags.port);
      const drainMs = drainDelayOf(flags);
      if (!flags.path.startsWith('/') || /[?#\s]/.test(flags.path)) throw usage(`--path must be a path such as /hooks, got "${flags.path.slice(0, 60)}"`);
      const queueUrl = queueAddress(flags.queue);
      const concurrency = parseConcurrency(flags.concurrency);
      if (!flags.work && queueUrl === undefined)
        throw usage(
          '--no-work only queues deliveries, so it needs a queue that workers share',
          'set GANTRY_HOOKS_QUEUE_URL=redis://… (or --queue) and run gantry hooks worker beside it',
        );
      if (
        flags.securityEvents !== undefined &&
        (!flags.securityEvents.startsWith('/') || /[?#\s]/.test(flags.securityEvents) || flags.securityEvents === flags.path)
      ) {
        throw usage(`--security-events must be a path such as /security-events, other than --path, got "${flags.securityEvents.slice(0, 60)}"`);
      }
      const securityEvents =
        flags.securityEvents === undefined
          ? undefined
          : await (await import('./security-events.js')).securityEventsRoute(process.env, serving.logger, (line) => serving.out.line(line));
      const { WebhookReceiver, webhookQueueFor } = await import('../../../webhooks/index.js');
      const queue = webhookQueueFor(queueUrl, { concurrency, logger: serving.logger });
      // The receiver runs the handlers itself (work) once the queue is known to answer, below.
      const receiver = new WebhookReceiver({ allowSha1: flags.sha1, logger: serving.logger, queue, work: false });
      const ops = await hooksOps('hooks-serve', flags, [flags.path, ...(flags.securityEvents !== undefined ? [flags.securityEvents] : [])], queue);
      const { config, closeApp, app } = await registerGates(receiver, flags.config, serving, json, (decision, ms) =>
        ops.metrics.gateSeconds.observe({ decision }, ms / 1000),
      );
      readAppBudgets(ops, app);
      await queueReady(queue, closeApp);
      receiver.onDelivery((record) => ops.metrics.delivery(record));
      receiver.onJob((job, outcome, ms) => ops.metrics.job(job.event, outcome, ms));
      const opsServing = await startOps(flags, ops).catch(async (error: unknown) => {
        await receiver.close(0);
        closeApp();
        throw error;
      });
      if (flags.work) receiver.startWorking();
      // The delivery lines go out together, one write (one system call) for up to 64 lines or 10 ms, whichever comes
      // first, and whatever is left when the process exits: a write per delivery (or per turn of the event loop,
      // which under load handles only a few) was a tenth of the receiver's busy time. A line is still out within
      // 10 ms of its answer.
      let pendingLines: string[] = [];
      let flushTimer: NodeJS.Timeout | undefined;
      const flushLines = () => {
        if (flushTimer) clearTimeout(flushTimer);
        flushTimer = undefined;
        if (pendingLines.length === 0) return;
        const text = pendingLines.join('\n');
        pendingLines = [];
        serving.out.line(text);
      };
      process.once('exit', flushLines);
      // The time as text once per millisecond, not once per delivery: under load several share one.
      let stampMs = 0;
      let stamp = '';
      receiver.onDelivery((record) => {
        const now = Date.now();
        if (now !== stampMs) {
          stampMs = now;
          stamp = new Date(now).toISOString();
        }
        // The JSON line written out, not built as an object and stringified: the same text, at half the cost.
        pendingLines.push(
          json
            ? `{"at":"${stamp}"${member('event', record.event)}${member('action', record.action)}${member('delivery', record.id)},"status":${record.status},"outcome":${JSON.stringify(record.outcome)},"ms":${record.ms}}`
            : `${stamp} ${terminalText(record.event ?? '-')}${record.action ? `.${terminalText(record.action)}` : ''} ${terminalText(record.id ?? '-')} ${record.status} ${record.outcome} ${record.ms}ms`,
        );
        if (pendingLines.length >= 64) flushLines();
        else flushTimer ??= setTimeout(flushLines, 10);
      });
      const listener = receiver.middleware({ path: flags.path });
      const server = createServer(
        (request, response) =>
          opsServing.handle(request, response) ||
          listener(request, response, () => {
            if (securityEvents && request.url?.split('?')[0] === flags.securityEvents) return securityEvents.handle(request, response);
            response.writeHead(404, { 'content-type': 'application/json' });
            response.end(`${JSON.stringify({ message: `deliveries go to ${flags.path}` })}\n`);
          }),
      );
      server.requestTimeout = 60_000;
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', (error: NodeJS.ErrnoException) =>
            reject(
              error.code === 'EADDRINUSE'
                ? usage(`port ${port} on ${flags.host} is taken`, 'choose another with --port, or 0 for any free port')
                : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN'
                  ? usage(`--host ${flags.host} is no address of this machine`, 'give one of its addresses: 127.0.0.1, 0.0.0.0 (every interface), ::1')
                  : error.code === 'EACCES'
                    ? usage(`port ${port} needs privileges on this machine`, 'choose a port above 1023')
                    : error,
            ),
          );
          server.listen(port, flags.host, resolve);
        });
      } catch (error) {
        await receiver.close(0);
        closeApp();
        securityEvents?.close();
        await opsServing.close();
        throw error;
      }
      const address = server.address();
      const actualPort = typeof address === 'object' && address ? address.port : port;
      const host = flags.host.includes(':') ? `[${flags.host}]` : flags.host;
      const environments = config ? [...config.environments.keys()] : [];
      const queueText =
        queueUrl === undefined
          ? `in process, ${concurrency} at once`
          : `queue ${redactUrl(queueUrl)}, ${flags.work ? `handlers run here too, ${concurrency} at once` : 'handlers run by workers'}`;
      // The address on stdout, as gantry dev prints its own: it is what the person starting it needs first.
      const listening = `http://${host}:${actualPort}${flags.path}`;
      if (securityEvents) serving.out.note(`security events on http://${host}:${actualPort}${flags.securityEvents} from ${securityEvents.describe}`);
      const opsAt = opsServing.where(`http://${host}:${actualPort}`)!;
      const announce = () => {
        if (!json) serving.out.note(opsAt.note);
        if (json) serving.out.line(JSON.stringify({ listening, queue: queueText, sha1: flags.sha1, environments, metrics: opsAt.metrics }));
        else
          serving.out.line(
            `receiving webhooks on ${listening} (${queueText}; sha1 ${flags.sha1 ? 'accepted when no sha256 signature comes' : 'refused'}; ${environments.length > 0 ? `gating ${environments.join(', ')}` : 'no environments gated'})`,
          );
      };
      await untilDrained(ops, { drainMs, logger: serving.logger, announce }, async () => {
        serving.logger.info('stopping: no new deliveries; running jobs finish first (a second Ctrl-C stops at once)');
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await receiver.close(SHUTDOWN_MS);
        closeApp();
        securityEvents?.close();
        ops.stop();
        await opsServing.close();
      });
    });

  const worker = hooks
    .command('worker')
    .description('run the handlers of deliveries queued in Redis by gantry hooks serve (on this machine or others)')
    .option('--queue <url>', 'the Redis queue the receivers use, redis://host:port/db (else GANTRY_HOOKS_QUEUE_URL; a password only there)')
    .option('--config <file>', "the environments' gates (default: gantry.hooks.json in the current folder, when it exists)")
    .option('--concurrency <n>', 'jobs this worker runs at once', '4');
  addOpsOptions(worker, false);
  worker
    .addHelpText(
      'after',
      `
One line per job: time, event.action, delivery GUID, attempt, done or failed, milliseconds.

${QUEUE_HELP}

The worker needs no webhook secret (the receivers verified the deliveries); deployment protection answers as the
app: GANTRY_APP_ID and its key (GANTRY_APP_PRIVATE_KEY_FILE, GANTRY_APP_PRIVATE_KEY), the platform at PLATFORM_API_URL.`,
    )
    .action(async (flags: WorkerFlags, command: Command) => {
      const { json, verbose } = context.globals(command);
      const serving: CliContext = { ...context, logger: serverLogger(flags, verbose) };
      const queueUrl = queueAddress(flags.queue);
      const concurrency = parseConcurrency(flags.concurrency);
      if (queueUrl === undefined)
        throw usage(
          'gantry hooks worker takes its jobs from the Redis queue the receivers share, and none is set',
          'set GANTRY_HOOKS_QUEUE_URL=redis://… (or --queue redis://host:port/db) as for gantry hooks serve --no-work',
        );
      const { RedisQueue, WebhookReceiver } = await import('../../../webhooks/index.js');
      const queue = new RedisQueue({ url: queueUrl, concurrency, logger: serving.logger });
      // The receiver only dispatches jobs to the handlers here (receiver.run); it never reads a delivery, so the secret
      // it insists on is a random one nobody knows.
      const receiver = new WebhookReceiver({ secrets: [randomBytes(32).toString('hex')], logger: serving.logger, queue, work: false });
      const ops = await hooksOps('hooks-worker', flags, [], queue);
      const { config, closeApp, app } = await registerGates(receiver, flags.config, serving, json, (decision, ms) =>
        ops.metrics.gateSeconds.observe({ decision }, ms / 1000),
      );
      readAppBudgets(ops, app);
      await queueReady(queue, closeApp);
      const opsServing = await startOps(flags, ops).catch(async (error: unknown) => {
        await queue.close(0);
        closeApp();
        throw error;
      });
      queue.process(async (job, jobContext) => {
        const started = Date.now();
        let outcome: 'done' | 'failed' = 'done';
        try {
          await receiver.run(job, jobContext);
        } catch (error) {
          outcome = 'failed';
          throw error;
        } finally {
          const line = {
            at: new Date().toISOString(),
            event: job.event,
            action: job.action,
            delivery: job.id,
            attempt: jobContext.attempt,
            outcome,
            ms: Date.now() - started,
          };
          ops.metrics.job(job.event, outcome, line.ms);
          if (json) serving.out.line(JSON.stringify(line));
          else
            serving.out.line(
              `${line.at} ${terminalText(job.event)}${job.action ? `.${terminalText(job.action)}` : ''} ${terminalText(job.id)} attempt ${line.attempt} ${outcome} ${line.ms}ms`,
            );
        }
      });
      const environments = config ? [...config.environments.keys()] : [];
      const opsAt = opsServing.where(undefined);
      const metrics = opsAt?.metrics;
      const announce = () => {
        if (opsAt !== undefined && !json) serving.out.note(opsAt.note);
        if (json) serving.out.line(JSON.stringify({ working: redactUrl(queueUrl), concurrency, environments, ...(metrics !== undefined ? { metrics } : {}) }));
        else
          serving.out.line(
            `working webhook jobs from ${redactUrl(queueUrl)} (${concurrency} at once; ${environments.length > 0 ? `gating ${environments.join(', ')}` : 'no environments gated'})`,
          );
      };
      await untilDrained(ops, { drainMs: 0, logger: serving.logger, announce }, async () => {
        serving.logger.info(`stopping: no new jobs; ${queue.pending} running finish first (a second Ctrl-C stops at once)`);
        await queue.close(SHUTDOWN_MS);
        closeApp();
        ops.stop();
        await opsServing.close();
      });
    });

  hooks
    .command('verify [file]')
    .description("check a saved delivery's signature (the request as text: headers, a blank line, the body); reads stdin without a file")
    .requiredOption('--secret-env <variable>', 'the environment variable holding the secret (never the secret itself)')
    .option('--no-sha1', 'refuse an X-Hub-Signature (sha1) signature')
    .addHelpText(
      'after',
      `
Exit codes: 0 the signature is valid (and the body is one hooks serve takes, with what its event requires); 1 it
is not, the body is one hooks serve refuses (not UTF-8, not a JSON object, a media type no delivery has), or the
payload lacks a required property; 2 bad input (no such variable, a file that is no saved request).

Example:
  GANTRY_WEBHOOK_SECRET=… gantry hooks verify --secret-env GANTRY_WEBHOOK_SECRET < delivery.http`,
    )
    .action(async (file: string | undefined, flags: { secretEnv: string; sha1: boolean }, command: Command) => {
      const { json } = context.globals(command);
      // The value is only echoed when it looks like a variable's name (GANTRY_WEBHOOK_SECRET): a secret passed here by
      // mistake must not come back on the terminal.
      const conventional = /^[A-Z_][A-Z0-9_]{0,63}$/.test(flags.secretEnv);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(flags.secretEnv))
        throw usage(
          "--secret-env takes a variable's name, and what was given is not one",
          'the secret itself never goes on the command line: export it, then give its name, e.g. --secret-env GANTRY_WEBHOOK_SECRET',
        );
      const secret = process.env[flags.secretEnv];
      if (!secret)
        throw usage(
          conventional ? `the variable ${flags.secretEnv} is not set or empty` : 'the variable --secret-env names is not set or empty',
          `export the webhook's secret in it first${conventional ? `: export ${flags.secretEnv}='<secret>'` : ''}`,
        );
      const bytes = await readLocalFile(file ?? '/dev/stdin', {
        what: file ? 'the saved delivery' : 'the saved delivery (stdin)',
        maxBytes: 26 * 1024 * 1024,
        allowPipe: true,
      });
      const { headers, body } = parseSavedDelivery(bytes);
      const { checkPayload, deliveryBodyPayload, verify, WebhookDeliveryError } = await import('../../../webhooks/index.js');
      const result = verify(secret, body, headers, { allowSha1: flags.sha1 });
      const event = headers['x-platform-event'];
      const delivery = headers['x-platform-delivery'];
      if (!result.ok) {
        if (json) context.out.json({ valid: false, reason: result.reason, message: result.message, event, delivery });
        throw new GantryError(`the delivery${delivery ? ` ${delivery}` : ''} is not signed with that secret: ${result.message}`, {
          exitCode: ExitCode.checkFailed,
          code: 'WEBHOOK_SIGNATURE' satisfies WebhookErrorCode,
        });
      }
      // The body as `hooks serve` reads it (its media type, UTF-8, a JSON object), then what the event requires.
      let problem: string | undefined;
      let payload: Record<string, unknown> | undefined;
      try {
        payload = deliveryBodyPayload(headers['content-type'], body, delivery);
      } catch (error) {
        if (!(error instanceof WebhookDeliveryError)) throw error;
        problem = `${error.message} (hooks serve answers ${error.status})`;
      }
      if (payload !== undefined && event) {
        const check = checkPayload(event, payload);
        if (!check.ok) problem = check.message;
      }
      if (json) context.out.json({ valid: true, algorithm: result.algorithm, event, delivery, ...(problem ? { payloadProblem: problem } : {}) });
      else
        context.out.line(
          `valid ${result.algorithm} signature${event ? ` on ${terminalText(event)}` : ''}${delivery ? ` delivery ${terminalText(delivery)}` : ''}`,
        );
      if (problem)
        throw new GantryError(`the signature is valid but the payload is not: ${problem}`, {
          exitCode: ExitCode.checkFailed,
          code: 'WEBHOOK_PAYLOAD' satisfies WebhookErrorCode,
        });
    });

  hooks
    .command('events')
    .description('the event catalogue: each event, where it is available, the permission it needs and its required properties')
    .action(async (_flags: unknown, command: Command) => {
      const { json } = context.globals(command);
      const { webhookEvents } = await import('../../../webhooks/index.js');
      const rows = webhookEvents.map((event) => ({
        event: event.name,
        availability: event.availability ?? null,
        permission: event.permission,
        // Every property a delivery of it must carry — the common ones (repository, sender …) where this event
        // requires them — as checkPayload enforces.
        required: event.properties.filter((p) => p.required).map((p) => p.name),
        notes: event.notes,
      }));
      if (json) {
        context.out.json(rows);
        return;
      }
      context.out.table(rows, [
        { header: 'event', value: (r) => r.event },
        { header: 'available to', value: (r) => (r.availability ? r.availability.join(', ') : 'not shown') },
        { header: 'permission', value: (r) => r.permission ?? '-' },
        { header: 'required', value: (r) => r.required.join(', ') || '-' },
      ]);
    });
}
