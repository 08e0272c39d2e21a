// The embedded storage server: Google Drive API v2 with `drive` renamed `storage` (spec §A, STO-*), node:http only,
// persisted to a folder, with fault injection and `/_gantry/` admin endpoints for tests. It shares no code with a
// storage client: a second, independent reading of the spec and of Drive v2's documentation.
import { TokenInfo } from './tokeninfo.js';
import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { close, listen } from '../kit/index.js';
import { adminRequest } from './admin.js';
import type { Ctx, Stats } from './context.js';
import { Channels, type Delivery } from './channels.js';
import { Faults, type StorageFault } from './faults.js';
import { failureReply, inTheApi, send, sendOutsideApi, StorageFailure } from './http.js';
import { Model } from './model.js';
import { resolveOptions, type StorageServerOptions } from './options.js';
import { applyFields, parseFields } from './query.js';
import { Resumable } from './resumable.js';
import { route } from './routes.js';
import { Store } from './store.js';

export interface StorageServer {
  name: 'storage';
  url: string;
  /** The bearer tokens accepted. */
  tokens: string[];
  credentials: Record<string, string>;
  env?: Record<string, string>;
  dir: string;
  stop(): Promise<void>;
  setFaults(faults: StorageFault[]): void;
  addFaults(faults: StorageFault[]): void;
  faults(): StorageFault[];
  stats(): Stats;
  /** Makes a resumable session unknown from now on (its next request gets 404). */
  expireSession(id: string): Promise<boolean>;
  /** Push notifications sent so far (the latest 1,000), once none is in flight. */
  notifications(): Promise<Delivery[]>;
}

