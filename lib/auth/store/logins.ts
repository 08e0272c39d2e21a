/**
 * A login and the profile index together: saving records where it went, finding opens the store the index names,
 * deleting forgets it, and a security event (sessions revoked, token revoked, account disabled) drops every login of
 * the account it names.
 */
import { expectFunction, expectObject } from '../../arguments.js';
import { UsageError } from '../../errors.js';
import { getLogger } from '../../log.js';
import { redact } from '../../redact.js';
import { keyLabel, profileKey } from './key.js';
import { openTokenStore } from './open.js';
import { findProfile, forgetProfile, listProfiles, recordProfile, type ProfileIndexOptions } from './profiles.js';
import type { AccountRef, OpenTokenStoreOptions, ProfileIndexEntry, ProfileKey, StoredLogin, TokenStore } from './types.js';

/** Writes the login to `store` and records in the index where it is. */
export async function saveLogin(store: TokenStore, login: StoredLogin, options: ProfileIndexOptions = {}): Promise<ProfileIndexEntry> {
  expectObject('saveLogin', 'store', store, 'a TokenStore (openTokenStore)');
  expectFunction('saveLogin', 'store.write', store.write, 'a TokenStore (openTokenStore)');
  expectObject('saveLogin', 'login', login, 'a StoredLogin: { authUrl, clientId, profile, tokens }');
  await store.write(login);
  return recordProfile(login, store, options);
}

/**
 * The store the index names for this login, opened (no probe of other stores), with its entry; undefined when the
 * index does not know the login. A kv store needs `options.kv`; when it gives no client the error names the address.
 */
export async function openStoreFor(key: ProfileKey, options: OpenTokenStoreOptions = {}): Promise<{ store: TokenStore; entry: ProfileIndexEntry } | undefined> {
  const entry = await findProfile(key, options);
  if (!entry) return undefined;
  return { store: await openIndexed(entry, options), entry };
}

/** The store an index entry names; a kv one without a configured kv engine says which address to set. */
async function openIndexed(entry: ProfileIndexEntry, options: OpenTokenStoreOptions): Promise<TokenStore> {
  try {
    return (await openTokenStore(entry.store.spec, { ...options, profile: entry.profile })).store;
  } catch (error) {
    if ((error as { code?: string }).code === 'AUTH_KV_NOT_CONFIGURED' && entry.store.address) {
      throw new UsageError(
        `the login of ${keyLabel(entry)} is in the kv engine ${entry.store.spec.slice(3)} at ${redact(entry.store.address)}, and no kv engine is configured`,
        {
          hint: `set SECRETS_ADDR=${redact(entry.store.address)} and SECRETS_TOKEN to reach it`,
          code: 'AUTH_KV_NOT_CONFIGURED',
        },
      );
    }
    throw error;
  }
}

/** Deletes the login from the store the index names and forgets it. `deleted` is false when no store held it. */
export async function deleteLogin(key: ProfileKey, options: OpenTokenStoreOptions = {}): Promise<{ deleted: boolean; entry: ProfileIndexEntry | undefined }> {
  const opened = await openStoreFor(key, options);
  if (!opened) return { deleted: false, entry: undefined };
  const deleted = await opened.store.delete(key);
  await forgetProfile(key, options);
  return { deleted, entry: opened.entry };
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** Does this index entry belong to the account? Issuer and subject both, or the email address (case ignored). */
export function belongsTo(entry: ProfileIndexEntry, account: AccountRef): boolean {
  const mine = entry.account;
  if (!mine) return false;
  if (account.sub !== undefined && mine.sub === account.sub) {
    const issuer = mine.issuer ?? entry.authUrl;
    if (account.issuer === undefined || trimSlash(issuer) === trimSlash(account.issuer)) return true;
  }
  return account.email !== undefined && mine.email !== undefined && mine.email.toLowerCase() === account.email.toLowerCase();
}

export interface DroppedLogins {
  /** Logins deleted from their store and the index. */
  dropped: ProfileIndexEntry[];
  /** Logins that could not be deleted (the store unreachable …): still in the index, with the reason. */
  failed: Array<{ entry: ProfileIndexEntry; reason: string }>;
}

/**
 * Drops every stored login of an account, across the index: for a security event saying its sessions or tokens were
 * revoked or the account disabled (DEV-RISC-*). `account` names it by `issuer` + `sub`, or by `email`; `authUrl`
 * limits the drop to one authorization server. A store that fails is reported in `failed`, the others still go.
 */
export async function dropAccountLogins(account: AccountRef, options: OpenTokenStoreOptions & { authUrl?: string } = {}): Promise<DroppedLogins> {
  if (account === null || typeof account !== 'object' || (account.sub === undefined && account.email === undefined)) {
    throw new UsageError('dropAccountLogins: name the account by issuer and sub, or by email', { code: 'INVALID_ARGUMENT' });
  }
  if (account.sub !== undefined && account.issuer === undefined) {
    throw new UsageError('dropAccountLogins: a subject (sub) is only unique with its issuer; give both', { code: 'INVALID_ARGUMENT' });
  }
  const onlyAt = options.authUrl !== undefined ? profileKey({ authUrl: options.authUrl, clientId: 'any' }).authUrl : undefined;
  const result: DroppedLogins = { dropped: [], failed: [] };
  for (const entry of await listProfiles(options)) {
    if (onlyAt !== undefined && entry.authUrl !== onlyAt) continue;
    if (!belongsTo(entry, account)) continue;
    try {
      const store = await openIndexed(entry, options);
      await store.delete(entry);
      await forgetProfile(entry, options);
      result.dropped.push(entry);
      getLogger().info(`auth: dropped the stored login of ${keyLabel(entry)} from ${entry.location}`);
    } catch (error) {
      result.failed.push({ entry, reason: redact(error instanceof Error ? error.message : String(error)) });
    }
  }
  return result;
}
