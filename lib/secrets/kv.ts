import { expectObject, expectOptions, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { keysOf, type CallResult, type SecretsCaller } from './call.js';
import { checkVaultDuration } from './duration.js';
import { SecretsError, type FaceHints, type SecretsErrorCode } from './errors.js';
import { encodePath, normaliseMount } from './paths.js';
import type { KvConfig, KvMetadata, KvMetadataInput, KvReadResult, KvVersion, KvVersionMetadata, KvWriteResult, SecretData } from './types.js';

export interface KvEngineOptions {
  /** Skip detection: the mount is known to be kv v1 or v2. */
  kvVersion?: KvVersion | undefined;
  /** Namespace relative to the client's. */
  namespace?: string | undefined;
  /** kv v1 writes: POST (default) or PUT, which the service treats as synonyms (SEC-EP-WRITE). */
  writeMethod?: 'POST' | 'PUT';
}

export interface WriteOptions {
  /** kv v2 check-and-set: 0 writes only if the key does not exist; N only if the current version is N. */
  cas?: number;
}

/**
 * The kv engine at one mount, v1 or v2. v1 paths are `<mount>/<name>`; v2 paths are `<mount>/data/<name>`,
 * `metadata/`, `delete/`, `undelete/`, `destroy/` and `config` (SEC-KV1-PATH, SEC-KV2-*).
 */
export class KvEngine {
  readonly mount: string;
  readonly namespace: string | undefined;
  readonly #client: SecretsCaller;
  readonly #options: KvEngineOptions;
  #version: KvVersion | undefined;

  constructor(client: SecretsCaller, mount: string, options: KvEngineOptions = {}) {
    expectObject('KvEngine', 'client', client, 'a SecretsClient');
    expectString('KvEngine', 'mount', mount, 'a mount path such as "secret"');
    expectOptions('KvEngine', options);
    this.#client = client;
    // "secret", "secret/" and "/secret/" are one mount; paths are built by appending to it.
    this.mount = normaliseMount(mount);
    this.namespace = options.namespace;
    this.#options = options;
    this.#version = options.kvVersion;
    if (this.#version !== undefined && this.#version !== 1 && this.#version !== 2) {
      throw new UsageError(`kvVersion must be 1 or 2, got ${String(this.#version)}`);
    }
  }

  /** The mount's kv version: given, or detected once (and cached by the client). */
  async version(): Promise<KvVersion> {
    if (this.#version === undefined) {
      const info = await this.#client.mountInfo(this.mount, this.#ns());
      this.#version = info.kvVersion;
    }
    return this.#version;
  }

  #ns(): { namespace?: string } {
    return this.namespace !== undefined ? { namespace: this.namespace } : {};
  }

  #path(prefix: string, name: string, directory = false): string {
    const encoded = encodePath(name, { directory });
    return `${this.mount}${prefix}${encoded}`;
  }

  async #v2(operation: string): Promise<void> {
    if ((await this.version()) !== 2) {
      throw new UsageError(`${operation} needs a kv v2 mount; ${this.mount} is kv v1, which keeps no versions or metadata`, { code: 'SECRETS_KV_VERSION' });
    }
  }

  /** Read the current version, or `version` (kv v2). Missing, deleted and destroyed are results, not errors. */
  async read(name: string, options: { version?: number } = {}): Promise<KvReadResult> {
    const kvVersion = await this.version();
    if (kvVersion === 1) {
      if (options.version !== undefined) throw new UsageError(`${this.mount} is kv v1, which keeps no versions`, { code: 'SECRETS_KV_VERSION' });
      const path = this.#path('', name);
      const result = await this.#client.call<SecretData>({ method: 'GET', path, allowNotFound: true, ...this.#ns() });
      if (result.status === 404) return this.#missingOrThrow(result, 'GET', path, 1);
      return { state: 'current', kvVersion: 1, data: result.envelope?.data ?? {}, metadata: undefined, warnings: result.warnings };
    }
    const query = options.version !== undefined ? { version: String(checkVersionNumber(options.version)) } : undefined;
    const path = this.#path('data/', name);
    const result = await this.#client.call<{ data?: SecretData | null; metadata?: WireVersionMetadata | null }>({
      method: 'GET',
      path,
      allowNotFound: true,
      ...(query ? { query } : {}),
      ...this.#ns(),
    });
    const metadataWire = result.envelope?.data?.metadata;
    if (result.status === 404 && !metadataWire) return this.#missingOrThrow(result, 'GET', path, 2);
    const metadata = metadataWire ? versionMetadata(metadataWire) : undefined;
    const data = result.envelope?.data?.data;
    if (metadata && (data === null || data === undefined)) {
      if (metadata.destroyed) return { state: 'destroyed', kvVersion: 2, data: null, metadata, warnings: result.warnings };
      if (metadata.deletionTime !== '') return { state: 'deleted', kvVersion: 2, data: null, metadata, warnings: result.warnings };
    }
    if (result.status === 404) return this.#missingOrThrow(result, 'GET', path, 2);
    return { state: 'current', kvVersion: 2, data: data ?? {}, metadata, warnings: result.warnings };
  }

  /** A 404 with `errors: []` is a missing secret; a 404 with errors (no such route or mount) is an error. */
  #missingOrThrow(result: CallResult<unknown>, method: string, path: string, kvVersion: KvVersion): KvReadResult {
    if (result.errors.length > 0) {
      throw new SecretsError({ method, path, namespace: this.namespace, status: 404, errors: result.errors, warnings: result.warnings });
    }
    return { state: 'missing', kvVersion, data: null, metadata: undefined, warnings: result.warnings };
  }

  /** Create or update a secret. kv v2 wraps the data in `data` and may carry `options.cas`. */
  async write(name: string, data: SecretData, options: WriteOptions = {}): Promise<KvWriteResult> {
    checkData(data);
    const kvVersion = await this.version();
    if (kvVersion === 1) {
      if (options.cas !== undefined) throw new UsageError(`${this.mount} is kv v1, which has no check-and-set`, { code: 'SECRETS_KV_VERSION' });
      const result = await this.#client.call({ method: this.#options.writeMethod ?? 'POST', path: this.#path('', name), body: data, ...this.#ns() });
      return { kvVersion: 1, metadata: undefined, warnings: result.warnings };
    }
    const body: Record<string, unknown> = { data };
    if (options.cas !== undefined) body.options = { cas: checkVersionNumber(options.cas, true) };
    const path = this.#path('data/', name);
    const result = await casConflict(
      this.#client.call<WireVersionMetadata>({ method: this.#options.writeMethod ?? 'POST', path, body, ...this.#ns() }),
      `${this.mount}${name}`,
      options.cas,
    );
    return { kvVersion: 2, metadata: result.envelope?.data ? versionMetadata(result.envelope.data) : undefined, warnings: result.warnings };
  }

  /** kv v2 merge patch (JSON Merge Patch: a null value removes the key). Needs the key to exist. */
  async patch(name: string, data: SecretData, options: WriteOptions = {}): Promise<KvWriteResult> {
    checkData(data);
    await this.#v2('patch');
    const body: Record<string, unknown> = { data };
    if (options.cas !== undefined) body.options = { cas: checkVersionNumber(options.cas, true) };
    // The service answers 415 to a PATCH that is not application/merge-patch+json.
    const result = await casConflict(
      this.#client.call<WireVersionMetadata>({
        method: 'PATCH',
        path: this.#path('data/', name),
        body,
        contentType: 'application/merge-patch+json',
        ...this.#ns(),
      }),
      `${this.mount}${name}`,
      options.cas,
    );
    return { kvVersion: 2, metadata: result.envelope?.data ? versionMetadata(result.envelope.data) : undefined, warnings: result.warnings };
  }

  /** Keys under a directory (folders end in `/`); [] when there are none (SEC-LIST-EMPTY-404). */
  async list(directory = ''): Promise<string[]> {
    const kvVersion = await this.version();
    const path = this.#path(kvVersion === 2 ? 'metadata/' : '', directory, true);
    const result = await this.#client.call<{ keys?: unknown }>({ method: 'LIST', path, allowNotFound: true, ...this.#ns() });
    if (result.status === 404 && result.errors.length > 0) {
      throw new SecretsError({ method: 'LIST', path, namespace: this.namespace, status: 404, errors: result.errors, warnings: result.warnings });
    }
    return keysOf(result);
  }

  /**
   * kv v1: delete the secret. kv v2: soft-delete the latest version, or the listed `versions` (undelete can bring
   * them back; metadata stays).
   */
  async delete(name: string, options: { versions?: number[] } = {}): Promise<void> {
    const kvVersion = await this.version();
    if (kvVersion === 1) {
      if (options.versions) throw new UsageError(`${this.mount} is kv v1, which keeps no versions`, { code: 'SECRETS_KV_VERSION' });
      await this.#client.call({ method: 'DELETE', path: this.#path('', name), ...this.#ns() });
      return;
    }
    if (options.versions && options.versions.length > 0) {
      await this.#client.call({ method: 'POST', path: this.#path('delete/', name), body: { versions: checkVersions(options.versions) }, ...this.#ns() });
      return;
    }
    await this.#client.call({ method: 'DELETE', path: this.#path('data/', name), ...this.#ns() });
  }

  async undelete(name: string, versions: number[]): Promise<void> {
    await this.#v2('undelete');
    await this.#client.call({ method: 'POST', path: this.#path('undelete/', name), body: { versions: checkVersions(versions) }, ...this.#ns() });
  }

  /** Permanently remove the data of the listed versions (metadata remains, marked destroyed). */
  async destroy(name: string, versions: number[]): Promise<void> {
    await this.#v2('destroy');
    await this.#client.call({ method: 'PUT', path: this.#path('destroy/', name), body: { versions: checkVersions(versions) }, ...this.#ns() });
  }

  /** kv v2 metadata of all versions; undefined when the key does not exist. */
  async readMetadata(name: string): Promise<KvMetadata | undefined> {
    await this.#v2('metadata');
    const path = this.#path('metadata/', name);
    const result = await this.#client.call<WireMetadata>({ method: 'GET', path, allowNotFound: true, ...this.#ns() });
    if (result.status === 404) {
      if (result.errors.length > 0)
        throw new SecretsError({ method: 'GET', path, namespace: this.namespace, status: 404, errors: result.errors, warnings: result.warnings });
      return undefined;
    }
    return metadataFromWire(result.envelope?.data ?? {});
  }

  async writeMetadata(name: string, input: KvMetadataInput): Promise<void> {
    await this.#v2('metadata');
    const body: Record<string, unknown> = {};
    if (input.maxVersions !== undefined) body.max_versions = checkCount(input.maxVersions, 'maxVersions');
    if (input.casRequired !== undefined) body.cas_required = input.casRequired;
    if (input.deleteVersionAfter !== undefined) body.delete_version_after = checkVaultDuration(input.deleteVersionAfter, 'deleteVersionAfter');
    if (input.customMetadata !== undefined) body.custom_metadata = checkCustomMetadata(input.customMetadata);
    await this.#client.call({ method: 'POST', path: this.#path('metadata/', name), body, ...this.#ns() });
  }

  /** Delete the key, every version and its metadata. Irreversible. */
  async deleteMetadata(name: string): Promise<void> {
    await this.#v2('metadata');
    await this.#client.call({ method: 'DELETE', path: this.#path('metadata/', name), ...this.#ns() });
  }

  async readConfig(): Promise<KvConfig> {
    await this.#v2('config');
    const result = await this.#client.call<{ max_versions?: number; cas_required?: boolean; delete_version_after?: string }>({
      method: 'GET',
      path: `${this.mount}config`,
      ...this.#ns(),
    });
    const data = result.envelope?.data ?? {};
    return { maxVersions: data.max_versions ?? 0, casRequired: data.cas_required ?? false, deleteVersionAfter: data.delete_version_after ?? '0s' };
  }

  async writeConfig(input: Partial<KvConfig>): Promise<void> {
    await this.#v2('config');
    const body: Record<string, unknown> = {};
    if (input.maxVersions !== undefined) body.max_versions = checkCount(input.maxVersions, 'maxVersions');
    if (input.casRequired !== undefined) body.cas_required = input.casRequired;
    if (input.deleteVersionAfter !== undefined) body.delete_version_after = checkVaultDuration(input.deleteVersionAfter, 'deleteVersionAfter');
    await this.#client.call({ method: 'POST', path: `${this.mount}config`, body, ...this.#ns() });
  }
}

