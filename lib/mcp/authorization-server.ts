/**
 * An authorization server's metadata (RFC 8414, CTX-STD-RFC8414): the RFC 8414 document first, then OpenID Connect
 * discovery, each at the path-inserted form and OpenID's path-appended one. The document's `issuer` must equal the
 * issuer asked for exactly (RFC 8414 §3.3; the MCP authorization revision of 2026-07-28): metadata naming another
 * issuer could hand its keys or endpoints to whoever answers at that URL.
 */
import { GantryError, ExitCode } from '../errors.js';
import type { HttpClient } from '../http/index.js';
import { getJson } from '../auth/transport.js';
import { isLoopbackHost } from '../loopback.js';

export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  registration_endpoint?: string;
  introspection_endpoint?: string;
  jwks_uri?: string;
  scopes_supported?: string[];
  code_challenge_methods_supported?: string[];
  authorization_response_iss_parameter_supported?: boolean;
  client_id_metadata_document_supported?: boolean;
  token_endpoint_auth_methods_supported?: string[];
  [field: string]: unknown;
}

export class AuthorizationServerError extends GantryError {
  constructor(message: string, options: { code: string; hint?: string; exitCode?: 1 | 2 | 3 }) {
    super(message, { code: options.code, exitCode: options.exitCode ?? ExitCode.remote, ...(options.hint ? { hint: options.hint } : {}) });
    this.name = 'AuthorizationServerError';
  }
}

/** The URLs tried for `issuer`, in order (RFC 8414 §3.1, OpenID Connect Discovery §4, the MCP specification's order). */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const origin = `${url.protocol}//${url.host}`;
  if (path === '') return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  return [`${origin}/.well-known/oauth-authorization-server${path}`, `${origin}/.well-known/openid-configuration${path}`, `${origin}${path}/.well-known/openid-configuration`];
}

/** CTX-AS-HTTPS: an authorization server's endpoints are https, except on a loopback address. */
export function checkSecureEndpoint(endpoint: string, what: string, exitCode: 2 | 3 = ExitCode.remote): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new AuthorizationServerError(`${what} "${endpoint.slice(0, 200)}" is not a URL`, { code: 'AS_BAD_URL', exitCode });
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return url;
  throw new AuthorizationServerError(`${what} ${url.origin} is not https`, { code: 'AS_NOT_HTTPS', exitCode, hint: 'an authorization server must serve every endpoint over https (plain http is allowed on loopback addresses only)' });
}

export async function fetchAuthorizationServerMetadata(http: HttpClient, issuer: string, signal?: AbortSignal): Promise<AuthorizationServerMetadata> {
  checkSecureEndpoint(issuer, 'the authorization server', ExitCode.usage);
  const tried: string[] = [];
  for (const url of metadataUrls(issuer)) {
    const answer = await getJson(http, url, {}, signal);
    tried.push(`${url} (${answer.status})`);
    if (answer.status !== 200 || !answer.json) continue;
    const metadata = answer.json as AuthorizationServerMetadata;
    if (metadata.issuer !== issuer) {
      throw new AuthorizationServerError(`the authorization server metadata at ${url} names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}`, {
        code: 'AS_ISSUER_MISMATCH',
        hint: 'the issuer must match exactly (RFC 8414 §3.3); check the issuer URL given, or the server\'s configuration',
      });
    }
    for (const field of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'introspection_endpoint', 'jwks_uri'] as const) {
      const value = metadata[field];
      if (value !== undefined) {
        if (typeof value !== 'string') throw new AuthorizationServerError(`${field} of ${issuer}'s metadata is not a string`, { code: 'AS_BAD_METADATA' });
        checkSecureEndpoint(value, `${field} of ${issuer}`);
      }
    }
    return metadata;
  }
  throw new AuthorizationServerError(`no authorization server metadata for ${issuer}: tried ${tried.join(', ')}`, {
    code: 'AS_NO_METADATA',
    hint: 'the issuer URL must be the authorization server\'s own (RFC 8414 metadata or OpenID configuration under /.well-known/)',
  });
}
