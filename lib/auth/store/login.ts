/**
 * A stored login as data: checked when it is written and when it is read back (a store may hold anything), turned
 * into the one record format every store keeps, and sealed so that logging it shows no token.
 */
import { inspect } from 'node:util';
import { UsageError, bothFaces } from '../../errors.js';
import { storeFlagNames, storeOptionNames } from './wording.js';
import { registerSecret } from '../../redact.js';
import { keyLabel, profileKey, sameKey } from './key.js';
import type { AccountInfo, ProfileKey, StoredLogin, TokenSet } from './types.js';

/** The record's format marker: what a store holds is recognisably a Gantry login, of this version. */
export const recordFormat = 'gantry-auth-login/1';
const hidden = '[hidden]';

/** Every token of a login goes to the redactor, so no log line or error message can show it. */
export function registerTokens(tokens: Partial<TokenSet>): void {
  registerSecret(tokens.accessToken);
  registerSecret(tokens.refreshToken);
  registerSecret(tokens.idToken);
}

/** The login as logs may show it: every token replaced by `[hidden]`. */
export function loginForDisplay(login: StoredLogin): Record<string, unknown> {
  const { tokens } = login;
  return {
    authUrl: login.authUrl,
    clientId: login.clientId,
    profile: login.profile,
    tokens: tokensForDisplay(tokens),
    ...(login.account ? { account: { ...login.account } } : {}),
  };
}

function tokensForDisplay(tokens: TokenSet): Record<string, unknown> {
  return {
    accessToken: hidden,
    tokenType: tokens.tokenType,
    expiresAt: tokens.expiresAt,
    scope: tokens.scope,
    ...(tokens.refreshToken !== undefined ? { refreshToken: hidden } : {}),
    ...(tokens.refreshTokenExpiresAt !== undefined ? { refreshTokenExpiresAt: tokens.refreshTokenExpiresAt } : {}),
    ...(tokens.idToken !== undefined ? { idToken: hidden } : {}),
    obtainedAt: tokens.obtainedAt,
  };
}

function seal<T extends object>(target: T, view: () => Record<string, unknown>, name: string): T {
  Object.defineProperty(target, 'toJSON', { value: view, enumerable: false });
  Object.defineProperty(target, inspect.custom, { value: () => `${name} ${inspect(view(), { depth: 4 })}`, enumerable: false });
  return target;
}

/** The same tokens, sealed in place: `JSON.stringify` and `util.inspect` show `[hidden]` for each token. */
export function sealTokens(tokens: TokenSet): TokenSet {
  registerTokens(tokens);
  return seal(tokens, () => tokensForDisplay(tokens), 'TokenSet');
}

/**
 * A copy of the login whose `JSON.stringify` and `util.inspect` (console.log, a logger's `%o`) show no token. Its
 * fields are the plain ones (`login.tokens.accessToken` is the token); a spread copy (`{ ...login }`) is a plain
 * object again. The stores return sealed logins and register every token with the redactor.
 */
export function sealLogin(login: StoredLogin): StoredLogin {
  registerTokens(login.tokens);
  const tokens = seal({ ...login.tokens }, () => tokensForDisplay(login.tokens), 'TokenSet');
  const copy: StoredLogin = {
    authUrl: login.authUrl,
    clientId: login.clientId,
    profile: login.profile,
    tokens,
    ...(login.account ? { account: { ...login.account } } : {}),
  };
  return seal(copy, () => loginForDisplay(copy), 'StoredLogin');
}

