// The actions of `gantry auth`: which server, client and profile the flags and environment select, where the tokens
// live, and what each verb prints. lib/auth loads with the first action.
import { terminalText } from '../../../terminal-text.js';
import type { Command } from 'commander';
import { ExitCode, GantryError } from '../../../errors.js';
import type { AuthEndpoints, DeviceCode, ProfileKey, StoredLogin, TokenStore } from '../../../auth/index.js';
import { usage, type CliContext } from '../../context.js';

export interface ServerFlags {
  authUrl?: string;
  clientId?: string;
  clientSecretFile?: string;
  profile?: string;
}

interface LoginFlags extends ServerFlags {
  scope?: string[];
  scopeBase?: string;
  store?: string;
  insecureStorage?: boolean;
  qr: boolean;
  hideScheme?: boolean;
}

const auth = () => import('../../../auth/index.js');

const stores = () => import('../../../auth/index.js');

/** How messages name what the flags gave. */
const FLAG_NAMES = { profile: '--profile', authUrl: '--auth-url', clientId: '--client-id', scopeBase: '--scope-base' };

/**
 * The login the flags, the environment and a Pulumi program's configuration select: lib/auth's one way to read them
 * (`loginSettings`, `selectLogin`), the library's too.
 */
async function selection(flags: ServerFlags & { scopeBase?: string }, env: NodeJS.ProcessEnv): Promise<import('../../../auth/index.js').LoginSelection> {
  const { pulumiConfigFromEnvironment } = await import('../../../secrets/index.js');
  return {
    profile: flags.profile,
    authUrl: flags.authUrl,
    clientId: flags.clientId,
    scopeBase: flags.scopeBase,
    clientSecret: flags.clientSecretFile ? await (await auth()).readClientSecretFile(flags.clientSecretFile, '--client-secret-file') : undefined,
    names: FLAG_NAMES,
    env,
    config: pulumiConfigFromEnvironment(env),
    kv: kvFactory(env),
  };
}

/** The key a login is kept under: explicit flags or environment, else the one stored login of that profile. */
async function selectKey(flags: ServerFlags, env: NodeJS.ProcessEnv): Promise<ProfileKey> {
  return (await auth()).selectLogin(await selection(flags, env));
}

/** The kv engines opened for token stores during this command; `releaseClients` closes their sockets at the end. */
const openedKv: Array<{ close(): void }> = [];

/**
 * The kv engine as the token store's backend, when SECRETS_ADDR and SECRETS_TOKEN configure one: lib/secrets'
 * `environmentKv`, the library's default too, kept here only so that `releaseClients` can close what it made.
 */
export function kvFactory(env: NodeJS.ProcessEnv) {
  return async () => {
    const { environmentKv } = await import('../../../secrets/index.js');
    const kv = environmentKv(env);
    openedKv.push(kv);
    return kv.open();
  };
}

export function releaseClients(): void {
  for (const kv of openedKv.splice(0)) kv.close();
}

async function storeFor(key: ProfileKey, env: NodeJS.ProcessEnv): Promise<TokenStore> {
  const { openStoreFor, storeFlagNames } = await stores();
  const opened = await openStoreFor(key, { insecureStorage: true, profile: key.profile, env, kv: kvFactory(env), names: storeFlagNames });
  if (!opened) {
    const { DeviceLoginError } = await auth();
    throw new DeviceLoginError(`not logged in to ${key.authUrl} as client ${key.clientId} (profile ${key.profile})`, {
      code: 'AUTH_NOT_LOGGED_IN',
      hint: 'run `gantry auth login`',
    });
  }
  return opened.store;
}

function expiry(at: number | undefined, now = Date.now()): string {
  if (at === undefined) return 'no expiry given';
  const left = Math.round((at - now) / 1000);
  return left > 0 ? `valid ${formatLeft(left)} more (until ${new Date(at).toISOString()})` : `expired ${new Date(at).toISOString()}`;
}

