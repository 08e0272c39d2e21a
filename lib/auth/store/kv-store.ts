/**
 * Logins in Gantry's kv engine: the record's fields as one kv secret at `<mount>/<path>` (by default
 * `secret/gantry/auth/<profile>`), through the secrets client the CLI injects. On kv v2 the secret keeps one version
 * (old tokens do not linger in its history) and logout deletes every version with the metadata.
 */
import { UsageError } from '../../errors.js';
import { getLogger } from '../../log.js';
import { redact } from '../../redact.js';
import { keyLabel } from './key.js';
import { checkLoginToWrite, loginToRecord, recordToLogin, refuseOtherKey } from './login.js';
import type { KvEngineLike, KvLike, ProfileKey, StoredLogin, TokenStore } from './types.js';
import { storeOptionNames, type StoreNames } from './wording.js';

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/;

/** `<mount>/<path>` of `kv:<mount>/<path>`, checked: two segments at least, no empty, `.` or `..` segment. */
export function checkKvPath(path: string, names: StoreNames = storeOptionNames): string {
  const clean = path.replace(/^\/+/, '').replace(/\/+$/, '');
  const segments = clean.split('/');
  if (clean === '' || segments.length < 2 || segments.some((s) => s === '' || s === '.' || s === '..') || controlCharacters.test(clean)) {
    throw new UsageError(`${names.store(`kv:${JSON.stringify(path).slice(1, -1)}`)} is no kv path`, {
      hint: `give ${names.store('kv:<mount>/<path>')}, e.g. ${names.store('kv:secret/gantry/auth/default')}`,
      code: 'AUTH_STORE_SPEC',
    });
  }
  return clean;
}

export class KvTokenStore implements TokenStore {
  readonly kind = 'kv' as const;
  readonly spec: string;
  readonly path: string;
  readonly #client: KvLike;
  readonly #names: StoreNames;
  #engine: Promise<{ kv: KvEngineLike; name: string }> | undefined;

  constructor(client: KvLike, path: string, names: StoreNames = storeOptionNames) {
    this.path = checkKvPath(path, names);
    this.spec = `kv:${this.path}`;
    this.#client = client;
    this.#names = names;
  }

  /** The service's address (and namespace), as the index records it. */
  get address(): string {
    return this.#client.config.address;
  }

  get location(): string {
    const namespace = this.#client.config.namespace ? ` (namespace ${this.#client.config.namespace})` : '';
    return redact(`kv engine ${this.path} at ${this.#client.config.address}${namespace}`);
  }

  describe(_key: ProfileKey): string {
    return this.location;
  }

  #at(): Promise<{ kv: KvEngineLike; name: string }> {
    this.#engine ??= this.#client.kvAt(this.path).then((at) => {
      if (at.name === '')
        throw new UsageError(`${this.#names.store(this.spec)} names a mount, not a secret`, {
          hint: `give ${this.#names.store('kv:<mount>/<path>')}, e.g. ${this.#names.store('kv:secret/gantry/auth/default')}`,
          code: 'AUTH_STORE_SPEC',
        });
      return at;
    });
    this.#engine.catch(() => {
      this.#engine = undefined;
    });
    return this.#engine;
  }

  async #current(key: ProfileKey | undefined): Promise<{ login: StoredLogin | undefined; present: boolean }> {
    const { kv, name } = await this.#at();
    const result = await kv.read(name);
    if (result.state !== 'current' || !result.data) return { login: undefined, present: false };
    return { login: recordToLogin(result.data, `the kv secret ${this.path}`, key), present: true };
  }

  async read(key: ProfileKey): Promise<StoredLogin | undefined> {
    return (await this.#current(key)).login;
  }

  /** The login at this path, whoever's it is: one kv path is shared by every machine and folder that uses it. */
  async peek(): Promise<StoredLogin | undefined> {
    return (await this.#current(undefined)).login;
  }

  /**
   * That the engine answers this token at this path, before anyone is asked to approve a login that would then have
   * nowhere to go: the mount found, the secret readable. A broken record there is no obstacle: a write replaces it.
   */
  async check(): Promise<void> {
    await this.#current(undefined).catch((error: unknown) => {
      if ((error as { code?: string }).code !== 'AUTH_STORE_CORRUPT') throw error;
    });
  }

  async write(login: StoredLogin): Promise<void> {
    const checked = checkLoginToWrite(login);
    const { kv, name } = await this.#at();
    const existing = await kv.read(name);
    const present = existing.state === 'current' && existing.data !== null;
    if (present) refuseOtherKey(() => recordToLogin(existing.data, `the kv secret ${this.path}`, checked));
    if (!present && kv.version && kv.writeMetadata && (await kv.version()) === 2) {
      // One version only: an old refresh token must not stay readable in the secret's history. A policy that allows
      // the data but not the metadata keeps the service's default (said at debug level).
      await kv.writeMetadata(name, { maxVersions: 1 }).catch((error: unknown) => {
        getLogger().debug(
          `auth: could not limit ${this.path} to one version (${redact(error instanceof Error ? error.message : String(error))}); older versions stay in its history`,
        );
      });
    }
    await kv.write(name, loginToRecord(checked));
  }

  async delete(key: ProfileKey): Promise<boolean> {
    const { kv, name } = await this.#at();
    const { present } = await this.#current(key).catch((error: unknown) => {
      if ((error as { code?: string }).code === 'AUTH_STORE_CORRUPT') return { present: true };
      throw error;
    });
    if (!present) return false;
    if (kv.version && kv.deleteMetadata && (await kv.version()) === 2) {
      try {
        await kv.deleteMetadata(name);
        return true;
      } catch (error) {
        getLogger().debug(
          `auth: deleting every version of ${this.path} failed (${redact(error instanceof Error ? error.message : String(error))}); deleting the latest version of ${keyLabel(key)} only`,
        );
      }
    }
    await kv.delete(name);
    return true;
  }

  toJSON(): Record<string, unknown> {
    return { kind: this.kind, location: this.location };
  }
}
