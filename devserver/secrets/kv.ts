/**
 * The kv engine, version 1 (plain key → object) and version 2 (versioned keys with metadata), following the
 * reference kv plugin: paths, statuses, bodies, CAS, version pruning, soft delete, destroy, undelete and config.
 */
import type { RequestContext } from './context.js';
import type { KeyRecord, Mount, VersionRecord } from './state.js';
import { badRequest, notFound, notFoundWithEnvelope, unsupportedOperation, type Outcome } from './reply.js';
import { formatGoDuration, parseDurationSeconds } from './duration.js';

const DEFAULT_MAX_VERSIONS = 10;
const DEFAULT_LEASE_TTL = 768 * 3600;
const MAX_CUSTOM_METADATA_KEYS = 64;
const MAX_CUSTOM_METADATA_KEY_LENGTH = 128;
const MAX_CUSTOM_METADATA_VALUE_LENGTH = 512;

export function handleKv(ctx: RequestContext, mount: Mount, sub: string): Outcome {
  return mount.version === 2 ? handleKv2(ctx, mount, sub) : handleKv1(ctx, mount, sub);
}

/** Immediate children of `dir` among `keys`: leaf names, and folder names with a trailing slash. */
export function listChildren(keys: Iterable<string>, dir: string): string[] {
  const children = new Set<string>();
  for (const key of keys) {
    if (!key.startsWith(dir)) continue;
    const rest = key.slice(dir.length);
    if (rest === '') continue;
    const slash = rest.indexOf('/');
    children.add(slash < 0 ? rest : rest.slice(0, slash + 1));
  }
  return [...children].sort();
}

function listReply(keys: string[]): Outcome {
  if (keys.length === 0) throw notFound();
  return { data: { keys } };
}

// ---------------------------------------------------------------- kv v1

function handleKv1(ctx: RequestContext, mount: Mount, key: string): Outcome {
  const aclPath = mount.path + key;
  switch (ctx.op) {
    case 'read': {
      ctx.authorize('read', aclPath);
      const stored = mount.v1[key];
      if (!stored) throw notFound();
      let ttl = DEFAULT_LEASE_TTL;
      const rawTtl = stored.ttl ?? stored.lease;
      if (rawTtl !== undefined) {
        try {
          ttl = parseDurationSeconds(rawTtl);
        } catch {
          // an unparsable ttl field is just data
        }
      }
      return { data: stored, lease_duration: ttl, mount_type: 'kv' };
    }
    case 'write': {
      ctx.authorize(mount.v1[key] ? 'update' : 'create', aclPath);
      if (key === '') throw badRequest('missing path');
      if (Object.keys(ctx.body).length === 0) throw badRequest('missing data fields');
      mount.v1[key] = ctx.body;
      ctx.changed();
      return {};
    }
    case 'delete': {
      ctx.authorize('delete', aclPath);
      if (key in mount.v1) {
        delete mount.v1[key];
        ctx.changed();
      }
      return {};
    }
    case 'list': {
      ctx.authorize('list', aclPath);
      return { ...listReply(listChildren(Object.keys(mount.v1), key)), mount_type: 'kv' };
    }
    default:
      throw unsupportedOperation();
  }
}

// ---------------------------------------------------------------- kv v2

const V2_ROOTS = ['data', 'metadata', 'delete', 'undelete', 'destroy'];

function handleKv2(ctx: RequestContext, mount: Mount, sub: string): Outcome {
  const aclPath = mount.path + sub;
  const withType = (o: Outcome): Outcome => ({ mount_type: 'kv', ...o });
  if (sub === 'config') return withType(config(ctx, mount, aclPath));
  const slash = sub.indexOf('/');
  const root = slash < 0 ? sub : sub.slice(0, slash);
  const key = slash < 0 ? '' : sub.slice(slash + 1);
  if (slash < 0 && V2_ROOTS.includes(root)) {
    ctx.authorize(capabilityFor(ctx.op, true), aclPath);
    throw notFoundWithEnvelope(ctx.requestId, {
      warnings: ['Non-listing operations on the root of a K/V v2 mount are not supported.'],
      mount_type: 'kv',
    });
  }
  switch (root) {
    case 'data':
      return withType(data(ctx, mount, key, aclPath));
    case 'metadata':
      return withType(metadata(ctx, mount, key, aclPath));
    case 'delete':
    case 'undelete':
    case 'destroy':
      return withType(versionsAction(ctx, mount, root, key, aclPath));
    case 'subkeys':
      return withType(subkeys(ctx, mount, key, aclPath));
    default: {
      ctx.authorize(capabilityFor(ctx.op, true), aclPath);
      const verb = { read: 'get', write: 'put', patch: 'patch', list: 'list', delete: 'delete' }[ctx.op];
      throw notFoundWithEnvelope(ctx.requestId, {
        warnings: [
          `Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv ${verb}' for this operation.`,
        ],
        mount_type: 'kv',
      });
    }
  }
}

