/**
 * Token answers, refresh and revoke (DEV-TOK-*, DEV-TL-*, DEV-EP-REFRESH, DEV-EP-REVOKE). Refresh keeps the refresh
 * token it had unless the server sends a new one (Google's answer has none; a rotating server's does: AMB-16). Revoke
 * sends the token in a form body, never in the URL (AMB-18), where proxies and access logs would keep it.
 */
import { terminalText } from '../terminal-text.js';
import { ProtocolError, type HttpClient } from '../http/index.js';
import {
  errorResponse,
  processTokenResponse,
  refreshTokenGrantRequest,
  revocationRequest,
  type OAuthAnswer,
  type OAuthConfig,
  type TokenResponse,
} from '../oauth/index.js';
import { DeviceLoginError, fromOAuth, oauthError } from './errors.js';
import type { AuthEndpoints } from './discovery.js';
import { sealTokens } from './store/login.js';
import type { TokenSet } from './store/types.js';

export interface ClientCredentials {
  clientId: string;
  /** Sent on the poll, and on refresh when there is one (DEV-AUTH-CLIENT-SECRET; AMB-13). */
  clientSecret?: string | undefined;
}

/**
 * The OAuth core's configuration for these endpoints and client. The id and secret go in the body
 * (client_secret_post; `none` without a secret), where Google's device endpoints read them.
 */
export function oauthConfig(http: HttpClient, endpoints: AuthEndpoints, client?: ClientCredentials): OAuthConfig {
  return {
    http,
    server: {
      issuer: endpoints.issuer,
      token_endpoint: endpoints.token,
      device_authorization_endpoint: endpoints.deviceAuthorization,
      revocation_endpoint: endpoints.revocation,
    },
    ...(client
      ? {
          client: {
            clientId: client.clientId,
            clientSecret: client.clientSecret,
            authMethod: client.clientSecret === undefined ? 'none' : 'client_secret_post',
          },
        }
      : {}),
  };
}

/**
 * A token response as a TokenSet: what it leaves out comes from `previous` (a refresh answer without a refresh token
 * keeps the one it had: AMB-16), else the defaults — an hour, `defaultScope`.
 */
export function tokenSetOf(response: TokenResponse, now: number, previous?: Partial<TokenSet>, defaultScope = ''): TokenSet {
  const refreshToken = response.refreshToken ?? previous?.refreshToken;
  const refreshTokenExpiresAt =
    response.refreshTokenExpiresIn !== undefined
      ? now + response.refreshTokenExpiresIn * 1000
      : refreshToken === previous?.refreshToken
        ? previous?.refreshTokenExpiresAt
        : undefined;
  const idToken = response.idToken ?? previous?.idToken;
  // Sealed: a caller's console.log(result) shows `[hidden]`, not the tokens.
  return sealTokens({
    accessToken: response.accessToken,
    tokenType: 'Bearer',
    expiresAt: now + (response.expiresIn ?? 3600) * 1000,
    scope: response.scope ?? previous?.scope ?? defaultScope,
    obtainedAt: now,
    ...(refreshToken ? { refreshToken } : {}),
    ...(refreshTokenExpiresAt !== undefined ? { refreshTokenExpiresAt } : {}),
    ...(idToken ? { idToken } : {}),
  });
}

/** A token answer (200) as a TokenSet; `previous` supplies what a refresh answer leaves out. */
export function readTokens(answer: OAuthAnswer, now: number, previous?: TokenSet): TokenSet {
  try {
    return tokenSetOf(processTokenResponse(answer), now, previous);
  } catch (error) {
    throw fromOAuth(error);
  }
}

