// `gantry dev oauth`: the embedded authorization server alone (Google's device flow, or RFC 8628), with its own
// port, dialect, interval, code lifetime, quota, refresh-token limits and one registered limited-input client; and the
// authorization code flow for context-server clients (RFC 8414 metadata, dynamic registration, PKCE S256, resource
// indicators giving JWT access tokens, introspection), whose endpoints it prints.
import type { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import { DEV_OAUTH_PORT, devOAuthDialect, devServerModules, type OAuthServerOptions } from '../../../../devserver/index.js';
import { devHostOf, devServerPort, listenAsAsked, serveAlone } from '../../serving.js';
import type { CliContext } from '../../context.js';

interface DevOAuthFlags {
  port?: string;
  host?: string;
  dialect?: string;
  oauthDialect?: string;
  interval: string;
  expiresIn: string;
  codeQuota: string;
  refreshLimit: string;
  accessTokenTtl: string;
  timeBasedAccess?: string;
  scopeBase?: string;
  userCodeCase: string;
  clientId?: string;
  clientSecret?: string;
}

function seconds(flag: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max)
    throw new UsageError(`${flag} must be whole seconds from ${min} to ${max}, got "${raw}"`);
  return Number(raw);
}

/** `<n>/<window>`: a count per window, the window in seconds or with a unit (s, m, h): 10/60, 10/60s, 100/1m. */
export function parseCodeQuota(raw: string): { requests: number; windowSeconds: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*([smh]?)\s*$/.exec(raw);
  const unit = { '': 1, s: 1, m: 60, h: 3600 }[match?.[3] ?? ''] ?? 1;
  const requests = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]) * unit;
  if (!match || requests < 1 || requests > 1_000_000 || windowSeconds < 1 || windowSeconds > 86_400) {
    throw new UsageError(`--code-quota takes <requests>/<window>, e.g. 10/60s (at least 1 request, a window from 1 s to 24 h), got "${raw}"`);
  }
  return { requests, windowSeconds };
}

/** `<per client and user>[/<per user>]`: 3 or 3/5. */
export function parseRefreshLimit(raw: string): { perClientUser: number; perUser?: number } {
  const match = /^\s*(\d+)\s*(?:\/\s*(\d+)\s*)?$/.exec(raw);
  const perClientUser = Number(match?.[1]);
  const perUser = match?.[2] !== undefined ? Number(match[2]) : undefined;
  if (!match || perClientUser < 1 || perClientUser > 1_000_000 || (perUser !== undefined && (perUser < 1 || perUser > 1_000_000))) {
    throw new UsageError(`--refresh-limit takes <per client and user>[/<per user>], whole numbers of at least 1, e.g. 100/500, got "${raw}"`);
  }
  return { perClientUser, ...(perUser !== undefined ? { perUser } : {}) };
}

/**
 * The dialect of `gantry dev oauth`: --dialect or --oauth-dialect (its own, or `gantry dev`'s, which commander hands
 * the parent when both declare it), else GANTRY_DEV_OAUTH_DIALECT, else google. Two different values are refused.
 */
function dialectOf(flags: DevOAuthFlags, command: Command): ReturnType<typeof devOAuthDialect> {
  const given: Array<[string, string]> = [];
  if (flags.dialect !== undefined) given.push(['--dialect', flags.dialect]);
  const oauthDialect = flags.oauthDialect ?? (command.parent?.opts() as { oauthDialect?: string } | undefined)?.oauthDialect;
  if (oauthDialect !== undefined) given.push(['--oauth-dialect', oauthDialect]);
  if (given.length === 2 && given[0]![1] !== given[1]![1])
    throw new UsageError(`--dialect ${given[0]![1]} and --oauth-dialect ${given[1]![1]} disagree: give one`);
  return devOAuthDialect({ name: given[0]?.[0] ?? '--dialect', value: given[0]?.[1] });
}