function capabilityFor(op: RequestContext['op'], exists: boolean): string {
  return op === 'write' ? (exists ? 'update' : 'create') : op;
}

const isDeleted = (v: VersionRecord, now: Date) => v.deletion_time !== '' && Date.parse(v.deletion_time) <= now.getTime();

function versionMetadata(v: VersionRecord, version: number, meta: KeyRecord) {
  return {
    created_time: v.created_time,
    custom_metadata: meta.custom_metadata,
    deletion_time: v.deletion_time,
    destroyed: v.destroyed,
    version,
  };
}

function deletionTimeFor(created: Date, mount: Mount, meta: KeyRecord): string {
  if (mount.config.delete_version_after < 0) return '';
  const a = mount.config.delete_version_after;
  const b = meta.delete_version_after;
  const after = a > 0 && b > 0 ? Math.min(a, b) : a > 0 ? a : b > 0 ? b : 0;
  return after > 0 ? new Date(created.getTime() + after * 1000).toISOString() : '';
}

function checkCas(ctx: RequestContext, mount: Mount, meta: KeyRecord) {
  const options = ctx.body.options;
  const cas = options && typeof options === 'object' ? (options as Record<string, unknown>).cas : undefined;
  if (cas !== undefined && cas !== null) {
    const value = typeof cas === 'string' && /^\d+$/.test(cas) ? Number(cas) : cas;
    if (typeof value !== 'number' || !Number.isInteger(value)) throw badRequest('error parsing check-and-set parameter');
    if (value !== meta.current_version) throw badRequest('check-and-set parameter did not match the current version');
  } else if (mount.config.cas_required || meta.cas_required) {
    throw badRequest('check-and-set parameter required for this call');
  }
}

function newKeyRecord(now: string): KeyRecord {
  return {
    versions: {},
    current_version: 0,
    oldest_version: 0,
    created_time: now,
    updated_time: now,
    max_versions: 0,
    cas_required: false,
    delete_version_after: 0,
    custom_metadata: null,
  };
}

/** A kv version 1 mount becomes version 2 in place (sys/mounts/<path>/tune options.version=2): each entry is version 1 of its key. */
export function upgradeToVersion2(mount: Mount, now: Date): void {
  for (const [key, data] of Object.entries(mount.v1)) {
    const meta = mount.v2[key] ?? newKeyRecord(now.toISOString());
    addVersion(mount, meta, data, now);
    mount.v2[key] = meta;
  }
  mount.v1 = {};
  mount.version = 2;
}

/** Adds a version and prunes the oldest ones beyond max_versions (the larger of key and mount setting, 0 meaning 10). */
function addVersion(mount: Mount, meta: KeyRecord, data: Record<string, unknown>, now: Date): VersionRecord {
  const created = now.toISOString();
  const record: VersionRecord = { created_time: created, deletion_time: deletionTimeFor(now, mount, meta), destroyed: false, data };
  meta.current_version++;
  meta.versions[String(meta.current_version)] = record;
  meta.updated_time = created;
  if (!meta.created_time) meta.created_time = created;
  const max = Math.max(meta.max_versions, mount.config.max_versions) || DEFAULT_MAX_VERSIONS;
  if (meta.current_version - meta.oldest_version >= max) {
    const last = meta.current_version - max;
    for (let v = meta.oldest_version; v <= last; v++) delete meta.versions[String(v)];
    meta.oldest_version = last + 1;
  }
  return record;
}

function parseVersionParam(raw: string | null): number {
  if (raw === null || raw === '') return 0;
  if (!/^\d+$/.test(raw)) throw badRequest(`error converting input ${raw} for field "version"`);
  return Number(raw);
}

