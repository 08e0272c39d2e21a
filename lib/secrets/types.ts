/**
 * Shapes of the secrets service's answers. The spec leaves response bodies "not shown"; these follow HashiCorp
 * Vault's (the envelope, kv v2 data and metadata, token auth), read in snake_case from the wire and handed to callers
 * in camelCase.
 */

/** Every response carries this envelope (nulls where empty). */
export interface ResponseEnvelope<Data = Record<string, unknown>> {
  request_id?: string;
  lease_id?: string;
  renewable?: boolean;
  lease_duration?: number;
  data: Data | null;
  wrap_info?: unknown;
  warnings?: string[] | null;
  auth?: WireAuth | null;
}

export interface WireAuth {
  client_token: string;
  accessor?: string;
  policies?: string[] | null;
  token_policies?: string[] | null;
  metadata?: Record<string, string> | null;
  lease_duration?: number;
  renewable?: boolean;
  entity_id?: string;
  token_type?: string;
  orphan?: boolean;
}

export type KvVersion = 1 | 2;
export type SecretData = Record<string, unknown>;

/** Metadata of one version of a kv v2 secret. */
export interface KvVersionMetadata {
  version: number;
  createdTime: string;
  /** Empty when the version is not deleted. */
  deletionTime: string;
  destroyed: boolean;
  customMetadata: Record<string, string> | null;
}

/** A secret read. Deleted and destroyed versions are results too, carrying their metadata (kv v2 only). */
export type KvReadResult =
  | { state: 'current'; kvVersion: KvVersion; data: SecretData; metadata: KvVersionMetadata | undefined; warnings: string[] }
  | { state: 'deleted'; kvVersion: 2; data: null; metadata: KvVersionMetadata; warnings: string[] }
  | { state: 'destroyed'; kvVersion: 2; data: null; metadata: KvVersionMetadata; warnings: string[] }
  | { state: 'missing'; kvVersion: KvVersion; data: null; metadata: undefined; warnings: string[] };

export interface KvWriteResult {
  kvVersion: KvVersion;
  /** kv v2: the version written. */
  metadata: KvVersionMetadata | undefined;
  warnings: string[];
}

export interface KvVersionSummary {
  createdTime: string;
  deletionTime: string;
  destroyed: boolean;
}

/** kv v2 metadata of a key (all versions). */
export interface KvMetadata {
  casRequired: boolean;
  createdTime: string;
  currentVersion: number;
  customMetadata: Record<string, string> | null;
  deleteVersionAfter: string;
  maxVersions: number;
  oldestVersion: number;
  updatedTime: string;
  /** Keyed by version number (as the service sends them: strings). */
  versions: Record<string, KvVersionSummary>;
}

export interface KvMetadataInput {
  maxVersions?: number;
  casRequired?: boolean;
  /** A Go duration string ("768h", "0s"). */
  deleteVersionAfter?: string;
  customMetadata?: Record<string, string>;
}

export interface KvConfig {
  maxVersions: number;
  casRequired: boolean;
  deleteVersionAfter: string;
}

export interface HelpResult {
  help: string;
  openapi: OpenApiDocument;
}

export interface OpenApiDocument {
  openapi: string;
  info?: Record<string, unknown>;
  paths: Record<string, unknown>;
  components?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What a login or a token lookup says about the token. The token itself is kept by the client, not here. */
export interface TokenInfo {
  accessor: string | undefined;
  policies: string[];
  /** Seconds; 0 for a token that never expires. */
  ttl: number;
  renewable: boolean;
  entityId: string | undefined;
  metadata: Record<string, string>;
  displayName: string | undefined;
}

export interface MountInfo {
  /** Full mount path with trailing slash, relative to the namespace of the request (e.g. `secret/`). */
  path: string;
  type: string | undefined;
  kvVersion: KvVersion;
}

/** One mount as `client.mounts()` lists it. */
export interface MountSummary {
  /** With a trailing slash, relative to the namespace asked (e.g. `secret/`). */
  path: string;
  /** The engine: `kv`, `pki`, `cubbyhole` … */
  type: string;
  /** For kv mounts: 1 or 2. */
  kvVersion: KvVersion | undefined;
  description: string;
}
