// The embedded module registry: the whole protocol of spec §B over node:http(s), serving modules from a
// folder or an S3 bucket, with fault injection for tests. It shares no code with lib/registry (the client).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  ApiError,
  applyFilters,
  compareModules,
  DEFAULT_PAGE_LIMITS,
  findModule,
  findVersion,
  moduleDetail,
  moduleRecord,
  paginate,
  readPage,
  requireLatest,
  routeV1,
  routeV2,
  search,
  versionsResponse,
  type PageLimits,
  type Route,
} from './api.js';
import { CatalogError, latestVersion, moduleKey, type Artifact, type ArchiveExtension, type ModuleEntry, type VersionEntry } from './catalog.js';
import { readVersionContent, type VersionContent } from './content.js';
import { applyFault, checkFault, FaultError, FaultSet, type Fault, type StatusFault } from '../kit/faults.js';
import { close, listen, RouteTable, sendFile, type RouteEntry } from '../kit/index.js';
import { FolderStore, type ModuleStore } from './folder-store.js';
import type { S3Store } from './s3-store.js';
import type { S3StoreOptions } from './s3-options.js';
import { archiveDirectory, contentTypeOf } from './archive.js';
import { escapeHtml, holdUntil, parseTarget, pathOnly, readJson, safeDecode, segmentsAfter, sendErrors, sendJson } from './respond.js';

export interface RegistryServerOptions {
  /** Folder laid out <namespace>/<name>/<provider>/<version>/ or <version>.tar.gz|.zip|... */
  dir?: string;
  /** Or an S3 bucket with <prefix>/<namespace>/<name>/<provider>/<version>.<archive>. */
  s3?: S3StoreOptions;
  /** Listen address; default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Serve https with this certificate and key (PEM). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** No answer leaves sooner than this after its request arrived; the server's work overlaps the wait (not for
   * /_gantry/ admin calls). E.g. 20 for the pin benchmark. */
  latencyMs?: number;
  /** Faults armed at start; change them later with setFaults()/addFaults() or the admin endpoint. */
  faults?: Fault[];
  /** Require `Authorization: Bearer <token>` on the API (not on discovery or archives). */
  token?: string;
  /** The modules.v1 base path; default /v1/modules/. */
  basePath?: string;
  /** Whether discovery names the base as a path ('relative', default) or a full URL ('absolute'). */
  discovery?: 'relative' | 'absolute';
  /** X-Registry-Get for archives this server serves: a full URL ('absolute', default) or a path ('relative'). */
  locations?: 'absolute' | 'relative';
  /** Add `?checksum=sha256:<hex>` to archive locations (computed once per version). */
  checksums?: boolean;
  pageLimits?: Partial<PageLimits>;
  /** How download answers: 204 with X-Registry-Get (the spec, default) or 200 with a JSON {"location"} body and no
   * header, as OpenTofu's registry does. */
  downloadResponse?: 'no-content' | 'json';
  /** Serve only the minimal protocol (versions and download), as a third-party registry may (REG-PROTO-EXTENDED-OPTIONAL). */
  minimal?: boolean;
  /** Moved modules: `{ 'old/name/aws': 'new/name/aws' }` answers every v1 path of the old address with a 301. */
  aliases?: Record<string, string>;
  /** After this long, a request starts a background rescan of the store (it is served from the current catalog);
   * default 1 s (folder), 10 s (S3). refresh() rescans at once. */
  rescanMs?: number;
  /** One line per request and per warning; default: silent. */
  log?: (line: string) => void;
}

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  path: string;
  /** The status sent (also for answers a fault cut short); 0 for a connection reset. */
  status: number;
  /** Whether an Authorization header came, and whether it matched (the token itself is never kept). */
  authorization: 'none' | 'valid' | 'invalid';
}

export interface RegistryServer {
  name: 'registry';
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** The host part of module source addresses, e.g. 127.0.0.1:41234 (an IP literal has the dots an address needs). */
  host: string;
  /** `{ token }` when the server requires one, else empty. */
  credentials: Record<string, string>;
  /** Where the modules come from, for messages. */
  source: string;
  stop(): Promise<void>;
  setFaults(faults: Fault[]): void;
  addFaults(faults: Fault[]): void;
  faults(): ReturnType<FaultSet['list']>;
  setLatency(ms: number): void;
  requests(): RecordedRequest[];
  clearRequests(): void;
  /** Rescans the store now and forgets cached module content and checksums. */
  refresh(): Promise<void>;
}

