// The authorization server's security events received beside the platform's webhooks (`gantry hooks serve
// --security-events <path>`): RFC 8935 pushes verified against the server's published keys, and the stored logins of
// the account an event names dropped (docs/auth.md, "Security events").
import { terminalText } from '../../../terminal-text.js';
import type http from 'node:http';
import type { Logger } from '../../../log.js';
import { usage } from '../../context.js';

export interface SecurityEventsRoute {
  handle(request: http.IncomingMessage, response: http.ServerResponse): void;
  /** Where its keys come from, for the start line. */
  describe: string;
  close(): void;
}

/** The handler for GANTRY_AUTH_URL's events (one `report` line each, beside the delivery lines) to GANTRY_OAUTH_CLIENT_ID (and the other client ids of stored logins). */
export async function securityEventsRoute(env: NodeJS.ProcessEnv, logger: Logger, report: (line: string) => void): Promise<SecurityEventsRoute> {
  const authUrl = env.GANTRY_AUTH_URL || undefined;
  const clientId = env.GANTRY_OAUTH_CLIENT_ID || undefined;
  if (!authUrl || !clientId)
    throw usage('--security-events needs GANTRY_AUTH_URL and GANTRY_OAUTH_CLIENT_ID: the server whose events to believe, and the client they are for');
  const lib = await import('../../../auth/index.js');
  const base = lib.checkAuthUrl(authUrl, 'GANTRY_AUTH_URL');
  const http = lib.authHttpClient({ logger });
  const endpoints = await lib.discoverEndpoints(http, base);
  if (!endpoints.jwksUri || !endpoints.issuer) {
    http.close();
    throw usage(`${base} publishes no jwks_uri and issuer in its metadata: its security events cannot be verified`);
  }
  const audiences = [...new Set([clientId, ...(await lib.listProfiles()).filter((entry) => entry.authUrl === base).map((entry) => entry.clientId)])];
  const handler = lib.securityEventHandler({
    keys: lib.jwksKeys(http, endpoints.jwksUri, endpoints.issuer, audiences),
    onEvent: async (event) => {
      const dropped = await lib.applySecurityEvent(event);
      const kind = event.type.split('/').at(-1);
      report(
        `${new Date().toISOString()} security-event ${kind}${event.jti ? ` ${terminalText(event.jti)}` : ''}: ${dropped.length > 0 ? `dropped the stored login of ${dropped.join(', ')}` : 'no stored login of that account here'}`,
      );
    },
  });
  return { handle: handler, describe: `${endpoints.issuer} (keys ${endpoints.jwksUri})`, close: () => http.close() };
}
