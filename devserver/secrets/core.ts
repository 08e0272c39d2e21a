/** The server state shared by the route modules. */
import { randomBytes } from 'node:crypto';
import type { PersistedState, TokenRecord, Namespace } from './state.js';
import { hashToken, newToken } from './state.js';

export interface Core {
  state: PersistedState;
  sealed: boolean;
  unsealKey: string;
  storageType: 'file' | 'inmem';
  defaultTokenTtl: number;
  defaultMounts: Array<{ path: string; version: 1 | 2 }>;
  namespace(path: string): Namespace | undefined;
}

export interface IssueOptions {
  namespace: string;
  policies: string[];
  displayName: string;
  path: string;
  meta?: Record<string, string> | null;
  ttl: number;
  renewable?: boolean;
  numUses?: number;
}

export function issueToken(core: Core, o: IssueOptions): { id: string; record: TokenRecord } {
  const id = newToken();
  const now = Date.now();
  const record: TokenRecord = {
    accessor: randomBytes(12).toString('base64url'),
    namespace: o.namespace,
    policies: [...new Set(o.policies)].sort(),
    display_name: o.displayName,
    path: o.path,
    meta: o.meta ?? null,
    creation_time: Math.floor(now / 1000),
    issue_time: new Date(now).toISOString(),
    ttl: o.ttl,
    expire_at: o.ttl > 0 ? now + o.ttl * 1000 : null,
    renewable: o.renewable ?? o.ttl > 0,
    num_uses: o.numUses ?? 0,
    orphan: true,
  };
  core.state.tokens[hashToken(id)] = record;
  return { id, record };
}

export function authBlock(id: string, t: TokenRecord) {
  const remaining = t.expire_at === null ? 0 : Math.max(0, Math.round((t.expire_at - Date.now()) / 1000));
  return {
    client_token: id,
    accessor: t.accessor,
    policies: t.policies,
    token_policies: t.policies,
    metadata: t.meta,
    lease_duration: remaining,
    renewable: t.renewable,
    entity_id: '',
    token_type: 'service',
    orphan: t.orphan,
    mfa_requirement: null,
    num_uses: t.num_uses,
  };
}
