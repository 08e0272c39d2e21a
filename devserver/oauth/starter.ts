// How `gantry dev` starts the authorization server: port 5762 (GANTRY_DEV_OAUTH_PORT overrides it; 0 picks any free
// port; a taken default port falls back to a free one), Google's dialect (`--oauth-dialect` or GANTRY_DEV_OAUTH_DIALECT
// rfc8628 for RFC 8628 clients such as openid-client), the poll interval from
// GANTRY_DEV_OAUTH_INTERVAL (default 5 s; the demo sets 1), one limited-input client with a random id and secret,
// and the one dev user. It prints the environment `gantry auth` and `gantry mcp serve` read.
import { UsageError } from '../../lib/errors.js';
import type { DevServerStarter } from '../dev-server.js';
import { claimDevPort } from '../port.js';
import type { Dialect } from './options.js';
import type { OAuthServer } from './server.js';

export const DEV_OAUTH_PORT = 5762;
const INTERVAL_VARIABLE = 'GANTRY_DEV_OAUTH_INTERVAL';
export const DIALECT_VARIABLE = 'GANTRY_DEV_OAUTH_DIALECT';
const DIALECTS: readonly Dialect[] = ['google', 'rfc8628'];

/**
 * The dialect: the flag's value when given, else GANTRY_DEV_OAUTH_DIALECT, else google (the demo and the tests rely on
 * it). A value other than google or rfc8628 is a usage error, raised before anything listens.
 */
export function devOAuthDialect(flag: { name: string; value: string | undefined }, env: NodeJS.ProcessEnv = process.env): Dialect {
  const [source, raw] = flag.value !== undefined ? [flag.name, flag.value] : [DIALECT_VARIABLE, env[DIALECT_VARIABLE]];
  if (raw === undefined || (raw === '' && source === DIALECT_VARIABLE)) return 'google';
  if (!(DIALECTS as readonly string[]).includes(raw)) {
    throw new UsageError(`${source} must be google or rfc8628, got "${raw.slice(0, 100)}"`, {
      hint: "google: Google's device flow (verification_url, 428 while pending); rfc8628: RFC 8628 (verification_uri, verification_uri_complete, 400 errors) for clients such as openid-client",
    });
  }
  return raw as Dialect;
}

/** GANTRY_DEV_OAUTH_INTERVAL: whole seconds from 0 to 3600; 5 when unset. */
export function devOAuthInterval(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[INTERVAL_VARIABLE];
  if (raw === undefined || raw === '') return 5;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) > 3600) throw new UsageError(`${INTERVAL_VARIABLE} must be whole seconds from 0 to 3600, got "${raw}"`);
  return Number(raw);
}

export async function startDevOAuth(context: { host: string; oauthDialect?: Dialect }, env: NodeJS.ProcessEnv = process.env): Promise<OAuthServer> {
  const onPort = claimDevPort({ name: 'authorization server', variable: 'GANTRY_DEV_OAUTH_PORT', port: DEV_OAUTH_PORT }, context.host, env);
  const interval = devOAuthInterval(env);
  const dialect = context.oauthDialect ?? devOAuthDialect({ name: '--oauth-dialect', value: undefined }, env);
  const { startOAuthServer } = await import('./server.js');
  const server = await onPort((p) => startOAuthServer({ host: context.host, port: p, interval, dialect }));
  const client = server.registerClient({ name: 'Gantry CLI (dev)' });
  return {
    ...server,
    credentials: { clientId: client.id, clientSecret: client.secret!, user: 'dev@gantry.test' },
    // GANTRY_MCP_AUTHORIZATION_SERVER: `gantry mcp serve` takes its tokens from this server (the authorization code
    // flow with PKCE, registration and resource indicators), and clients register themselves.
    env: {
      GANTRY_AUTH_URL: server.url,
      GANTRY_OAUTH_CLIENT_ID: client.id,
      GANTRY_OAUTH_CLIENT_SECRET: client.secret!,
      GANTRY_API_URL: server.url,
      GANTRY_MCP_AUTHORIZATION_SERVER: server.url,
    },
  };
}

export const devServer: DevServerStarter = {
  name: 'oauth',
  description:
    "authorization server (Google's device flow: discovery, device codes, approval page, tokens, revoke, the video API's channels) on 127.0.0.1:5762, one random client",
  start: (context) => startDevOAuth(context),
};