interface WireVersionMetadata {
  created_time?: string;
  custom_metadata?: Record<string, string> | null;
  deletion_time?: string;
  destroyed?: boolean;
  version?: number;
}

interface WireMetadata {
  cas_required?: boolean;
  created_time?: string;
  current_version?: number;
  custom_metadata?: Record<string, string> | null;
  delete_version_after?: string;
  max_versions?: number;
  oldest_version?: number;
  updated_time?: string;
  versions?: Record<string, { created_time?: string; deletion_time?: string; destroyed?: boolean }>;
}

function versionMetadata(wire: WireVersionMetadata): KvVersionMetadata {
  return {
    version: typeof wire.version === 'number' ? wire.version : Number(wire.version ?? 0),
    createdTime: wire.created_time ?? '',
    deletionTime: wire.deletion_time ?? '',
    destroyed: wire.destroyed === true,
    customMetadata: wire.custom_metadata ?? null,
  };
}

function metadataFromWire(wire: WireMetadata): KvMetadata {
  const versions: KvMetadata['versions'] = {};
  for (const [number, v] of Object.entries(wire.versions ?? {})) {
    versions[number] = { createdTime: v.created_time ?? '', deletionTime: v.deletion_time ?? '', destroyed: v.destroyed === true };
  }
  return {
    casRequired: wire.cas_required === true,
    createdTime: wire.created_time ?? '',
    currentVersion: wire.current_version ?? 0,
    customMetadata: wire.custom_metadata ?? null,
    deleteVersionAfter: wire.delete_version_after ?? '0s',
    maxVersions: wire.max_versions ?? 0,
    oldestVersion: wire.oldest_version ?? 0,
    updatedTime: wire.updated_time ?? '',
    versions,
  };
}