export function registerDevOAuth(dev: Command, context: CliContext): void {
  dev
    .command('oauth')
    .description(
      "serve the authorization server: Google's OAuth 2.0 device flow (or RFC 8628), an approval page, tokens, revoke and the video API's channels; and the authorization code flow with PKCE, dynamic registration, resource indicators (JWT access tokens) and introspection for context-server clients",
    )
    .option('--port <port>', `port to listen on (0 = any free port; default GANTRY_DEV_OAUTH_PORT or ${DEV_OAUTH_PORT})`)
    .option('--host <address>', 'the loopback address to listen on (127.0.0.1, ::1, localhost; default 127.0.0.1)')
    .option(
      '--dialect <dialect>',
      'google (verification_url, 428 pending, 403 slow_down) or rfc8628 (verification_uri, verification_uri_complete, 400 errors); default GANTRY_DEV_OAUTH_DIALECT or google',
    )
    .option('--oauth-dialect <dialect>', 'the same as --dialect, as `gantry dev` spells it')
    .option('--interval <seconds>', 'seconds a device must wait between polls', '5')
    .option('--expires-in <seconds>', 'seconds a device code and user code live', '1800')
    .option('--code-quota <n/window>', 'device code requests allowed per client per window, e.g. 100/60s', '100/60s')
    .option('--refresh-limit <n[/m]>', 'refresh tokens kept per client and user [and per user]; beyond, the oldest stop working', '100/500')
    .option('--access-token-ttl <seconds>', 'seconds an access token lives', '3599')
    .option('--time-based-access <seconds>', "the client's refresh tokens expire after this many seconds (time-based access)")
    .option('--scope-base <url>', 'the scope URI prefix', 'https://www.googleapis.com')
    .option('--user-code-case <case>', 'upper (ABCD-EFGH), lower or mixed (proves a client keeps the case)', 'upper')
    .option('--client-id <id>', 'the registered client id (default: random)')
    .option('--client-secret <secret>', 'its secret (default: random)')
    .addHelpText(
      'after',
      '\nAdmin endpoints under <url>/_gantry/: clients, users, device/approve|deny|expire, users/{user}/revoke-access|revoke-sessions|disable,\nsecurity-events, requests, stats, reset (GET <url>/_gantry/ lists them; see docs/auth.md).',
    )
    .action(async (flags: DevOAuthFlags, command: Command) => {
      const { startOAuthServer } = await devServerModules.oauth();
      const { json } = context.globals(command);
      const host = devHostOf(command);
      const port = devServerPort(flags.port, 'GANTRY_DEV_OAUTH_PORT', DEV_OAUTH_PORT);
      const dialect = dialectOf(flags, command);
      if (!['upper', 'lower', 'mixed'].includes(flags.userCodeCase))
        throw new UsageError(`--user-code-case must be upper, lower or mixed, got "${flags.userCodeCase}"`);
      if (flags.scopeBase !== undefined && !/^https?:\/\/[^\s/?#]+(?:\/[^\s?#]*[^\s/?#])?$/.test(flags.scopeBase))
        throw new UsageError(`--scope-base must be an http(s) URL without a trailing slash, got "${flags.scopeBase}"`);
      const timeBased = flags.timeBasedAccess !== undefined ? seconds('--time-based-access', flags.timeBasedAccess, 1, 10 * 365 * 86_400) : undefined;
      const options: OAuthServerOptions = {
        host,
        port,
        dialect,
        interval: seconds('--interval', flags.interval, 0, 3600),
        expiresIn: seconds('--expires-in', flags.expiresIn, 1, 86_400),
        codeQuota: parseCodeQuota(flags.codeQuota),
        refreshLimit: parseRefreshLimit(flags.refreshLimit),
        accessTokenTtl: seconds('--access-token-ttl', flags.accessTokenTtl, 1, 86_400),
        userCodeCase: flags.userCodeCase as OAuthServerOptions['userCodeCase'],
        ...(flags.scopeBase ? { scopeBase: flags.scopeBase } : {}),
        log: (line) => context.logger.debug(line),
      };
      const clientSpec = {
        name: 'Gantry CLI (dev)',
        ...(flags.clientId ? { id: flags.clientId } : {}),
        ...(flags.clientSecret ? { secret: flags.clientSecret } : {}),
        ...(timeBased ? { timeBasedAccessSeconds: timeBased } : {}),
      };
      const server = await listenAsAsked({ host, port, portFlag: '--port' }, () => startOAuthServer(options));
      let client: { id: string; secret: string | null };
      try {
        client = server.registerClient(clientSpec);
      } catch (error) {
        await server.stop();
        throw error;
      }
      const clientId = client.id;
      const secret = client.secret!;
      const env = { GANTRY_AUTH_URL: server.url, GANTRY_OAUTH_CLIENT_ID: clientId, GANTRY_OAUTH_CLIENT_SECRET: secret, GANTRY_API_URL: server.url };
      const endpoints = {
        metadata: server.metadataUrl,
        authorization: `${server.url}/authorize`,
        token: `${server.url}/token`,
        registration: `${server.url}/register`,
        introspection: `${server.url}/introspect`,
        jwks: server.jwksUri,
        revocation: `${server.url}/revoke`,
        deviceApproval: `${server.url}/device`,
      };
      await serveAlone(context.out, json, server, {
        json: () => ({
          dialect: server.dialect,
          discovery: server.discoveryUrl,
          clientId,
          clientSecret: secret,
          env,
          endpoints,
          login: { username: 'dev', password: 'dev' },
        }),
        text() {
          context.out.line(`authorization server (${server.dialect}) on ${server.url}; approval page ${server.url}/device`);
          context.out.line(`client: ${clientId} (limited input${timeBased ? `, time-based access ${timeBased} s` : ''}); user: dev@gantry.test`);
          context.out.line(
            `context-server clients (authorization code + PKCE S256): metadata ${endpoints.metadata}; authorize ${endpoints.authorization}; register ${endpoints.registration}; introspect ${endpoints.introspection}; jwks ${endpoints.jwks}; sign in as dev / dev`,
          );
          context.out.line(
            `export ${Object.entries(env)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`,
          );
        },
      });
    });
}
