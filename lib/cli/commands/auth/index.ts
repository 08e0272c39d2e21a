/**
 * `gantry auth`: device-grant login for machines without a browser (login, status, token, refresh, logout, whoami).
 * lib/auth is imported inside the actions, so `gantry --help` loads none of it.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../context.js';
import { loginAction, logoutAction, refreshAction, releaseClients, statusAction, tokenAction, whoamiAction } from './actions.js';

export const AUTH_HELP = `The authorization server is --auth-url, else GANTRY_AUTH_URL (its endpoints are read from its metadata).
The client is --client-id, else GANTRY_OAUTH_CLIENT_ID — a "TVs and Limited Input devices" client; its secret is
GANTRY_OAUTH_CLIENT_SECRET or --client-secret-file, never a flag's value (a command line is visible to every user of
the machine). \`gantry dev\` serves an authorization server and prints all three.
Tokens live in the OS keyring when one is reachable, else in the kv engine (SECRETS_ADDR, SECRETS_TOKEN) under
secret/gantry/auth/<profile>, else nowhere: a plain-text file only with --store file or --insecure-storage.
Exit codes: 0 success; 1 a definite no (denied, expired code, not logged in, refresh token revoked); 2 bad input,
nothing sent; 3 the authorization server failed; 130 Ctrl-C.`;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Every action ends with the kv engine's sockets closed, so the process ends as soon as it is done. */
async function released(action: Promise<void>): Promise<void> {
  try {
    await action;
  } finally {
    releaseClients();
  }
}

function serverOptions(command: Command): Command {
  return command
    .option('--auth-url <url>', 'the authorization server (default GANTRY_AUTH_URL)')
    .option('--client-id <id>', 'the OAuth client id (default GANTRY_OAUTH_CLIENT_ID)')
    .option('--client-secret-file <file>', 'read the client secret from this file (default GANTRY_OAUTH_CLIENT_SECRET)')
    .option('--profile <name>', 'several logins to one server and client: a name for each (default GANTRY_AUTH_PROFILE, else "default")');
}

export function register(program: Command, context: CliContext): void {
  const auth = program
    .command('auth')
    .description('device-grant login for machines without a browser: a code to approve on a phone, tokens that refresh and never leak')
    .addHelpText('after', `\n${AUTH_HELP}`);
  /** `gantry auth <name>`: the server options, and its action, after which the kv engine's sockets are released. */
  const verb = <Flags>(name: string, action: (flags: Flags, command: Command, context: CliContext) => Promise<void>) =>
    serverOptions(auth.command(name)).action(async (flags: Flags, command: Command) => released(action(flags, command, context)));

  verb('login', loginAction)
    .description('show a code and an address, wait until it is approved on another device, and keep the tokens')
    .option(
      '--scope <scopes>',
      'scopes to ask for, space- or comma-separated, repeatable: openid email profile video video.readonly storage.file storage.appdata (default openid email storage.file video.readonly)',
      collect,
    )
    .option('--scope-base <url>', 'prefix of the scope URIs (default GANTRY_OAUTH_SCOPE_BASE, else https://www.googleapis.com)')
    .option(
      '--store <where>',
      'keyring, kv (secret/gantry/auth/<profile>) or kv:<mount>/<path> in the kv engine at SECRETS_ADDR, or file (plain text, mode 0600)',
    )
    .option('--insecure-storage', 'allow a plain-text file when neither the keyring nor the kv engine is reachable')
    .option('--no-qr', 'no QR code of the address')
    .option('--hide-scheme', 'show the address without http(s):// (the server must answer on both)');

  verb('status', statusAction)
    .description(
      'who is logged in where, where the tokens are kept, how long they last, and whether the server still takes them (exit 1 when no login is usable)',
    )
    .option('--all', 'every profile of every server and client, not only the one the flags and environment select')
    .option('--offline', 'do not ask the server whether it still takes the login (refreshing it when due, as the check does)');

  verb('token', tokenAction).description(
    'print a valid access token for scripts (refreshed first when it has less than a minute left; exit 1 once the login was found revoked at the server)',
  );

  verb('refresh', refreshAction).description('get a new access token now with the refresh token');

  verb('logout', logoutAction)
    .description('revoke the tokens at the authorization server, then delete them')
    .option('--forget', 'delete the tokens even when the server cannot revoke them (they then stay valid there until they expire)');

  verb('whoami', whoamiAction)
    .description("call the video API's channels list (GET {api}/video/v3/channels?part=snippet&mine=true) as the logged-in account")
    .option('--api-url <url>', "the API address (default GANTRY_API_URL, else the authorization server's origin)")
    .option(
      '--token-in-query',
      "send the token as the access_token query parameter instead of the Authorization header (it is logged by servers; redacted in Gantry's output)",
    );
}