function checkData(data: unknown): void {
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new UsageError('secret data must be a JSON object of keys and values', { code: 'SECRETS_BAD_DATA' });
  }
  checkNoBinary(data);
}

/**
 * Bytes have no JSON form: a Buffer would be sent as `{"type":"Buffer","data":[…]}` and an ArrayBuffer as `{}`, so a
 * binary value is refused (by its key, never its content) with the way to store it: base64 text.
 */
export function checkNoBinary(data: unknown): void {
  const stack: Array<{ value: unknown; where: string }> = [{ value: data, where: '' }];
  while (stack.length > 0) {
    const { value, where } = stack.pop()!;
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
      throw new UsageError(
        `secret data at ${where || 'the top level'} is binary (${value.constructor.name}); bytes have no JSON form and would be mangled, so nothing was sent`,
        {
          code: 'SECRETS_BINARY_VALUE',
          hint: "Store binary values as base64 text, e.g. Buffer.from(bytes).toString('base64'), and decode them after reading.",
        },
      );
    }
    if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) stack.push({ value: inner, where: `${where}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}` });
    }
  }
}

/**
 * A check-and-set refusal is the service's definite "no" (a 400, exit code 1), not a failure: the key changed since
 * the version given, or the key or mount requires check-and-set. Given its own code and a hint saying what to do.
 */
