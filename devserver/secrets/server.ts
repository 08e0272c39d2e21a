/**
 * The embedded kv secrets server: an independent implementation of the secrets service HTTP API (§A of the spec),
 * following the reference server's kv v1/v2 behaviour where the spec is silent. Real sockets on 127.0.0.1, plain
 * HTTP or TLS, state in memory or in one data file written atomically.
 */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { listen, parseJson, readBody as readLimited, sendReply, type ReplyStyle } from '../kit/index.js';
import { ListMethodShim } from './method-shim.js';
import { UsageError } from '../../lib/errors.js';
import { AtomicJsonFile, dataFileHint } from './persist.js';
import { checkJsonLimits, DEFAULT_JSON_LIMITS, JsonLimitError, type JsonLimits } from './json-limits.js';
import { FaultInjector, defaultFaultMessage, validateFaults, type FaultRule } from './faults.js';
import { badRequest, envelope, Failure, fail, notFound, permissionDenied, unsupportedOperation, unsupportedPath, type Outcome } from './reply.js';
import type { Operation, RequestContext } from './context.js';
import type { Core } from './core.js';
import {
  hashPassword,
  hashToken,
  newNamespace,
  newToken,
  normaliseMountPath,
  normaliseNamespace,
  type Namespace,
  type PersistedState,
  type PolicyRule,
  type TokenRecord,
} from './state.js';
import { DEFAULT_POLICY, capabilitiesFor, hasAnyAccessBelow, parsePolicy } from './acl.js';
import { handleSys, isUnauthenticatedSys, matchMount, worksWhileSealed } from './sys.js';
import { handleAuth, isUnauthenticated, newRoleId, newSecretId } from './auth.js';
import { handleKv } from './kv.js';
import { genericHelp, mountHelp } from './help.js';

/** The service's framing: compact JSON with its length, never cached. */
const STYLE: ReplyStyle = { json: 'application/json', headers: { 'Cache-Control': 'no-store' }, framing: 'style' };

export type { FaultRule } from './faults.js';
export type { JsonLimits } from './json-limits.js';

export interface SecretsServerOptions {
  /** 0 (default) picks a free port */
  port?: number;
  host?: string;
  /** the root token; a random one when absent */
  rootToken?: string;
  /** the unseal key; a random one when absent */
  unsealKey?: string;
  /** keep state in this JSON file (atomic writes); in memory when absent */
  dataFile?: string;
  /** how messages name the data file: "the data file" unless told (the CLI says "the data file (--data-file)") */
  dataFileWhat?: string;
  /**
   * PEM certificate and key: serve HTTPS. With `ca` (PEM of the CAs that issue client certificates) the listener asks
   * for a client certificate and refuses the handshake without one it can verify — mutual TLS, as a listener with
   * `tls_require_and_verify_client_cert`. `requestCert` defaults to true when `ca` is given.
   */
  tls?: { cert: string | Buffer; key: string | Buffer; ca?: string | Buffer | Array<string | Buffer>; requestCert?: boolean };
  /** kv mounts of every namespace; default `secret/` (v2) and `kv/` (v1) */
  mounts?: Array<{ path: string; version: 1 | 2 }>;
  /** namespaces to create, e.g. `['ns1', 'ns1/ns2']` */
  namespaces?: string[];
  /** refuse requests without `X-Secrets-Request: true` (the proxy option `require_request_header`) */
  requireRequestHeader?: boolean;
  /** bytes; default 32 MiB */
  maxRequestSize?: number;
  jsonLimits?: Partial<JsonLimits>;
  faults?: FaultRule[];
  /** ACL policies by name (`ns1/name` puts it in namespace ns1): `{ "<path>": ["read", ...] }` or a JSON policy document */
  policies?: Record<string, unknown>;
  users?: Array<{ username: string; password: string; policies?: string[]; namespace?: string }>;
  approles?: Array<{ roleName: string; roleId?: string; secretId?: string; policies?: string[]; namespace?: string }>;
  /** seconds; default 768h like the reference server */
  tokenTtl?: number;
  /** start sealed */
  sealed?: boolean;
  /** one line per request (method, path, status) — never tokens or bodies */
  log?: (line: string) => void;
}

