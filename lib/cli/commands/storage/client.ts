// The storage client as `gantry storage` builds it: the service root from --base-url or STORAGE_BASE_URL, the token
// from STORAGE_TOKEN (never a flag) or the `gantry auth` login the flags and environment select. Light at load:
// lib/storage and lib/auth are imported when a command runs.
import type { Command } from 'commander';
import { Option } from 'commander';
import { GantryError, UsageError } from '../../../errors.js';
import type { Logger } from '../../../log.js';
import type { StorageClient } from '../../../storage/index.js';
import type { ServerFlags } from '../auth/actions.js';
import { usage } from '../../context.js';

export const STORAGE_AUTH_HELP = `The service root is --base-url, else STORAGE_BASE_URL (\`gantry dev\` prints it). The token is STORAGE_TOKEN, else
the \`gantry auth login\` of the profile --profile (GANTRY_AUTH_PROFILE) selects, with its scope storage.file or
storage.appdata (\`gantry auth login --scope storage.file\`), refreshed as it runs out. Never a flag: a command line is
visible to every user of the machine.`;

export const STORAGE_EXIT_HELP = `Exit codes: 0 success; 1 the service said no (404 no such file, 403 permission or scope, 412 changed since read,
400) or a check failed (md5); 2 bad input or setup, nothing sent (an id, a flag, a missing file, a folder given to
put, -o into a missing folder, no STORAGE_TOKEN and no login); 3 the service failed after its retries (5xx, rate
limits, a broken connection); 130 Ctrl-C.`;

export interface StorageFlags extends ServerFlags {
  baseUrl?: string;
  token?: string;
}

/** The options every storage command takes: where the service is and which login to use. */
export function connectionOptions(command: Command): Command {
  return (
    command
      .option('--base-url <url>', 'the storage service root (default STORAGE_BASE_URL)')
      .option('--profile <name>', 'the `gantry auth` login to use when STORAGE_TOKEN is not set (default GANTRY_AUTH_PROFILE, else "default")')
      .option('--auth-url <url>', 'the authorization server of that login (default GANTRY_AUTH_URL)')
      .option('--client-id <id>', 'the OAuth client of that login (default GANTRY_OAUTH_CLIENT_ID)')
      .option('--client-secret-file <file>', 'the client secret of that login, read from this file (default GANTRY_OAUTH_CLIENT_SECRET)')
      // Refused with a reason rather than "unknown option": a token on the command line is visible to every user (ps).
      .addOption(new Option('--token <value>').hideHelp())
  );
}

export interface StorageSession {
  client: StorageClient;
  /** Where the token comes from, for messages: STORAGE_TOKEN or the login's profile. */
  tokenFrom: string;
  /** Where the service root comes from, for messages: --base-url or STORAGE_BASE_URL. */
  baseFrom: '--base-url' | 'STORAGE_BASE_URL';
  close(): void;
}

/** The service root, checked (exit 2 naming both sources when neither is set). */
export async function storageBase(flags: StorageFlags, env: NodeJS.ProcessEnv): Promise<string> {
  if (flags.token !== undefined) {
    throw new UsageError('--token is not accepted: a token on the command line is visible to other users of this machine (ps, shell history)', {
      hint: 'export STORAGE_TOKEN=<token>, or log in with `gantry auth login --scope storage.file`',
    });
  }
  const raw = flags.baseUrl ?? (env.STORAGE_BASE_URL || undefined);
  if (raw === undefined)
    throw usage(
      'no storage service: pass --base-url or set STORAGE_BASE_URL',
      'e.g. STORAGE_BASE_URL=https://storage.example.com (`gantry dev` serves one locally and prints it)',
    );
  const { storageBaseUrl } = await import('../../../storage/index.js');
  try {
    return storageBaseUrl(raw);
  } catch (error) {
    if (error instanceof UsageError)
      throw new UsageError(`${flags.baseUrl !== undefined ? '--base-url' : 'STORAGE_BASE_URL'}: ${error.message}`, error.hint ? { hint: error.hint } : {});
    throw error;
  }
}

/**
 * Opens the client a command uses. Call it after the command's own arguments are checked, so that bad input is refused
 * before a login is even read; `close()` releases the client, the login and the kv engine's sockets.
 */
export async function openStorage(flags: StorageFlags, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<StorageSession> {
  const baseUrl = await storageBase(flags, env);
  const baseFrom = flags.baseUrl !== undefined ? '--base-url' : 'STORAGE_BASE_URL';
  const { createStorageClient } = await import('../../../storage/index.js');
  const fixed = env.STORAGE_TOKEN;
  if (fixed !== undefined && fixed !== '') {
    if (fixed.trim() === '' || /\s/.test(fixed.trim())) throw usage('STORAGE_TOKEN holds white space: it must be the bearer token alone');
    const client = createStorageClient({ baseUrl, token: fixed.trim(), logger });
    return { client, tokenFrom: 'STORAGE_TOKEN', baseFrom, close: () => client.close() };
  }
  // The login: gantry auth's own selection (lib/auth's openProfileLogin with the flags, GANTRY_AUTH_* and a Pulumi
  // program's gantry:* config), the function the storage resources use in the Pulumi plugin.
  const { openAuthSession, releaseClients } = await import('../auth/actions.js');
  let opened: Awaited<ReturnType<typeof openAuthSession>>;
  try {
    opened = await openAuthSession(flags, env);
  } catch (error) {
    releaseClients();
    if (error instanceof GantryError && error.code === 'AUTH_NOT_LOGGED_IN') {
      // Nothing was sent: a setup to fix before the command can run (exit 2). The login's own hint speaks of
      // `gantry auth`; here the other way in is STORAGE_TOKEN too.
      const profile = flags.profile ?? (env.GANTRY_AUTH_PROFILE || undefined);
      throw new UsageError(error.message, {
        code: error.code,
        cause: error,
        hint: `log in with \`gantry auth login --scope storage.file${profile !== undefined && profile !== 'default' ? ` --profile ${profile}` : ''}\` (GANTRY_AUTH_URL, GANTRY_OAUTH_CLIENT_ID), or set STORAGE_TOKEN`,
      });
    }
    throw error;
  }
  const { session, key } = opened;
  const client = createStorageClient({ baseUrl, token: session, logger });
  return {
    client,
    tokenFrom: `the login of profile ${key.profile} at ${key.authUrl}`,
    baseFrom,
    close() {
      client.close();
      session.close();
      releaseClients();
    },
  };
}