const ADMIN_PREFIX = '/_gantry/';

interface AdminRoute extends RouteEntry {
  handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;
}
const ARCHIVE_PREFIX = '/_gantry/archives/';
const MAX_ADMIN_BODY = 64 * 1024;
/** The request log keeps the latest entries only, so a long `gantry dev` session does not grow without bound. */
const MAX_RECORDED = 10_000;

interface Catalog {
  modules: Map<string, ModuleEntry>;
  sorted: ModuleEntry[];
  loadedAt: number;
}

export async function startRegistryServer(options: RegistryServerOptions): Promise<RegistryServer> {
  if (!options.dir === !options.s3) throw new CatalogError('the registry serves either a folder (dir) or an S3 bucket (s3), exactly one');
  const store: ModuleStore & { location?: S3Store['location']; open?: S3Store['open']; stop?: () => void } = options.dir
    ? new FolderStore(options.dir)
    : new (await import('./s3-store.js')).S3Store(options.s3!); // the AWS SDK loads only when a bucket is served
  const basePath = options.basePath ?? '/v1/modules/';
  if (!basePath.startsWith('/') || !basePath.endsWith('/')) throw new CatalogError(`basePath must start and end with "/": ${basePath}`);
  const v2BasePath = basePath.endsWith('/v1/modules/') ? basePath.slice(0, -'/v1/modules/'.length) + '/v2/modules/' : '/v2/modules/';
  const limits: PageLimits = { ...DEFAULT_PAGE_LIMITS, ...(options.pageLimits ?? {}) };
  const rescanMs = options.rescanMs ?? (options.s3 ? 10_000 : 1_000);
  const log = options.log ?? (() => {});
  const faults = new FaultSet();
  faults.set(options.faults ?? []);
  let latencyMs = options.latencyMs ?? 0;
  const recorded: RecordedRequest[] = [];
  const aliases = new Map<string, string>();
  for (const [from, to] of Object.entries(options.aliases ?? {})) {
    const parts = [from, to].map((address) => address.split('/'));
    if (parts.some((p) => p.length !== 3 || p.some((segment) => segment === '')))
      throw new CatalogError(`aliases map <namespace>/<name>/<provider> to another such address, got "${from}" -> "${to}"`);
    aliases.set(moduleKey(...(parts[0] as [string, string, string])), to);
  }
  const liveDownloads = new Map<string, number>();
  const contentCache = new Map<string, Promise<VersionContent>>();
  const checksumCache = new Map<string, Promise<string>>();

  // ---- catalog ----
  let catalog: Catalog | undefined;
  let loading: Promise<Catalog> | undefined;
  let lastLoadMs = 0;
  const load = (): Promise<Catalog> => {
    const started = Date.now();
    return (loading ??= store
      .load((message) => log(`warning: ${message}`))
      .then((modules) => {
        lastLoadMs = Date.now() - started;
        const sorted = [...modules].sort(compareModules);
        const next = { modules: new Map(sorted.map((m) => [moduleKey(m.namespace, m.name, m.provider), m])), sorted, loadedAt: Date.now() };
        catalog = next;
        return next;
      })
      .finally(() => {
        loading = undefined;
      }));
  };
  // Requests never wait for a rescan: a stale catalog starts one in the background and is served meanwhile.
  // Rescans of a big store are spaced out (at least 20x their own duration) so they never eat more than ~5% of a CPU.
  const current = async (): Promise<Catalog> => {
    if (!catalog) return load();
    if (Date.now() - catalog.loadedAt >= Math.max(rescanMs, 20 * lastLoadMs) && !loading) {
      const previous = catalog;
      load().catch((error: Error) => {
        log(`warning: rescanning ${store.description} failed, serving the previous catalog: ${error.message}`);
        previous.loadedAt = Date.now();
      });
    }
    return catalog;
  };
  await load(); // a bad folder or bucket is a start error, not a later 500

  const artifactKey = (a: Artifact) =>
    a.kind === 'directory' || a.kind === 'file' ? `${a.path}@${a.modifiedMs}` : a.kind === 's3' ? `s3://${a.bucket}/${a.key}@${a.modifiedMs}` : a.location;
  const contentOf = (artifact: Artifact) => {
    const key = artifactKey(artifact);
    let found = contentCache.get(key);
    if (!found) contentCache.set(key, (found = readVersionContent(artifact, store.open?.bind(store))));
    return found;
  };
  const downloadsOf = (module: ModuleEntry) => {
    let live = 0;
    for (const v of module.versions) live += liveDownloads.get(`${moduleKey(module.namespace, module.name, module.provider)}/${v.version}`) ?? 0;
    return live;
  };

  // ---- server ----
  let origin = '';
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      log(`error: ${req.method} ${pathOnly(req.url)}: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) sendErrors(res, 500, ['internal error']);
      else res.destroy();
    });
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const url = parseTarget(req.url);
    if (!url) {
      sendErrors(res, 400, ['malformed request target']);
      return;
    }
    const method = req.method ?? 'GET';
    if (url.pathname.startsWith(ADMIN_PREFIX) && !url.pathname.startsWith(ARCHIVE_PREFIX)) {
      await admin(req, res, url);
      return;
    }
    const authorization = authorizationOf(req);
    let reset = false;
    res.on('close', () => {
      // 'close' rather than 'finish': a truncated or reset answer never finishes but is still worth recording.
      const status = reset ? 0 : res.statusCode;
      recorded.push({ method, path: url.pathname + url.search, status, authorization });
      if (recorded.length > MAX_RECORDED) recorded.splice(0, recorded.length - MAX_RECORDED);
      log(`${method} ${url.pathname} ${reset ? 'reset' : status} ${Date.now() - started}ms`);
    });

    // latencyMs is a floor: nothing leaves before it has passed since arrival, and the server's own work overlaps the
    // wait, so a benchmark measures its client against a known per-request time. Latency faults add to the work.
    const floor = latencyMs > 0 ? new Promise<void>((resolve) => setTimeout(resolve, latencyMs)) : undefined;
    const decision = faults.decide(method, url.pathname);
    if (decision.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, decision.delayMs));
    const action = decision.action;
    if (action?.kind === 'reset') {
      await floor;
      reset = true;
      applyFault(action, req, res);
      return;
    }
    if (action?.kind === 'truncate') applyFault(action, req, res); // wraps the body writers; the floor goes outside
    if (floor) holdUntil(res, floor);
    if (action?.kind === 'status') return sendFault(res, action);
    if (action && action.kind !== 'truncate') {
      applyFault(action, req, res);
      return;
    }

    if (method !== 'GET' && method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      sendErrors(res, 405, [`method ${method} is not allowed: registry endpoints are GET only`]);
      return;
    }
    try {
      await dispatch(req, res, url, authorization);
    } catch (error) {
      if (error instanceof ApiError) sendErrors(res, error.status, [error.message]);
      else throw error;
    }
  }

  function authorizationOf(req: IncomingMessage): RecordedRequest['authorization'] {
    const header = req.headers.authorization;
    if (!header) return 'none';
    return options.token !== undefined && header === `Bearer ${options.token}` ? 'valid' : 'invalid';
  }

  async function dispatch(req: IncomingMessage, res: ServerResponse, url: URL, authorization: RecordedRequest['authorization']): Promise<void> {
    const pathname = url.pathname;
    if (pathname === '/.well-known/terraform.json') {
      sendJson(res, 200, { 'modules.v1': options.discovery === 'absolute' ? originOf(req) + basePath : basePath });
      return;
    }
    if (pathname.startsWith(ARCHIVE_PREFIX)) {
      await serveArchive(req, res, pathname.slice(ARCHIVE_PREFIX.length));
      return;
    }
    let route: Route | undefined;
    if (pathname === basePath.slice(0, -1) || pathname.startsWith(basePath)) {
      route = routeV1(segmentsAfter(pathname, basePath));
    } else if (pathname.startsWith(v2BasePath)) {
      route = routeV2(segmentsAfter(pathname, v2BasePath));
    }
    if (!route) throw new ApiError(404, `no registry endpoint at ${pathname}`);
    if (options.minimal && route.kind !== 'versions' && route.kind !== 'download') {
      throw new ApiError(404, `this registry implements only the minimal protocol (versions and download): no endpoint at ${pathname}`);
    }
    if (options.token !== undefined && authorization !== 'valid') {
      res.setHeader('www-authenticate', 'Bearer');
      throw new ApiError(401, authorization === 'none' ? 'this registry needs a token: send Authorization: Bearer <token>' : 'the token was not accepted');
    }
    const moved = movedTo(route);
    if (moved) {
      // REG-STATUS-301-MOVED: the module lives under another address now; the rest of the path stays.
      const target = basePath + [...moved.split('/'), ...segmentsAfter(pathname, basePath).slice(3)].map(encodeURIComponent).join('/') + url.search;
      res.writeHead(301, { location: target, 'content-type': 'text/html; charset=utf-8' });
      res.end(`<a href="${escapeHtml(target)}">Moved Permanently</a>.\n`);
      return;
    }
    await answer(req, res, route, url);
  }

  function movedTo(route: Route): string | undefined {
    if (!options.aliases || !('provider' in route) || route.kind === 'summary') return undefined;
    return aliases.get(moduleKey(route.namespace, route.name, route.provider));
  }

  async function answer(req: IncomingMessage, res: ServerResponse, route: Route, url: URL): Promise<void> {
    const { modules, sorted } = await current();
    const query = url.searchParams;
    switch (route.kind) {
      case 'list': {
        const page = readPage(query, limits.list);
        const { meta, items } = paginate(applyFilters(sorted, query, route.namespace), page, url.pathname, query);
        sendJson(res, 200, { meta, modules: items.map((m) => moduleRecord(m, requireLatest(m), m.downloads.total + downloadsOf(m))) });
        return;
      }
      case 'search': {
        const q = query.get('q');
        if (q === null || q.trim() === '') throw new ApiError(400, 'q is required: the search terms');
        const page = readPage(query, limits.search);
        const namespace = query.get('namespace') || undefined;
        const { meta, items } = paginate(search(applyFilters(sorted, query, namespace), q), page, url.pathname, query);
        sendJson(res, 200, { meta, modules: items.map((m) => moduleRecord(m, requireLatest(m), m.downloads.total + downloadsOf(m))) });
        return;
      }
      case 'providers': {
        const page = readPage(query, limits.providers);
        const matching = sorted.filter((m) => m.namespace.toLowerCase() === route.namespace.toLowerCase() && m.name.toLowerCase() === route.name.toLowerCase());
        if (matching.length === 0) throw new ApiError(404, `module ${route.namespace}/${route.name} not found`);
        const { meta, items } = paginate(matching, page, url.pathname, query);
        sendJson(res, 200, { meta, modules: items.map((m) => moduleRecord(m, requireLatest(m), m.downloads.total + downloadsOf(m))) });
        return;
      }
      case 'latest':
      case 'version': {
        const module = findModule(modules, route.namespace, route.name, route.provider);
        const version = route.kind === 'latest' ? requireLatest(module) : findVersion(module, route.version);
        const providers = sorted.filter((m) => m.namespace === module.namespace && m.name === module.name).map((m) => m.provider);
        const content = await contentOf(version.artifact);
        sendJson(res, 200, moduleDetail(module, version, module.downloads.total + downloadsOf(module), content, providers));
        return;
      }
      case 'versions': {
        const module = findModule(modules, route.namespace, route.name, route.provider);
        const contents = new Map<VersionEntry, VersionContent>();
        for (const v of module.versions) if (v.artifact.kind === 'directory') contents.set(v, await contentOf(v.artifact));
        sendJson(
          res,
          200,
          versionsResponse(module, (v) => contents.get(v)),
        );
        return;
      }
      case 'download': {
        const module = findModule(modules, route.namespace, route.name, route.provider);
        const version = findVersion(module, route.version);
        const location = await locationOf(module, version, originOf(req));
        const key = `${moduleKey(module.namespace, module.name, module.provider)}/${version.version}`;
        liveDownloads.set(key, (liveDownloads.get(key) ?? 0) + 1);
        if (options.downloadResponse === 'json') sendJson(res, 200, { location });
        else {
          res.writeHead(204, { 'x-registry-get': location });
          res.end();
        }
        return;
      }
      case 'download-latest': {
        const module = findModule(modules, route.namespace, route.name, route.provider);
        const latest = latestVersion(module);
        if (!latest) throw new ApiError(404, `module ${module.namespace}/${module.name}/${module.provider} has no versions`);
        const target = `${basePath}${[module.namespace, module.name, module.provider, latest.version].map(encodeURIComponent).join('/')}/download`;
        const body = `<a href="${escapeHtml(target)}">Found</a>.\n`;
        res.writeHead(302, { location: target, 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      case 'summary': {
        const module = findModule(modules, route.namespace, route.name, route.provider);
        const live = downloadsOf(module);
        const base = module.downloads;
        sendJson(res, 200, {
          data: {
            type: 'module-downloads-summary',
            id: `${module.namespace}/${module.name}/${module.provider}`,
            attributes: { week: base.week + live, month: base.month + live, year: base.year + live, total: base.total + live },
          },
        });
        return;
      }
    }
  }

  /** The origin the client used (its Host header), so absolute URLs work whatever name or address it connected by. */
  function originOf(req: IncomingMessage): string {
    const host = req.headers.host;
    return host && /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? `${options.tls ? 'https' : 'http'}://${host}` : origin;
  }

  async function locationOf(module: ModuleEntry, version: VersionEntry, origin: string): Promise<string> {
    const artifact = version.artifact;
    if (artifact.kind === 'location') return artifact.location;
    if (artifact.kind === 's3') return store.location!(artifact.bucket, artifact.key);
    const extension: ArchiveExtension = artifact.kind === 'file' ? artifact.extension : '.tar.gz';
    const file = [module.namespace, module.name, module.provider, version.version + extension].map(encodeURIComponent).join('/');
    let location = (options.locations === 'relative' ? '' : origin) + ARCHIVE_PREFIX + file;
    if (options.checksums) location += `?checksum=sha256:${await checksumOf(artifact)}`;
    return location;
  }

  /** sha256 of the bytes a location serves. Ready archives are cached by mtime; folders are hashed on every call,
   * because editing a file inside a folder does not change the folder's mtime. */
  function checksumOf(artifact: Extract<Artifact, { kind: 'directory' | 'file' }>): Promise<string> {
    const compute = () => {
      const hash = createHash('sha256');
      const source = artifact.kind === 'file' ? createReadStream(artifact.path) : archiveDirectory(artifact.path);
      return pipeline(source as NodeJS.ReadableStream, new Writable({ write: (chunk, _enc, done) => (hash.update(chunk), done()) })).then(() =>
        hash.digest('hex'),
      );
    };
    if (artifact.kind === 'directory') return compute();
    const key = artifactKey(artifact);
    let found = checksumCache.get(key);
    if (!found) {
      found = compute();
      checksumCache.set(key, found);
      found.catch(() => checksumCache.delete(key));
    }
    return found;
  }

  async function serveArchive(req: IncomingMessage, res: ServerResponse, rest: string): Promise<void> {
    const parts = rest.split('/').map((p) => safeDecode(p));
    if (parts.length !== 4 || parts.some((p) => p === undefined)) throw new ApiError(404, 'no such archive');
    const [namespace, name, provider, file] = parts as string[];
    const { modules } = await current();
    const module = findModule(modules, namespace!, name!, provider!);
    const version = module.versions.find((v) => {
      const a = v.artifact;
      if (a.kind === 'directory') return file === v.version + '.tar.gz';
      if (a.kind === 'file') return file === v.version + a.extension;
      return false;
    });
    if (!version) throw new ApiError(404, `no archive ${file} for ${module.namespace}/${module.name}/${module.provider}`);
    const artifact = version.artifact as Extract<Artifact, { kind: 'directory' | 'file' }>;
    if (artifact.kind === 'file') {
      const size = (await stat(artifact.path)).size;
      res.writeHead(200, { 'content-type': contentTypeOf(artifact.extension), 'content-length': size });
      if (req.method === 'HEAD') return void res.end();
      await sendFile(res, artifact.path, { end: size - 1 });
      return;
    }
    res.writeHead(200, { 'content-type': 'application/gzip' });
    if (req.method === 'HEAD') return void res.end();
    await pipeline(archiveDirectory(artifact.path), res).catch((error: Error) => {
      // The client went away or a fault cut the body: nothing more to say to it.
      if (!res.destroyed && !res.writableEnded) throw error;
    });
  }

  // ---- admin (/_gantry/): faults and the request log; never subject to faults or latency ----
  const noAdminEndpoint = (res: ServerResponse, url: URL) => sendErrors(res, 404, [`no admin endpoint at ${url.pathname}`]);
  const changeFaults = async (req: IncomingMessage, res: ServerResponse, change: 'add' | 'set') => {
    const body = await readJson(req, MAX_ADMIN_BODY);
    const list = (Array.isArray(body) ? body : [body]).map(checkFault);
    if (change === 'set') faults.set(list);
    else faults.add(list);
    sendJson(res, 200, { faults: faults.list() });
  };
  // Exact paths and methods; HEAD is not GET here. Any other method on a path listed is 405 with Allow, except refresh.
  const adminRoutes = new RouteTable<AdminRoute>(
    [
      { method: 'GET', template: '/_gantry/faults', handler: (_req, res) => sendJson(res, 200, { faults: faults.list() }) },
      { method: 'POST', template: '/_gantry/faults', handler: (req, res) => changeFaults(req, res, 'add') },
      { method: 'PUT', template: '/_gantry/faults', handler: (req, res) => changeFaults(req, res, 'set') },
      {
        method: 'DELETE',
        template: '/_gantry/faults',
        handler: (_req, res) => {
          faults.set([]);
          sendJson(res, 200, { faults: [] });
        },
      },
      { method: 'GET', template: '/_gantry/requests', handler: (_req, res) => sendJson(res, 200, { requests: recorded }) },
      {
        method: 'DELETE',
        template: '/_gantry/requests',
        handler: (_req, res) => {
          recorded.length = 0;
          sendJson(res, 200, { requests: [] });
        },
      },
      {
        method: 'POST',
        template: '/_gantry/refresh',
        handler: async (_req, res) => {
          contentCache.clear();
          checksumCache.clear();
          await load();
          sendJson(res, 200, { modules: catalog?.sorted.length ?? 0 });
        },
      },
      // refresh by another method is no endpoint at all (404), not a 405.
      { method: '*', template: '/_gantry/refresh', handler: (_req, res, url) => noAdminEndpoint(res, url) },
    ],
    { headAsGet: false },
  );

  async function admin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    try {
      const found = adminRoutes.match(method, url.pathname);
      if ('route' in found) return await found.route.handler(req, res, url);
      if (found.allowed.length === 0) return noAdminEndpoint(res, url);
      res.setHeader('allow', found.allowed.join(', '));
      sendErrors(res, 405, [`method ${method} is not allowed here`]);
    } catch (error) {
      if (error instanceof FaultError || error instanceof ApiError) sendErrors(res, error instanceof ApiError ? error.status : 400, [error.message]);
      else throw error;
    }
  }

  const server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler) : http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  ({ origin } = await listen(server, options.host ?? '127.0.0.1', options.port ?? 0, options.tls ? 'https' : 'http'));
  const host = origin.slice(origin.indexOf('//') + 2);
  log(`module registry (${store.description}) listening on ${origin}`);

  return {
    name: 'registry',
    url: origin,
    host,
    credentials: options.token !== undefined ? { token: options.token } : {},
    source: store.description,
    stop: () => {
      store.stop?.();
      return close(server);
    },
    setFaults: (list) => faults.set(list),
    addFaults: (list) => faults.add(list),
    faults: () => faults.list(),
    setLatency: (ms) => {
      latencyMs = ms;
    },
    requests: () => [...recorded],
    clearRequests: () => {
      recorded.length = 0;
    },
    refresh: async () => {
      contentCache.clear();
      checksumCache.clear();
      await load();
    },
  };
}

/** An injected `status` fault, answered as the registry answers its own errors. */
function sendFault(res: ServerResponse, fault: StatusFault): void {
  sendErrors(
    res,
    fault.status,
    [fault.message ?? faultMessage(fault.status)],
    fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : undefined,
  );
}

function faultMessage(status: number): string {
  if (status === 429) return 'too many requests: slow down and retry later';
  if (status === 503) return 'service unavailable: shedding load, retry later';
  if (status >= 500) return 'internal error';
  return 'request refused';
}
