/**
 * System routes: seal state (init, seal-status, seal, unseal, health), mount discovery and tuning (internal/ui/mounts,
 * mounts, mounts/<path>/tune), ACL policies (policies/acl and the older policy route) and namespaces. Init, seal and
 * health exist only in the root namespace.
 */
import { timingSafeEqual } from 'node:crypto';
import { RouteTable, type RouteEntry } from '../kit/index.js';
import type { RequestContext } from './context.js';
import type { Core } from './core.js';
import { newMount, newNamespace, normaliseMountPath, normaliseNamespace, type Mount } from './state.js';
import { badRequest, fail, notFound, unsupportedOperation, unsupportedPath, type Outcome } from './reply.js';
import { DEFAULT_POLICY, hasAnyAccessBelow, parsePolicy } from './acl.js';
import { listChildren, upgradeToVersion2 } from './kv.js';
import { parseDurationSeconds } from './duration.js';

export const SERVER_VERSION = '1.0.0+gantry';
const ROOT_ONLY = new Set(['sys/init', 'sys/seal-status', 'sys/seal', 'sys/unseal', 'sys/health']);
/** The lease TTLs the service reports for a mount that sets none (768 h, its default). */
const SYSTEM_DEFAULT_TTL = 2_764_800;

export function isUnauthenticatedSys(path: string): boolean {
  return (
    path === 'sys/init' ||
    path === 'sys/seal-status' ||
    path === 'sys/unseal' ||
    path === 'sys/health' ||
    path === 'sys/internal/ui/mounts' ||
    path.startsWith('sys/internal/ui/mounts/')
  );
}

/** Paths answered even while sealed. */
export function worksWhileSealed(path: string): boolean {
  return path === 'sys/init' || path === 'sys/seal-status' || path === 'sys/unseal' || path === 'sys/health';
}

export function sealStatus(core: Core) {
  return {
    type: 'shamir',
    initialized: true,
    sealed: core.sealed,
    t: 1,
    n: 1,
    progress: 0,
    nonce: '',
    version: SERVER_VERSION,
    build_date: '2026-01-01T00:00:00Z',
    migration: false,
    recovery_seal: false,
    storage_type: core.storageType,
  };
}

export function mountInfo(m: Mount) {
  return {
    accessor: m.accessor,
    config: { default_lease_ttl: m.tune?.default_lease_ttl ?? 0, force_no_cache: false, max_lease_ttl: m.tune?.max_lease_ttl ?? 0 },
    description: m.description,
    external_entropy_access: false,
    local: false,
    options: { version: String(m.version) },
    plugin_version: '',
    running_plugin_version: 'v0.0.0+builtin',
    running_sha256: '',
    seal_wrap: false,
    type: 'kv',
    uuid: m.uuid,
  };
}

/** The mount whose path is the longest prefix of `path` (which may lack the mount's trailing slash). */
export function matchMount(mounts: Record<string, Mount>, path: string): Mount | undefined {
  let best: Mount | undefined;
  for (const m of Object.values(mounts)) {
    if ((path.startsWith(m.path) || path + '/' === m.path) && (!best || m.path.length > best.path.length)) best = m;
  }
  return best;
}

const safeEqual = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

interface SysRoute extends RouteEntry {
  answer: (core: Core, ctx: RequestContext) => Outcome;
}

// Exact paths, by operation (an operation a path does not have is the service's 405); the ones with a path below
// them (mounts, policies, namespaces) are matched by prefix in handleSys.
const SYS_ROUTES = new RouteTable<SysRoute>([
  // The server starts initialized (one unseal key, printed at start); initializing again is the service's 400.
  { method: 'read', template: 'sys/init', answer: () => ({ raw: { initialized: true } }) },
  {
    method: 'write',
    template: 'sys/init',
    answer: () => {
      throw badRequest('Vault is already initialized');
    },
  },
  { method: 'read', template: 'sys/seal-status', answer: (core) => ({ raw: sealStatus(core) }) },
  {
    method: 'read',
    template: 'sys/health',
    answer: (core) => ({
      status: core.sealed ? 503 : 200,
      raw: {
        initialized: true,
        sealed: core.sealed,
        standby: false,
        performance_standby: false,
        replication_performance_mode: 'disabled',
        replication_dr_mode: 'disabled',
        server_time_utc: Math.floor(Date.now() / 1000),
        version: SERVER_VERSION,
        enterprise: false,
      },
    }),
  },
  {
    method: 'write',
    template: 'sys/unseal',
    answer: (core, ctx) => {
      if (ctx.body.reset === true) return { raw: sealStatus(core) };
      const key = ctx.body.key;
      if (typeof key !== 'string' || key === '') throw badRequest("'key' must be specified in request body as JSON, or 'reset' set to true");
      if (!safeEqual(key, core.unsealKey)) throw badRequest('Unseal failed, invalid key');
      core.sealed = false;
      return { raw: sealStatus(core) };
    },
  },
  {
    method: 'write',
    template: 'sys/seal',
    answer: (core, ctx) => {
      ctx.authorize('update');
      ctx.authorize('sudo');
      core.sealed = true;
      return {};
    },
  },
  {
    method: 'write',
    template: 'sys/capabilities-self',
    answer: (_core, ctx) => {
      ctx.authorize('update');
      const raw = ctx.body.paths ?? ctx.body.path;
      const paths = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : [];
      if (paths.length === 0 || paths.some((p) => typeof p !== 'string')) throw badRequest('paths must be a list of paths');
      const data: Record<string, string[]> = {};
      for (const p of paths as string[]) data[p] = ctx.capabilities(p.replace(/^\/+/, ''));
      if (paths.length === 1) data.capabilities = data[paths[0] as string];
      return { data, mount_type: 'system' };
    },
  },
]);