function data(ctx: RequestContext, mount: Mount, key: string, aclPath: string): Outcome {
  const meta = mount.v2[key];
  switch (ctx.op) {
    case 'read': {
      ctx.authorize('read', aclPath);
      const requested = parseVersionParam(ctx.query.get('version'));
      if (!meta) throw notFound();
      const number = requested > 0 ? requested : meta.current_version;
      const version = meta.versions[String(number)];
      if (!version) throw notFound();
      const body = { data: null as Record<string, unknown> | null, metadata: versionMetadata(version, number, meta) };
      if (isDeleted(version, ctx.now()) || version.destroyed) {
        throw notFoundWithEnvelope(ctx.requestId, { data: body, mount_type: 'kv' });
      }
      body.data = version.data ?? {};
      return { data: body };
    }
    case 'write': {
      ctx.authorize(meta ? 'update' : 'create', aclPath);
      if (key === '') throw badRequest('missing path');
      const payload = ctx.body.data;
      if (payload === undefined) throw badRequest('no data provided');
      if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
        throw badRequest('error converting input for field "data": expected a JSON object');
      }
      const target = meta ?? newKeyRecord(ctx.now().toISOString());
      checkCas(ctx, mount, target);
      mount.v2[key] = target;
      const version = addVersion(mount, target, payload as Record<string, unknown>, ctx.now());
      ctx.changed();
      return { data: versionMetadata(version, target.current_version, target) };
    }
    case 'patch': {
      ctx.authorize('patch', aclPath);
      const payload = ctx.body.data;
      if (payload === undefined) throw badRequest('no data provided');
      if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
        throw badRequest('error converting input for field "data": expected a JSON object');
      }
      if (!meta) throw notFound();
      checkCas(ctx, mount, meta);
      const current = meta.versions[String(meta.current_version)];
      if (!current) throw notFound();
      if (isDeleted(current, ctx.now()) || current.destroyed) {
        throw notFoundWithEnvelope(ctx.requestId, { data: versionMetadata(current, meta.current_version, meta), mount_type: 'kv' });
      }
      const merged = mergePatch(current.data ?? {}, payload) as Record<string, unknown>;
      const version = addVersion(mount, meta, merged, ctx.now());
      ctx.changed();
      return { data: versionMetadata(version, meta.current_version, meta) };
    }
    case 'delete': {
      ctx.authorize('delete', aclPath);
      const current = meta?.versions[String(meta.current_version)];
      if (!meta || !current || current.destroyed || isDeleted(current, ctx.now())) return {};
      current.deletion_time = ctx.now().toISOString();
      ctx.changed();
      return {};
    }
    default:
      ctx.authorize(capabilityFor(ctx.op, !!meta), aclPath);
      throw unsupportedOperation();
  }
}

/** The key names of a version without its values (leaves are null), down to `depth` levels (0: all). */
function subkeys(ctx: RequestContext, mount: Mount, key: string, aclPath: string): Outcome {
  if (ctx.op !== 'read') {
    ctx.authorize(capabilityFor(ctx.op, true), aclPath);
    throw unsupportedOperation();
  }
  ctx.authorize('read', aclPath);
  const requested = parseVersionParam(ctx.query.get('version'));
  const depth = parseVersionParam(ctx.query.get('depth'));
  const meta = mount.v2[key];
  if (!meta) throw notFound();
  const number = requested > 0 ? requested : meta.current_version;
  const version = meta.versions[String(number)];
  if (!version) throw notFound();
  const metadata = versionMetadata(version, number, meta);
  if (isDeleted(version, ctx.now()) || version.destroyed) {
    throw notFoundWithEnvelope(ctx.requestId, { data: { subkeys: null, metadata }, mount_type: 'kv' });
  }
  const shape = (value: unknown, level: number): unknown => {
    if (!value || typeof value !== 'object' || Array.isArray(value) || (depth > 0 && level >= depth)) return null;
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, shape(v, level + 1)]));
  };
  return { data: { subkeys: shape(version.data ?? {}, 0), metadata } };
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [name, value] of Object.entries(patch as Record<string, unknown>)) {
    if (value === null) delete result[name];
    else result[name] = mergePatch(result[name], value);
  }
  return result;
}

function parseBool(raw: unknown, field: string): boolean {
  if (typeof raw === 'boolean') return raw;
  if (raw === 'true' || raw === '1' || raw === 1) return true;
  if (raw === 'false' || raw === '0' || raw === 0) return false;
  throw badRequest(`error converting input ${JSON.stringify(raw)} for field "${field}"`);
}

function parseNonNegativeInt(raw: unknown, field: string): number {
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw badRequest(`error converting input ${JSON.stringify(raw)} for field "${field}"`);
  }
  return value;
}

function parseDuration(raw: unknown, field: string): number {
  try {
    return parseDurationSeconds(raw);
  } catch {
    throw badRequest(`error converting input ${JSON.stringify(raw)} for field "${field}"`);
  }
}

