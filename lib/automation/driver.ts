import { expectFunction, expectOptions } from '../arguments.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { definePolicy, noRetry } from '../http/index.js';
import { getLogger, type Logger } from '../log.js';
import { killProcessesNaming, registerEmergencyCleanup, resolveChromeDriverPath, resolveChromePath } from '../browser/index.js';
import { chromeCapabilities, type ChromeCapabilityOptions } from './chrome.js';
import { createWebDriverClient, withSession, type CapabilitiesRequest, type Session, type WebDriverClient } from './client.js';
import { DriverProcessError } from './errors.js';

export interface ChromeDriverOptions {
  /** chromedriver binary (default `CHROMEDRIVER_PATH`, `/usr/bin/chromedriver`, PATH). */
  driverPath?: string;
  /** Browser binary (default `CHROME_PATH`, `/usr/bin/chromium`, usual Chrome locations). */
  chromePath?: string;
  /** How long the driver may take to report ready, in ms (default 15 s). */
  startupTimeoutMs?: number;
  /** How long one command may take, in ms (default 120 s). */
  commandTimeoutMs?: number;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
}

export interface SessionOptions extends Omit<ChromeCapabilityOptions, 'binary' | 'userDataDir'> {
  /** Extra W3C capabilities merged into `alwaysMatch`. */
  capabilities?: Record<string, unknown>;
}

/** A running chromedriver on loopback, owned by us: `stop()` ends its sessions, the process and its browsers, and removes the profiles. */
export interface ChromeDriver {
  readonly url: string;
  readonly pid: number;
  readonly port: number;
  readonly chromePath: string;
  /** The temporary folder holding each session's profile; removed by `stop()`. */
  readonly profilesDir: string;
  readonly client: WebDriverClient;
  /** A new headless Chromium session with a fresh temporary profile. */
  newSession(options?: SessionOptions): Promise<Session>;
  /** Runs `work` in a new session, always deleting it afterwards. */
  withSession<T>(work: (session: Session) => Promise<T>, options?: SessionOptions): Promise<T>;
  /** Idempotent. */
  stop(): Promise<void>;
}

const stopGraceMs = 3_000;
const sessionDeleteGraceMs = 5_000;
const outputTailBytes = 4_096;

/** Connection refused while the driver binds its port is expected: retry it quickly, as data. */
const startupPolicy = definePolicy(
  {
    retries: 1_000,
    statuses: [],
    errorCodes: ['ECONNREFUSED', 'ECONNRESET'],
    methods: ['GET'],
    backoff: { initialMs: 50, maxMs: 50, factor: 1, jitter: 0 },
    retryAfterMaxMs: 0,
    quiet: true,
  },
  noRetry,
);

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (!address || typeof address === 'string') throw new DriverProcessError('could not find a free port on 127.0.0.1');
  return address.port;
}

function killGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    // The driver leads its own process group, and the browsers it starts join it: one signal reaches them all.
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

function groupAlive(pid: number): boolean {
  return killGroup(pid, 0);
}

