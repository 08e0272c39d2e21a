/**
 * Logins in the OS keyring through @napi-rs/keyring: the Secret Service on Linux (pinned to it, so a missing one is
 * reported rather than replaced by the kernel keyring, which forgets everything at logout), the Keychain on macOS,
 * the Credential Manager on Windows. Service `gantry`, account `<profile>@<authUrl> (client <id>)`, the value the
 * login's JSON record.
 */
import { UsageError } from '../../errors.js';
import { parseJsonQuietly } from '../../json-syntax.js';
import { redact } from '../../redact.js';
import { probeSecretService } from './dbus.js';
import { keyLabel, keyringAccount, keyringService } from './key.js';
import { checkLoginToWrite, loginToRecord, recordToLogin, refuseOtherKey } from './login.js';
import type { ProfileKey, StoredLogin, TokenStore } from './types.js';
import { storeFlagNames, storeOptionNames, type StoreNames } from './wording.js';

/** What to do when the keyring fails, in each face's words. */
const otherStore = (names: StoreNames) =>
  `unlock the keyring and run again, or keep the login in the kv engine (SECRETS_ADDR and SECRETS_TOKEN set, ${names.store('kv:<mount>/<path>')}) or in a file (${names.store('file')})`;
const otherStores = { hint: otherStore(storeOptionNames), cliHint: otherStore(storeFlagNames) };

type Binding = typeof import('@napi-rs/keyring');
type Entry = InstanceType<Binding['AsyncEntry']>;

const usesSecretService = ['linux', 'freebsd', 'openbsd', 'netbsd'].includes(process.platform);

/** The keyring's name here, in words. */
export function keyringBackend(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return 'macOS Keychain';
  if (platform === 'win32') return 'Windows Credential Manager';
  return 'Secret Service';
}

let binding: Promise<Binding> | undefined;
function loadBinding(): Promise<Binding> {
  binding ??= import('@napi-rs/keyring');
  return binding;
}

export type KeyringProbe = { ok: true; detail: string } | { ok: false; reason: string };

/**
 * Can the keyring be used now? On Linux and the BSDs, the Secret Service is asked over D-Bus within `timeoutMs`
 * (see dbus.ts); `requireUnlocked` (auto mode) also wants its default collection unlocked, since writing to a locked
 * one asks for a password in a dialog that a headless session cannot show. Then the binding must load. Never throws.
 */
export async function probeKeyring(options: { timeoutMs?: number; requireUnlocked?: boolean } = {}): Promise<KeyringProbe> {
  let detail = keyringBackend();
  if (usesSecretService) {
    const probe = await probeSecretService({ env: process.env, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) });
    if (!probe.ok) return { ok: false, reason: probe.reason };
    if (options.requireUnlocked && probe.locked !== false) {
      return {
        ok: false,
        reason:
          probe.locked === true
            ? "the Secret Service's default keyring is locked (unlock it, e.g. by logging in to the desktop or with gnome-keyring-daemon --unlock, or choose --store keyring to be asked for its password)"
            : 'the Secret Service has no default keyring yet (create one in your keyring application, or choose --store keyring to create it, which may ask for a password)',
      };
    }
    detail = `${detail}: ${probe.detail}`;
  }
  try {
    await loadBinding();
  } catch (error) {
    return {
      ok: false,
      reason: `the keyring binding (@napi-rs/keyring) does not load on ${process.platform}-${process.arch}: ${redact(error instanceof Error ? error.message : String(error))}`,
    };
  }
  return { ok: true, detail };
}

export class KeyringTokenStore implements TokenStore {
  readonly kind = 'keyring' as const;
  readonly spec = 'keyring';
  readonly location = `OS keyring (${keyringBackend()}, service ${keyringService})`;

  describe(key: ProfileKey): string {
    return `OS keyring (${keyringBackend()}), service ${keyringService}, account "${keyringAccount(key)}"`;
  }

  async #entry(key: ProfileKey): Promise<Entry> {
    const { AsyncEntry } = await loadBinding();
    return new AsyncEntry(
      keyringService,
      keyringAccount(key),
      usesSecretService && process.platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined,
    );
  }

  async #do<T>(what: string, key: ProfileKey, action: (entry: Entry) => Promise<T>): Promise<T> {
    try {
      return await action(await this.#entry(key));
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(
        `the OS keyring (${keyringBackend()}) could not ${what} the login of ${keyLabel(key)}: ${redact(error instanceof Error ? error.message : String(error))}`,
        {
          ...otherStores,
          code: 'AUTH_KEYRING',
        },
      );
    }
  }

  async read(key: ProfileKey): Promise<StoredLogin | undefined> {
    const text = await this.#do('read', key, (entry) => entry.getPassword());
    if (text === null || text === undefined) return undefined;
    return parseRecord(text, this.describe(key), key);
  }

  async write(login: StoredLogin): Promise<void> {
    const checked = checkLoginToWrite(login);
    await this.#do('write', checked, async (entry) => {
      const existing = await entry.getPassword();
      if (existing) refuseOtherKey(() => parseRecord(existing, this.describe(checked), checked));
      await entry.setPassword(JSON.stringify(loginToRecord(checked)));
    });
  }

  async delete(key: ProfileKey): Promise<boolean> {
    return this.#do('delete', key, (entry) => entry.deleteCredential());
  }

  toJSON(): Record<string, unknown> {
    return { kind: this.kind, location: this.location };
  }
}

function parseRecord(text: string, where: string, key: ProfileKey): StoredLogin {
  const parsed = parseJsonQuietly(text);
  if (!parsed.ok)
    throw new UsageError(`${where} holds no JSON (${parsed.reason})`, {
      hint: 'delete the entry in your keyring application and run gantry auth login again',
      code: 'AUTH_STORE_CORRUPT',
    });
  return recordToLogin(parsed.value, where, key);
}