export async function startStorageServer(options: StorageServerOptions): Promise<StorageServer> {
  const resolved = resolveOptions(options);
  const store = await Store.open(resolved.dir, () => new Date().toISOString());
  const model = new Model(store);
  const faults = new Faults();
  const resumable = new Resumable();
  const channels = new Channels(model);
  faults.set(resolved.faults);
  const stats: Stats = { requests: 0, sessions: {} };
  const tokens = new Set(resolved.tokens);
  const log = resolved.log;
  let origin = '';

  const tokenInfo = resolved.tokenInfoUrl ? new TokenInfo(resolved.tokenInfoUrl) : undefined;

  /**
   * Drive's answers: no credentials at all is `required` (Login Required), a bad one `authError`, a login's token
   * without a storage scope 403 `insufficientPermissions` (Google's "insufficient authentication scopes").
   */
  const authFailure = async (req: IncomingMessage, url: URL): Promise<StorageFailure | undefined> => {
    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const token = m?.[1] ?? url.searchParams.get('access_token') ?? undefined;
    if (token !== undefined && tokens.has(token)) return undefined;
    if (token !== undefined && tokenInfo) {
      const verdict = await tokenInfo.check(token);
      if (verdict === 'ok') return undefined;
      if (verdict === 'no-scope') {
        return new StorageFailure(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', undefined, 'other', {
          'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="https://www.googleapis.com/auth/storage.file"',
        });
      }
    }
    const none = header === undefined && token === undefined;
    return new StorageFailure(401, none ? 'required' : 'authError', none ? 'Login Required' : 'Invalid Credentials', 'Authorization', 'header', {
      'www-authenticate': `Bearer realm="https://accounts.google.com/"${none ? '' : ', error="invalid_token"'}`,
    });
  };

  /** Links and session URIs name the host the client used (a safe Host header), else the listening address. */
  const originOf = (req: IncomingMessage) => {
    const host = req.headers.host;
    return host && /^[A-Za-z0-9.\-:[\]]{1,300}$/.test(host) ? `http://${host}` : origin;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://storage.invalid');
    if (url.pathname.startsWith('/_gantry/'))
      return adminRequest(req, res, url, {
        faults,
        stats,
        expire: (id) => resumable.expire(model, id),
        sessions: () => model.data.sessions,
        notifications: () => channels.deliveries,
      });
    // Outside /storage/v2 and /upload/storage/v2 the front end answers, with no auth, quota or fault: a plain 404 page.
    if (!inTheApi(url.pathname)) {
      log(`${method} ${url.pathname} 404 (outside the API)`);
      return sendOutsideApi(res, method, url.pathname);
    }
    stats.requests++;
    let status = 0;
    try {
      const denied = await authFailure(req, url);
      if (denied) throw denied;
      const quota = faults.overQuota(Date.now());
      if (quota)
        throw new StorageFailure(
          quota.status,
          quota.reason,
          quota.reason === 'userRateLimitExceeded' ? 'User Rate Limit Exceeded' : 'Rate Limit Exceeded',
          undefined,
          'other',
        );
      const injected = faults.status(method, url.pathname);
      if (injected !== undefined)
        throw new StorageFailure(
          injected,
          injected >= 500 ? 'backendError' : 'injected',
          injected >= 500 ? 'Backend Error' : 'Injected fault',
          undefined,
          'other',
          { connection: 'close' },
        );
      const found = route(method, url.pathname);
      if (!('route' in found)) {
        if (found.allowed.length > 0)
          throw new StorageFailure(405, 'methodNotAllowed', 'Method Not Allowed', undefined, 'other', { allow: found.allowed.join(', ') });
        throw new StorageFailure(404, 'notFound', 'Not Found', undefined, 'other');
      }
      const mask = parseFields(url.searchParams.get('fields'));
      const ctx: Ctx = {
        req,
        res,
        method,
        pathname: url.pathname,
        params: found.params,
        query: url.searchParams,
        origin: originOf(req),
        model,
        faults,
        stats,
        sessionTtlMs: resolved.sessionTtlMs,
        resumable,
        channels,
        exportLimitBytes: resolved.exportLimitBytes,
      };
      const reply = await found.route.handler(ctx);
      if (method !== 'GET' && method !== 'HEAD') await store.save();
      if (!reply) {
        status = res.statusCode;
        return;
      }
      status = reply.status;
      const body = reply.status < 300 && reply.body !== undefined ? applyFields(reply.body, mask) : reply.body;
      send(res, method, { ...reply, body });
    } catch (error) {
      if (!(error instanceof StorageFailure)) throw error;
      status = error.status;
      if (res.headersSent) return void res.destroy();
      send(res, method, failureReply(error));
    } finally {
      log(`${method} ${url.pathname} ${status}`);
    }
  };

  // Requests still being handled: stop waits for them, so that nothing writes into the folder after it returns.
  const inflight = new Set<Promise<void>>();
  const listener = http.createServer((req, res) => {
    const handled: Promise<void> = handle(req, res)
      .catch((error: unknown) => {
        log(`error: ${req.method} ${(req.url ?? '').split('?')[0]}: ${(error as Error).stack ?? String(error)}`);
        if (!res.headersSent) send(res, req.method ?? 'GET', failureReply(new StorageFailure(500, 'backendError', 'Backend Error', undefined, 'other')));
        else res.destroy();
      })
      .finally(() => inflight.delete(handled));
    inflight.add(handled);
  });
  listener.keepAliveTimeout = 5_000;
  listener.requestTimeout = 0;
  ({ origin } = await listen(listener, resolved.host, resolved.port));
  log(`storage API listening on ${origin}`);
  return {
    name: 'storage',
    url: origin,
    tokens: [...tokens],
    credentials: { token: [...tokens][0]! },
    dir: resolved.dir,
    stop: async () => {
      await channels.idle();
      await close(listener);
      await Promise.race([Promise.allSettled([...inflight]), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      await store.save();
    },
    setFaults: (list) => faults.set(list),
    addFaults: (list) => faults.add(list),
    faults: () => faults.current(),
    stats: () => structuredClone(stats),
    expireSession: (id) => resumable.expire(model, id),
    notifications: async () => {
      await channels.idle();
      return [...channels.deliveries];
    },
  };
}

export const randomToken = () => `ya29.${randomBytes(24).toString('base64url')}`;
