/**
 * Auth routes: the token store (lookup-self, renew-self, revoke-self, create) and two login methods, userpass and
 * approle, each with its own unauthenticated login endpoint and root-only management endpoints.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { RouteTable, type RouteEntry } from '../kit/index.js';
import type { RequestContext } from './context.js';
import { authBlock, issueToken, type Core } from './core.js';
import { hashPassword, hashToken, passwordMatches } from './state.js';
import { badRequest, fail, notFound, unsupportedOperation, unsupportedPath, type Outcome } from './reply.js';
import { parseDurationSeconds } from './duration.js';
import { listChildren } from './kv.js';

/** Paths reachable without a token. */
export function isUnauthenticated(path: string): boolean {
  return /^auth\/userpass\/login\/[^/]+$/.test(path) || path === 'auth/approle/login';
}

const DUMMY_USER = { ...hashPassword('no user has this password'), policies: [] };

function policiesFrom(raw: unknown, field: string): string[] {
  if (raw === undefined || raw === null) return [];
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined;
  if (!list || list.some((p) => typeof p !== 'string')) throw badRequest(`error converting input for field "${field}": expected a list of policy names`);
  return (list as string[]).map((p) => p.trim()).filter((p) => p !== '');
}

/** A user's or role's policies on a write: token_policies (or the older policies) when given, else the ones it has. */
function writtenPolicies(ctx: RequestContext, existing: { policies: string[] } | undefined): string[] {
  const raw = ctx.body.token_policies ?? ctx.body.policies;
  return ctx.body.token_policies !== undefined || ctx.body.policies !== undefined ? policiesFrom(raw, 'token_policies') : (existing?.policies ?? []);
}

/** LIST of the users or the roles: their names, 404 when there are none. */
function listEntries(ctx: RequestContext, names: () => string[]): Outcome {
  ctx.authorize('list');
  if (ctx.op !== 'list') throw unsupportedOperation();
  const keys = names();
  if (!keys.length) throw notFound();
  return { data: { keys } };
}

/**
 * A user's or role's own path: read its policies, write it (`written`, from what there was), delete it (a
 * success whether it was there or not); other operations are the service's 405.
 */
function entryOperation<E extends { policies: string[] }>(
  ctx: RequestContext,
  table: Record<string, E>,
  name: string,
  written: (existing: E | undefined) => E,
): Outcome {
  const existing = table[name];
  switch (ctx.op) {
    case 'read':
      ctx.authorize('read');
      if (!existing) throw notFound();
      return { data: { policies: existing.policies, token_policies: existing.policies } };
    case 'write':
      ctx.authorize(existing ? 'update' : 'create');
      table[name] = written(existing);
      ctx.changed();
      return {};
    case 'delete':
      ctx.authorize('delete');
      delete table[name];
      ctx.changed();
      return {};
    default:
      throw unsupportedOperation();
  }
}

function ttlFrom(raw: unknown, fallback: number): number {
  if (raw === undefined || raw === null || raw === '') return fallback;
  try {
    return parseDurationSeconds(raw);
  } catch {
    throw badRequest(`error converting input ${JSON.stringify(raw)} for field "ttl"`);
  }
}

export function handleAuth(core: Core, ctx: RequestContext): Outcome {
  const path = ctx.path;
  if (path.startsWith('auth/token/')) return { mount_type: 'token', ...tokenRoutes(core, ctx, path.slice('auth/token/'.length)) };
  if (path.startsWith('auth/userpass/')) return { mount_type: 'userpass', ...userpassRoutes(core, ctx, path.slice('auth/userpass/'.length)) };
  if (path.startsWith('auth/approle/')) return { mount_type: 'approle', ...approleRoutes(core, ctx, path.slice('auth/approle/'.length)) };
  ctx.authorize(ctx.op === 'write' ? 'update' : ctx.op);
  throw fail(404, `no handler for route "${ctx.ns.path}${path}". route entry not found.`);
}

/** The token a request carries (the token routes all need one). */
type Caller = NonNullable<RequestContext['token']>;

interface TokenRoute extends RouteEntry {
  answer: (core: Core, ctx: RequestContext, token: Caller) => Outcome;
}

