/** The server's data model: namespaces holding mounts, policies and auth method entries; tokens; kv data. */
import { randomUUID, randomBytes, createHash, scryptSync, timingSafeEqual } from 'node:crypto';

export interface KvConfig {
  max_versions: number;
  cas_required: boolean;
  /** seconds; 0 unset, negative disables delete_version_after on every key */
  delete_version_after: number;
}

export interface VersionRecord {
  created_time: string;
  deletion_time: string;
  destroyed: boolean;
  data?: Record<string, unknown>;
}

export interface KeyRecord {
  versions: Record<string, VersionRecord>;
  current_version: number;
  oldest_version: number;
  created_time: string;
  updated_time: string;
  max_versions: number;
  cas_required: boolean;
  delete_version_after: number;
  custom_metadata: Record<string, string> | null;
}

export interface Mount {
  path: string;
  type: 'kv';
  version: 1 | 2;
  uuid: string;
  accessor: string;
  description: string;
  config: KvConfig;
  /** Lease TTLs set by sys/mounts/<path>/tune (seconds; 0: the service's default). */
  tune?: { default_lease_ttl: number; max_lease_ttl: number };
  /** kv v1 entries by key */
  v1: Record<string, Record<string, unknown>>;
  /** kv v2 keys by key */
  v2: Record<string, KeyRecord>;
}

export interface PolicyRule {
  path: string;
  capabilities: string[];
}

export interface UserRecord {
  salt: string;
  hash: string;
  policies: string[];
}

export interface AppRoleRecord {
  role_id: string;
  /** sha256 of each secret_id */
  secret_ids: string[];
  policies: string[];
}

export interface Namespace {
  path: string;
  id: string;
  mounts: Record<string, Mount>;
  policies: Record<string, PolicyRule[]>;
  users: Record<string, UserRecord>;
  approles: Record<string, AppRoleRecord>;
}

export interface TokenRecord {
  accessor: string;
  namespace: string;
  policies: string[];
  display_name: string;
  path: string;
  meta: Record<string, string> | null;
  creation_time: number;
  issue_time: string;
  /** seconds; 0 for tokens that never expire (root) */
  ttl: number;
  expire_at: number | null;
  renewable: boolean;
  num_uses: number;
  orphan: boolean;
  root?: boolean;
}

export interface PersistedState {
  format: 'gantry-secrets-devserver';
  version: 1;
  namespaces: Record<string, Namespace>;
  /** by sha256 of the token, never the token itself */
  tokens: Record<string, TokenRecord>;
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function newToken(): string {
  return `hvs.${randomBytes(18).toString('base64url')}`;
}

export function hashPassword(password: string): { salt: string; hash: string } {
  const salt = randomBytes(16).toString('hex');
  return { salt, hash: scryptSync(password, salt, 32).toString('hex') };
}

export function passwordMatches(password: string, user: UserRecord): boolean {
  const actual = scryptSync(password, user.salt, 32);
  return timingSafeEqual(actual, Buffer.from(user.hash, 'hex'));
}

export function newMount(path: string, version: 1 | 2, description = ''): Mount {
  return {
    path,
    type: 'kv',
    version,
    uuid: randomUUID(),
    accessor: `kv_${randomBytes(4).toString('hex')}`,
    description: description || (version === 2 ? 'key/value secret storage' : 'key/value secret storage (version 1)'),
    config: { max_versions: 0, cas_required: false, delete_version_after: 0 },
    v1: {},
    v2: {},
  };
}

export function newNamespace(path: string, mounts: Array<{ path: string; version: 1 | 2 }>): Namespace {
  const ns: Namespace = { path, id: path === '' ? 'root' : randomBytes(3).toString('base64url'), mounts: {}, policies: {}, users: {}, approles: {} };
  for (const m of mounts) ns.mounts[m.path] = newMount(m.path, m.version);
  return ns;
}

/** "a/b", "/a/b/", "a/b/" → "a/b/"; "" or "/" → "" */
export function normaliseNamespace(raw: string | undefined): string {
  const trimmed = (raw ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

export function normaliseMountPath(raw: string): string {
  return normaliseNamespace(raw);
}
