/**
 * The profile index, `<configDir>/auth/profiles.json` (mode 0600, written to a temporary name and renamed): for each
 * login (server, client id, profile) which store holds it and for whom, so `gantry auth status`, `token` and `logout`
 * find it without `--store`, and status always says where. It holds no token.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../errors.js';
import { parseJsonQuietly } from '../../json-syntax.js';
import { writePrivateFile } from './files.js';
import { authDir, profileKey, resolveConfigDir, sameKey } from './key.js';
import { KvTokenStore } from './kv-store.js';
import type { AccountInfo, ProfileIndexEntry, ProfileKey, StoreKind, TokenStore } from './types.js';

const indexFormat = 'gantry-auth-profiles/1';

export interface ProfileIndexOptions {
  configDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** Where the index is. */
export function profileIndexPath(options: ProfileIndexOptions = {}): string {
  return join(authDir(resolveConfigDir(options.configDir, options.env)), 'profiles.json');
}

const kinds: readonly StoreKind[] = ['keyring', 'kv', 'file'];
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const optionalString = (value: unknown) => value === undefined || typeof value === 'string';

function checkEntry(value: unknown): ProfileIndexEntry | undefined {
  if (!isObject(value) || !isObject(value.store)) return undefined;
  const { store, account } = value;
  if (typeof value.authUrl !== 'string' || typeof value.clientId !== 'string' || typeof value.profile !== 'string') return undefined;
  if (!kinds.includes(store.kind as StoreKind) || typeof store.spec !== 'string' || !optionalString(store.address)) return undefined;
  if (typeof value.location !== 'string' || typeof value.writtenAt !== 'string') return undefined;
  if (account !== undefined && (!isObject(account) || !optionalString(account.issuer) || !optionalString(account.sub) || !optionalString(account.email)))
    return undefined;
  return {
    authUrl: value.authUrl,
    clientId: value.clientId,
    profile: value.profile,
    store: { kind: store.kind as StoreKind, spec: store.spec, ...(typeof store.address === 'string' ? { address: store.address } : {}) },
    location: value.location,
    ...(account ? { account: pickAccount(account as AccountInfo) } : {}),
    writtenAt: value.writtenAt,
  };
}

function pickAccount(account: AccountInfo): AccountInfo {
  return {
    ...(account.issuer !== undefined ? { issuer: account.issuer } : {}),
    ...(account.sub !== undefined ? { sub: account.sub } : {}),
    ...(account.email !== undefined ? { email: account.email } : {}),
  };
}

/** Every login the index knows, in the order written. An index that does not parse is a usage error naming it. */
export async function listProfiles(options: ProfileIndexOptions = {}): Promise<ProfileIndexEntry[]> {
  const file = profileIndexPath(options);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const broken = (why: string) =>
    new UsageError(`the profile index ${file} ${why}`, {
      hint: 'remove it: the tokens stay where they are, and the next gantry auth login records its profile again',
      code: 'AUTH_INDEX_CORRUPT',
    });
  const parsed = parseJsonQuietly(text);
  if (!parsed.ok) throw broken(`is not JSON (${parsed.reason})`);
  if (!isObject(parsed.value) || parsed.value.format !== indexFormat || !Array.isArray(parsed.value.profiles)) throw broken(`is not a ${indexFormat} document`);
  const entries: ProfileIndexEntry[] = [];
  parsed.value.profiles.forEach((value, index) => {
    const entry = checkEntry(value);
    if (!entry) throw broken(`has a broken entry (profiles[${index}])`);
    entries.push(entry);
  });
  return entries;
}

async function save(entries: ProfileIndexEntry[], options: ProfileIndexOptions): Promise<void> {
  await writePrivateFile(profileIndexPath(options), `${JSON.stringify({ format: indexFormat, profiles: entries }, null, 2)}\n`);
}

/** The index entry of this login, or undefined. */
export async function findProfile(key: ProfileKey, options: ProfileIndexOptions = {}): Promise<ProfileIndexEntry | undefined> {
  return (await listProfiles(options)).find((entry) => sameKey(entry, key));
}

/**
 * Records (or replaces) that `store` holds this login, with its account (never a token): call it after
 * `store.write(login)` (`saveLogin` does both). `writtenAt` defaults to now.
 */
export async function recordProfile(
  login: ProfileKey & { account?: AccountInfo | undefined },
  store: TokenStore,
  options: ProfileIndexOptions & { writtenAt?: string } = {},
): Promise<ProfileIndexEntry> {
  const key = profileKey(login);
  const address = store instanceof KvTokenStore ? store.address : undefined;
  const checked = checkEntry({
    ...key,
    store: { kind: store.kind, spec: store.spec, ...(address !== undefined ? { address } : {}) },
    location: store.describe(key),
    ...(login.account ? { account: pickAccount(login.account) } : {}),
    writtenAt: options.writtenAt ?? new Date().toISOString(),
  });
  if (!checked) throw new UsageError('recordProfile: the store has no kind or spec, or the account fields are not strings', { code: 'INVALID_ARGUMENT' });
  const entries = (await listProfiles(options)).filter((other) => !sameKey(other, checked));
  entries.push(checked);
  await save(entries, options);
  return checked;
}

/** Removes this login from the index; false when it was not there. */
export async function forgetProfile(key: ProfileKey, options: ProfileIndexOptions = {}): Promise<boolean> {
  const entries = await listProfiles(options);
  const kept = entries.filter((entry) => !sameKey(entry, key));
  if (kept.length === entries.length) return false;
  await save(kept, options);
  return true;
}
