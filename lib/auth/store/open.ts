/**
 * Choosing where a login lives (`keyring`, `kv:<mount>/<path>`, `file`, or automatically): the OS keyring when it
 * can be used, else the kv engine when the environment configures one, else a plain-text file only when allowed.
 * A plain-text file is never chosen silently: explicitly or as the last resort, it comes with a warning to print.
 */
import { expectOptions } from '../../arguments.js';
import { UsageError } from '../../errors.js';
import { terminalText } from '../../terminal-text.js';
import { FileTokenStore } from './file-store.js';
import { authDir, checkProfileName, defaultKvPath, resolveConfigDir, selectedProfile } from './key.js';
import { KeyringTokenStore, probeKeyring } from './keyring-store.js';
import { KvTokenStore, checkKvPath } from './kv-store.js';
import type { KvLike, OpenTokenStoreOptions, OpenedTokenStore } from './types.js';
import { storeOptionNames, type StoreNames } from './wording.js';

export type StoreSpec = { kind: 'keyring' } | { kind: 'file' } | { kind: 'kv'; path: string | undefined };

/** `keyring`, `file`, `kv` (the default path) or `kv:<mount>/<path>`. */
export function parseStoreSpec(spec: string, names: StoreNames = storeOptionNames): StoreSpec {
  const text = typeof spec === 'string' ? spec.trim() : '';
  if (text === 'keyring' || text === 'file') return { kind: text };
  if (text === 'kv') return { kind: 'kv', path: undefined };
  if (text.startsWith('kv:')) return { kind: 'kv', path: checkKvPath(text.slice(3), names) };
  throw new UsageError(`${names.store(terminalText(text) || '(empty)')} is no token store`, {
    hint: `give ${names.store('keyring')}, ${names.store('kv:<mount>/<path>')} (e.g. ${names.store('kv:secret/gantry/auth/default')}, with SECRETS_ADDR and SECRETS_TOKEN set) or ${names.store('file')} (plain text)`,
    code: 'AUTH_STORE_SPEC',
  });
}

function plainTextWarning(store: FileTokenStore, why: string, names: StoreNames): string {
  return `the tokens are kept in plain text in ${store.folder} (mode 0600: anyone who can read your files, or a backup of them, can use them) ${why}; prefer the OS keyring or the kv engine (SECRETS_ADDR and SECRETS_TOKEN, or ${names.store('kv:<mount>/<path>')})`;
}

/**
 * The kv client: the caller's, else the one the environment configures (SECRETS_ADDR, SECRETS_TOKEN), as the command
 * reads it. With none, why not.
 */
async function kvClient(options: OpenTokenStoreOptions): Promise<{ client: KvLike | undefined; missing: string }> {
  const { environmentKv, environmentKvMissing } = await import('../../secrets/environment-kv.js');
  const env = options.env ?? process.env;
  const client = options.kv ? await options.kv() : await environmentKv(env).open();
  return { client, missing: client ? '' : (environmentKvMissing(env) ?? 'the kv option gave no client') };
}

/** A kv store, checked against the engine before anyone is asked to approve a login that would have nowhere to go. */
async function openKv(client: KvLike, path: string, names: StoreNames): Promise<KvTokenStore> {
  const store = new KvTokenStore(client, path, names);
  await store.check();
  return store;
}

/**
 * Opens the token store `spec` names (`keyring`, `kv:<mount>/<path>`, `kv`, `file`, or a profile index entry's
 * `store`), or chooses one (spec undefined): the OS keyring, else the kv engine SECRETS_ADDR and SECRETS_TOKEN name
 * (checked that it answers), else a plain-text file when `insecureStorage` allows it. Explicit `keyring` fails when the
 * keyring cannot be reached (no fallback the user did not ask for); explicit `file` is allowed, with a warning. Open
 * it before a login starts: a person never approves a login that then has nowhere to go.
 */
export async function openTokenStore(storeSpec: string | { spec: string } | undefined, options: OpenTokenStoreOptions = {}): Promise<OpenedTokenStore> {
  expectOptions('openTokenStore', options);
  const names = options.names ?? storeOptionNames;
  const spec = typeof storeSpec === 'object' && storeSpec !== null ? storeSpec.spec : storeSpec;
  const profile = options.profile !== undefined ? checkProfileName(options.profile) : selectedProfile({ env: options.env ?? process.env });
  const configDir = resolveConfigDir(options.configDir, options.env);
  const timeout = options.keyringProbeTimeoutMs !== undefined ? { timeoutMs: options.keyringProbeTimeoutMs } : {};

  if (spec !== undefined) {
    const parsed = parseStoreSpec(spec, names);
    if (parsed.kind === 'file') {
      const store = new FileTokenStore(configDir);
      return { store, warning: plainTextWarning(store, `because ${names.store('file')} asks for it`, names) };
    }
    if (parsed.kind === 'kv') {
      const { client, missing } = await kvClient(options);
      const path = parsed.path ?? defaultKvPath(profile);
      if (!client) {
        throw new UsageError(`${names.store(`kv:${path}`)} needs the kv engine, and none is configured (${missing})`, {
          hint: 'set SECRETS_ADDR to your secrets service and SECRETS_TOKEN to a token that may read and write that path',
          code: 'AUTH_KV_NOT_CONFIGURED',
        });
      }
      return { store: await openKv(client, path, names) };
    }
    const probe = await probeKeyring({ ...timeout, requireUnlocked: false });
    if (!probe.ok) {
      throw new UsageError(`${names.store('keyring')}: the OS keyring is not reachable: ${probe.reason}`, {
        hint: `start or unlock a keyring (e.g. gnome-keyring-daemon --unlock inside a D-Bus session), or choose the kv engine (${names.store('kv:<mount>/<path>')}, with SECRETS_ADDR and SECRETS_TOKEN set) or ${names.store('file')}`,
        code: 'AUTH_KEYRING_UNREACHABLE',
      });
    }
    return { store: new KeyringTokenStore() };
  }

  const probe = await probeKeyring({ ...timeout, requireUnlocked: true });
  if (probe.ok) return { store: new KeyringTokenStore() };
  const fallbackReason = `the OS keyring is not reachable: ${probe.reason}`;
  const { client, missing } = await kvClient(options);
  if (client) return { store: await openKv(client, defaultKvPath(profile), names), fallbackReason };
  if (options.insecureStorage) {
    const store = new FileTokenStore(configDir);
    return {
      store,
      fallbackReason,
      warning: plainTextWarning(store, `because the keyring is not reachable, no kv engine is configured, and ${names.insecureStorage} allows it`, names),
    };
  }
  throw new UsageError(`no safe place for the tokens: ${fallbackReason}, and no kv engine is configured (${missing})`, {
    hint:
      `choose one: set SECRETS_ADDR and SECRETS_TOKEN, to keep them in Gantry's kv engine at ${defaultKvPath(profile)} (or ${names.store('kv:<mount>/<path>')}); ` +
      `${names.store('file')} or ${names.insecureStorage}, to keep them in plain text under ${authDir(configDir)} (mode 0600); ` +
      'or start a keyring (log in to a desktop session, or run gnome-keyring-daemon --unlock inside a D-Bus session) and run again',
    code: 'AUTH_NO_SAFE_STORE',
  });
}