export function handleSys(core: Core, ctx: RequestContext): Outcome {
  const path = ctx.path;
  if (ROOT_ONLY.has(path) && ctx.ns.path !== '') throw unsupportedPath();
  const found = SYS_ROUTES.match(ctx.op, path);
  if ('route' in found) return found.route.answer(core, ctx);
  if (found.allowed.length > 0) throw unsupportedOperation();
  if (path === 'sys/internal/ui/mounts' || path.startsWith('sys/internal/ui/mounts/'))
    return uiMounts(ctx, path.slice('sys/internal/ui/mounts'.length).replace(/^\//, ''));
  const tune = /^sys\/mounts\/(.+)\/tune$/.exec(path);
  if (tune) return { mount_type: 'system', ...tuneMount(ctx, tune[1]!) };
  if (path === 'sys/mounts' || path.startsWith('sys/mounts/'))
    return { mount_type: 'system', ...mounts(core, ctx, path.slice('sys/mounts'.length).replace(/^\//, '')) };
  if (path === 'sys/policies/acl' || path.startsWith('sys/policies/acl/'))
    return { mount_type: 'system', ...policies(ctx, path.slice('sys/policies/acl'.length).replace(/^\//, ''), false) };
  // The older route clients still use (node-vault's policies, addPolicy, getPolicy): `rules` for `policy`, and a GET
  // of the route itself lists, with the names in `policies` too.
  if (path === 'sys/policy' || path === 'sys/policy/' || path.startsWith('sys/policy/'))
    return { mount_type: 'system', ...policies(ctx, path.slice('sys/policy'.length).replace(/^\//, ''), true) };
  if (path === 'sys/namespaces' || path.startsWith('sys/namespaces/'))
    return { mount_type: 'system', ...namespaces(core, ctx, path.slice('sys/namespaces'.length).replace(/^\//, '')) };
  ctx.authorize(ctx.op === 'write' ? 'update' : ctx.op);
  throw unsupportedPath();
}

function uiMounts(ctx: RequestContext, raw: string): Outcome {
  if (ctx.op !== 'read') throw unsupportedOperation();
  const visible = (m: Mount) => ctx.isRoot || (ctx.token !== undefined && ctx.canReach(m.path));
  if (raw === '') {
    const secret: Record<string, unknown> = {};
    for (const m of Object.values(ctx.ns.mounts)) if (visible(m)) secret[m.path] = mountInfo(m);
    return { data: { secret, auth: {} }, mount_type: 'system' };
  }
  const asked = raw.endsWith('/') ? raw : `${raw}/`;
  const denied = () => fail(403, `preflight capability check returned 403, please ensure client's policies grant access to path "${asked}"`);
  const mount = matchMount(ctx.ns.mounts, asked);
  // an unknown mount answers like a forbidden one, so this path cannot be used to discover mounts
  if (!mount || !visible(mount)) throw denied();
  return { data: { ...mountInfo(mount), path: mount.path }, mount_type: 'system' };
}

function mounts(core: Core, ctx: RequestContext, raw: string): Outcome {
  if (raw === '') {
    if (ctx.op !== 'read') throw unsupportedOperation();
    ctx.authorize('read');
    const data: Record<string, unknown> = {};
    for (const m of Object.values(ctx.ns.mounts)) data[m.path] = mountInfo(m);
    return { data };
  }
  const path = normaliseMountPath(raw);
  if (path.startsWith('sys/') || path.startsWith('auth/') || path === 'sys/' || path === 'auth/') throw badRequest(`cannot mount at reserved path "${path}"`);
  switch (ctx.op) {
    case 'write': {
      ctx.authorize('update');
      ctx.authorize('sudo');
      const type = ctx.body.type;
      const options = (ctx.body.options ?? {}) as Record<string, unknown>;
      if (type !== 'kv' && type !== 'kv-v2') throw badRequest(`plugin not found in the catalog: ${String(type)}`);
      const version = type === 'kv-v2' || String(options.version ?? '1') === '2' ? 2 : 1;
      for (const existing of Object.keys(ctx.ns.mounts)) {
        if (existing.startsWith(path) || path.startsWith(existing)) throw badRequest(`path is already in use at ${existing}`);
      }
      ctx.ns.mounts[path] = newMount(path, version, typeof ctx.body.description === 'string' ? ctx.body.description : '');
      ctx.changed();
      return {};
    }
    case 'delete':
      ctx.authorize('delete');
      ctx.authorize('sudo');
      if (ctx.ns.mounts[path]) {
        delete ctx.ns.mounts[path];
        ctx.changed();
      }
      return {};
    case 'read': {
      ctx.authorize('read');
      const m = ctx.ns.mounts[path];
      if (!m) throw badRequest(`no matching mount at "${path}"`);
      return { data: mountInfo(m) };
    }
    default:
      throw unsupportedOperation();
  }
}

function policyDocument(rules: Array<{ path: string; capabilities: string[] }>) {
  const path: Record<string, { capabilities: string[] }> = {};
  for (const r of rules) path[r.path] = { capabilities: r.capabilities };
  return JSON.stringify({ path }, null, 2);
}

function policies(ctx: RequestContext, name: string, older: boolean): Outcome {
  if (name === '') {
    if (ctx.op !== 'list' && !(older && ctx.op === 'read')) throw unsupportedOperation();
    ctx.authorize(ctx.op);
    const keys = [
      'default',
      ...Object.keys(ctx.ns.policies)
        .filter((n) => n !== 'default')
        .sort(),
      ...(ctx.ns.path === '' ? ['root'] : []),
    ];
    return { data: older ? { keys, policies: keys } : { keys } };
  }
  const lower = name.toLowerCase();
  switch (ctx.op) {
    case 'read': {
      ctx.authorize('read');
      const rules = lower === 'default' ? (ctx.ns.policies.default ?? DEFAULT_POLICY) : ctx.ns.policies[lower];
      if (!rules) throw notFound();
      return { data: { name: lower, [older ? 'rules' : 'policy']: policyDocument(rules) } };
    }
    case 'write': {
      ctx.authorize(ctx.ns.policies[lower] ? 'update' : 'create');
      if (lower === 'root') throw badRequest('cannot update "root" policy');
      const text = ctx.body.policy ?? (older ? ctx.body.rules : undefined);
      if (text === undefined || text === '') throw badRequest("'policy' parameter not supplied or empty");
      try {
        ctx.ns.policies[lower] = parsePolicy(text);
      } catch (error) {
        throw badRequest(`failed to parse policy: ${(error as Error).message}`);
      }
      ctx.changed();
      return {};
    }
    case 'delete':
      ctx.authorize('delete');
      if (lower === 'root' || lower === 'default') throw badRequest(`cannot delete "${lower}" policy`);
      delete ctx.ns.policies[lower];
      ctx.changed();
      return {};
    default:
      throw unsupportedOperation();
  }
}

function namespaces(core: Core, ctx: RequestContext, raw: string): Outcome {
  const all = Object.keys(core.state.namespaces);
  if (raw === '') {
    if (ctx.op !== 'list') throw unsupportedOperation();
    ctx.authorize('list');
    const children = listChildren(
      all.filter((p) => p !== ctx.ns.path && p.startsWith(ctx.ns.path)).map((p) => p.slice(ctx.ns.path.length)),
      '',
    ).filter((k) => k.endsWith('/'));
    const keys = [...new Set(children)].filter((k) => all.includes(ctx.ns.path + k));
    if (!keys.length) throw notFound();
    const keyInfo: Record<string, unknown> = {};
    for (const k of keys) keyInfo[k] = { id: core.state.namespaces[ctx.ns.path + k].id, path: ctx.ns.path + k, custom_metadata: {} };
    return { data: { keys, key_info: keyInfo } };
  }
  const full = ctx.ns.path + normaliseNamespace(raw);
  const info = (p: string) => ({ id: core.state.namespaces[p].id, path: p, custom_metadata: {} });
  switch (ctx.op) {
    case 'read':
      ctx.authorize('read');
      if (!core.state.namespaces[full]) throw notFound();
      return { data: info(full) };
    case 'write':
      ctx.authorize('update');
      ctx.authorize('sudo');
      if (normaliseNamespace(raw).split('/').filter(Boolean).length !== 1) throw badRequest('a namespace is created one level at a time');
      if (!core.state.namespaces[full]) {
        core.state.namespaces[full] = newNamespace(full, core.defaultMounts);
        ctx.changed();
      }
      return { data: info(full) };
    case 'delete': {
      ctx.authorize('delete');
      ctx.authorize('sudo');
      if (!core.state.namespaces[full]) return {};
      if (all.some((p) => p !== full && p.startsWith(full))) throw badRequest(`cannot delete namespace "${full}" containing child namespaces`);
      delete core.state.namespaces[full];
      for (const [hash, t] of Object.entries(core.state.tokens)) if (t.namespace === full) delete core.state.tokens[hash];
      ctx.changed();
      return {};
    }
    default:
      throw unsupportedOperation();
  }
}

/**
 * GET|POST sys/mounts/<path>/tune: the mount's lease TTLs (the service's 768 h default when unset), description and
 * options. A tune may set the description and the TTLs, and `options.version` "2" upgrades a kv version 1 mount in
 * place (each entry becomes version 1 of its key), as the service does; version 2 never goes back to 1.
 */
function tuneMount(ctx: RequestContext, raw: string): Outcome {
  const path = normaliseMountPath(raw);
  const mount = ctx.ns.mounts[path];
  const tunePath = `sys/mounts/${path}tune`;
  switch (ctx.op) {
    case 'read': {
      ctx.authorize('read', tunePath);
      if (!mount) throw badRequest(`cannot fetch sysview for path "${path}"`);
      return {
        data: {
          default_lease_ttl: mount.tune?.default_lease_ttl || SYSTEM_DEFAULT_TTL,
          max_lease_ttl: mount.tune?.max_lease_ttl || SYSTEM_DEFAULT_TTL,
          force_no_cache: false,
          description: mount.description,
          options: { version: String(mount.version) },
        },
      };
    }
    case 'write': {
      ctx.authorize('update', tunePath);
      ctx.authorize('sudo', tunePath);
      if (!mount) throw badRequest(`cannot tune "${path}": no mount there`);
      const body = ctx.body;
      const ttl = (field: 'default_lease_ttl' | 'max_lease_ttl'): number | undefined => {
        if (body[field] === undefined) return undefined;
        let seconds: number;
        try {
          seconds = parseDurationSeconds(body[field]);
        } catch {
          throw badRequest(`unable to parse ${field}: ${JSON.stringify(body[field])}`);
        }
        if (seconds < 0) throw badRequest(`${field} must not be negative`);
        return seconds;
      };
      const defaultTtl = ttl('default_lease_ttl');
      const maxTtl = ttl('max_lease_ttl');
      const effectiveMax = maxTtl ?? mount.tune?.max_lease_ttl ?? 0;
      if (defaultTtl !== undefined && effectiveMax > 0 && defaultTtl > effectiveMax)
        throw badRequest('backend max lease TTL cannot be less than backend default lease TTL');
      if (body.description !== undefined && typeof body.description !== 'string') throw badRequest('description must be a string');
      const options = body.options;
      if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options)))
        throw badRequest('options must be a map of strings');
      const version = (options as Record<string, unknown> | undefined)?.version;
      if (version !== undefined && String(version) !== '1' && String(version) !== '2') throw badRequest(`invalid kv version ${JSON.stringify(version)}`);
      if (version !== undefined && String(version) === '1' && mount.version === 2) throw badRequest('cannot downgrade mount from version 2');
      if (defaultTtl !== undefined || maxTtl !== undefined) {
        mount.tune = {
          ...(mount.tune ?? { default_lease_ttl: 0, max_lease_ttl: 0 }),
          ...(defaultTtl !== undefined ? { default_lease_ttl: defaultTtl } : {}),
          ...(maxTtl !== undefined ? { max_lease_ttl: maxTtl } : {}),
        };
      }
      if (typeof body.description === 'string') mount.description = body.description;
      if (version !== undefined && String(version) === '2' && mount.version === 1) upgradeToVersion2(mount, ctx.now());
      ctx.changed();
      return {};
    }
    default:
      throw unsupportedOperation();
  }
}

export { hasAnyAccessBelow };
