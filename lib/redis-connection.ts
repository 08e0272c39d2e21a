/**
 * The one Redis connector of the stores kept in Redis (the platform's shared budgets, the webhook queue): a node-redis
 * connection that fails closed and fast, the Lua scripts they run by SHA, and the base of their errors. The address is
 * checked by redis-address.ts and an outage's end said by redis-outage.ts. The `redis` package is imported only when a
 * store first talks to Redis.
 */
import { ExitCode, GantryError } from './errors.js';
import { redact } from './redact.js';

/** The part of node-redis the stores use. */
export interface RedisConnection {
  isReady: boolean;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
  ref(): void;
  unref(): void;
  scriptLoad(script: string): Promise<string>;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  hmGet(key: string, fields: string[]): Promise<Array<string | null>>;
  zCard(key: string): Promise<number>;
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
}

export interface OpenRedisOptions {
  url: string;
  /** How long to wait for the first connection. */
  connectTimeoutMs: number;
  /**
   * Whether a first connection that fails is tried again in the background (the budgets: the next request finds it
   * up); by default only a connection that has been up reconnects, so a refused one or a wrong password fails at once.
   */
  reconnectBeforeReady?: boolean;
  /** Every error of the connection (node-redis emits them while it reconnects). */
  onError(error: Error): void;
  /** The connection is up: after connecting, and again after each reconnection. */
  onReady?(): void;
}

/**
 * A new connection, up: commands fail at once while it is down (no offline queue, so a store fails closed instead of
 * queueing), and a reconnection waits 100 ms doubling up to 2 s. Rejects (the connection destroyed) when it is not up
 * within `connectTimeoutMs`.
 */
export async function openRedis(options: OpenRedisOptions): Promise<RedisConnection> {
  const { createClient } = await import('redis');
  let up = false;
  const client = createClient({
    url: options.url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: options.connectTimeoutMs,
      reconnectStrategy: (retries: number) => (up || options.reconnectBeforeReady ? Math.min(100 * 2 ** retries, 2_000) : false),
    },
  }) as unknown as RedisConnection & { on(event: 'error', listener: (error: Error) => void): unknown; on(event: 'ready', listener: () => void): unknown };
  client.on('error', (error: Error) => options.onError(error));
  client.on('ready', () => {
    up = true;
    options.onReady?.();
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
        timer.unref();
      }),
    ]);
  } catch (error) {
    client.destroy();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return client;
}

/** A Lua script and, once loaded, its SHA. */
export interface RedisScript {
  source: string;
  sha?: string;
}

/** A store's Lua scripts by name, each to be loaded once and then run by its SHA (runScript). */
export const redisScripts = <K extends string>(sources: Record<K, string>): Record<K, RedisScript> =>
  Object.fromEntries(Object.entries<string>(sources).map(([name, source]) => [name, { source }])) as Record<K, RedisScript>;

/** The head of every store script: `now`, Redis's clock in epoch ms (one clock for every process sharing the store). */
export const redisNow = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Runs a script by its SHA, loading it on first use and again after a NOSCRIPT (Redis restarted or flushed its cache). */
export async function runScript(client: RedisConnection, script: RedisScript, keys: string[], args: Array<string | number>): Promise<unknown> {
  const options = { keys, arguments: args.map(String) };
  script.sha ??= await client.scriptLoad(script.source);
  try {
    return await client.evalSha(script.sha, options);
  } catch (error) {
    if (!/NOSCRIPT/.test((error as Error).message)) throw error;
    script.sha = await client.scriptLoad(script.source);
    return await client.evalSha(script.sha, options);
  }
}

/**
 * A store kept in Redis could not be reached or answered an error: what was asked was not done (the stores fail
 * closed). Exit 3. Each store has its own subclass, code and hint; the address in the message is without its password.
 */
export class RedisStoreError extends GantryError {
  /** `<what> is unavailable: <the failure, redacted>[; <consequence>]`: how every store says Redis failed it. */
  static unavailable(what: string, error: unknown, consequence?: string): string {
    return `${what} is unavailable: ${redact((error as Error | undefined)?.message || String(error))}${consequence ? `; ${consequence}` : ''}`;
  }

  constructor(message: string, options: { code: string; hint: string; cause?: unknown }) {
    super(message, { code: options.code, exitCode: ExitCode.remote, hint: options.hint, ...(options.cause !== undefined ? { cause: options.cause } : {}) });
  }
}
