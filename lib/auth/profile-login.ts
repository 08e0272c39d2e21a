/**
 * The `gantry auth` login a program uses when it has no token of its own — `gantry storage` without STORAGE_TOKEN,
 * the storage resources in the Pulumi plugin: which login the caller's values, the environment and a configuration
 * select (profile, authorization server, client), the store the profile index names for it, and an `AuthSession`
 * that hands out its access token, refreshed as it runs out. Nothing here prints or keeps a token.
 *
 * Each value is the caller's (a flag), else its environment variable, else the configuration (`config(key)`: the
 * Pulumi stack's `gantry:*` keys), as every setting's order is. Without a server and client, the one login the profile
 * index records for the profile is used.
 */
import { readFile } from 'node:fs/promises';
import { expectOptions } from '../arguments.js';
import { UsageError } from '../errors.js';
import { pulumiConfigFromEnvironment } from '../settings.js';
import { checkAuthUrl } from './discovery.js';
import { DeviceLoginError } from './errors.js';
import { AuthSession } from './session.js';
import { defaultScopeBase, checkScopeBase } from './scopes.js';
import { selectedProfile } from './store/key.js';
import { listProfiles } from './store/profiles.js';
import { openStoreFor } from './store/logins.js';
import type { KvLike, ProfileKey } from './store/types.js';

export { selectedProfile };

/** The configuration keys a selection reads when neither the caller nor the environment gives a value. */
export const loginConfigKeys = { authUrl: 'gantry:authUrl', clientId: 'gantry:oauthClientId', clientSecret: 'gantry:oauthClientSecret' } as const;

export interface LoginSelection {
  /** The profile (a flag); else GANTRY_AUTH_PROFILE, else `default`. */
  profile?: string | undefined;
  /** The authorization server (a flag); else GANTRY_AUTH_URL, else `gantry:authUrl`. */
  authUrl?: string | undefined;
  /** The OAuth client (a flag); else GANTRY_OAUTH_CLIENT_ID, else `gantry:oauthClientId`. */
  clientId?: string | undefined;
  /** The client's secret (read from a file by the caller); else GANTRY_OAUTH_CLIENT_SECRET, else `gantry:oauthClientSecret`. */
  clientSecret?: string | undefined;
  /** The prefix of the scope URIs (a flag); else GANTRY_OAUTH_SCOPE_BASE, else https://www.googleapis.com. */
  scopeBase?: string | undefined;
  /** How messages name the caller's values (its flags, e.g. `--auth-url`); default the library's option names. */
  names?: { profile?: string; authUrl?: string; clientId?: string; scopeBase?: string };
  /** Where the variables, GANTRY_CONFIG_DIR and HOME are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The configuration's lookup (the stack configuration); default a Pulumi program's (PULUMI_CONFIG), as the command reads it. */
  config?: ((key: string) => string | undefined) | undefined;
  /** A kv client, for a login kept in the kv engine (lib/auth never builds one). */
  kv?: () => Promise<KvLike | undefined>;
}

export interface ProfileLogin {
  /** Hands out the access token (`getAccessToken()`), refreshed a minute before it expires. Close it when done. */
  session: AuthSession;
  key: ProfileKey;
}

function pick(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv,
  variable: string,
  config: LoginSelection['config'],
  key: string,
): { value: string; from: 'explicit' | 'env' | 'config' } | undefined {
  if (explicit !== undefined && explicit !== '') return { value: explicit, from: 'explicit' };
  if (env[variable]) return { value: env[variable]!, from: 'env' };
  const configured = config?.(key);
  return configured ? { value: configured, from: 'config' } : undefined;
}

export interface LoginSettings {
  /** The authorization server, checked (https, or http on loopback); undefined when nothing names one. */
  authUrl: string | undefined;
  clientId: string | undefined;
  /** The client's secret: the caller's, else the variable's or configuration's unless they belong to another client id. */
  clientSecret: string | undefined;
  profile: string;
  /** The prefix of the scope URIs, checked: the caller's, else GANTRY_OAUTH_SCOPE_BASE, else Google's. */
  scopeBase: string;
}

/**
 * The settings of a device login, as the command and the library both read them: each one the caller's (a flag, an
 * option), else its environment variable (GANTRY_AUTH_URL, GANTRY_OAUTH_CLIENT_ID, GANTRY_OAUTH_CLIENT_SECRET,
 * GANTRY_AUTH_PROFILE, GANTRY_OAUTH_SCOPE_BASE), else the configuration (`config`, by default a Pulumi program's
 * `gantry:*` keys). A bad value is a usage error naming where it came from.
 */
