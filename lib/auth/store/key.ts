/**
 * Naming a login: the authorization server's URL normalised, the profile name checked, and the names each store
 * derives from them (keyring account, kv path, file name), plus the configuration folder.
 */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { UsageError, bothFaces, shown } from '../../errors.js';
import type { ProfileKey } from './types.js';

/** The keyring service every login is filed under. */
export const keyringService = 'gantry';
export const defaultProfile = 'default';
const profilePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The authorization server as a profile names it: http(s) only, no credentials, query or fragment; scheme and host in
 * lower case, the default port dropped, no trailing slash. `HTTP://Auth.Example:443/` and `https://auth.example` differ
 * only in scheme; `https://auth.example:443/` is `https://auth.example`.
 */
export function normaliseAuthUrl(input: string): string {
  if (typeof input !== 'string' || input.trim() === '')
    throw new UsageError('the authorization server URL is empty', {
      ...bothFaces((name) => `give ${name}, e.g. https://oauth2.example.com`, 'the authUrl option or GANTRY_AUTH_URL', '--auth-url or GANTRY_AUTH_URL'),
      code: 'AUTH_URL',
    });
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new UsageError(`the authorization server URL ${shown(input)} is no URL`, {
      hint: 'give an absolute http(s) URL, e.g. https://oauth2.example.com',
      code: 'AUTH_URL',
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`the authorization server URL must be http(s), not ${url.protocol}`, { code: 'AUTH_URL' });
  if (url.username !== '' || url.password !== '')
    throw new UsageError('the authorization server URL must not carry credentials', {
      ...bothFaces((how) => `give the client id and secret as ${how}`, 'options or environment variables', 'flags or environment variables'),
      code: 'AUTH_URL',
    });
  if (url.search !== '' || url.hash !== '')
    throw new UsageError(`the authorization server URL ${url.origin}${url.pathname} must have no query or fragment`, { code: 'AUTH_URL' });
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path}`;
}

export function checkProfileName(profile: string): string {
  if (typeof profile !== 'string' || !profilePattern.test(profile)) {
    throw new UsageError(
      `the profile name ${typeof profile === 'string' ? shown(JSON.stringify(profile)) : 'is missing'}${typeof profile === 'string' ? ' is not allowed' : ''}`,
      {
        hint: 'a profile name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit (default: default)',
        code: 'AUTH_PROFILE',
      },
    );
  }
  return profile;
}

/**
 * The profile the caller names (a flag, an option), else GANTRY_AUTH_PROFILE, else `default`, checked: 1–64 letters,
 * digits, dots, dashes or underscores. The command and the library read it alike.
 */
export function selectedProfile(selection: { profile?: string | undefined; names?: { profile?: string }; env?: NodeJS.ProcessEnv } = {}): string {
  const env = selection.env ?? process.env;
  const explicit = selection.profile !== undefined;
  const name = selection.profile ?? (env.GANTRY_AUTH_PROFILE || defaultProfile);
  if (typeof name !== 'string' || !profilePattern.test(name)) {
    const label = explicit ? (selection.names?.profile ?? 'the profile option') : 'GANTRY_AUTH_PROFILE';
    throw new UsageError(`${label} "${String(name).slice(0, 80)}" must be 1–64 letters, digits, dots, dashes or underscores`, {
      ...bothFaces((example) => `e.g. ${example}`, "profile: 'ci' or GANTRY_AUTH_PROFILE=ci", '--profile ci or GANTRY_AUTH_PROFILE=ci'),
      code: 'AUTH_PROFILE',
    });
  }
  return name;
}

export function checkClientId(clientId: string): string {
  if (typeof clientId !== 'string' || clientId === '' || clientId.length > 512 || controlCharacters.test(clientId)) {
    throw new UsageError('the OAuth client id is empty, longer than 512 characters or holds control characters', {
      ...bothFaces((name) => `give ${name}`, 'the clientId option or GANTRY_OAUTH_CLIENT_ID', '--client-id or GANTRY_OAUTH_CLIENT_ID'),
      code: 'AUTH_CLIENT_ID',
    });
  }
  return clientId;
}

/** A ProfileKey with every part checked and the URL normalised. */
export function profileKey(input: { authUrl: string; clientId: string; profile?: string | undefined }): ProfileKey {
  return { authUrl: normaliseAuthUrl(input.authUrl), clientId: checkClientId(input.clientId), profile: checkProfileName(input.profile ?? defaultProfile) };
}

export function sameKey(a: ProfileKey, b: ProfileKey): boolean {
  return a.authUrl === b.authUrl && a.clientId === b.clientId && a.profile === b.profile;
}

/** How a login names itself in messages: `default at https://auth.example (client 123…)`. Never a token. */
export function keyLabel(key: ProfileKey): string {
  return `profile ${key.profile} at ${key.authUrl} (client ${shown(key.clientId)})`;
}

/** The keyring account: readable in a keyring's UI, unique per server, client and profile. */
export function keyringAccount(key: ProfileKey): string {
  return `${key.profile}@${key.authUrl} (client ${key.clientId})`;
}

/** `secret/gantry/auth/<profile>`: where auto mode keeps a login in the kv engine. */
export function defaultKvPath(profile: string): string {
  return `secret/gantry/auth/${checkProfileName(profile)}`;
}

/** `<profile>-<host>_<port>-<hash>.json`: the host for people, the hash of server, client and profile for uniqueness. */
export function loginFileName(key: ProfileKey): string {
  const host = new URL(key.authUrl).host.replace(/[^A-Za-z0-9.-]/g, '_').slice(0, 80);
  const hash = createHash('sha256').update(`${key.authUrl}\n${key.clientId}\n${key.profile}`).digest('hex').slice(0, 12);
  return `${key.profile}-${host}-${hash}.json`;
}

/** GANTRY_CONFIG_DIR, else $XDG_CONFIG_HOME/gantry (when absolute, as the XDG spec asks), else ~/.config/gantry. */
export function resolveConfigDir(configDir?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (configDir !== undefined && configDir !== '') return resolve(configDir);
  if (env.GANTRY_CONFIG_DIR) return resolve(env.GANTRY_CONFIG_DIR);
  if (env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME)) return join(env.XDG_CONFIG_HOME, 'gantry');
  return join(env.HOME || homedir(), '.config', 'gantry');
}

/** `<configDir>/auth`: the login files and the profile index. */
export function authDir(configDir: string): string {
  return join(configDir, 'auth');
}
