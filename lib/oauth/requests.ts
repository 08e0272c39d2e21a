/**
 * The requests to an authorization server, one function each, all on one configuration (the HTTP client, the
 * server's endpoints, the client and how it authenticates) — openid-client's and oauth4webapi's layout: a request
 * function hands back the answer, a `process…` function checks a success and turns an error body into an OAuthError.
 * Device authorization and the device-code grant (RFC 8628), the authorization-code grant with PKCE (RFC 7636), the
 * refresh grant, the client-credentials grant (RFC 6749 §4.4), token exchange (RFC 8693), the JWT-bearer grant
 * (RFC 7523 §2.1), revocation (RFC 7009) and introspection (RFC 7662). Tokens go in form bodies, never in a URL.
 */
import type { HttpClient } from '../http/index.js';
import { registerSecret } from '../redact.js';
import { clientAuthentication, type OAuthClient } from './client-auth.js';
import { OAuthError, errorOfAnswer, oauthErrorCodes } from './errors.js';
import { optionalSeconds, optionalString, postForm, postJson, requiredString, type OAuthAnswer, type SendOptions } from './transport.js';

/** The endpoints a configuration sends to, by their RFC 8414 names. */
export interface OAuthEndpoints {
  issuer?: string | undefined;
  token_endpoint: string;
  device_authorization_endpoint?: string | undefined;
  revocation_endpoint?: string | undefined;
  introspection_endpoint?: string | undefined;
}

/** One authorization server, one client: what every request needs. */
export interface OAuthConfig {
  http: HttpClient;
  server: OAuthEndpoints;
  /** Absent only for a revocation sent without client authentication. */
  client?: OAuthClient | undefined;
  /** Statuses the HTTP core raises (after its retries) instead of handing back; default none. */
  serverFailure?: ((status: number) => boolean) | undefined;
}

export const grantTypes = {
  authorizationCode: 'authorization_code',
  refreshToken: 'refresh_token',
  deviceCode: 'urn:ietf:params:oauth:grant-type:device_code',
  clientCredentials: 'client_credentials',
  tokenExchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
  jwtBearer: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
} as const;

/** RFC 8693 §3 token type identifiers, and the identity assertion grant's (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant). */
export const tokenTypes = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  idJag: 'urn:ietf:params:oauth:token-type:id-jag',
} as const;

type Parameters = Record<string, string | undefined>;

function endpoint(config: OAuthConfig, field: 'token_endpoint' | 'device_authorization_endpoint' | 'revocation_endpoint' | 'introspection_endpoint'): string {
  const url = config.server[field];
  if (!url)
    throw new OAuthError(`the authorization server${config.server.issuer ? ` ${config.server.issuer}` : ''} names no ${field}`, {
      code: oauthErrorCodes.invalidMetadata,
      field,
    });
  return url;
}

/** A form POST to one of the server's endpoints, the client authenticated as configured. */
export async function send(config: OAuthConfig, url: string, parameters: Parameters, signal?: AbortSignal, repeatable = false): Promise<OAuthAnswer> {
  const auth = config.client ? await clientAuthentication(config.client, url) : { form: {}, headers: {} };
  return postForm(config.http, url, { ...auth.form, ...parameters }, { headers: auth.headers, signal, serverFailure: config.serverFailure, repeatable });
}

/** A grant at the token endpoint: its type, its own fields, then the caller's parameters. */
function grantRequest(config: OAuthConfig, grantType: string, fields: Parameters, parameters: Parameters, signal?: AbortSignal): Promise<OAuthAnswer> {
  return send(config, endpoint(config, 'token_endpoint'), { grant_type: grantType, ...fields, ...parameters }, signal);
}

/**
 * RFC 8628 §3.1: the device and user codes. It may be resent: a code from a request whose answer was lost is never
 * shown to anyone, so nobody approves it, and it expires (§3.2 `expires_in`).
 */
export function deviceAuthorizationRequest(config: OAuthConfig, parameters: Parameters, signal?: AbortSignal): Promise<OAuthAnswer> {
  return send(config, endpoint(config, 'device_authorization_endpoint'), parameters, signal, true);
}