export function loginSettings(selection: LoginSelection = {}): LoginSettings {
  expectOptions('loginSettings', selection, 'selection');
  const env = selection.env ?? process.env;
  const config = 'config' in selection ? selection.config : pulumiConfigFromEnvironment(env);
  const profile = selectedProfile(selection);
  const url = pick(selection.authUrl, env, 'GANTRY_AUTH_URL', config, loginConfigKeys.authUrl);
  const client = pick(selection.clientId, env, 'GANTRY_OAUTH_CLIENT_ID', config, loginConfigKeys.clientId);
  const authUrl = url
    ? checkAuthUrl(
        url.value,
        url.from === 'explicit' ? (selection.names?.authUrl ?? 'the authUrl option') : url.from === 'env' ? 'GANTRY_AUTH_URL' : loginConfigKeys.authUrl,
      )
    : undefined;
  // A secret from the environment belongs to the client id there: not sent for another one given explicitly.
  const configuredClient = pick(undefined, env, 'GANTRY_OAUTH_CLIENT_ID', config, loginConfigKeys.clientId)?.value;
  const secretApplies = client?.from !== 'explicit' || configuredClient === undefined || configuredClient === client.value;
  const secret =
    selection.clientSecret !== undefined && selection.clientSecret !== ''
      ? selection.clientSecret
      : secretApplies
        ? pick(undefined, env, 'GANTRY_OAUTH_CLIENT_SECRET', config, loginConfigKeys.clientSecret)?.value.trim() || undefined
        : undefined;
  const scopeBase =
    selection.scopeBase !== undefined
      ? checkScopeBase(selection.scopeBase, selection.names?.scopeBase ?? 'the scopeBase option')
      : env.GANTRY_OAUTH_SCOPE_BASE
        ? checkScopeBase(env.GANTRY_OAUTH_SCOPE_BASE, 'GANTRY_OAUTH_SCOPE_BASE')
        : defaultScopeBase;
  return { authUrl, clientId: client?.value, clientSecret: secret, profile, scopeBase };
}

/** Which login: the server and client given (flag, environment, configuration), else the one the index records for the profile. */
export async function selectLogin(selection: LoginSelection = {}): Promise<ProfileKey> {
  expectOptions('selectLogin', selection, 'selection');
  const env = selection.env ?? process.env;
  const { authUrl, clientId, profile } = loginSettings(selection);
  if (authUrl && clientId) return { authUrl, clientId, profile };
  const matches = (await listProfiles({ env })).filter(
    (entry) => entry.profile === profile && (!authUrl || entry.authUrl === authUrl) && (!clientId || entry.clientId === clientId),
  );
  if (matches.length === 1) return { authUrl: matches[0]!.authUrl, clientId: matches[0]!.clientId, profile };
  if (matches.length === 0) {
    throw new DeviceLoginError(`not logged in${authUrl ? ` to ${authUrl}` : ''} (profile ${profile})`, {
      code: 'AUTH_NOT_LOGGED_IN',
      hint: 'log in first: deviceLogin and saveLogin, or `gantry auth login` (with GANTRY_AUTH_URL and GANTRY_OAUTH_CLIENT_ID set, or the authUrl and clientId options)',
      cliHint: 'run `gantry auth login` (with --auth-url and --client-id, or GANTRY_AUTH_URL and GANTRY_OAUTH_CLIENT_ID)',
    });
  }
  const say = `${selection.names?.authUrl ?? 'the authUrl option or GANTRY_AUTH_URL'} and ${selection.names?.clientId ?? 'the clientId option or GANTRY_OAUTH_CLIENT_ID'}`;
  throw new UsageError(`profile ${profile} is logged in to ${matches.length} servers or clients: say which with ${say}`, {
    hint: matches.map((m) => `${m.authUrl} client ${m.clientId}`).join('; '),
  });
}

/**
 * The selected login, opened from the store the profile index names: an `AuthSession` that refreshes its access
 * token (and stores the new one) as it runs out. No login is a DeviceLoginError with code AUTH_NOT_LOGGED_IN.
 */
export async function openProfileLogin(selection: LoginSelection = {}): Promise<ProfileLogin> {
  expectOptions('openProfileLogin', selection, 'selection');
  const env = selection.env ?? process.env;
  const key = await selectLogin(selection);
  const opened = await openStoreFor(key, { insecureStorage: true, profile: key.profile, env, ...(selection.kv ? { kv: selection.kv } : {}) });
  if (!opened) {
    throw new DeviceLoginError(`not logged in to ${key.authUrl} as client ${key.clientId} (profile ${key.profile})`, {
      code: 'AUTH_NOT_LOGGED_IN',
      hint: 'run `gantry auth login`',
    });
  }
  const secret = loginSettings({ ...selection, clientId: key.clientId }).clientSecret;
  return { session: new AuthSession({ store: opened.store, key, clientSecret: secret }), key };
}

/** A client secret kept in a file (`--client-secret-file`): the secret alone, on one line. */
export async function readClientSecretFile(path: string, label = 'the client secret file'): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${label} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      hint: 'give a readable file holding only the client secret',
    });
  }
  const secret = text.trim();
  if (secret === '' || /\s/.test(secret)) throw new UsageError(`${label} ${path} must hold the client secret alone, on one line`);
  return secret;
}