function parseCustomMetadata(raw: unknown, dropNulls: boolean): Record<string, string | null> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw badRequest('custom_metadata validation failed: custom_metadata must be an object of strings');
  }
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (v === null) {
      if (dropNulls) out[k] = null;
      else out[k] = '';
      continue;
    }
    if (typeof v === 'object') throw badRequest(`custom_metadata validation failed: value for key "${k}" must be a string`);
    out[k] = String(v);
  }
  return out;
}

const PRINTABLE = /^[^\p{Cc}\p{Cf}\p{Co}\p{Cs}]*$/u;

function validateCustomMetadata(map: Record<string, string>) {
  const prefix = 'custom_metadata validation failed';
  const keys = Object.keys(map);
  if (keys.length > MAX_CUSTOM_METADATA_KEYS) {
    throw badRequest(`${prefix}: payload must contain at most ${MAX_CUSTOM_METADATA_KEYS} keys, provided ${keys.length}`);
  }
  const problems: string[] = [];
  for (const [k, v] of Object.entries(map)) {
    const keyLength = Buffer.byteLength(k);
    const valueLength = Buffer.byteLength(v);
    if (keyLength === 0 || keyLength > MAX_CUSTOM_METADATA_KEY_LENGTH) {
      problems.push(`${prefix}: length of key ${JSON.stringify(k)} is ${keyLength} but must be 0 < len(key) <= ${MAX_CUSTOM_METADATA_KEY_LENGTH}`);
    }
    if (valueLength === 0 || valueLength > MAX_CUSTOM_METADATA_VALUE_LENGTH) {
      problems.push(
        `${prefix}: length of value for key ${JSON.stringify(k)} is ${valueLength} but must be 0 < len(value) <= ${MAX_CUSTOM_METADATA_VALUE_LENGTH}`,
      );
    }
    if (!PRINTABLE.test(k)) problems.push(`${prefix}: key ${JSON.stringify(k)} contains unprintable characters`);
    if (!PRINTABLE.test(v)) problems.push(`${prefix}: value for key ${JSON.stringify(k)} contains unprintable characters`);
  }
  if (problems.length) throw badRequest(problems.join('\n'));
}

const CAS_WARNING = '"cas_required" set to false, but is mandated by backend config. This value will be ignored.';

function metadata(ctx: RequestContext, mount: Mount, key: string, aclPath: string): Outcome {
  const meta = mount.v2[key];
  switch (ctx.op) {
    case 'list': {
      ctx.authorize('list', aclPath);
      return listReply(listChildren(Object.keys(mount.v2), key));
    }
    case 'read': {
      ctx.authorize('read', aclPath);
      if (!meta) throw notFound();
      const versions: Record<string, unknown> = {};
      for (const [n, v] of Object.entries(meta.versions)) {
        versions[n] = { created_time: v.created_time, deletion_time: v.deletion_time, destroyed: v.destroyed };
      }
      return {
        data: {
          cas_required: meta.cas_required,
          created_time: meta.created_time,
          current_version: meta.current_version,
          custom_metadata: meta.custom_metadata,
          delete_version_after: formatGoDuration(meta.delete_version_after),
          max_versions: meta.max_versions,
          oldest_version: meta.oldest_version,
          updated_time: meta.updated_time,
          versions,
        },
      };
    }
    case 'write': {
      ctx.authorize(meta ? 'update' : 'create', aclPath);
      if (key === '') throw badRequest('missing path');
      const b = ctx.body;
      const has = (f: string) => b[f] !== undefined;
      if (!has('max_versions') && !has('cas_required') && !has('delete_version_after') && !has('custom_metadata')) return {};
      const maxVersions = has('max_versions') ? parseNonNegativeInt(b.max_versions, 'max_versions') : undefined;
      const casRequired = has('cas_required') ? parseBool(b.cas_required, 'cas_required') : undefined;
      const dva = has('delete_version_after') ? parseDuration(b.delete_version_after, 'delete_version_after') : undefined;
      let custom: Record<string, string> | undefined;
      if (has('custom_metadata')) {
        custom = parseCustomMetadata(b.custom_metadata, false) as Record<string, string>;
        validateCustomMetadata(custom);
      }
      const warnings = casRequired === false && mount.config.cas_required ? [CAS_WARNING] : undefined;
      const now = ctx.now().toISOString();
      const target = meta ?? newKeyRecord(now);
      if (maxVersions !== undefined) target.max_versions = maxVersions;
      if (casRequired !== undefined) target.cas_required = casRequired;
      if (dva !== undefined) target.delete_version_after = dva;
      if (custom !== undefined) target.custom_metadata = custom;
      mount.v2[key] = target;
      ctx.changed();
      return { warnings };
    }
    case 'patch': {
      ctx.authorize('patch', aclPath);
      const b = ctx.body;
      let customPatch: Record<string, string | null> | undefined;
      if (b.custom_metadata !== undefined && b.custom_metadata !== null) {
        customPatch = parseCustomMetadata(b.custom_metadata, true);
        validateCustomMetadata(Object.fromEntries(Object.entries(customPatch).filter(([, v]) => v !== null)) as Record<string, string>);
      }
      if (!meta) throw notFound();
      const maxVersions = b.max_versions !== undefined ? parseNonNegativeInt(b.max_versions, 'max_versions') : undefined;
      const casRequired = b.cas_required !== undefined ? parseBool(b.cas_required, 'cas_required') : undefined;
      const dva = b.delete_version_after !== undefined ? parseDuration(b.delete_version_after, 'delete_version_after') : undefined;
      let custom = meta.custom_metadata;
      if (b.custom_metadata === null) custom = null;
      else if (customPatch) {
        custom = mergePatch(meta.custom_metadata ?? {}, customPatch) as Record<string, string>;
        validateCustomMetadata(custom);
      }
      if (maxVersions !== undefined) meta.max_versions = maxVersions;
      if (casRequired !== undefined) meta.cas_required = casRequired;
      if (dva !== undefined) meta.delete_version_after = dva;
      meta.custom_metadata = custom;
      ctx.changed();
      return { warnings: casRequired === false && mount.config.cas_required ? [CAS_WARNING] : undefined };
    }
    case 'delete': {
      ctx.authorize('delete', aclPath);
      if (meta) {
        delete mount.v2[key];
        ctx.changed();
      }
      return {};
    }
  }
}

