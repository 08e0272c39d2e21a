import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devPort, devServers, type DevContext, type DevServer } from '../../devserver/index.js';
import type { ServerResponse } from 'node:http';
import type { Command } from 'commander';
import { signalsHandledGracefully } from '../cleanup.js';
import { UsageError } from '../errors.js';
import { createLogger, getLogger, LOG_FORMATS, LOG_LEVELS, setLogger, type LogFormat, type Logger, type LogLevel } from '../log.js';
// Types only: prom-client loads when a server starts (startOps), not for every command.
import type { OpsHandler, OpsPaths, ServerKind, ServerOps } from '../ops/index.js';
import { onWait } from '../waits.js';
import { isLoopbackHost } from '../loopback.js';
import { examplesDir } from '../paths.js';
import { onStdoutReaderGone } from './reader-gone.js';
import type { CliErrorCode } from './error-codes.js';
import type { Output } from './output.js';

/**
 * The dev servers answer with a root token and well-known credentials over plain http: they listen on loopback only,
 * unless GANTRY_DEV_ALLOW_REMOTE=1 says the wider exposure is meant (a container whose port is published).
 */
export function checkDevHost(host: string, flag = '--host'): void {
  if (isLoopbackHost(host)) return;
  if (process.env.GANTRY_DEV_ALLOW_REMOTE === '1') {
    getLogger().warn(`listening on ${host}, which is not loopback (GANTRY_DEV_ALLOW_REMOTE=1): anyone who reaches it gets the dev servers' root token`);
    return;
  }
  throw new UsageError(`${flag} ${host} is not a loopback address: the dev servers hand out a root token over plain http, to this machine only`, {
    hint: 'use 127.0.0.1 (the default), ::1 or localhost; to serve beyond this machine on purpose (a container with a published port), set GANTRY_DEV_ALLOW_REMOTE=1',
  });
}

/**
 * The --host of a dev server started alone, checked: its own flag, or the one given to `gantry dev` (commander hands
 * a flag that both commands declare to the parent, so `gantry dev registry --host X` arrives there).
 */
export function devHostOf(command: Command): string {
  const own = (command.opts() as { host?: string }).host;
  const host = own ?? (command.parent?.opts() as { host?: string } | undefined)?.host ?? '127.0.0.1';
  checkDevHost(host);
  return host;
}

/** Starts a server on an address the user chose, turning what `listen` refuses into a usage error that says why. */
export async function listenAsAsked<S>(where: { host: string; port: number; portFlag: string }, start: () => Promise<S>): Promise<S> {
  try {
    return await start();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const at = `${where.host}:${where.port}`;
    if (code === 'EADDRINUSE')
      throw new UsageError(`port ${where.port} on ${where.host} is in use (${where.portFlag})`, {
        code: 'DEV_PORT_IN_USE' satisfies CliErrorCode,
        hint: `stop what listens there, or choose another port with ${where.portFlag} (0 for any free port)`,
      });
    if (code === 'EACCES')
      throw new UsageError(`listening on ${at} is not permitted (${where.portFlag}): ports below 1024 need privileges`, {
        hint: `choose a port from 1024 up with ${where.portFlag} (0 for any free port)`,
      });
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw new UsageError(`cannot listen on ${where.host}: no interface of this machine has that address (${code})`, {
        hint: 'use 127.0.0.1 (the default), ::1 or localhost',
      });
    throw error;
  }
}

export interface RunningDevServers {
  servers: DevServer[];
  context: DevContext;
  stop(): Promise<void>;
}

/** Starts every embedded dev server on loopback; on a failure, stops those already started. */
export async function startDevServers(
  options: { host?: string; keepState?: boolean; oauthDialect?: DevContext['oauthDialect'] } = {},
): Promise<RunningDevServers> {
  const stateDir = await mkdtemp(join(tmpdir(), 'gantry-dev-'));
  const servers: DevServer[] = [];
  const context: DevContext = {
    host: options.host ?? '127.0.0.1',
    examplesDir: examplesDir(),
    stateDir,
    started: servers,
    ...(options.oauthDialect ? { oauthDialect: options.oauthDialect } : {}),
  };
  const stop = async () => {
    await Promise.allSettled(servers.reverse().map((server) => server.stop()));
    if (!options.keepState) await rm(stateDir, { recursive: true, force: true });
  };
  try {
    for (const starter of devServers) servers.push(await starter.start(context));
  } catch (error) {
    await stop();
    throw error;
  }
  return { servers, context, stop };
}

