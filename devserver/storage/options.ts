// The storage server's options and their checks: bad options are refused before anything listens.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { UsageError } from '../../lib/errors.js';
import { checkStorageFault, type StorageFault } from './faults.js';

export interface StorageServerOptions {
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** The folder the state and content persist to (created if missing). */
  dir: string;
  /** A bearer token accepted; with neither `token` nor `tokens`, a random one (see `server.tokens`). */
  token?: string;
  tokens?: string[];
  /** How long a resumable session lives; default one week, Drive's. */
  sessionTtlMs?: number;
  /**
   * An authorization server's token information endpoint (Google's `tokeninfo`, POST with `access_token` in the
   * form): a bearer token that is none of `tokens` is accepted when it answers 200 with a storage scope.
   */
  tokenInfoUrl?: string;
  faults?: StorageFault[];
  /** files.export refuses files above this size; default 10 MiB (Drive's 10 MB export limit). */
  exportLimitBytes?: number;
  /** One line per request (method, path, status; never a token). */
  log?: (line: string) => void;
}

export interface ResolvedOptions {
  host: string;
  port: number;
  dir: string;
  tokens: string[];
  tokenInfoUrl: string | undefined;
  sessionTtlMs: number;
  faults: StorageFault[];
  exportLimitBytes: number;
  log: (line: string) => void;
}

export const WEEK_MS = 7 * 24 * 3600 * 1000;

export function resolveOptions(options: StorageServerOptions): ResolvedOptions {
  if (!options || typeof options.dir !== 'string' || options.dir.trim() === '')
    throw new UsageError('the storage server needs a folder (dir) to keep its files in');
  const port = options.port ?? 0;
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535) throw new UsageError(`port must be 0-65535, got ${String(port)}`);
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') throw new UsageError('host must be a host name or address');
  const tokens = [...(options.token !== undefined ? [options.token] : []), ...(options.tokens ?? [])];
  for (const token of tokens) {
    if (typeof token !== 'string' || !/^[\x21-\x7e]{8,4096}$/.test(token))
      throw new UsageError('a storage token must be 8 or more printable characters without spaces');
  }
  if (tokens.length === 0) tokens.push(`ya29.${randomBytes(24).toString('base64url')}`);
  const ttl = options.sessionTtlMs ?? WEEK_MS;
  if (!Number.isSafeInteger(ttl) || ttl < 1) throw new UsageError(`sessionTtlMs must be a whole number of milliseconds above 0, got ${String(ttl)}`);
  const tokenInfoUrl = options.tokenInfoUrl;
  if (tokenInfoUrl !== undefined && (typeof tokenInfoUrl !== 'string' || !/^https?:\/\/[^\s?#]+$/.test(tokenInfoUrl)))
    throw new UsageError(`tokenInfoUrl must be an http(s) URL without query or fragment, got ${JSON.stringify(tokenInfoUrl)}`);
  const exportLimitBytes = options.exportLimitBytes ?? 10 * 1024 * 1024;
  if (!Number.isSafeInteger(exportLimitBytes) || exportLimitBytes < 0)
    throw new UsageError(`exportLimitBytes must be a whole number of bytes, got ${String(exportLimitBytes)}`);
  return {
    host,
    port,
    exportLimitBytes,
    dir: path.resolve(options.dir),
    tokens,
    tokenInfoUrl,
    sessionTtlMs: ttl,
    faults: (options.faults ?? []).map(checkStorageFault),
    log: options.log ?? (() => {}),
  };
}