function parseVersions(raw: unknown): number[] {
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',').filter((s) => s.trim() !== '') : raw === undefined ? [] : [raw];
  return items.map((item) => {
    const value = typeof item === 'string' && /^\s*\d+\s*$/.test(item) ? Number(item) : item;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw badRequest(`error converting input ${JSON.stringify(raw)} for field "versions"`);
    }
    return value;
  });
}

function versionsAction(ctx: RequestContext, mount: Mount, action: 'delete' | 'undelete' | 'destroy', key: string, aclPath: string): Outcome {
  if (ctx.op !== 'write') {
    ctx.authorize(capabilityFor(ctx.op, true), aclPath);
    throw unsupportedOperation();
  }
  ctx.authorize('update', aclPath);
  const versions = parseVersions(ctx.body.versions);
  if (versions.length === 0) throw badRequest('No version number provided');
  const meta = mount.v2[key];
  if (!meta) return {};
  const now = ctx.now();
  for (const n of versions) {
    const v = meta.versions[String(n)];
    if (!v) continue;
    if (action === 'destroy') {
      v.destroyed = true;
      delete v.data;
    } else if (v.destroyed) {
      continue;
    } else if (action === 'delete') {
      if (!isDeleted(v, now)) v.deletion_time = now.toISOString();
    } else {
      v.deletion_time = deletionTimeFor(now, mount, meta);
    }
  }
  ctx.changed();
  return {};
}

function config(ctx: RequestContext, mount: Mount, aclPath: string): Outcome {
  if (ctx.op === 'read') {
    ctx.authorize('read', aclPath);
    return {
      data: {
        cas_required: mount.config.cas_required,
        delete_version_after: formatGoDuration(Math.max(0, mount.config.delete_version_after)),
        max_versions: mount.config.max_versions,
      },
    };
  }
  if (ctx.op !== 'write') {
    ctx.authorize(capabilityFor(ctx.op, true), aclPath);
    throw unsupportedOperation();
  }
  ctx.authorize('update', aclPath);
  const b = ctx.body;
  if (b.max_versions !== undefined) mount.config.max_versions = parseNonNegativeInt(b.max_versions, 'max_versions');
  if (b.cas_required !== undefined) mount.config.cas_required = parseBool(b.cas_required, 'cas_required');
  if (b.delete_version_after !== undefined) {
    const seconds = parseDuration(b.delete_version_after, 'delete_version_after');
    mount.config.delete_version_after = seconds < 0 ? -1 : seconds;
  }
  ctx.changed();
  return {};
}
