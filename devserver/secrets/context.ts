/** What every route handler receives. */
import type { Namespace, TokenRecord } from './state.js';

export type Operation = 'read' | 'list' | 'write' | 'patch' | 'delete';

export interface RequestContext {
  requestId: string;
  op: Operation;
  /** the path inside the resolved namespace, without a leading slash */
  path: string;
  ns: Namespace;
  query: URLSearchParams;
  /** the parsed JSON body; `{}` when there was none */
  body: Record<string, unknown>;
  token?: TokenRecord & { id: string };
  /** Throws 403 unless the token holds `capability` on `path` (relative to the request namespace). */
  authorize(capability: string, path?: string): void;
  can(capability: string, path?: string): boolean;
  /** True when the token may do anything at all at or below `prefix` (mount visibility, help). */
  canReach(prefix: string): boolean;
  isRoot: boolean;
  /** The token's capabilities on `path` (relative to the request namespace), as sys/capabilities-self reports them. */
  capabilities(path: string): string[];
  /** Marks the state as changed so the reply waits for the data file. */
  changed(): void;
  now(): Date;
}
