// POST /token: the device code grant (DEV-EP-POLL-TOKEN, DEV-ST-*, every error of the spec's poll table) and the
// refresh grant (DEV-EP-REFRESH). Google's statuses by default; the rfc8628 dialect answers RFC 6749 §5.2's.
import type { IncomingMessage } from 'node:http';
import { clientRefreshToken, refreshScopes, tokenError, type OAuthContext } from './context.js';
import { basicCredentials, sameSecret, type Reply } from './http.js';
import { handleCodeFlowToken, isCodeFlowRequest } from './codeflow.js';
import { CODE_GRANT, DEVICE_GRANT, REFRESH_GRANT } from './options.js';
import type { Client, RefreshToken, User } from './store.js';

/** Polls closer together than the interval by less than this still count as on time: the network's jitter. */
export const POLL_GRACE_MS = 250;
const ID_TOKEN_SCOPES = new Set(['openid', 'email', 'profile']);

export function handleToken(context: OAuthContext, form: URLSearchParams, req: IncomingMessage): Reply {
  const grantType = form.get('grant_type') ?? '';
  // The authorization code flow (codeflow.ts): its grant, and refreshes by its clients or of its tokens.
  // A device client asking for the code grant is answered as before: the grant is not one it has (unsupported_grant_type).
  const claimed = context.store.clients.get(basicCredentials(req)?.id ?? form.get('client_id') ?? '');
  const deviceClient = claimed !== undefined && !claimed.codeClient;
  if ((grantType === CODE_GRANT && !deviceClient) || (grantType === REFRESH_GRANT && isCodeFlowRequest(context, form, req)))
    return handleCodeFlowToken(context, grantType, form, req);
  if (grantType !== DEVICE_GRANT && grantType !== REFRESH_GRANT)
    return tokenError(context, 'unsupported_grant_type', `Invalid grant_type: ${grantType.slice(0, 100)}`);
  const client = authenticateClient(context, form, req, grantType === DEVICE_GRANT);
  if (!('id' in client)) return client;
  return grantType === DEVICE_GRANT ? pollDeviceCode(context, client, form) : refresh(context, client, form);
}

/**
 * The client by `client_id` and `client_secret` (form or HTTP Basic). The poll needs the secret (DEV-AUTH-CLIENT-SECRET;
 * the rfc8628 dialect excuses public clients, registered without one); the refresh may carry it, and if it does it
 * must be right. A `web` client is the wrong type: 401 invalid_client (DEV-ERR-INVALID-CLIENT).
 */
function authenticateClient(context: OAuthContext, form: URLSearchParams, req: IncomingMessage, poll: boolean): Client | Reply {
  const basic = basicCredentials(req);
  if (basic && (form.has('client_secret') || (form.has('client_id') && form.get('client_id') !== basic.id))) {
    return tokenError(context, 'invalid_request', 'Client credentials given both in the Authorization header and the body');
  }
  const id = basic?.id ?? form.get('client_id');
  const secret = basic?.secret ?? form.get('client_secret');
  if (!id) return tokenError(context, 'invalid_request', 'Missing required parameter: client_id');
  const client = context.store.clients.get(id);
  const header = basic ? { 'www-authenticate': 'Basic realm="gantry-dev-oauth"' } : undefined;
  if (!client) return tokenError(context, 'invalid_client', 'The OAuth client was not found.', header);
  if (client.type !== 'limited-input') return tokenError(context, 'invalid_client', 'Invalid client type.', header);
  if (secret !== null && secret !== '') {
    if (client.secret === null || !sameSecret(secret, client.secret)) return tokenError(context, 'invalid_client', 'Unauthorized', header);
  } else if (poll && (client.secret !== null || context.options.dialect === 'google')) {
    return tokenError(context, 'invalid_client', 'client_secret is missing.', header);
  }
  return client;
}