// auth/token/<sub>, by operation: an operation a path does not have is the service's 405 (before any policy check).
const TOKEN_ROUTES = new RouteTable<TokenRoute>(
  [
    { method: 'read', template: 'lookup-self', answer: lookupSelf },
    { method: 'write', template: 'lookup-self', answer: lookupSelf },
    { method: 'write', template: 'renew-self', answer: renewSelf },
    { method: 'write', template: 'revoke-self', answer: revokeSelf },
    { method: 'write', template: 'create', answer: createToken },
  ],
  { headAsGet: false },
);

function tokenRoutes(core: Core, ctx: RequestContext, sub: string): Outcome {
  const found = TOKEN_ROUTES.match(ctx.op, sub);
  if ('route' in found) return found.route.answer(core, ctx, ctx.token!);
  if (found.allowed.length > 0) throw unsupportedOperation();
  ctx.authorize(ctx.op === 'write' ? 'update' : ctx.op);
  throw unsupportedPath();
}

function lookupSelf(_core: Core, ctx: RequestContext, token: Caller): Outcome {
  ctx.authorize('read');
  const now = Date.now();
  return {
    data: {
      accessor: token.accessor,
      creation_time: token.creation_time,
      creation_ttl: token.ttl,
      display_name: token.display_name,
      entity_id: '',
      expire_time: token.expire_at === null ? null : new Date(token.expire_at).toISOString(),
      explicit_max_ttl: 0,
      id: token.id,
      issue_time: token.issue_time,
      meta: token.meta,
      num_uses: token.num_uses,
      orphan: token.orphan,
      path: token.path,
      policies: token.policies,
      renewable: token.renewable,
      ttl: token.expire_at === null ? 0 : Math.max(0, Math.round((token.expire_at - now) / 1000)),
      type: 'service',
    },
  };
}

function renewSelf(core: Core, ctx: RequestContext, token: Caller): Outcome {
  ctx.authorize('update');
  if (!token.renewable || token.expire_at === null) throw badRequest('lease is not renewable');
  const increment = ttlFrom(ctx.body.increment, token.ttl);
  const record = core.state.tokens[hashToken(token.id)];
  record.expire_at = Date.now() + (increment > 0 ? increment : token.ttl) * 1000;
  ctx.changed();
  return { auth: authBlock(token.id, record) };
}

function revokeSelf(core: Core, ctx: RequestContext, token: Caller): Outcome {
  ctx.authorize('update');
  if (!token.root) {
    delete core.state.tokens[hashToken(token.id)];
    ctx.changed();
  }
  return {};
}

function createToken(core: Core, ctx: RequestContext, token: Caller): Outcome {
  ctx.authorize('update');
  const b = ctx.body;
  const asked = b.policies === undefined ? token.policies.filter((p) => p !== 'root' || token.root) : policiesFrom(b.policies, 'policies');
  const isRoot = token.policies.includes('root');
  if (!isRoot && asked.some((p) => !token.policies.includes(p) && p !== 'default')) {
    throw fail(400, 'child policies must be subset of parent');
  }
  const policies = b.no_default_policy === true || asked.includes('root') ? asked : ['default', ...asked];
  const numUses = b.num_uses === undefined ? 0 : Number(b.num_uses);
  if (!Number.isInteger(numUses) || numUses < 0) throw badRequest('num_uses must be a non-negative integer');
  const ttl = ttlFrom(b.ttl, asked.includes('root') ? 0 : core.defaultTokenTtl);
  const name = typeof b.display_name === 'string' && b.display_name ? `token-${b.display_name}` : 'token';
  const issued = issueToken(core, {
    namespace: ctx.ns.path,
    policies,
    displayName: name,
    path: 'auth/token/create',
    meta: (b.meta as Record<string, string>) ?? null,
    ttl,
    renewable: b.renewable === undefined ? ttl > 0 : b.renewable === true,
    numUses,
  });
  ctx.changed();
  return { auth: authBlock(issued.id, issued.record) };
}

function login(core: Core, ctx: RequestContext, policies: string[], displayName: string, path: string, meta: Record<string, string>): Outcome {
  const issued = issueToken(core, {
    namespace: ctx.ns.path,
    policies: ['default', ...policies],
    displayName,
    path,
    meta,
    ttl: core.defaultTokenTtl,
    renewable: true,
  });
  ctx.changed();
  return { auth: authBlock(issued.id, issued.record) };
}