/**
 * Resolves on Ctrl-C, SIGTERM or stdout's reader going away (`gantry dev | head -1`: its lines were its output), after
 * `stop` has run; every command that serves until stopped waits here, so all stop alike. A second signal while `stop`
 * runs ends the process at once (130 for SIGINT, 143 for SIGTERM); one after `stop` is done finds it stopped cleanly
 * and ends it with 0. The handlers stay installed until the process ends, so the last-resort clean-ups
 * (lib/cleanup.ts) see a graceful shutdown under way and leave a browser a finishing gate uses alone, and a signal
 * sent the moment the first line is read never meets Node's default action.
 */
export function untilInterrupted(stop: () => Promise<void>): Promise<void> {
  return untilStopped(() => stop());
}

/** What a dev server started alone says at start, besides its name and url: its own `--json` fields, and its lines for a person. */
export interface DevServerStart {
  json(): Record<string, unknown>;
  text(): void;
}

/**
 * Serves a dev server started alone (`gantry dev <server>`) until stopped, as `untilInterrupted`. Its start is printed
 * once the handlers are in, since whoever reads the first line may stop the server at once: with --json one object,
 * name and url first, else its lines and "Press Ctrl-C to stop.".
 */
export async function serveAlone(
  out: Output,
  json: boolean,
  server: { name: string; url: string; stop(): Promise<void> },
  start: DevServerStart,
): Promise<void> {
  const interrupted = untilInterrupted(() => server.stop());
  if (json) out.json({ name: server.name, url: server.url, ...start.json() });
  else {
    start.text();
    out.line('Press Ctrl-C to stop.');
  }
  await interrupted;
}

/** What stopped a server: an orchestrator's SIGTERM, or a person (Ctrl-C, stdout's reader gone). */
type StopCause = 'SIGTERM' | 'SIGINT' | 'reader-gone';

