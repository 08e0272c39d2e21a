/**
 * Choosing where a login lives (`--store keyring|kv:<mount>/<path>|file`, or automatically): the OS keyring when it
 * can be used, else the kv engine when one is configured, else a plain-text file only with `--insecure-storage`.
 * A plain-text file is never chosen silently: explicitly or as the last resort, it comes with a warning to print.
 */
import { expectOptions } from '../../arguments.js';
import { UsageError } from '../../errors.js';
import { FileTokenStore } from './file-store.js';
import { checkProfileName, defaultKvPath, defaultProfile, resolveConfigDir, authDir } from './key.js';
import { KeyringTokenStore, probeKeyring } from './keyring-store.js';
import { KvTokenStore, checkKvPath } from './kv-store.js';
import type { KvLike, OpenTokenStoreOptions, OpenedTokenStore } from './types.js';

export type StoreSpec = { kind: 'keyring' } | { kind: 'file' } | { kind: 'kv'; path: string | undefined };

/** `keyring`, `file`, `kv` (the default path) or `kv:<mount>/<path>`. */
export function parseStoreSpec(spec: string): StoreSpec {
  const text = typeof spec === 'string' ? spec.trim() : '';
  if (text === 'keyring' || text === 'file') return { kind: text };
  if (text === 'kv') return { kind: 'kv', path: undefined };
  if (text.startsWith('kv:')) return { kind: 'kv', path: checkKvPath(text.slice(3)) };
  throw new UsageError(`--store ${JSON.stringify(text).slice(1, -1) || '(empty)'} is no token store`, {
    hint: 'give --store keyring, --store kv:<mount>/<path> (e.g. kv:secret/gantry/auth/default, with SECRETS_ADDR set) or --store file (plain text)', code: 'AUTH_STORE_SPEC',
  });
}

function plainTextWarning(store: FileTokenStore, why: string): string {
  return `the tokens are kept in plain text in ${store.folder} (mode 0600: anyone who can read your files, or a backup of them, can use them) ${why}; prefer the OS keyring or --store kv:<mount>/<path>`;
}

async function kvClient(options: OpenTokenStoreOptions): Promise<KvLike | undefined> {
  return options.kv ? await options.kv() : undefined;
}

/**
 * Opens the token store `spec` names (`keyring`, `kv:<mount>/<path>`, `kv`, `file`, or a profile index entry's
 * `store`), or chooses one (spec undefined). Explicit `keyring` fails when the keyring cannot be reached (no fallback
 * the user did not ask for); explicit `file` is allowed, with a warning.
 */
export async function openTokenStore(storeSpec: string | { spec: string } | undefined, options: OpenTokenStoreOptions = {}): Promise<OpenedTokenStore> {
  expectOptions('openTokenStore', options);
  const spec = typeof storeSpec === 'object' && storeSpec !== null ? storeSpec.spec : storeSpec;
  const profile = checkProfileName(options.profile ?? defaultProfile);
  const configDir = resolveConfigDir(options.configDir, options.env);
  const timeout = options.keyringProbeTimeoutMs !== undefined ? { timeoutMs: options.keyringProbeTimeoutMs } : {};

  if (spec !== undefined) {
    const parsed = parseStoreSpec(spec);
    if (parsed.kind === 'file') {
      const store = new FileTokenStore(configDir);
      return { store, warning: plainTextWarning(store, 'because --store file asks for it') };
    }
    if (parsed.kind === 'kv') {
      const client = await kvClient(options);
      const path = parsed.path ?? defaultKvPath(profile);
      if (!client) {
        throw new UsageError(`--store kv:${path} needs the kv engine, and none is configured`, {
          hint: 'set SECRETS_ADDR (and SECRETS_TOKEN, or log in with gantry secrets login) to your secrets service', code: 'AUTH_KV_NOT_CONFIGURED',
        });
      }
      return { store: new KvTokenStore(client, path) };
    }
    const probe = await probeKeyring({ ...timeout, requireUnlocked: false });
    if (!probe.ok) {
      throw new UsageError(`--store keyring: the OS keyring is not reachable: ${probe.reason}`, {
        hint: 'start or unlock a keyring (e.g. gnome-keyring-daemon --unlock inside a D-Bus session), or choose --store kv:<mount>/<path> (with SECRETS_ADDR) or --store file', code: 'AUTH_KEYRING_UNREACHABLE',
      });
    }
    return { store: new KeyringTokenStore() };
  }

  const probe = await probeKeyring({ ...timeout, requireUnlocked: true });
  if (probe.ok) return { store: new KeyringTokenStore() };
  const fallbackReason = `the OS keyring is not reachable: ${probe.reason}`;
  const client = await kvClient(options);
  if (client) return { store: new KvTokenStore(client, defaultKvPath(profile)), fallbackReason };
  if (options.insecureStorage) {
    const store = new FileTokenStore(configDir);
    return { store, fallbackReason, warning: plainTextWarning(store, 'because the keyring is not reachable, no kv engine is configured, and --insecure-storage allows it') };
  }
  throw new UsageError(`no safe place for the tokens: ${fallbackReason}, and no kv engine is configured (SECRETS_ADDR is not set)`, {
    hint: `choose one: --store kv:${defaultKvPath(profile)} with SECRETS_ADDR (and SECRETS_TOKEN) set, to keep them in Gantry's kv engine; `
      + `--store file or --insecure-storage, to keep them in plain text under ${authDir(configDir)} (mode 0600); `
      + 'or start a keyring (log in to a desktop session, or run gnome-keyring-daemon --unlock inside a D-Bus session) and run again',
    code: 'AUTH_NO_SAFE_STORE',
  });
}