/** RFC 8628 §3.4: one poll of the token endpoint. */
export function deviceCodeGrantRequest(config: OAuthConfig, deviceCode: string, signal?: AbortSignal): Promise<OAuthAnswer> {
  return send(config, endpoint(config, 'token_endpoint'), { device_code: deviceCode, grant_type: grantTypes.deviceCode }, signal);
}

/** RFC 6749 §4.1.3 with RFC 7636 §4.5: the code redeemed with its verifier. */
export function authorizationCodeGrantRequest(
  config: OAuthConfig,
  grant: { code: string; redirectUri: string; codeVerifier: string },
  parameters: Parameters = {},
  signal?: AbortSignal,
): Promise<OAuthAnswer> {
  const fields = { code: grant.code, redirect_uri: grant.redirectUri, code_verifier: grant.codeVerifier };
  return grantRequest(config, grantTypes.authorizationCode, fields, parameters, signal);
}

/** RFC 6749 §6. */
export function refreshTokenGrantRequest(config: OAuthConfig, refreshToken: string, parameters: Parameters = {}, signal?: AbortSignal): Promise<OAuthAnswer> {
  return grantRequest(config, grantTypes.refreshToken, { refresh_token: refreshToken }, parameters, signal);
}

/** RFC 6749 §4.4.2: a token for the client itself, no person involved. */
export function clientCredentialsGrantRequest(config: OAuthConfig, parameters: Parameters = {}, signal?: AbortSignal): Promise<OAuthAnswer> {
  return grantRequest(config, grantTypes.clientCredentials, {}, parameters, signal);
}

/** RFC 8693 §2.1's token to exchange and what to exchange it for (token type identifiers from tokenTypes). */
export interface TokenExchange {
  subjectToken: string;
  subjectTokenType: string;
  requestedTokenType?: string;
}

/** RFC 8693 §2.1: one token exchanged for another. */
export function tokenExchangeRequest(config: OAuthConfig, exchange: TokenExchange, parameters: Parameters = {}, signal?: AbortSignal): Promise<OAuthAnswer> {
  const fields = { subject_token: exchange.subjectToken, subject_token_type: exchange.subjectTokenType, requested_token_type: exchange.requestedTokenType };
  return grantRequest(config, grantTypes.tokenExchange, fields, parameters, signal);
}

/** RFC 7523 §2.1: a JWT (an ID-JAG, say) presented as the authorization grant. */
export function jwtBearerGrantRequest(config: OAuthConfig, assertion: string, parameters: Parameters = {}, signal?: AbortSignal): Promise<OAuthAnswer> {
  return grantRequest(config, grantTypes.jwtBearer, { assertion }, parameters, signal);
}

/** RFC 7009 §2.1. Revoking a token twice revokes it once (§2.2: an unknown token is answered 200), so it may be resent. */
export function revocationRequest(config: OAuthConfig, token: string, parameters: Parameters = {}, signal?: AbortSignal): Promise<OAuthAnswer> {
  return send(config, endpoint(config, 'revocation_endpoint'), { token, ...parameters }, signal, true);
}

/** RFC 7662 §2.1. A question, not an action: it may be resent. */
export function introspectionRequest(config: OAuthConfig, token: string, parameters: Parameters = {}, signal?: AbortSignal): Promise<OAuthAnswer> {
  return send(config, endpoint(config, 'introspection_endpoint'), { token, ...parameters }, signal, true);
}

/** RFC 6749 §5.1, as far as Gantry reads it: a bearer token and what comes with it. */
export interface TokenResponse {
  accessToken: string;
  tokenType: 'Bearer';
  /** Seconds, when the server said. */
  expiresIn: number | undefined;
  refreshToken: string | undefined;
  /** Seconds, when the server said (Google's time-based access). */
  refreshTokenExpiresIn: number | undefined;
  scope: string | undefined;
  idToken: string | undefined;
}

/**
 * A token endpoint's answer: a 200 with a bearer access token, else an OAuthError — `OAUTH_ERROR_RESPONSE` with the
 * §5.2 body, or `OAUTH_INVALID_RESPONSE` for a success that breaks the protocol.
 */
