// What a person or an administrator does in account settings (DEV-TL-USER-REVOKE, DEV-RISC-*): revoke an app's
// access, sign out every session, disable the account — each followed by the security events Google's RISC sends.
import { UsageError } from '../../lib/errors.js';
import type { OAuthContext } from './context.js';
import { applyDecision } from './pages.js';
import { checkReceiverUrl, type Client, type User } from './store.js';

export function userOf(context: OAuthContext, who: string): User {
  const user = context.store.findUser(who);
  if (!user) throw new UsageError(`no user ${who}`);
  return user;
}

function clientOf(context: OAuthContext, id: string): Client {
  const client = context.store.clients.get(id);
  if (!client) throw new UsageError(`no client ${id}`);
  return client;
}

/** The clients a user has ever authorized (RISC events go to the apps the account has used). */
function clientsOf(context: OAuthContext, user: User): Client[] {
  const ids = new Set([...context.store.refreshTokens.values()].filter((t) => t.username === user.username).map((t) => t.clientId));
  return [...ids].map((id) => context.store.clients.get(id)).filter((c): c is Client => c !== undefined);
}

/** The user removes the app's access (one client, or every client): each refresh token stops working, with a token-revoked event. */
export function userRevokesAccess(context: OAuthContext, who: string, clientId?: string): number {
  const user = userOf(context, who);
  if (clientId !== undefined) clientOf(context, clientId);
  const grants = context.store.grantsOf(user.username, clientId);
  for (const token of grants) {
    context.store.revokeGrant(token, 'user-revoked');
    const client = context.store.clients.get(token.clientId);
    if (client) context.events.tokenRevoked(user, client, token);
  }
  return grants.length;
}

/** Every session of the user ends: a sessions-revoked event to each app the user has used; OAuth tokens stay (as at Google). */
export function revokeSessions(context: OAuthContext, who: string): void {
  const user = userOf(context, who);
  context.events.sessionsRevoked(user, clientsOf(context, user));
}

/** The account is disabled: its tokens stop working, approvals are refused, and each app gets account-disabled. */
export function disableAccount(context: OAuthContext, who: string, reason?: string): void {
  const user = userOf(context, who);
  const clients = clientsOf(context, user);
  user.disabled = true;
  for (const token of context.store.grantsOf(user.username)) context.store.revokeGrant(token, 'account-disabled');
  context.events.accountDisabled(user, clients, reason);
}

export function enableAccount(context: OAuthContext, who: string): void {
  userOf(context, who).disabled = false;
}

export function addReceiver(context: OAuthContext, clientId: string, url: string): void {
  const client = clientOf(context, clientId);
  checkReceiverUrl(url);
  if (!client.receivers.includes(url)) client.receivers.push(url);
}

/** Approves or denies a user code without the browser (as the person would on the consent page). */
export function decideCode(context: OAuthContext, userCode: string, decision: 'allow' | 'deny', account?: string): void {
  const code = context.store.codesByUserCode.get(userCode.replace(/[\s-]/g, ''));
  if (!code) throw new UsageError(`no user code ${userCode}`);
  const result = applyDecision(context, code, decision, account);
  if (result !== 'ok') throw new UsageError(result);
}

/** Ends a code's life now (for expiry tests that should not wait expires_in). */
export function expireCode(context: OAuthContext, userCode: string): void {
  const code = context.store.codesByUserCode.get(userCode.replace(/[\s-]/g, ''));
  if (!code) throw new UsageError(`no user code ${userCode}`);
  code.expiresAt = Math.min(code.expiresAt, Date.now());
}

/** An access token, or a time-based refresh token, expires now. */
export function expireToken(context: OAuthContext, token: string): void {
  const access = context.store.accessTokens.get(token);
  const refresh = context.store.refreshTokens.get(token);
  if (access) access.expiresAt = Math.min(access.expiresAt, Date.now());
  else if (refresh) refresh.expiresAt = Math.min(refresh.expiresAt ?? Infinity, Date.now());
  else throw new UsageError('no such token');
}

/** The device codes, without their device_code values. */
export function deviceCodes(context: OAuthContext) {
  return [...context.store.codes.values()].map((c) => ({
    user_code: c.userCode,
    client_id: c.clientId,
    scopes: c.scopes,
    state: c.expiresAt <= Date.now() && c.state === 'pending' ? 'expired' : c.state,
    interval: c.interval,
    polls: c.polls,
    slow_downs: c.slowDowns,
    expires_at: new Date(c.expiresAt).toISOString(),
    ...(c.username ? { account: c.username } : {}),
  }));
}

/** The tokens, without their values. */
export function tokenSummary(context: OAuthContext) {
  const now = Date.now();
  const stateOf = (t: { revoked?: string; expiresAt?: number }) => t.revoked ?? (t.expiresAt !== undefined && t.expiresAt <= now ? 'expired' : 'active');
  return {
    refresh_tokens: [...context.store.refreshTokens.values()].map((t) => ({
      client_id: t.clientId,
      account: t.username,
      scopes: t.scopes,
      issued_at: new Date(t.issuedAt).toISOString(),
      state: stateOf(t),
    })),
    access_tokens: [...context.store.accessTokens.values()].map((t) => ({ client_id: t.clientId, account: t.username, scopes: t.scopes, state: stateOf(t) })),
  };
}