async function casConflict<T>(call: Promise<T>, where: string, cas: number | undefined): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (!(error instanceof SecretsError) || error.status !== 400 || !/check-and-set/i.test(error.errors.join(' '))) throw error;
    const required = cas === undefined && /required/i.test(error.errors.join(' '));
    throw required
      ? rehinted(error, {
          code: 'SECRETS_CAS_REQUIRED',
          hint: `${where} (or its mount) requires check-and-set: read the current version (readMetadata) and write with { cas: <version> } ({ cas: 0 } for a new key).`,
          cliHint: `${where} (or its mount) requires check-and-set: see the current version with \`gantry secrets meta get ${where}\` and write with --cas <version> (--cas 0 for a new key).`,
        })
      : cas === 0
        ? // cas 0 means "write only if the key does not exist": no one wrote it "since"; it was there already.
          rehinted(error, {
            code: 'SECRETS_CAS_MISMATCH',
            hint: `${where} already exists; cas: 0 writes only a new key. To replace it, read its current version (readMetadata) and write with that version as cas.`,
            cliHint: `${where} already exists; --cas 0 writes only a new key. To replace it, see its current version with \`gantry secrets meta get ${where}\` and write with --cas <version>.`,
          })
        : rehinted(error, {
            code: 'SECRETS_CAS_MISMATCH',
            hint: `${where} is not at version ${cas ?? '?'}: someone wrote it since. Read it again (read, readMetadata), then write with the current version as cas.`,
            cliHint: `${where} is not at version ${cas ?? '?'}: someone wrote it since. See the current version with \`gantry secrets meta get ${where}\`, then write again with --cas <version>.`,
          });
  }
}