interface Spawned {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnDriver(driverPath: string, port: number): Spawned {
  const child = spawn(driverPath, [`--port=${port}`, '--log-level=WARNING'], {
    // Its own process group, so that Ctrl-C in a terminal reaches us first and we stop it in order.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-outputTailBytes);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  return { child, output: () => tail.trim(), exited };
}

async function waitUntilReady(client: WebDriverClient, spawned: Spawned, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const abort = new AbortController();
  let exitedEarly = false;
  void spawned.exited.then(() => {
    exitedEarly = true;
    abort.abort();
  });
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    while (!abort.signal.aborted) {
      try {
        // The budget runs one backoff past the deadline, so that the deadline (the abort) ends the wait, never the core
        // giving up on a refused connection a few ms before it: a retry wait can end up to one backoff early.
        const budgetMs = Math.max(0, deadline - Date.now()) + startupPolicy.backoff.maxMs;
        const status = await client.status({ retry: { ...startupPolicy, budgetMs }, signal: abort.signal, timeoutMs: 2_000 });
        if (status.ready) return;
      } catch (error) {
        if (abort.signal.aborted) break;
        throw error;
      }
      await sleep(50, undefined, { signal: abort.signal }).catch(() => undefined);
    }
  } finally {
    clearTimeout(timer);
  }
  const output = spawned.output();
  throw new DriverProcessError(
    exitedEarly
      ? `chromedriver exited before it was ready${output ? `: ${output}` : ''}`
      : `chromedriver did not report ready within ${timeoutMs} ms${output ? `: ${output}` : ''}`,
    { hint: 'check that chromedriver runs and matches the Chromium version: `gantry doctor` compares their majors' },
  );
}

/** Starts chromedriver on a free loopback port and waits for `GET /status` to say ready. */
export async function startChromeDriver(options: ChromeDriverOptions = {}): Promise<ChromeDriver> {
  expectOptions('startChromeDriver', options);
  const env = options.env ?? process.env;
  const logger = options.logger ?? getLogger();
  const driverPath = resolveChromeDriverPath(options.driverPath, env);
  const chromePath = resolveChromePath(options.chromePath, env);
  const profiles = await mkdtemp(join(tmpdir(), 'gantry-webdriver-'));

  let spawned: Spawned | undefined;
  let client: WebDriverClient | undefined;
  let port = 0;
  let unregister = () => {};
  const removeProfilesNow = () => rmSync(profiles, { recursive: true, force: true });

  try {
    // A port found free can be taken before the driver binds it: try a few.
    for (let attempt = 1; ; attempt += 1) {
      port = await freeLoopbackPort();
      spawned = spawnDriver(driverPath, port);
      const pid = spawned.child.pid;
      unregister();
      unregister = registerEmergencyCleanup(() => {
        if (pid !== undefined) killGroup(pid, 'SIGKILL');
        killProcessesNaming(profiles);
        removeProfilesNow();
      });
      client = createWebDriverClient({
        url: `http://127.0.0.1:${port}`,
        logger,
        ...(options.commandTimeoutMs ? { commandTimeoutMs: options.commandTimeoutMs } : {}),
      });
      try {
        await waitUntilReady(client, spawned, options.startupTimeoutMs ?? 15_000);
        break;
      } catch (error) {
        client.close();
        if (spawned.child.pid !== undefined) killGroup(spawned.child.pid, 'SIGKILL');
        await spawned.exited;
        const portTaken = /address already in use|bind\(\) failed/i.test(spawned.output());
        if (!portTaken || attempt >= 3) throw error;
        logger.debug(`chromedriver could not bind port ${port}; trying another`);
      }
    }
  } catch (error) {
    unregister();
    await rm(profiles, { recursive: true, force: true });
    throw error;
  }

  const running = spawned;
  const driverClient = client;
  const pid = running.child.pid as number;
  logger.debug(`chromedriver ${driverPath} (pid ${pid}) ready at ${driverClient.url}`);
  let stopping: Promise<void> | undefined;

  function sessionRequest(sessionOptions: SessionOptions): { request: CapabilitiesRequest; userDataDir: string } {
    const userDataDir = mkdtempSync(join(profiles, 'profile-'));
    const { capabilities, ...chrome } = sessionOptions;
    const request = chromeCapabilities({ ...chrome, binary: chromePath, userDataDir });
    return { request: { ...request, alwaysMatch: { ...request.alwaysMatch, ...capabilities } }, userDataDir };
  }

  async function stop(): Promise<void> {
    // Sessions first, so each browser quits cleanly; then the driver; then anything left in its group.
    // A hung browser must not hold the stop up: the group kill below ends it anyway.
    await Promise.race([Promise.allSettled(driverClient.openSessions().map((session) => session.delete())), sleep(sessionDeleteGraceMs)]);
    driverClient.close();
    killGroup(pid, 'SIGTERM');
    const exited = await Promise.race([running.exited.then(() => true), sleep(stopGraceMs).then(() => false)]);
    if (!exited || groupAlive(pid)) {
      killGroup(pid, 'SIGKILL');
      await running.exited;
    }
    // A browser that just died may still be flushing its profile: retry the removal briefly.
    await rm(profiles, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    unregister();
    logger.debug(`chromedriver (pid ${pid}) stopped`);
  }

  return {
    url: driverClient.url,
    pid,
    port,
    chromePath,
    profilesDir: profiles,
    client: driverClient,
    async newSession(sessionOptions = {}) {
      return driverClient.newSession(sessionRequest(sessionOptions).request);
    },
    async withSession(work, sessionOptions = {}) {
      const { request, userDataDir } = sessionRequest(sessionOptions);
      try {
        return await withSession(driverClient, request, work, logger);
      } finally {
        await rm(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      }
    },
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
}

/** Starts a driver for `work` and always stops it afterwards, also when `work` throws. */
export async function withChromeDriver<T>(options: ChromeDriverOptions, work: (driver: ChromeDriver) => Promise<T>): Promise<T> {
  expectOptions('withChromeDriver', options);
  expectFunction('withChromeDriver', 'work', work, 'a function (driver) => Promise');
  const driver = await startChromeDriver(options);
  try {
    return await work(driver);
  } finally {
    await driver.stop();
  }
}
