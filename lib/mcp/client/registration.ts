/**
 * RFC 7591 dynamic client registration of Gantry as a native public client (CTX-STD-RFC7591): one loopback redirect
 * URI, the authorization code and refresh token grants, no client secret (`token_endpoint_auth_method: none`).
 */
import { ExitCode } from '../../errors.js';
import type { HttpClient } from '../../http/index.js';
import { processRegistrationResponse, registrationRequest as sendRegistration } from '../../oauth/index.js';
import type { DiscoveredAuthorizationServer } from './discovery.js';
import { ContextClientError, fromOAuth, peerFailed } from './errors.js';

export interface RegisteredClientAnswer {
  clientId: string;
  /** Only when the server insisted on a confidential client despite `none`; never written to disk. */
  clientSecret?: string;
  tokenEndpointAuthMethod: string;
}

/** The registration request Gantry sends for `redirectUri`. */
export function registrationRequest(redirectUri: string): Record<string, unknown> {
  return {
    client_name: 'Gantry',
    application_type: 'native',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** Registers at the server's `registration_endpoint`; a refusal is `CTX_REGISTRATION_FAILED` (1, or 3 for a 5xx). */
export async function registerClient(
  http: HttpClient,
  server: DiscoveredAuthorizationServer,
  redirectUri: string,
  options: { signal?: AbortSignal } = {},
): Promise<RegisteredClientAnswer> {
  const endpoint = server.metadata.registration_endpoint;
  if (!endpoint)
    throw new ContextClientError(`${server.issuer} offers no dynamic client registration`, { code: 'CTX_REGISTRATION_FAILED', exitCode: ExitCode.checkFailed });
  let registered;
  try {
    const answer = await sendRegistration(http, endpoint, registrationRequest(redirectUri), {
      signal: options.signal,
      serverFailure: peerFailed,
      followRedirects: true,
    });
    registered = processRegistrationResponse(answer, `the registration endpoint of ${server.issuer}`);
  } catch (error) {
    throw fromOAuth(error, 'CTX_REGISTRATION_FAILED');
  }
  const method = registered.tokenEndpointAuthMethod ?? 'none';
  return registered.clientSecret !== undefined && method !== 'none'
    ? { clientId: registered.clientId, clientSecret: registered.clientSecret, tokenEndpointAuthMethod: method }
    : { clientId: registered.clientId, tokenEndpointAuthMethod: 'none' };
}