export interface SecretsServer {
  name: 'secrets';
  url: string;
  port: number;
  credentials: { token: string; unsealKey: string };
  rootToken: string;
  unsealKey: string;
  approles: Array<{ roleName: string; roleId: string; secretId: string; namespace: string }>;
  stop(): Promise<void>;
  seal(): void;
  unseal(): void;
  isSealed(): boolean;
  setFaults(rules: FaultRule[]): void;
  faults(): FaultRule[];
  /** resolves when every change so far is on disk (immediately for a memory server) */
  flush(): Promise<void>;
  /** the kv mounts of the root namespace as they are now (configured, loaded from the data file, or added by sys/mounts), by path */
  mounts(): Array<{ path: string; version: 1 | 2 }>;
}

const DEFAULT_MOUNTS: Array<{ path: string; version: 1 | 2 }> = [
  { path: 'secret/', version: 2 },
  { path: 'kv/', version: 1 },
];
const DEFAULT_MAX_REQUEST_SIZE = 32 * 1024 * 1024;
const DEFAULT_TOKEN_TTL = 768 * 3600;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const safeEqual = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function freshState(mounts: Array<{ path: string; version: 1 | 2 }>): PersistedState {
  return { format: 'gantry-secrets-devserver', version: 1, namespaces: { '': newNamespace('', mounts) }, tokens: {} };
}

function validateLoaded(raw: unknown, file: string, what: string): PersistedState {
  const s = raw as PersistedState;
  if (!s || s.format !== 'gantry-secrets-devserver' || s.version !== 1 || typeof s.namespaces !== 'object' || !s.namespaces['']) {
    throw new UsageError(`${what} ${file} is not a secrets dev server data file (format gantry-secrets-devserver, version 1); it was left as it is`, {
      code: 'DATA_FILE_INVALID',
      hint: dataFileHint,
    });
  }
  s.tokens ??= {};
  return s;
}