function formatLeft(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

function accountOf(login: StoredLogin): string {
  return login.account?.email ?? login.account?.sub ?? 'unknown account (no openid scope)';
}

/** Ctrl-C (or SIGTERM) while waiting: stop polling at once, say so, exit 130 (143). */
function interruptible(): { signal: AbortSignal; dispose(): void; interrupted(): boolean; exitCode(): number } {
  const controller = new AbortController();
  let code = 130;
  const onInt = () => controller.abort();
  const onTerm = () => {
    code = 143;
    controller.abort();
  };
  process.once('SIGINT', onInt);
  process.once('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    interrupted: () => controller.signal.aborted,
    exitCode: () => code,
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}

export async function loginAction(flags: LoginFlags, command: Command, context: CliContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { json } = context.globals(command);
  const lib = await auth();
  const { authUrl, clientId, clientSecret: secret, profile, scopeBase } = lib.loginSettings(await selection(flags, env));
  if (!authUrl) throw usage('no authorization server: pass --auth-url or set GANTRY_AUTH_URL', '`gantry dev` serves one locally and prints GANTRY_AUTH_URL');
  if (!clientId)
    throw usage(
      'no client id: pass --client-id or set GANTRY_OAUTH_CLIENT_ID',
      'create a "TVs and Limited Input devices" OAuth client; `gantry dev` prints one',
    );
  const scopes = lib.resolveScopes(flags.scope && flags.scope.length > 0 ? flags.scope : lib.defaultScopeNames, scopeBase);
  const key: ProfileKey = { authUrl, clientId, profile };

  // Where the tokens will go is settled before the person is asked to approve anything.
  const { openTokenStore, recordProfile, storeFlagNames } = await stores();
  const opened = await openTokenStore(flags.store, {
    insecureStorage: flags.insecureStorage === true,
    profile,
    env,
    kv: kvFactory(env),
    names: storeFlagNames,
  });
  // With --json the device line comes first on stderr (scripts take it with head -1): the warnings ride in it.
  const warnings = [opened.fallbackReason, opened.warning].filter((w): w is string => !!w);
  if (!json) for (const warning of warnings) context.logger.warn(warning);
  // The store must answer (a kv token without access fails here, not after the person approved), and a login this
  // one replaces is read now: it is revoked once the new one is kept, so no working login is left behind unseen.
  await opened.store.read(key);
  const previous = await previousLogin(key, env, context);

  const stderr = process.stderr;
  const waiting = interruptible();
  let countdown: NodeJS.Timeout | undefined;
  try {
    const result = await lib.deviceLogin({
      authUrl,
      clientId,
      clientSecret: secret,
      scopes,
      signal: waiting.signal,
      onQuotaWait: (ms, attempt) =>
        context.logger.warn(`the authorization server's code quota for this client is used up; trying again in ${Math.ceil(ms / 1000)} s (${attempt})`),
      onCode: (device: DeviceCode, endpoints: AuthEndpoints) => {
        context.logger.debug(`endpoints from ${endpoints.source}: device ${endpoints.deviceAuthorization}, token ${endpoints.token}`);
        if (json) {
          stderr.write(
            `${terminalText(JSON.stringify({ verification_url: device.verificationUrl, user_code: device.userCode, ...(device.verificationUrlComplete ? { verification_uri_complete: device.verificationUrlComplete } : {}), expires_in: device.expiresIn, interval: device.interval, ...(warnings.length > 0 ? { warnings } : {}) }))}\n`,
          );
          return;
        }
        const terminal = stderr.isTTY === true;
        const lines = lib.renderPrompt(device, {
          columns: terminal ? stderr.columns : undefined,
          rows: terminal ? stderr.rows : undefined,
          qr: flags.qr && terminal,
          hideScheme: flags.hideScheme === true,
        });
        stderr.write(`${terminalText(lines.join('\n'), { lineBreaks: 'keep' })}\n`);
        if (terminal) {
          countdown = setInterval(
            () => stderr.write(`\r\x1b[2K${lib.formatSeconds((device.expiresAt - Date.now()) / 1000)} left for code ${terminalText(device.userCode)}`),
            1000,
          );
          countdown.unref();
        }
      },
      onPoll: (event) => {
        if (event.kind === 'slow_down') context.logger.debug(`the server asked to poll less often: every ${event.nextInMs / 1000} s from now on`);
        else if (event.kind === 'retry') context.logger.debug(`polling again in ${event.nextInMs / 1000} s after ${event.detail ?? 'a failure'}`);
      },
    });
    if (countdown) stderr.write('\r\x1b[2K');
    const login: StoredLogin = { ...key, tokens: result.tokens, ...(result.account ? { account: result.account } : {}) };
    try {
      await opened.store.write(login);
      await recordProfile(login, opened.store);
    } catch (error) {
      // A login nobody can use must not stay valid at the server.
      const revoked = await revokeQuietly(result.endpoints, { clientId, clientSecret: secret }, result.tokens);
      context.logger.warn(
        `the new login could not be kept (${(error as Error).message}); ${revoked ? 'it was revoked at the server' : 'revoking it at the server failed too: revoke it in the account settings'}`,
      );
      throw error;
    }
    const replaced = previous ? await replacePrevious(previous, login, opened.store, result.endpoints, { clientId, clientSecret: secret }) : undefined;
    if (replaced && !json) context.out.note(replaced);
    if (json) {
      context.out.json({
        authUrl,
        clientId,
        profile,
        account: result.account ?? null,
        scope: result.tokens.scope,
        expiresAt: new Date(result.tokens.expiresAt).toISOString(),
        refreshToken: result.tokens.refreshToken !== undefined,
        store: { kind: opened.store.kind, location: opened.store.location },
        ...(replaced ? { replaced } : {}),
      });
    } else {
      context.out.line(`Logged in to ${authUrl} as ${terminalText(accountOf(login))} (profile ${profile}).`);
      context.out.line(`Scopes: ${terminalText(result.tokens.scope) || '(none named by the server)'}`);
      context.out.line(`Tokens kept in ${opened.store.location}.`);
    }
  } catch (error) {
    if (waiting.interrupted()) {
      if (countdown) stderr.write('\r\x1b[2K');
      stderr.write('Login cancelled: stopped waiting for approval.\n');
      process.exitCode = waiting.exitCode();
      return;
    }
    throw error;
  } finally {
    if (countdown) clearInterval(countdown);
    waiting.dispose();
  }
}

/** The login kept under this key before, with its store, when one can be read (a warning when it cannot). */
async function previousLogin(key: ProfileKey, env: NodeJS.ProcessEnv, context: CliContext): Promise<{ login: StoredLogin; store: TokenStore } | undefined> {
  const { findProfile, openStoreFor, storeFlagNames } = await stores();
  const entry = await findProfile(key);
  if (!entry) return undefined;
  try {
    const opened = await openStoreFor(key, { insecureStorage: true, profile: key.profile, env, kv: kvFactory(env), names: storeFlagNames });
    const login = await opened?.store.read(key);
    return opened && login ? { login, store: opened.store } : undefined;
  } catch (error) {
    context.logger.warn(`the earlier login of profile ${key.profile} (${entry.location}) cannot be read: ${(error as Error).message}; it is left as it is`);
    return undefined;
  }
}

async function revokeQuietly(
  endpoints: AuthEndpoints,
  client: { clientId: string; clientSecret: string | undefined },
  tokens: StoredLogin['tokens'],
): Promise<boolean> {
  const lib = await auth();
  const http = lib.authHttpClient();
  try {
    await lib.revokeToken(http, endpoints, tokens.refreshToken ?? tokens.accessToken, client);
    return true;
  } catch {
    return false;
  } finally {
    http.close();
  }
}

/** Revokes the login the new one replaces and removes it from a store the new one is not in; says what it did. */
async function replacePrevious(
  previous: { login: StoredLogin; store: TokenStore },
  login: StoredLogin,
  store: TokenStore,
  endpoints: AuthEndpoints,
  client: { clientId: string; clientSecret: string | undefined },
): Promise<string> {
  const old = previous.login.tokens;
  const same = old.refreshToken !== undefined ? old.refreshToken === login.tokens.refreshToken : old.accessToken === login.tokens.accessToken;
  const revoked = same ? true : await revokeQuietly(endpoints, client, old);
  let moved = '';
  if (previous.store.spec !== store.spec) {
    await previous.store.delete(login).catch(() => undefined);
    moved = ` and removed from ${previous.store.location}`;
  }
  const who = previous.login.account?.email ?? previous.login.account?.sub ?? 'an unnamed account';
  return `Replaced the earlier login of this profile (${who}): ${revoked ? 'revoked at the server' : 'its revocation failed (revoke it in the account settings)'}${moved}.`;
}

interface StatusFlags extends ServerFlags {
  all?: boolean;
  offline?: boolean;
}

/**
 * Whether the server still takes the login, as gh auth status checks: a valid access token (refreshed when due) that
 * the userinfo endpoint accepts, else one refresh; a refused refresh token means the login was revoked or expired.
 */
async function checkOnline(key: ProfileKey, store: TokenStore, env: NodeJS.ProcessEnv): Promise<string> {
  const lib = await auth();
  const secret = lib.loginSettings({ ...(await selection({}, env)), clientId: key.clientId }).clientSecret;
  const session = new lib.AuthSession({ store, key, clientSecret: secret });
  try {
    const token = await session.getAccessToken();
    const endpoints = await session.endpoints();
    if (!endpoints.userinfo) return 'valid at the server';
    const http = lib.authHttpClient();
    try {
      const { getJson } = await import('../../../auth/index.js');
      const answer = await getJson(http, endpoints.userinfo, { headers: { authorization: `Bearer ${token}` } });
      if (answer.status === 200) return 'valid at the server';
      if (answer.status !== 401) return `the server answered ${answer.status} to userinfo`;
      await session.refresh();
      return 'valid at the server';
    } finally {
      http.close();
    }
  } catch (error) {
    if (error instanceof lib.DeviceLoginError && error.code === 'AUTH_REFRESH_REVOKED') return 'revoked or expired at the server: run `gantry auth login`';
    return `not checked: ${(error as Error).message}`;
  } finally {
    session.close();
  }
}

/** The store a login is read from as it is used now; a kv engine other than the one it was written to is said. */
function usedLocation(store: TokenStore, entry: import('../../../auth/index.js').ProfileIndexEntry): string {
  const now = store.describe(entry);
  const usedAddress = (store as { address?: unknown }).address;
  const written = entry.store.address;
  return written !== undefined && typeof usedAddress === 'string' && usedAddress !== written
    ? `${now} (the login was written to the kv engine at ${written})`
    : now;
}

export async function statusAction(flags: StatusFlags, command: Command, context: CliContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { json } = context.globals(command);
  const { listProfiles, openTokenStore, storeFlagNames } = await stores();
  const { loginSettings } = await auth();
  const { profile, authUrl, clientId } = loginSettings(await selection(flags, env));
  const entries = (await listProfiles()).filter(
    (e) => flags.all || (e.profile === profile && (!authUrl || e.authUrl === authUrl) && (!clientId || e.clientId === clientId)),
  );
  const rows = [];
  for (const entry of entries) {
    const row: Record<string, unknown> = { profile: entry.profile, authUrl: entry.authUrl, clientId: entry.clientId, store: entry.store.spec };
    try {
      const { store } = await openTokenStore(entry.store.spec, {
        insecureStorage: true,
        profile: entry.profile,
        env,
        kv: kvFactory(env),
        names: storeFlagNames,
      });
      // Where the tokens are read from now (today's SECRETS_ADDR, the file's mode as it is), not what the index recorded.
      row.location = usedLocation(store, entry);
      let login = await store.read(entry);
      if (!login) row.state = 'missing from its store';
      else {
        row.state = 'logged in';
        row.account = accountOf(login);
        if (!flags.offline) {
          const online = await checkOnline(entry, store, env);
          row.server = online;
          if (online.startsWith('revoked')) row.state = 'revoked or expired at the server';
          // The check may have refreshed the tokens (or ended them): what is stored now is what counts.
          login = (await store.read(entry)) ?? login;
        }
        row.scope = login.tokens.scope;
        row.accessToken = expiry(login.tokens.expiresAt);
        row.accessTokenExpiresAt = new Date(login.tokens.expiresAt).toISOString();
        row.refreshToken = login.tokens.refreshToken
          ? login.tokens.refreshTokenExpiresAt
            ? expiry(login.tokens.refreshTokenExpiresAt)
            : 'yes, until revoked'
          : 'none';
      }
    } catch (error) {
      row.state = `store not readable: ${(error as Error).message}`;
    }
    rows.push(row);
  }
  // A server that could not be asked leaves a login counted (its row says "not checked"): that is no definite "no".
  const loggedIn = rows.filter((r) => r.state === 'logged in').length;
  if (json) context.out.json(rows);
  else if (rows.length === 0) context.out.line(`Not logged in${authUrl ? ` to ${authUrl}` : ''} (profile ${profile}). Run \`gantry auth login\`.`);
  else {
    for (const row of rows) {
      context.out.line(`${row.authUrl} — client ${row.clientId}, profile ${row.profile}`);
      context.out.line(`  ${terminalText(String(row.state))}${row.account ? ` as ${terminalText(String(row.account))}` : ''}`);
      if (row.location) context.out.line(`  tokens kept in: ${row.location}`);
      if (row.accessToken) context.out.line(`  access token: ${row.accessToken}`);
      if (row.refreshToken) context.out.line(`  refresh token: ${row.refreshToken}`);
      if (row.scope) context.out.line(`  scopes: ${terminalText(String(row.scope))}`);
      if (row.server) context.out.line(`  at the server: ${terminalText(String(row.server))}`);
    }
  }
  if (loggedIn === 0) process.exitCode = ExitCode.checkFailed;
}

/**
 * The stored login the flags and environment select, as a session that hands out fresh access tokens — for `gantry
 * auth` itself and for the commands that call an API with the login (`gantry storage`, `--report-storage`). The caller
 * closes it, then calls `releaseClients`.
 */
export async function openAuthSession(
  flags: ServerFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ session: import('../../../auth/index.js').AuthSession; key: ProfileKey }> {
  return (await auth()).openProfileLogin(await selection(flags, env));
}

async function withSession<T>(
  flags: ServerFlags,
  env: NodeJS.ProcessEnv,
  use: (session: import('../../../auth/index.js').AuthSession, key: ProfileKey) => Promise<T>,
): Promise<T> {
  const { session, key } = await openAuthSession(flags, env);
  try {
    return await use(session, key);
  } finally {
    session.close();
  }
}

export async function tokenAction(flags: ServerFlags, command: Command, context: CliContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { json } = context.globals(command);
  await withSession(flags, env, async (session) => {
    const token = await session.getAccessToken();
    if (json) {
      const login = await session.current();
      context.out.json({ accessToken: token, tokenType: 'Bearer', expiresAt: new Date(login.tokens.expiresAt).toISOString(), scope: login.tokens.scope });
    } else if (context.out.raw) context.out.raw(token);
    else context.out.line(token);
  });
}

export async function refreshAction(flags: ServerFlags, command: Command, context: CliContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { json } = context.globals(command);
  await withSession(flags, env, async (session, key) => {
    const login = await session.refresh();
    if (json)
      context.out.json({
        authUrl: key.authUrl,
        clientId: key.clientId,
        profile: key.profile,
        expiresAt: new Date(login.tokens.expiresAt).toISOString(),
        scope: login.tokens.scope,
      });
    else context.out.line(`Refreshed: the access token is ${expiry(login.tokens.expiresAt)}.`);
  });
}

function withForgetHint(error: unknown): unknown {
  if (!(error instanceof GantryError)) return error;
  const forget = 'to delete the tokens here anyway, run `gantry auth logout --forget` (they then stay valid at the server until they expire)';
  Object.defineProperty(error, 'hint', { value: error.hint ? `${error.hint}; or, ${forget}` : forget, enumerable: true });
  return error;
}

interface LogoutFlags extends ServerFlags {
  forget?: boolean;
}

export async function logoutAction(flags: LogoutFlags, command: Command, context: CliContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { json } = context.globals(command);
  const { forgetProfile } = await stores();
  const done = withSession(flags, env, async (session, key) => {
    let outcome: string;
    try {
      const { revoked } = await session.logout();
      outcome = revoked === 'revoked' ? 'revoked at the server and deleted' : 'already invalid at the server; deleted';
    } catch (error) {
      if (!flags.forget) throw error;
      context.logger.warn(
        `the server did not revoke the tokens (${(error as Error).message}); deleting them here anyway, as --forget asks: they stay valid there until they expire`,
      );
      await (await storeFor(key, env)).delete(key);
      outcome = 'deleted here, not revoked at the server';
    }
    await forgetProfile(key);
    if (json) context.out.json({ authUrl: key.authUrl, clientId: key.clientId, profile: key.profile, outcome });
    else context.out.line(`Logged out of ${key.authUrl} (profile ${key.profile}): tokens ${outcome}.`);
  });
  try {
    await done;
  } catch (error) {
    if ((error as { code?: string }).code === 'AUTH_NOT_LOGGED_IN') throw error;
    // The way out when the server cannot revoke (unreachable, failing, refusing) or the store cannot be opened.
    if (!flags.forget) throw withForgetHint(error);
    // --forget also gets rid of a login whose store cannot be opened any more (a keyring of another session): the
    // index forgets it, and the message says where the tokens stay.
    const key = await selectKey(flags, env);
    await forgetProfile(key);
    const outcome = `forgotten here; its store could not be opened (${(error as Error).message}), so the tokens stay there and valid at the server until they expire`;
    if (json) context.out.json({ authUrl: key.authUrl, clientId: key.clientId, profile: key.profile, outcome });
    else context.out.line(`Logged out of ${key.authUrl} (profile ${key.profile}): ${outcome}.`);
  }
}

interface WhoamiFlags extends ServerFlags {
  apiUrl?: string;
  tokenInQuery?: boolean;
}

export async function whoamiAction(flags: WhoamiFlags, command: Command, context: CliContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { json } = context.globals(command);
  const lib = await auth();
  await withSession(flags, env, async (session, key) => {
    const rawApi = flags.apiUrl ?? (env.GANTRY_API_URL || new URL(key.authUrl).origin);
    const apiBase = lib.checkAuthUrl(rawApi, flags.apiUrl ? '--api-url' : env.GANTRY_API_URL ? 'GANTRY_API_URL' : 'the API address');
    // A login about to expire is refreshed before anything is asked.
    await session.getAccessToken();
    const login = await session.current();
    const { createHttpClient } = await import('../../../http/index.js');
    const http = createHttpClient({ logger: context.logger });
    try {
      // A 401 to a token the server ended early (revoked, rotated): one refresh, then once more (the core's bearerAuth).
      const credentials = { token: () => session.getAccessToken(), renew: async () => void (await session.refresh()) };
      const channels = await lib.listMyChannels(http, apiBase, credentials, { tokenInQuery: flags.tokenInQuery === true });
      if (json) context.out.json({ account: login.account ?? null, channels });
      else {
        context.out.line(`${terminalText(accountOf(login))} on ${key.authUrl}`);
        if (channels.length === 0) context.out.line('No channel on the video API for this account.');
        for (const channel of channels)
          context.out.line(
            `channel ${terminalText(channel.id)}${channel.title ? `: ${terminalText(channel.title)}` : ''}${channel.customUrl ? ` (${terminalText(channel.customUrl)})` : ''}`,
          );
      }
    } finally {
      http.close();
    }
  });
}
