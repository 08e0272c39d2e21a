/**
 * RFC 7591 dynamic client registration of Gantry as a native public client (CTX-STD-RFC7591): one loopback redirect
 * URI, the authorization code and refresh token grants, no client secret (`token_endpoint_auth_method: none`).
 */
import { ExitCode } from '../../errors.js';
import type { HttpClient } from '../../http/index.js';
import { registerSecret } from '../../redact.js';
import { peerError, type DiscoveredAuthorizationServer } from './discovery.js';
import { ContextClientError } from './errors.js';

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
export async function registerClient(http: HttpClient, server: DiscoveredAuthorizationServer, redirectUri: string, options: { signal?: AbortSignal } = {}): Promise<RegisteredClientAnswer> {
  const endpoint = server.metadata.registration_endpoint;
  if (!endpoint) throw new ContextClientError(`${server.issuer} offers no dynamic client registration`, { code: 'CTX_REGISTRATION_FAILED', exitCode: ExitCode.checkFailed });
  const response = await http.request<unknown>({
    method: 'POST',
    url: endpoint,
    json: registrationRequest(redirectUri),
    accept: (status) => status < 500 && status !== 408 && status !== 429,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (response.status !== 201 && response.status !== 200) throw peerError(`the registration endpoint of ${server.issuer}`, response.status, response.body, 'CTX_REGISTRATION_FAILED');
  const body = response.body as Record<string, unknown> | undefined;
  if (body === null || typeof body !== 'object' || typeof body.client_id !== 'string' || body.client_id === '') {
    throw new ContextClientError(`the registration endpoint of ${server.issuer} answered without a client_id`, { code: 'CTX_REGISTRATION_FAILED' });
  }
  const clientSecret = typeof body.client_secret === 'string' && body.client_secret !== '' ? body.client_secret : undefined;
  registerSecret(clientSecret);
  const method = typeof body.token_endpoint_auth_method === 'string' ? body.token_endpoint_auth_method : 'none';
  return clientSecret !== undefined && method !== 'none'
    ? { clientId: body.client_id, clientSecret, tokenEndpointAuthMethod: method }
    : { clientId: body.client_id, tokenEndpointAuthMethod: 'none' };
}
