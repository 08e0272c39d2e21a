// What every part of the authorization server shares: options, state, key, events, stats, and the error replies of
// the two dialects.
import type { SecurityEvents } from './events.js';
import type { Reply } from './http.js';
import type { SigningKey } from './jwt.js';
import type { ResolvedOptions } from './options.js';
import type { RefreshToken, Store } from './store.js';

export interface OAuthStats {
  deviceCodeRequests: number;
  quotaRejections: number;
  polls: number;
  slowDowns: number;
  tokensIssued: number;
  refreshes: number;
  revocations: number;
  /** Token endpoint errors by `error`. */
  tokenErrors: Record<string, number>;
}

export function newStats(): OAuthStats {
  return { deviceCodeRequests: 0, quotaRejections: 0, polls: 0, slowDowns: 0, tokensIssued: 0, refreshes: 0, revocations: 0, tokenErrors: {} };
}

export interface OAuthContext {
  options: ResolvedOptions;
  store: Store;
  key: SigningKey;
  events: SecurityEvents;
  stats: OAuthStats;
  /** The server's origin, e.g. http://127.0.0.1:5762 (the issuer). */
  origin(): string;
}

/** Google's status for each token error; the rfc8628 dialect answers 400 to all but invalid_client (RFC 6749 §5.2). */
const GOOGLE_STATUS: Record<string, number> = {
  authorization_pending: 428,
  slow_down: 403,
  access_denied: 403,
  org_internal: 403,
  invalid_client: 401,
  unauthorized_client: 401,
};

const GOOGLE_DESCRIPTION: Record<string, string> = {
  authorization_pending: 'Precondition Required',
  slow_down: 'Forbidden',
  access_denied: 'Forbidden',
};

/** Google's own poll errors; RFC 8628 §3.5 names the outcome `access_denied` (the description keeps the reason). */
const GOOGLE_ONLY: Record<string, string> = { org_internal: 'access_denied', admin_policy_enforced: 'access_denied' };

/** An `{error, error_description}` reply of the token endpoint in the server's dialect (DEV-ERR-BODY-SHAPE). */
export function tokenError(context: OAuthContext, googleError: string, description?: string, headers?: Record<string, string>): Reply {
  const google = context.options.dialect === 'google';
  const error = google ? googleError : (GOOGLE_ONLY[googleError] ?? googleError);
  context.stats.tokenErrors[error] = (context.stats.tokenErrors[error] ?? 0) + 1;
  const status = google ? (GOOGLE_STATUS[error] ?? 400) : error === 'invalid_client' ? 401 : 400;
  const text = (google ? GOOGLE_DESCRIPTION[error] : undefined) ?? description ?? error.replace(/_/g, ' ');
  return { status, body: { error, error_description: text }, ...(headers ? { headers } : {}) };
}

/** A plain `{error, error_description}` reply with a fixed status (device code and revocation endpoints). */
export function oauthError(status: number, error: string, description: string, headers?: Record<string, string>): Reply {
  return { status, body: { error, error_description: description }, ...(headers ? { headers } : {}) };
}

/**
 * RFC 6749 §6: a refresh may narrow the granted scopes, never widen them. The scopes to issue (the granted ones when
 * none are asked), or the invalid_scope reply naming the extra ones (cut to `shown` characters).
 */
export function refreshScopes(context: OAuthContext, asked: string | null, granted: string[], shown?: number): string[] | Reply {
  if (asked === null || asked.trim() === '') return granted;
  const scopes = [...new Set(asked.trim().split(/\s+/))];
  const extra = scopes.filter((s) => !granted.includes(s)).join(' ');
  return extra ? tokenError(context, 'invalid_scope', `Scopes not granted: ${extra.slice(0, shown)}`) : scopes;
}

/**
 * The form's refresh_token if the store knows it and issued it to `client`; else the reply: invalid_request when it is
 * missing, invalid_grant with `invalid` as the description when it is unknown or another client's.
 */
export function clientRefreshToken(context: OAuthContext, client: { id: string }, form: URLSearchParams, invalid: string): RefreshToken | Reply {
  const value = form.get('refresh_token');
  if (!value) return tokenError(context, 'invalid_request', 'Missing required parameter: refresh_token');
  const token = context.store.refreshTokens.get(value);
  return token && token.clientId === client.id ? token : tokenError(context, 'invalid_grant', invalid);
}