/** The record a store keeps: the login's fields under a format marker (JSON in the keyring and files, kv data in kv). */
export function loginToRecord(login: StoredLogin): Record<string, unknown> {
  const t = login.tokens;
  const tokens: Record<string, unknown> = {
    accessToken: t.accessToken,
    tokenType: t.tokenType,
    expiresAt: t.expiresAt,
    scope: t.scope,
    obtainedAt: t.obtainedAt,
  };
  if (t.refreshToken !== undefined) tokens.refreshToken = t.refreshToken;
  if (t.refreshTokenExpiresAt !== undefined) tokens.refreshTokenExpiresAt = t.refreshTokenExpiresAt;
  if (t.idToken !== undefined) tokens.idToken = t.idToken;
  return {
    format: recordFormat,
    authUrl: login.authUrl,
    clientId: login.clientId,
    profile: login.profile,
    tokens,
    ...(login.account ? { account: { ...login.account } } : {}),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/**
 * A login from what a store held (`where` names the place in messages). A broken record is a usage error that names
 * the field, never its value; a record of another server, client or profile than `expected` is refused.
 */
export function recordToLogin(record: unknown, where: string, expected?: ProfileKey): StoredLogin {
  const broken = (what: string) =>
    new UsageError(`${where} holds no usable Gantry login: ${what}`, {
      hint: 'delete it (gantry auth logout, or by hand) and run gantry auth login again',
      code: 'AUTH_STORE_CORRUPT',
    });
  if (!isObject(record)) throw broken('it is not a JSON object');
  if (record.format !== recordFormat)
    throw broken(
      typeof record.format === 'string' ? `its format is ${JSON.stringify(record.format.slice(0, 40))}, not ${recordFormat}` : 'it has no format marker',
    );
  const tokens = record.tokens;
  if (!isObject(tokens)) throw broken('it has no tokens');
  for (const field of ['authUrl', 'clientId', 'profile'] as const)
    if (typeof record[field] !== 'string' || record[field] === '') throw broken(`${field} is missing`);
  if (typeof tokens.accessToken !== 'string' || tokens.accessToken === '') throw broken('tokens.accessToken is missing');
  if (tokens.tokenType !== 'Bearer') throw broken('tokens.tokenType is not Bearer');
  if (!isTime(tokens.expiresAt)) throw broken('tokens.expiresAt is no time');
  if (typeof tokens.scope !== 'string') throw broken('tokens.scope is missing');
  if (!isTime(tokens.obtainedAt)) throw broken('tokens.obtainedAt is no time');
  for (const field of ['refreshToken', 'idToken'] as const)
    if (tokens[field] !== undefined && (typeof tokens[field] !== 'string' || tokens[field] === '')) throw broken(`tokens.${field} is no string`);
  if (tokens.refreshTokenExpiresAt !== undefined && !isTime(tokens.refreshTokenExpiresAt)) throw broken('tokens.refreshTokenExpiresAt is no time');
  let account: AccountInfo | undefined;
  if (record.account !== undefined) {
    if (!isObject(record.account)) throw broken('account is not an object');
    account = {};
    for (const field of ['issuer', 'sub', 'email'] as const) {
      const value = record.account[field];
      if (value === undefined) continue;
      if (typeof value !== 'string') throw broken(`account.${field} is no string`);
      account[field] = value;
    }
  }
  const login: StoredLogin = {
    authUrl: record.authUrl as string,
    clientId: record.clientId as string,
    profile: record.profile as string,
    tokens: {
      accessToken: tokens.accessToken,
      tokenType: 'Bearer',
      expiresAt: tokens.expiresAt,
      scope: tokens.scope,
      obtainedAt: tokens.obtainedAt,
      ...(tokens.refreshToken !== undefined ? { refreshToken: tokens.refreshToken as string } : {}),
      ...(tokens.refreshTokenExpiresAt !== undefined ? { refreshTokenExpiresAt: tokens.refreshTokenExpiresAt as number } : {}),
      ...(tokens.idToken !== undefined ? { idToken: tokens.idToken as string } : {}),
    },
    ...(account ? { account } : {}),
  };
  registerTokens(login.tokens);
  if (expected && !sameKey(login, expected)) throw mismatch(where, login, expected);
  return sealLogin(login);
}

/** A place that holds the login of another server, client or profile is never read as this one, nor overwritten. */
export function mismatch(where: string, found: ProfileKey, wanted: ProfileKey): UsageError {
  return new UsageError(`${where} holds the login of ${keyLabel(found)}, not of ${keyLabel(wanted)}; refusing to mix two accounts`, {
    ...bothFaces(
      (other) => `use another ${other} for this server, or log out of the other one first`,
      `profile (or another ${storeOptionNames.store('kv:<mount>/<path>')})`,
      `--profile (or another ${storeFlagNames.store('kv:<mount>/<path>')})`,
    ),
    code: 'AUTH_STORE_MISMATCH',
  });
}

/** A login handed to `write`, checked as strictly as one read back (JavaScript callers pass anything). */
export function checkLoginToWrite(login: StoredLogin): StoredLogin {
  if (!isObject(login)) throw new UsageError('write: the login must be an object', { code: 'INVALID_ARGUMENT' });
  const key = profileKey(login);
  if (key.authUrl !== login.authUrl)
    throw new UsageError(`write: authUrl ${login.authUrl} is not normalised (${key.authUrl}); build the key with profileKey()`, { code: 'INVALID_ARGUMENT' });
  if (!isObject(login.tokens)) throw new UsageError('write: the login has no tokens object', { code: 'INVALID_ARGUMENT' });
  registerTokens(login.tokens);
  return recordToLogin(loginToRecord(login), 'the login to write');
}

/** Runs a read-back check before an overwrite: a broken record may be replaced, another key's login may not. */
export function refuseOtherKey(check: () => unknown): void {
  try {
    check();
  } catch (error) {
    if ((error as { code?: string }).code !== 'AUTH_STORE_CORRUPT') throw error;
  }
}
