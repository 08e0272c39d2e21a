/**
 * The context-server client's refusals as one typed error. Each `code` is one reason; none carries a token (messages
 * and hints pass through the redactor). A refusal of the peers' answers is a definite "no" (1): asking again gives
 * the same answer; an authorization server that fails (5xx) is 3.
 */
import { ExitCode, type ExitCodeValue } from '../../errors.js';
import { OAuthError, OAuthFlowError, oauthErrorCodes, type OAuthErrorCode, type OAuthFlowErrorOptions } from '../../oauth/index.js';

/**
 * Each reason a context-server sign-in is refused, and its exit code: the peers' answer refused is 1. Where the peer
 * failed instead (5xx, 429, 408, a JSON-RPC internal error), the raising code passes 3.
 */
export const contextClientErrorCodes = {
  /** The protected resource metadata could not be found, or is not RFC 9728's shape. */
  CTX_NO_RESOURCE_METADATA: ExitCode.checkFailed,
  /** The metadata's `resource` is not the server that was called (RFC 9728 §3.3). */
  CTX_RESOURCE_MISMATCH: ExitCode.checkFailed,
  /** No authorization server metadata (RFC 8414 / OpenID configuration) at any of the well-known addresses. */
  CTX_NO_AS_METADATA: ExitCode.checkFailed,
  /** The authorization server metadata's `issuer` is not the issuer it was looked up for. */
  CTX_ISSUER_MISMATCH: ExitCode.checkFailed,
  /** The authorization server does not advertise PKCE S256. */
  CTX_NO_S256: ExitCode.checkFailed,
  /** An endpoint over plain http on a host that is not loopback (CTX-AS-HTTPS). */
  CTX_INSECURE_ENDPOINT: ExitCode.checkFailed,
  /** Dynamic client registration was refused. */
  CTX_REGISTRATION_FAILED: ExitCode.checkFailed,
  /** The callback's `state` is not the one sent. */
  CTX_STATE_MISMATCH: ExitCode.checkFailed,
  /** The callback's `iss` is missing (when the server promised it) or not the issuer (RFC 9207). */
  CTX_ISS_MISMATCH: ExitCode.checkFailed,
  /** The person refused on the authorization page (`error=access_denied`). */
  CTX_ACCESS_DENIED: ExitCode.checkFailed,
  /** The authorization server answered the authorization request with another error. */
  CTX_AUTHORIZATION_ERROR: ExitCode.checkFailed,
  /** Nobody completed the authorization in the browser in time. */
  CTX_AUTHORIZATION_TIMEOUT: ExitCode.checkFailed,
  /** The token endpoint refused the code or the refresh token. */
  CTX_TOKEN_ERROR: ExitCode.checkFailed,
  /** The server still answered 403 insufficient_scope after the one re-authorization with the merged scopes. */
  CTX_STEP_UP_REFUSED: ExitCode.checkFailed,
  /** The server still answered 401 after a fresh token. */
  CTX_UNAUTHORIZED: ExitCode.checkFailed,
  /** The context server answered a request with a JSON-RPC error or an HTTP error status (the SDK's errors, typed). */
  CTX_PROTOCOL_ERROR: ExitCode.checkFailed,
} as const satisfies Record<string, ExitCodeValue>;
export type ContextClientErrorCode = keyof typeof contextClientErrorCodes;

/** Every `code` the context-server client raises: its refusals, and its settings refused before sending (exit 2). */
export const mcpClientErrorCodes = [
  ...(Object.keys(contextClientErrorCodes) as ContextClientErrorCode[]),
  'CTX_SERVER_URL',
  'CTX_CLIENT',
  'CTX_NO_CLIENT',
  'CTX_CALLBACK_PORT',
] as const;
export type McpClientErrorCode = (typeof mcpClientErrorCodes)[number];

export class ContextClientError extends OAuthFlowError<ContextClientErrorCode> {
  constructor(message: string, options: OAuthFlowErrorOptions<ContextClientErrorCode>) {
    super(message, options, contextClientErrorCodes);
  }
}

/** A peer that failed (5xx, 429, 408) rather than answered: exit 3 instead of 1. */
export function peerFailed(status: number | undefined): boolean {
  return status !== undefined && (status >= 500 || status === 429 || status === 408);
}

const fromCore: Record<Exclude<OAuthErrorCode, 'OAUTH_ERROR_RESPONSE' | 'OAUTH_INVALID_RESPONSE'>, ContextClientErrorCode> = {
  [oauthErrorCodes.invalidMetadata]: 'CTX_NO_AS_METADATA',
  [oauthErrorCodes.issuerMismatch]: 'CTX_ISSUER_MISMATCH',
  [oauthErrorCodes.insecureEndpoint]: 'CTX_INSECURE_ENDPOINT',
};

/**
 * The OAuth core's neutral error as the client's: a metadata problem by its kind; a refusal or a broken answer of the
 * endpoint asked as `answered` (the token endpoint's CTX_TOKEN_ERROR, the registration's CTX_REGISTRATION_FAILED),
 * 3 when the peer failed. Anything else passes unchanged.
 */
export function fromOAuth(error: unknown, answered: 'CTX_TOKEN_ERROR' | 'CTX_REGISTRATION_FAILED' = 'CTX_TOKEN_ERROR'): unknown {
  if (!(error instanceof OAuthError)) return error;
  const code = error.code === oauthErrorCodes.errorResponse || error.code === oauthErrorCodes.invalidResponse ? answered : fromCore[error.code];
  return new ContextClientError(error.message, {
    code,
    ...(error.hint ? { hint: error.hint } : {}),
    ...(error.error !== undefined ? { oauthError: error.error } : {}),
    ...(error.status !== undefined ? { status: error.status } : {}),
    exitCode: peerFailed(error.status) ? ExitCode.remote : ExitCode.checkFailed,
  });
}