function pollDeviceCode(context: OAuthContext, client: Client, form: URLSearchParams): Reply {
  const { store, stats } = context;
  const value = form.get('device_code');
  if (!value) return tokenError(context, 'invalid_request', 'Missing required parameter: device_code');
  const code = store.codes.get(value);
  if (!code || code.clientId !== client.id) return tokenError(context, 'invalid_grant', 'Malformed auth code.');
  const now = Date.now();
  stats.polls++;
  code.polls++;
  if (code.state === 'claimed') return tokenError(context, 'invalid_grant', 'The device code has already been claimed.');
  // AMB-17: after expires_in every poll gets RFC 8628's 400 expired_token (Google documents nothing for it).
  if (now >= code.expiresAt) return tokenError(context, 'expired_token', 'The device code has expired.');
  const previous = code.lastPollAt;
  code.lastPollAt = now;
  if (code.state === 'pending') {
    // RFC 8628 §3.5: slow_down adds 5 s to the interval for this and every later poll of the code.
    if (previous !== undefined && now - previous < code.interval * 1000 - POLL_GRACE_MS) {
      code.interval += 5;
      code.slowDowns++;
      stats.slowDowns++;
      return tokenError(context, 'slow_down', `Polling too frequently: wait at least ${code.interval} seconds between polls.`);
    }
    return tokenError(context, 'authorization_pending', 'The authorization request is still pending.');
  }
  if (code.state === 'denied') return tokenError(context, 'access_denied', 'The user denied the request.');
  const user = code.username ? store.users.get(code.username) : undefined;
  if (!user || user.disabled) return tokenError(context, 'access_denied', 'The account is disabled.');
  if (client.orgInternal && domainOf(user.email) !== client.orgInternal) {
    return tokenError(context, 'org_internal', `This client is limited to accounts of ${client.orgInternal}.`);
  }
  const blocked = code.scopes.filter((s) => client.adminPolicyScopes.includes(s) || user.adminPolicyScopes.includes(s));
  if (blocked.length > 0)
    return tokenError(context, 'admin_policy_enforced', `An administrator policy blocks the scope ${blocked.join(' ')} for this account.`);
  code.state = 'claimed';
  const { token: refreshToken } = store.issueRefreshToken(client, user.username, code.scopes, now);
  stats.tokensIssued++;
  return { status: 200, body: tokenBody(context, client, user, refreshToken, true, now) };
}

function refresh(context: OAuthContext, client: Client, form: URLSearchParams): Reply {
  const { store } = context;
  const token = clientRefreshToken(context, client, form, 'Token has been expired or revoked.');
  if ('status' in token) return token;
  const now = Date.now();
  const user = store.users.get(token.username);
  if (token.revoked || (token.expiresAt !== undefined && token.expiresAt <= now) || !user || user.disabled) {
    return tokenError(context, 'invalid_grant', 'Token has been expired or revoked.');
  }
  const scopes = refreshScopes(context, form.get('scope'), token.scopes);
  if (!Array.isArray(scopes)) return scopes;
  context.stats.refreshes++;
  return { status: 200, body: tokenBody(context, client, user, { ...token, scopes }, false, now) };
}

/** The token response (DEV-TOK-*); a refresh answers without a new refresh token, as Google's sample (DEV-REFRESH-RESPONSE). */
function tokenBody(context: OAuthContext, client: Client, user: User, refreshToken: RefreshToken, withRefresh: boolean, now: number): Record<string, unknown> {
  const stored = context.store.refreshTokens.get(refreshToken.value)!;
  const access = context.store.issueAccessToken({ ...stored, scopes: refreshToken.scopes }, now);
  const body: Record<string, unknown> = {
    access_token: access.value,
    expires_in: context.options.accessTokenTtl,
    ...(withRefresh ? { refresh_token: refreshToken.value } : {}),
    scope: refreshToken.scopes.join(' '),
    token_type: 'Bearer',
  };
  if (refreshToken.scopes.some((s) => ID_TOKEN_SCOPES.has(s))) body.id_token = idToken(context, client, user, refreshToken.scopes, now);
  if (stored.expiresAt !== undefined) body.refresh_token_expires_in = Math.max(0, Math.round((stored.expiresAt - now) / 1000));
  return body;
}

function idToken(context: OAuthContext, client: Client, user: User, scopes: string[], now: number): string {
  const iat = Math.floor(now / 1000);
  return context.key.sign({
    iss: context.origin(),
    azp: client.id,
    aud: client.id,
    sub: user.sub,
    ...(scopes.includes('email') || scopes.includes('openid') ? { email: user.email, email_verified: true } : {}),
    ...(scopes.includes('profile') ? { name: user.name } : {}),
    iat,
    exp: iat + context.options.idTokenTtl,
  });
}

export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}
