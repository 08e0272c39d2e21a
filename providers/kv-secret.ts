/**
 * KvSecret: a secret in the kv engine of the secrets service, as a Pulumi dynamic resource.
 *
 * The provider object below is what Pulumi serializes into `__provider`, made by `resourceType` with
 * `serializedProvider` (./serialized.ts): its methods capture nothing, load the implementation (`kvSecretOperations`,
 * in ./kv-secret-operations.ts, through `gantry/providers`) when the engine calls them, and read the service address
 * and token at run time from the environment (SECRETS_*) or from the stack configuration given to Configure
 * (gantry:secrets*). So `__provider` stays small and never holds a credential.
 */
import type { KvMetadata, KvVersion, SecretData } from '../lib/secrets/index.js';
import { resourceType, type ArgsOf } from './resource.js';
import { serviceMethods, type ProviderSettings } from './serialized.js';

/** Inputs after Check: normalised, secret values as given. */
export interface KvSecretInputs {
  /** The kv mount, e.g. `secret`. Changing it replaces the resource. */
  mount: string;
  /** The secret's path under the mount, e.g. `app/db`. Changing it replaces the resource. */
  path: string;
  /** The key-value pairs; stored as a Pulumi secret. */
  data: SecretData;
  /** 1 or 2; detected from the mount when absent. */
  kvVersion?: KvVersion;
  /**
   * kv v2 check-and-set: create only if absent, and update only if the secret is still at the version this stack
   * last saw (a change made outside Pulumi then fails the update until `pulumi refresh`).
   */
  cas?: boolean;
  /** kv v2 custom metadata of the key (at most 64 keys, 128-byte keys, 512-byte values). */
  customMetadata?: Record<string, string>;
  /** kv v2: on delete, remove every version and the metadata instead of soft-deleting the latest version. */
  deleteAllVersions?: boolean;
  /** Namespace, relative to the provider's (SECRETS_NAMESPACE / gantry:secretsNamespace). Changing it replaces. */
  namespace?: string;
}

export type KvSecretArgs = ArgsOf<KvSecretInputs>;

export interface KvSecretOutputs extends KvSecretInputs {
  kvVersion: KvVersion;
  /** kv v2: the current version; undefined on kv v1. */
  version: number | undefined;
  createdTime: string | undefined;
  metadata: Omit<KvMetadata, 'versions'> | undefined;
}

/**
 * Every `gantry:secrets*` key the secrets client reads (lib/secrets/config.ts `settings`; a test keeps the two lists
 * equal). Written out rather than imported: Configure's closure is serialized, and a list of names is all it needs.
 */
export const kvSecretConfigKeys = [
  'Addr',
  'Token',
  'Namespace',
  'CaCert',
  'CaPath',
  'ClientCert',
  'ClientKey',
  'SkipVerify',
  'TlsServerName',
  'MaxRetries',
  'ClientTimeout',
  'TokenHeader',
  'NamespaceIn',
  'MaxRequestSize',
  'MaxJsonDepth',
  'MaxJsonStringValueLength',
  'MaxJsonObjectEntryCount',
  'MaxJsonArrayElementCount',
].map((name) => `gantry:secrets${name}`);

export const kvSecret = resourceType<KvSecretInputs, KvSecretOutputs>()({
  type: 'gantry:secrets:KvSecret',
  operations: 'kvSecretOperations',
  inputs: ['mount', 'path', 'data', 'kvVersion', 'cas', 'customMetadata', 'deleteAllVersions', 'namespace'],
  outputs: ['version', 'createdTime', 'metadata'],
  secrets: ['data'],
  config: kvSecretConfigKeys,
  ...serviceMethods,
});

/**
 * Read understands the id `<mount>/<path>`, but Pulumi cannot import dynamic resources today (pulumi/pulumi#3550):
 * see docs/secrets.md for how to take over an existing secret.
 */
export class KvSecret extends kvSecret.Resource {}

export const { provider: kvSecretProvider, inputKeys, operations: kvSecretOperations } = kvSecret;

/** The stack configuration the provider read in Configure (the `gantry:secrets*` keys; the rest is ignored). */
export type KvSecretSettings = ProviderSettings<typeof kvSecretProvider>;