/**
 * The same failure of the service, told with another code and hint (the caller knows better what to do about it):
 * the request, the service's errors and warnings and the attempts are kept, and the failure given is the cause.
 */
export function rehinted(error: SecretsError, options: FaceHints & { code: SecretsErrorCode }): SecretsError {
  const { method, path, namespace, status, errors, warnings, attempts } = error;
  return new SecretsError({ method, path, namespace, status, errors: [...errors], warnings: [...warnings], attempts, cause: error }, options);
}

function checkVersionNumber(value: number, allowZero = false): number {
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new UsageError(`a version must be a whole number ${allowZero ? '0 or more' : '1 or more'}, got ${value}`, { code: 'SECRETS_BAD_VERSION' });
  }
  return value;
}

function checkVersions(versions: number[]): number[] {
  if (!Array.isArray(versions) || versions.length === 0) throw new UsageError('give at least one version', { code: 'SECRETS_BAD_VERSION' });
  return versions.map((v) => checkVersionNumber(v));
}

function checkCount(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`${what} must be a whole number 0 or more, got ${value}`);
  return value;
}

/** Vault's limits on custom_metadata, checked before sending: 64 keys, keys of 128 bytes, values of 512 bytes. */
function checkCustomMetadata(custom: Record<string, string>): Record<string, string> {
  const entries = Object.entries(custom);
  if (entries.length > 64) throw new UsageError(`custom metadata has ${entries.length} keys; at most 64 are allowed`, { code: 'SECRETS_BAD_METADATA' });
  for (const [key, value] of entries) {
    if (typeof value !== 'string') throw new UsageError(`custom metadata value of "${key}" must be a string`, { code: 'SECRETS_BAD_METADATA' });
    if (key === '' || Buffer.byteLength(key) > 128)
      throw new UsageError(`custom metadata key "${key.slice(0, 40)}" must be 1 to 128 bytes`, { code: 'SECRETS_BAD_METADATA' });
    if (Buffer.byteLength(value) > 512) throw new UsageError(`custom metadata value of "${key}" is over 512 bytes`, { code: 'SECRETS_BAD_METADATA' });
  }
  return custom;
}