export async function startSecretsServer(options: SecretsServerOptions = {}): Promise<SecretsServer> {
  const host = options.host ?? '127.0.0.1';
  const rootToken = options.rootToken ?? newToken();
  const unsealKey = options.unsealKey ?? randomBytes(32).toString('base64');
  const mounts = (options.mounts ?? DEFAULT_MOUNTS).map((m) => ({ path: normaliseMountPath(m.path), version: m.version }));
  if (mounts.some((m) => m.path === '' || m.path.startsWith('sys/') || m.path.startsWith('auth/') || (m.version !== 1 && m.version !== 2))) {
    throw new Error('mounts: each needs a path outside sys/ and auth/ and version 1 or 2');
  }
  for (const [i, a] of mounts.entries()) {
    // as sys/mounts refuses it: one path, one mount, and no mount inside another
    const clash = mounts.find((b, j) => j !== i && b.path.startsWith(a.path));
    if (clash)
      throw new Error(clash.path === a.path ? `mounts: ${a.path} is given twice` : `mounts: ${clash.path} is inside ${a.path}; mounts cannot be nested`);
  }
  const requestCert = options.tls ? (options.tls.requestCert ?? options.tls.ca !== undefined) : false;
  if (requestCert && options.tls?.ca === undefined)
    throw new Error('tls.requestCert needs tls.ca: the CA certificates that client certificates are verified against');
  const maxRequestSize = options.maxRequestSize ?? DEFAULT_MAX_REQUEST_SIZE;
  const limits: JsonLimits = { ...DEFAULT_JSON_LIMITS, ...options.jsonLimits };
  const faults = new FaultInjector();
  faults.set(validateFaults(options.faults ?? []));
  const log = options.log ?? (() => undefined);

  let state = freshState(mounts);
  const file =
    options.dataFile !== undefined
      ? new AtomicJsonFile(
          options.dataFile,
          () => ({ ...state, tokens: Object.fromEntries(Object.entries(state.tokens).filter(([, t]) => !t.root)) }),
          options.dataFileWhat,
        )
      : undefined;
  if (file) {
    const loaded = await file.load();
    if (loaded !== undefined) state = validateLoaded(loaded, file.path, file.what);
  }

  const core: Core = {
    state,
    sealed: options.sealed ?? false,
    unsealKey,
    storageType: file ? 'file' : 'inmem',
    defaultTokenTtl: options.tokenTtl ?? DEFAULT_TOKEN_TTL,
    defaultMounts: mounts,
    namespace: (p) => state.namespaces[p],
  };

  // configured namespaces, mounts, policies, users and roles are (re)applied on every start
  for (const raw of options.namespaces ?? []) {
    const parts = normaliseNamespace(raw).split('/').filter(Boolean);
    for (let i = 1; i <= parts.length; i++) {
      const p = `${parts.slice(0, i).join('/')}/`;
      state.namespaces[p] ??= newNamespace(p, mounts);
    }
  }
  for (const ns of Object.values(state.namespaces)) {
    for (const m of mounts) if (!ns.mounts[m.path]) Object.assign(ns.mounts, newNamespace('', [m]).mounts);
  }
  const nsFor = (raw: string | undefined): Namespace => {
    const p = normaliseNamespace(raw);
    const ns = state.namespaces[p];
    if (!ns) throw new Error(`namespace ${JSON.stringify(raw)} is not configured (add it to namespaces)`);
    return ns;
  };
  for (const [qualified, policy] of Object.entries(options.policies ?? {})) {
    const slash = qualified.lastIndexOf('/');
    const ns = nsFor(slash < 0 ? '' : qualified.slice(0, slash));
    ns.policies[qualified.slice(slash + 1).toLowerCase()] = parsePolicy(policy);
  }
  for (const u of options.users ?? []) {
    nsFor(u.namespace).users[u.username.toLowerCase()] = { ...hashPassword(u.password), policies: u.policies ?? [] };
  }
  const approles: SecretsServer['approles'] = [];
  for (const r of options.approles ?? []) {
    const ns = nsFor(r.namespace);
    const roleId = r.roleId ?? newRoleId();
    const secretId = r.secretId ?? newSecretId();
    ns.approles[r.roleName] = { role_id: roleId, secret_ids: [hashToken(secretId)], policies: r.policies ?? [] };
    approles.push({ roleName: r.roleName, roleId, secretId, namespace: ns.path });
  }
  const rootRecord: TokenRecord = {
    accessor: randomBytes(12).toString('base64url'),
    namespace: '',
    policies: ['root'],
    display_name: 'root',
    path: 'auth/token/root',
    meta: null,
    creation_time: Math.floor(Date.now() / 1000),
    issue_time: new Date().toISOString(),
    ttl: 0,
    expire_at: null,
    renewable: false,
    num_uses: 0,
    orphan: true,
    root: true,
  };
  if (file) await file.save();

  const listMarker = `x-gantry-list-${randomBytes(8).toString('hex')}`;

  function findToken(id: string | undefined): (TokenRecord & { id: string }) | undefined {
    if (!id) return undefined;
    if (safeEqual(id, rootToken)) return { ...rootRecord, id };
    const hash = hashToken(id);
    const record = state.tokens[hash];
    if (!record) return undefined;
    if (record.expire_at !== null && record.expire_at <= Date.now()) {
      delete state.tokens[hash];
      return undefined;
    }
    return { ...record, id };
  }

  function rulesFor(token: TokenRecord): PolicyRule[] {
    const home = state.namespaces[token.namespace];
    if (!home) return [];
    return token.policies.flatMap((name) => (name === 'default' ? (home.policies.default ?? DEFAULT_POLICY) : (home.policies[name] ?? [])));
  }

  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    if (res.headersSent || res.destroyed) return;
    sendReply(res, { status, headers, ...(status === 204 ? {} : { body }) }, STYLE);
  }

  /** Reads the body, refusing more than the limit with 413 (after draining it, so the connection stays usable). */
  function readBody(req: http.IncomingMessage): Promise<Buffer> {
    return readLimited(req, {
      limit: maxRequestSize,
      refuseDeclared: true,
      drainUpTo: maxRequestSize * 4,
      tooLarge: () => new Failure(413, ['http: request body too large']),
    });
  }

  async function handleFaultsAdmin(req: http.IncomingMessage, res: http.ServerResponse, method: string) {
    const token = tokenFrom(req);
    if (!token || !safeEqual(token, rootToken)) throw permissionDenied();
    if (method === 'GET') return send(res, 200, { faults: faults.list() });
    if (method === 'DELETE') {
      faults.set([]);
      return send(res, 204, undefined);
    }
    if (method === 'PUT' || method === 'POST') {
      const parsed = parseJson(await readBody(req), { notJson: () => fail(400, 'error parsing JSON') });
      try {
        faults.set((parsed as { faults?: unknown }).faults as FaultRule[]);
      } catch (error) {
        throw fail(400, (error as Error).message);
      }
      return send(res, 204, undefined);
    }
    throw unsupportedOperation();
  }

  function tokenFrom(req: http.IncomingMessage): string | undefined {
    const header = req.headers['x-secrets-token'];
    if (typeof header === 'string' && header !== '') return header;
    const authorization = req.headers.authorization;
    if (typeof authorization === 'string' && /^bearer /i.test(authorization)) return authorization.slice(7).trim();
    return undefined;
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const requestId = randomUUID();
    const method = req.headers[listMarker] === 'LIST' ? 'LIST' : (req.method ?? 'GET');
    // not `new URL()`: it would resolve `..` and `.` segments, which must reach the path checks as sent
    const target = req.url ?? '/';
    const queryAt = target.indexOf('?');
    const url = {
      pathname: queryAt < 0 ? target : target.slice(0, queryAt),
      searchParams: new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1)),
    };
    let status = 0;
    try {
      if (url.pathname === '/_dev/faults') return await handleFaultsAdmin(req, res, method);
      const fault = faults.take(method, url.pathname);
      if (fault) {
        if (fault.latencyMs) await sleep(fault.latencyMs);
        if (fault.reset) {
          req.socket.destroy();
          return;
        }
        if (fault.status) {
          status = fault.status;
          req.resume();
          return send(
            res,
            fault.status,
            { errors: fault.errors ?? [defaultFaultMessage(fault.status)] },
            fault.retryAfter !== undefined ? { 'Retry-After': String(fault.retryAfter) } : {},
          );
        }
      }
      if (options.requireRequestHeader && req.headers['x-secrets-request'] !== 'true') {
        req.resume();
        throw fail(412, 'missing "X-Secrets-Request" header');
      }
      const body = await readBody(req);
      const outcome = await route(req, method, url, body, requestId);
      status = outcome.status;
      send(res, outcome.status, outcome.body, outcome.headers);
    } catch (error) {
      if (error instanceof Failure) {
        status = error.status;
        send(res, error.status, error.body ?? { errors: error.errors });
      } else {
        status = 500;
        send(res, 500, { errors: [`internal error: ${(error as Error).message}`] });
      }
    } finally {
      log(`${method} ${url.pathname} ${status}`);
    }
  }

  async function route(
    req: http.IncomingMessage,
    method: string,
    url: { pathname: string; searchParams: URLSearchParams },
    rawBody: Buffer,
    requestId: string,
  ): Promise<{ status: number; body: unknown; headers?: Record<string, string> }> {
    if (!url.pathname.startsWith('/v1/')) throw notFound();
    let path: string;
    try {
      path = decodeURIComponent(url.pathname.slice('/v1/'.length));
    } catch {
      throw fail(400, 'invalid URL encoding in the path');
    }
    const segments = path.split('/');
    for (let i = 0; i < segments.length; i++) {
      const s = segments[i];
      if (s === '' && i < segments.length - 1) throw unsupportedPath();
      // a path parameter must not end in a period; this also refuses `.` and `..`
      if (s.endsWith('.')) throw unsupportedPath();
    }

    let op: Operation;
    const query = url.searchParams;
    const help = query.get('help') === '1' || query.get('help') === 'true';
    switch (method) {
      case 'GET':
        op = listQuery(query.get('list')) ? 'list' : 'read';
        break;
      case 'HEAD':
        // The service answers HEAD on sys/health only (load balancers' checks): as GET, without the body.
        if (path !== 'sys/health') throw unsupportedOperation();
        op = 'read';
        break;
      case 'LIST':
        op = 'list';
        break;
      case 'POST':
      case 'PUT':
        op = 'write';
        break;
      case 'PATCH':
        op = 'patch';
        break;
      case 'DELETE':
        op = 'delete';
        break;
      default:
        throw unsupportedOperation();
    }
    if (op === 'list' && !path.endsWith('/')) path += '/';

    // namespace: header and path prefix are one string; the longest existing namespace prefix wins
    const full = normaliseNamespace(typeof req.headers['x-secrets-namespace'] === 'string' ? req.headers['x-secrets-namespace'] : '') + path;
    let ns = state.namespaces[''];
    for (const candidate of Object.keys(state.namespaces)) {
      if (candidate !== '' && full.startsWith(candidate) && candidate.length > ns.path.length) ns = state.namespaces[candidate];
    }
    const rel = full.slice(ns.path.length);

    if (core.sealed && !(ns.path === '' && worksWhileSealed(rel))) throw fail(503, 'secrets service is sealed');

    let body: Record<string, unknown> = {};
    if (WRITE_METHODS.has(method)) {
      if (method === 'PATCH') {
        const contentType = String(req.headers['content-type'] ?? '')
          .split(';')[0]
          .trim()
          .toLowerCase();
        if (contentType !== 'application/merge-patch+json') {
          throw fail(415, `PATCH requires Content-Type application/merge-patch+json, provided ${contentType}`);
        }
      }
      if (rawBody.length > 0) {
        try {
          checkJsonLimits(rawBody, limits);
        } catch (error) {
          if (!(error instanceof JsonLimitError)) throw error;
          if (!error.syntax) throw fail(400, error.message);
        }
        const notJson = () => fail(400, 'error parsing JSON');
        body = parseJson(rawBody, { notJson, notObject: notJson }) as Record<string, unknown>;
      }
    }

    const unauthenticated = isUnauthenticatedSys(rel) || isUnauthenticated(rel);
    const tokenId = tokenFrom(req);
    const token = findToken(tokenId);
    if (!unauthenticated) {
      if (!token || !ns.path.startsWith(token.namespace)) throw permissionDenied();
      if (token.num_uses > 0) {
        const hash = hashToken(token.id);
        const record = state.tokens[hash];
        if (record.num_uses === 1) delete state.tokens[hash];
        else record.num_uses--;
      }
    }
    const usable = token && ns.path.startsWith(token.namespace) ? token : undefined;
    const isRoot = usable?.policies.includes('root') ?? false;
    const rules = usable ? rulesFor(usable) : [];
    const aclPath = (p: string) => ns.path.slice(usable?.namespace.length ?? 0) + p;
    let changed = false;
    const ctx: RequestContext = {
      requestId,
      op,
      path: rel,
      ns,
      query,
      body,
      token: usable,
      isRoot,
      can: (capability, p = rel) => isRoot || capabilitiesFor(rules, aclPath(p)).has(capability),
      authorize(capability, p = rel) {
        if (!this.can(capability, p)) throw permissionDenied();
      },
      canReach: (prefix) => isRoot || hasAnyAccessBelow(rules, aclPath(prefix)),
      capabilities: (p) =>
        isRoot
          ? ['root']
          : (() => {
              const caps = [...capabilitiesFor(rules, aclPath(p))].sort();
              return caps.length ? caps : ['deny'];
            })(),
      changed: () => {
        changed = true;
      },
      now: () => new Date(),
    };

    let outcome: Outcome;
    if (help && op === 'read') {
      if (!isRoot && capabilitiesFor(rules, aclPath(rel)).size === 0) throw permissionDenied();
      if (rel.startsWith('sys/') || rel.startsWith('auth/')) {
        outcome = { raw: genericHelp(`System and auth endpoint ${rel} of the embedded secrets server.`) };
      } else {
        const mount = matchMount(ns.mounts, rel);
        if (!mount) throw fail(404, `no handler for route "${ns.path}${rel}". route entry not found.`);
        outcome = { raw: mountHelp(mount, rel.slice(mount.path.length)) };
      }
    } else if (rel.startsWith('sys/')) {
      outcome = handleSys(core, ctx);
    } else if (rel.startsWith('auth/')) {
      outcome = handleAuth(core, ctx);
    } else {
      const mount = matchMount(ns.mounts, rel);
      if (!mount) {
        if (!isRoot && !['create', 'update', 'read', 'list', 'delete', 'patch'].some((c) => ctx.can(c))) throw permissionDenied();
        throw fail(404, `no handler for route "${ns.path}${rel}". route entry not found.`);
      }
      outcome = handleKv(ctx, mount, rel.length >= mount.path.length ? rel.slice(mount.path.length) : '');
    }

    if (changed && file) {
      try {
        await file.save();
      } catch (error) {
        // memory goes back to what is on disk, so a failed write is not applied at all (and neither are the
        // changes that shared this save: their requests get this same 500)
        const good = file.lastGood() as PersistedState | undefined;
        if (good) {
          state.namespaces = good.namespaces;
          state.tokens = good.tokens;
        }
        throw fail(500, `the change could not be written to the data file, and was not applied: ${(error as Error).message}`);
      }
    }
    if (outcome.raw !== undefined) return { status: outcome.status ?? 200, body: outcome.raw as unknown };
    const hasWarnings = (outcome.warnings?.length ?? 0) > 0;
    if (outcome.data === undefined && outcome.auth === undefined && !hasWarnings) return { status: 204, body: undefined };
    return { status: outcome.status ?? 200, body: envelope(requestId, outcome) };
  }

  // Pipelined requests on one connection are handled one after the other, as the reference server does: Node's
  // server would otherwise start them all at once, and a pipelined read could overtake the write before it.
  const connectionQueues = new WeakMap<object, Promise<void>>();
  const httpServer = http.createServer((req, res) => {
    const previous = connectionQueues.get(req.socket) ?? Promise.resolve();
    const current = previous.then(() => handle(req, res));
    connectionQueues.set(req.socket, current);
  });
  httpServer.keepAliveTimeout = 5000;
  const sockets = new Set<net.Socket>();
  const accept = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    httpServer.emit('connection', new ListMethodShim(socket, listMarker));
  };
  const listener = options.tls
    ? tls.createServer(
        { cert: options.tls.cert, key: options.tls.key, ...(requestCert ? { ca: options.tls.ca, requestCert: true, rejectUnauthorized: true } : {}) },
        accept,
      )
    : net.createServer(accept);
  // A refused handshake (no client certificate, one from another CA, a client that does not trust ours) has no HTTP
  // request to log: say why here, since the client often sees only a closed connection.
  listener.on('tlsClientError', (error: Error & { code?: string }) =>
    log(`TLS handshake refused: ${error.code ?? 'error'} (${error.message.replace(/^[\dA-F]+:error:[\dA-F]+:SSL routines:/, '').replace(/:\.\.\/.*$/s, '')})`),
  );
  const { port } = await listen(listener, host, options.port ?? 0);
  const url = `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    name: 'secrets',
    url,
    port,
    credentials: { token: rootToken, unsealKey },
    rootToken,
    unsealKey,
    approles,
    async stop() {
      await new Promise<void>((resolve) => {
        listener.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      if (file) await file.save().catch(() => undefined);
    },
    seal() {
      core.sealed = true;
    },
    unseal() {
      core.sealed = false;
    },
    isSealed: () => core.sealed,
    setFaults(rules) {
      faults.set(rules);
    },
    faults: () => faults.list(),
    flush: async () => {
      if (file) await file.save();
    },
    mounts: () =>
      Object.values(state.namespaces['']!.mounts)
        .map((m) => ({ path: m.path, version: m.version }))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
  };
}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * `?list=`: the service reads it with Go's strconv.ParseBool — 1, t, T, TRUE, true, True list; 0, f, F, FALSE, false,
 * False (or no value) read; anything else is 400. node-vault's `noCustomHTTPVerbs` sends `list=1`.
 */
export function listQuery(raw: string | null): boolean {
  if (raw === null || raw === '' || GO_FALSE.has(raw)) return false;
  if (GO_TRUE.has(raw)) return true;
  throw badRequest(`invalid value for the list parameter: ${JSON.stringify(raw.slice(0, 40))} (use true or false)`);
}