function userpassRoutes(core: Core, ctx: RequestContext, sub: string): Outcome {
  const loginMatch = /^login\/([^/]+)$/.exec(sub);
  if (loginMatch) {
    if (ctx.op !== 'write') throw unsupportedOperation();
    const username = loginMatch[1].toLowerCase();
    const password = ctx.body.password;
    if (typeof password !== 'string' || password === '') throw badRequest('missing password');
    const user = ctx.ns.users[username];
    // same answer, and the same hashing work, for an unknown user and a wrong password: logins cannot probe for names
    const matches = passwordMatches(password, user ?? DUMMY_USER);
    if (!user || !matches) throw fail(403, 'invalid username or password');
    return login(core, ctx, user.policies, `userpass-${username}`, `auth/userpass/login/${username}`, { username });
  }
  if (sub === 'users/' || sub === 'users') {
    return listEntries(ctx, () => Object.keys(ctx.ns.users).sort());
  }
  const userMatch = /^users\/([^/]+)$/.exec(sub);
  if (userMatch) {
    const username = userMatch[1].toLowerCase();
    return entryOperation(ctx, ctx.ns.users, username, (existing) => {
      const password = ctx.body.password;
      if (!existing && (typeof password !== 'string' || password === '')) throw badRequest('missing password');
      const policies = writtenPolicies(ctx, existing);
      const secret = typeof password === 'string' && password !== '' ? hashPassword(password) : { salt: existing!.salt, hash: existing!.hash };
      return { ...secret, policies };
    });
  }
  ctx.authorize(ctx.op === 'write' ? 'update' : ctx.op);
  throw unsupportedPath();
}

function approleRoutes(core: Core, ctx: RequestContext, sub: string): Outcome {
  if (sub === 'login') {
    if (ctx.op !== 'write') throw unsupportedOperation();
    const roleId = ctx.body.role_id;
    const secretId = ctx.body.secret_id;
    if (typeof roleId !== 'string' || roleId === '') throw badRequest('missing role_id');
    const entry = Object.entries(ctx.ns.approles).find(([, r]) => r.role_id === roleId);
    if (!entry || typeof secretId !== 'string' || !entry[1].secret_ids.includes(hashToken(secretId))) {
      throw fail(403, 'invalid role ID or secret ID');
    }
    return login(core, ctx, entry[1].policies, 'approle', 'auth/approle/login', { role_name: entry[0] });
  }
  if (sub === 'role/' || sub === 'role') {
    return listEntries(ctx, () => listChildren(Object.keys(ctx.ns.approles), ''));
  }
  const match = /^role\/([^/]+)(\/role-id|\/secret-id)?$/.exec(sub);
  if (!match) {
    ctx.authorize(ctx.op === 'write' ? 'update' : ctx.op);
    throw unsupportedPath();
  }
  const name = match[1];
  const role = ctx.ns.approles[name];
  if (match[2] === '/role-id') {
    ctx.authorize('read');
    if (ctx.op !== 'read') throw unsupportedOperation();
    if (!role) throw notFound();
    return { data: { role_id: role.role_id } };
  }
  if (match[2] === '/secret-id') {
    ctx.authorize('update');
    if (ctx.op !== 'write') throw unsupportedOperation();
    if (!role) throw badRequest(`role "${name}" does not exist`);
    const secretId = randomUUID();
    role.secret_ids.push(hashToken(secretId));
    ctx.changed();
    return { data: { secret_id: secretId, secret_id_accessor: randomUUID(), secret_id_ttl: 0, secret_id_num_uses: 0 } };
  }
  return entryOperation(ctx, ctx.ns.approles, name, (existing) => {
    const policies = writtenPolicies(ctx, existing);
    const roleId = typeof ctx.body.role_id === 'string' && ctx.body.role_id ? ctx.body.role_id : (existing?.role_id ?? randomUUID());
    return { role_id: roleId, secret_ids: existing?.secret_ids ?? [], policies };
  });
}

export const newRoleId = () => randomUUID();
export const newSecretId = () => randomBytes(16).toString('hex');