/** `untilInterrupted` telling `stop` what stopped it; `started` runs once the signals are handled. */
function untilStopped(stop: (cause: StopCause) => Promise<void>, started?: () => void): Promise<void> {
  return new Promise((resolve) => {
    const undoGraceful = signalsHandledGracefully();
    let state: 'serving' | 'stopping' | 'stopped' = 'serving';
    const begin = (cause: StopCause) => {
      state = 'stopping';
      unregister();
      void stop(cause).finally(() => {
        state = 'stopped';
        undoGraceful();
        resolve();
      });
    };
    const handler = (signal: NodeJS.Signals) => {
      if (state === 'stopped') process.exit(0);
      if (state === 'stopping') process.exit(signal === 'SIGINT' ? 130 : 143);
      begin(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    const unregister = onStdoutReaderGone(() => {
      if (state === 'serving') begin('reader-gone');
    });
    started?.();
  });
}

/** A flag's value that must be a whole number from 0 to `max` (the value shown in the error is cut at 20 characters). */
export function checkWholeNumberFlag(raw: string, flag: string, max: number): number {
  if (!/^\d{1,15}$/.test(raw) || Number(raw) > max) throw new UsageError(`${flag} must be a whole number from 0 to ${max}, got "${raw.slice(0, 20)}"`);
  return Number(raw);
}

/** A `--port` value: a whole number from 0 (any free port) to 65535. */
export function checkPortFlag(raw: string, flag = '--port'): number {
  return checkWholeNumberFlag(raw, flag, 65535);
}

/** The port a dev server alone listens on: `--port`, else its variable (GANTRY_DEV_…_PORT), else its default. */
export function devServerPort(flag: string | undefined, variable: string, fallback: number): number {
  return flag !== undefined ? checkPortFlag(flag) : devPort(variable, fallback).port;
}

/** The flags every long-running server takes for its ops endpoints and its log (`addOpsOptions`). */
export interface OpsFlags {
  metricsPort?: string;
  metricsHost: string;
  healthPath: string;
  readyPath: string;
  metricsPath: string;
  logFormat?: string;
  logLevel?: string;
  /** Seconds a server with a public port keeps serving after SIGTERM (`--drain-delay`); the worker has none. */
  drainDelay?: string;
}

/** The public listener's flags of a server command: the same names, words and defaults' shape for every server. */
export function addListenOptions(command: Command, listener: { port: string; path: string; pathIs: string; hostNote?: string }): Command {
  return command
    .option('--host <address>', `the address to listen on${listener.hostNote ? ` (${listener.hostNote})` : ''}`, '127.0.0.1')
    .option('--port <port>', 'the port to listen on (0 = any free port)', listener.port)
    .option('--path <path>', listener.pathIs, listener.path);
}

/**
 * Adds the ops flags: where /healthz, /readyz and /metrics are (on the server's own port, or `--metrics-port`), the
 * log's format and level, and the drain delay. `ownPort`: the server has a port of its own (the worker has none).
 */
export function addOpsOptions(command: Command, ownPort: boolean): Command {
  command
    .option(
      '--metrics-port <port>',
      ownPort
        ? 'serve the health, readiness and metrics endpoints on this port instead of the public one (0 = any free port)'
        : 'serve the health, readiness and metrics endpoints on this port (0 = any free port; none without it)',
    )
    .option('--metrics-host <address>', 'the address --metrics-port listens on', '127.0.0.1')
    .option('--health-path <path>', 'liveness: 200 while the process runs', '/healthz')
    .option('--ready-path <path>', "readiness: each check's state, 503 while one fails or while stopping", '/readyz')
    .option('--metrics-path <path>', 'metrics in the Prometheus text format', '/metrics')
    .option('--log-format <format>', 'json (one object a line) or text; default json when stdout is not a terminal')
    .option('--log-level <level>', `${LOG_LEVELS.join(', ')} (default GANTRY_LOG, else warn; debug with --verbose)`);
  // The worker has no port a balancer sends to: it stops taking jobs at once.
  if (ownPort)
    command.option(
      '--drain-delay <seconds>',
      `after SIGTERM, keep serving this long while readiness answers 503 draining, so a load balancer moves on before the port closes (0 to ${MAX_DRAIN_SECONDS}; 0 closes at once)`,
      String(DEFAULT_DRAIN_SECONDS),
    );
  return command;
}

/**
 * `--drain-delay`'s default: long enough for an orchestrator's removal of a stopping endpoint to reach the proxies in
 * front (Kubernetes sends SIGTERM and removes the pod from its Service at the same moment; kube-proxy and ingress
 * controllers take a few seconds to see it), short enough that a rolling restart does not crawl.
 */
const DEFAULT_DRAIN_SECONDS = 5;
/** At most five minutes: more than any balancer's probes need; a longer wait is a mistake in the flag. */
const MAX_DRAIN_SECONDS = 300;

/** `--drain-delay`, checked, in milliseconds: seconds from 0 to 300 (fractions allowed). */
export function drainDelayOf(flags: OpsFlags): number {
  const raw = flags.drainDelay ?? String(DEFAULT_DRAIN_SECONDS);
  if (!/^\d{1,3}(\.\d{1,3})?$/.test(raw) || Number(raw) > MAX_DRAIN_SECONDS)
    throw new UsageError(`--drain-delay must be a number of seconds from 0 to ${MAX_DRAIN_SECONDS}, got "${raw.slice(0, 20)}"`);
  return Math.round(Number(raw) * 1000);
}

/** The ops paths of the flags, checked: plain paths, distinct, none of them one the server answers (`taken`). */
export function opsPathsOf(flags: OpsFlags, taken: readonly string[]): OpsPaths {
  const paths: OpsPaths = { health: flags.healthPath, ready: flags.readyPath, metrics: flags.metricsPath };
  const named: Array<[string, string]> = [
    ['--health-path', paths.health],
    ['--ready-path', paths.ready],
    ['--metrics-path', paths.metrics],
  ];
  for (const [flag, path] of named) {
    if (!/^\/[A-Za-z0-9\-._~/]*$/.test(path)) throw new UsageError(`${flag} must be a plain path such as /healthz, got "${path.slice(0, 60)}"`);
    if (taken.includes(path) || named.filter(([, other]) => other === path).length > 1)
      throw new UsageError(`${flag} ${path} is a path the server already answers`, {
        hint: 'give each endpoint a path of its own, off the webhook and MCP paths',
      });
  }
  return paths;
}

/** A server's logger as its flags ask: --log-format (json when stdout is not a terminal), --log-level (else --verbose, GANTRY_LOG). */
export function serverLogger(flags: OpsFlags, verbose: boolean): Logger {
  const format = flags.logFormat ?? (process.stdout.isTTY ? 'text' : 'json');
  if (!(LOG_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--log-format must be json or text, got "${format.slice(0, 20)}"`);
  const level = flags.logLevel?.toLowerCase() ?? (verbose ? 'debug' : undefined);
  if (level !== undefined && !(LOG_LEVELS as readonly string[]).includes(level))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${level.slice(0, 20)}"`);
  const logger = createLogger({ format: format as LogFormat, ...(level !== undefined ? { level: level as LogLevel } : {}) });
  setLogger(logger);
  return logger;
}

/** A server's ops endpoints, started (`startOps`). */
export interface OpsServing {
  /**
   * Put in front of the server's routes: answers the ops paths on its port (nothing when they moved to
   * --metrics-port); while draining, marks every answer of the port `Connection: close`.
   */
  handle: OpsHandler;
  metricsPort: number | undefined;
  /**
   * Where they answer, given the server's own origin (none for the worker): the metrics URL (the `--json` line's
   * `metrics`) and the start note naming readiness and metrics, the same words for every server; undefined when
   * they are served nowhere.
   */
  where(ownOrigin: string | undefined): { metrics: string; note: string } | undefined;
  close(): Promise<void>;
}

/** The ops endpoints of a server: answered in front of its routes (`handle`), or on `--metrics-port` (then `handle` answers nothing). */
export async function startOps(flags: OpsFlags, ops: ServerOps): Promise<OpsServing> {
  const { opsHandler, startOpsServer } = await import('../ops/index.js');
  const handle = opsHandler(ops);
  const serving = (own: OpsHandler, metricsPort: number | undefined, close: () => Promise<void>): OpsServing => ({
    handle(request, response) {
      if (ops.health.isDraining) lastOnConnection(response);
      return own(request, response);
    },
    metricsPort,
    close,
    where(ownOrigin) {
      const origin = opsOrigin(flags, metricsPort, ownOrigin);
      if (origin === undefined) return undefined;
      // The metrics URL ends the note: scripts find it with /metrics on (\S+)/.
      return { metrics: `${origin}${ops.paths.metrics}`, note: `readiness on ${origin}${ops.paths.ready}, metrics on ${origin}${ops.paths.metrics}` };
    },
  });
  if (flags.metricsPort === undefined) return serving(handle, undefined, () => Promise.resolve());
  const port = checkPortFlag(flags.metricsPort, '--metrics-port');
  const own = await listenAsAsked({ host: flags.metricsHost, port, portFlag: '--metrics-port' }, () => startOpsServer(handle, flags.metricsHost, port));
  return serving(
    () => false,
    own.port,
    () => own.close(),
  );
}

/**
 * Serves until stopped (as `untilInterrupted`), draining first — the same steps for the three servers. At once:
 * readiness answers 503 `draining` (liveness stays 200) and each answer closes its connection. After SIGTERM, an
 * orchestrator's or a load balancer's signal, the server keeps taking and serving requests for `drainMs` (its
 * `--drain-delay`), so a balancer that saw the 503 or lost the endpoint stops sending before the port closes; Ctrl-C
 * and stdout's reader going away are a person at a terminal, not a balancer, and skip the wait. Then `stop`: close
 * the port, finish the work in hand. A second signal at any point ends the process at once (143, 130).
 */
export function untilDrained(
  ops: ServerOps,
  options: {
    drainMs: number;
    logger: Logger;
    /**
     * Prints the start line, once the signals are handled: a supervisor that sends SIGTERM the moment it reads the
     * line must not meet Node's default action (death by the signal), as it did in the millisecond between the two.
     */
    announce: () => void;
  },
  stop: () => Promise<void>,
): Promise<void> {
  const { drainMs, logger } = options;
  return untilStopped(async (cause) => {
    ops.health.drain();
    if (cause === 'SIGTERM' && drainMs > 0) {
      logger.info(
        `draining: ${ops.paths.ready} answers 503; still serving for ${drainMs / 1000} s so the load balancer moves on (a second signal stops at once)`,
      );
      await new Promise((resolve) => setTimeout(resolve, drainMs));
    }
    await stop();
  }, options.announce);
}

/**
 * Makes an answer its connection's last (`Connection: close`): a keep-alive client would otherwise keep sending on
 * its connection until the port closes; told to close it, it opens a new one, which the load balancer (told by
 * /readyz, or by the orchestrator) sends to another server. A route's own `Connection: keep-alive` (the MCP SDK sets
 * it on its event streams; `writeHead` sets each header it is given through `setHeader`) does not undo it.
 */
function lastOnConnection(response: ServerResponse): void {
  response.setHeader('connection', 'close');
  const setHeader = response.setHeader.bind(response);
  response.setHeader = (name, value) => (name.toLowerCase() === 'connection' ? response : setHeader(name, value));
}

/** Where the ops endpoints answer: the server's own origin, or `--metrics-host`:`--metrics-port` when they moved there. */
function opsOrigin(flags: OpsFlags, metricsPort: number | undefined, ownOrigin: string | undefined): string | undefined {
  if (metricsPort === undefined) return ownOrigin;
  return `http://${flags.metricsHost.includes(':') ? `[${flags.metricsHost}]` : flags.metricsHost}:${metricsPort}`;
}

/**
 * A server's health and metrics (lib/ops), with the platform's rate-limit waits counted (lib/waits.ts: the holds
 * announced, the platform's refusals); `stop` stops counting.
 */
export async function serverOps(kind: ServerKind, paths: OpsPaths): Promise<ServerOps & { stop(): void }> {
  const { Health, ServerMetrics } = await import('../ops/index.js');
  const metrics = new ServerMetrics(kind);
  const stop = onWait((notice) => {
    if (notice.kind === 'rate-limit' && notice.limit) metrics.rateLimitWait(notice.limit, notice.until - Date.now(), notice.refused === true);
  });
  return { health: new Health(), metrics, paths, stop };
}