export function processTokenResponse(answer: OAuthAnswer, what = 'the token answer'): TokenResponse {
  if (answer.status !== 200) throw errorOfAnswer(answer, what);
  const accessToken = requiredString(answer, 'access_token', what);
  const tokenType = answer.json?.token_type;
  if (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer') {
    throw new OAuthError(`${what} from ${answer.url} has token_type ${JSON.stringify(tokenType ?? null).slice(0, 40)}, not Bearer`, {
      code: oauthErrorCodes.invalidResponse,
      status: answer.status,
      url: answer.url,
      field: 'token_type',
      hint: 'Gantry sends only bearer tokens',
    });
  }
  return {
    accessToken,
    tokenType: 'Bearer',
    expiresIn: optionalSeconds(answer, 'expires_in', what),
    refreshToken: optionalString(answer, 'refresh_token'),
    refreshTokenExpiresIn: optionalSeconds(answer, 'refresh_token_expires_in', what),
    scope: typeof answer.json?.scope === 'string' ? answer.json.scope : undefined,
    idToken: optionalString(answer, 'id_token'),
  };
}

/**
 * RFC 8693 §2.2.1: the issued token and its type — any token type, since an exchanged token need not be a bearer
 * token (an ID-JAG comes as `N_A`); `expected` a token type identifier the answer must name.
 */
export function processTokenExchangeResponse(
  answer: OAuthAnswer,
  expected?: string,
  what = 'the token exchange',
): { token: string; issuedTokenType: string; expiresIn: number | undefined } {
  if (answer.status !== 200) throw errorOfAnswer(answer, what);
  const token = requiredString(answer, 'access_token', what);
  registerSecret(token);
  const issuedTokenType = requiredString(answer, 'issued_token_type', what);
  if (expected !== undefined && issuedTokenType !== expected)
    throw new OAuthError(`${what} from ${answer.url} issued a ${issuedTokenType.slice(0, 80)}, not the ${expected} asked for`, {
      code: oauthErrorCodes.invalidResponse,
      status: answer.status,
      url: answer.url,
      field: 'issued_token_type',
    });
  return { token, issuedTokenType, expiresIn: optionalSeconds(answer, 'expires_in', what) };
}

/** RFC 7662 §2.2: the introspection answer, `active` a boolean; an error answer is an OAuthError. */
export function processIntrospectionResponse(answer: OAuthAnswer, what = 'the introspection endpoint'): Record<string, unknown> & { active: boolean } {
  if (answer.status !== 200 || !answer.json) throw errorOfAnswer(answer, what);
  if (typeof answer.json.active !== 'boolean')
    throw new OAuthError(`${what} answered without a boolean active`, {
      code: oauthErrorCodes.invalidResponse,
      status: answer.status,
      url: answer.url,
      field: 'active',
    });
  return answer.json as Record<string, unknown> & { active: boolean };
}

/** RFC 7591 §3.1: a client registered at the server's registration endpoint. */
export function registrationRequest(http: HttpClient, url: string, metadata: Record<string, unknown>, options: SendOptions = {}): Promise<OAuthAnswer> {
  return postJson(http, url, metadata, options);
}

/** RFC 7591 §3.2.1: the client the server registered (201, or 200 as some send); an error answer is an OAuthError. */
export function processRegistrationResponse(
  answer: OAuthAnswer,
  what = 'the registration endpoint',
): { clientId: string; clientSecret: string | undefined; tokenEndpointAuthMethod: string | undefined } {
  if (answer.status !== 201 && answer.status !== 200) throw errorOfAnswer(answer, what);
  const clientId = optionalString(answer, 'client_id');
  if (clientId === undefined)
    throw new OAuthError(`${what} answered without a client_id`, {
      code: oauthErrorCodes.invalidResponse,
      status: answer.status,
      url: answer.url,
      field: 'client_id',
    });
  return { clientId, clientSecret: optionalString(answer, 'client_secret'), tokenEndpointAuthMethod: optionalString(answer, 'token_endpoint_auth_method') };
}