/** A new access token for the refresh token (DEV-TL-REFRESH). A refused refresh token asks for a new login. */
export async function refreshTokens(
  http: HttpClient,
  endpoints: AuthEndpoints,
  client: ClientCredentials,
  tokens: TokenSet,
  options: { now?: () => number; signal?: AbortSignal } = {},
): Promise<TokenSet> {
  const now = options.now ?? Date.now;
  if (!tokens.refreshToken)
    throw new DeviceLoginError('this login has no refresh token, and its access token has expired', {
      code: 'AUTH_REFRESH_REVOKED',
      hint: 'run `gantry auth login` again',
    });
  if (tokens.refreshTokenExpiresAt !== undefined && now() >= tokens.refreshTokenExpiresAt) {
    throw new DeviceLoginError('the refresh token has expired: this login had time-based access, and its time is up', {
      code: 'AUTH_REFRESH_REVOKED',
      oauthError: 'invalid_grant',
      hint: 'run `gantry auth login` again',
    });
  }
  const answer = await refreshTokenGrantRequest(oauthConfig(http, endpoints, client), tokens.refreshToken, {}, options.signal);
  if (answer.status === 200) return readTokens(answer, now(), tokens);
  const refused = errorResponse(answer);
  if (refused?.error === 'invalid_grant') {
    throw new DeviceLoginError(
      `the authorization server no longer accepts this login's refresh token (invalid_grant${refused.description ? `: ${refused.description.slice(0, 200)}` : ''})`,
      {
        code: 'AUTH_REFRESH_REVOKED',
        oauthError: 'invalid_grant',
        status: answer.status,
        hint: 'it was revoked (by you, in the account settings, or by logout elsewhere), it expired, or newer logins pushed it out (the server keeps only so many per client and user): run `gantry auth login` again',
      },
    );
  }
  if (refused) throw oauthError(refused.error, refused.description, answer.status);
  throw new ProtocolError(
    `POST ${endpoints.token} answered ${answer.status} to a refresh${answer.text ? `: ${terminalText(answer.text)}` : ''}`,
    answer.status >= 500 ? 'the authorization server failed; try again later' : undefined,
  );
}

/**
 * Revokes `token` (an access token revokes its refresh token too: DEV-TL-REVOKE). A token the server no longer knows
 * counts as revoked: the goal is that it works nowhere.
 */
export async function revokeToken(
  http: HttpClient,
  endpoints: AuthEndpoints,
  token: string,
  client?: ClientCredentials,
  signal?: AbortSignal,
): Promise<'revoked' | 'already-invalid'> {
  const answer = await revocationRequest(oauthConfig(http, endpoints, client), token, {}, signal);
  if (answer.status === 200 || answer.status === 204) return 'revoked';
  const refused = errorResponse(answer);
  if (answer.status === 400 && (refused?.error === 'invalid_token' || refused?.error === 'invalid_request' || refused?.error === 'invalid_grant'))
    return 'already-invalid';
  throw new DeviceLoginError(
    `the authorization server refused to revoke the token: ${answer.status}${refused ? ` ${refused.error}` : ''}${refused?.description ? ` (${refused.description.slice(0, 200)})` : ''}`,
    {
      code: 'AUTH_REVOKE_FAILED',
      status: answer.status,
      ...(refused ? { oauthError: refused.error } : {}),
      exitCode: answer.status >= 500 ? 3 : 1,
      hint: 'the tokens are kept; try `gantry auth logout` again, or revoke the access in the account settings',
    },
  );
}

/** The claims of an ID token. It came straight from the token endpoint over TLS, which OpenID Connect Core §3.1.3.7 accepts in place of checking its signature; it only names the account. */
export function idTokenClaims(idToken: string | undefined): { issuer?: string; sub?: string; email?: string } | undefined {
  if (!idToken) return undefined;
  const payload = idToken.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    return {
      ...(typeof claims.iss === 'string' ? { issuer: claims.iss } : {}),
      ...(typeof claims.sub === 'string' ? { sub: claims.sub } : {}),
      ...(typeof claims.email === 'string' ? { email: claims.email } : {}),
    };
  } catch {
    return undefined;
  }
}
