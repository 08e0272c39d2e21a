// The admin and test API under /_gantry/ (JSON in and out; no credential values in any answer but a new client's).
import type { IncomingMessage } from 'node:http';
import { UsageError } from '../../lib/errors.js';
import {
  addReceiver,
  decideCode,
  deviceCodes,
  disableAccount,
  enableAccount,
  expireCode,
  expireToken,
  revokeSessions,
  tokenSummary,
  userOf,
  userRevokesAccess,
} from './accounts.js';
import type { OAuthContext } from './context.js';
import { readJson, type Reply } from './http.js';
import type { ClientSpec, UserSpec } from './options.js';
import type { Client, User } from './store.js';

export const ADMIN_ROUTES = [
  'GET /_gantry/clients',
  'POST /_gantry/clients {id?, secret? (null: public), type?: limited-input|web, name?, orgInternal?, timeBasedAccessSeconds?, adminPolicyScopes?, securityEventReceivers?} — or an authorization-code client {redirectUris, tokenEndpointAuthMethod?: none|client_secret_basic|client_secret_post, type?: native|web, name?, scope?}',
  'DELETE /_gantry/clients/{id}',
  'POST /_gantry/clients/{id}/receivers {url}',
  'GET /_gantry/users',
  'POST /_gantry/users {username, email, sub?, name?, adminPolicyScopes?, channelTitle?}',
  'POST /_gantry/users/{user}/revoke-access {client_id?}',
  'POST /_gantry/users/{user}/revoke-sessions',
  'POST /_gantry/users/{user}/disable {reason?}',
  'POST /_gantry/users/{user}/enable',
  'GET /_gantry/device-codes',
  'POST /_gantry/device/approve {user_code, account?}',
  'POST /_gantry/device/deny {user_code}',
  'POST /_gantry/device/expire {user_code}',
  'GET /_gantry/tokens',
  'POST /_gantry/tokens/expire {token}',
  'GET /_gantry/security-events',
  'GET /_gantry/requests',
  'DELETE /_gantry/requests',
  'GET /_gantry/stats',
  'POST /_gantry/reset',
];

export interface AdminHooks {
  requests(): unknown[];
  clearRequests(): void;
  reset(): void;
}

export function clientJson(client: Client, withSecret = false): Record<string, unknown> {
  return {
    client_id: client.id,
    ...(withSecret ? { client_secret: client.secret } : {}),
    public: client.secret === null,
    type: client.type,
    name: client.name,
    ...(client.orgInternal ? { orgInternal: client.orgInternal } : {}),
    ...(client.timeBasedAccessSeconds ? { timeBasedAccessSeconds: client.timeBasedAccessSeconds } : {}),
    adminPolicyScopes: client.adminPolicyScopes,
    securityEventReceivers: client.receivers,
    ...(client.codeClient ? { redirect_uris: client.redirectUris, token_endpoint_auth_method: client.authMethod, grant_types: client.grantTypes } : {}),
  };
}

export function userJson(user: User): Record<string, unknown> {
  return {
    username: user.username,
    email: user.email,
    sub: user.sub,
    name: user.name,
    adminPolicyScopes: user.adminPolicyScopes,
    channelTitle: user.channelTitle,
    disabled: user.disabled,
  };
}

const text = (body: Record<string, unknown>, name: string, required = true): string | undefined => {
  const value = body[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value === '') throw new UsageError(`${name} must be a non-empty string`);
  return value;
};

export async function handleAdmin(context: OAuthContext, hooks: AdminHooks, method: string, path: string, req: IncomingMessage): Promise<Reply> {
  const ok = (body: unknown = { ok: true }, status = 200): Reply => ({ status, body });
  const user = /^\/_gantry\/users\/([^/]+)\/(revoke-access|revoke-sessions|disable|enable)$/.exec(path);
  if (user && method === 'POST') {
    const who = decodeURIComponent(user[1]!);
    const body = await readJson(req);
    switch (user[2]) {
      case 'revoke-access':
        return ok({ revoked: userRevokesAccess(context, who, text(body, 'client_id', false)) });
      case 'revoke-sessions':
        revokeSessions(context, who);
        return ok();
      case 'disable':
        disableAccount(context, who, text(body, 'reason', false));
        return ok();
      default:
        enableAccount(context, who);
        return ok(userJson(userOf(context, who)));
    }
  }
  const client = /^\/_gantry\/clients\/([^/]+)(\/receivers)?$/.exec(path);
  if (client) {
    const id = decodeURIComponent(client[1]!);
    const found = context.store.clients.get(id);
    if (!found) return { status: 404, body: { error: `no client ${id}` } };
    if (client[2] && method === 'POST') {
      addReceiver(context, id, text(await readJson(req), 'url')!);
      return ok(clientJson(found), 201);
    }
    if (!client[2] && method === 'DELETE') {
      for (const token of context.store.refreshTokens.values()) if (token.clientId === id) context.store.revokeGrant(token, 'client-removed');
      context.store.clients.delete(id);
      return { status: 204 };
    }
  }
  switch (`${method} ${path}`) {
    case 'GET /_gantry/':
    case 'GET /_gantry':
      return ok({ routes: ADMIN_ROUTES });
    case 'GET /_gantry/clients':
      return ok([...context.store.clients.values()].map((c) => clientJson(c)));
    case 'POST /_gantry/clients': {
      const created = context.store.registerClient((await readJson(req)) as ClientSpec);
      return ok(clientJson(created, true), 201);
    }
    case 'GET /_gantry/users':
      return ok([...context.store.users.values()].map(userJson));
    case 'POST /_gantry/users':
      return ok(userJson(context.store.addUser((await readJson(req)) as unknown as UserSpec)), 201);
    case 'GET /_gantry/device-codes':
      return ok(deviceCodes(context));
    case 'POST /_gantry/device/approve':
    case 'POST /_gantry/device/deny': {
      const body = await readJson(req);
      decideCode(context, text(body, 'user_code')!, path.endsWith('approve') ? 'allow' : 'deny', text(body, 'account', false));
      return ok();
    }
    case 'POST /_gantry/device/expire':
      expireCode(context, text(await readJson(req), 'user_code')!);
      return ok();
    case 'GET /_gantry/tokens':
      return ok(tokenSummary(context));
    case 'POST /_gantry/tokens/expire':
      expireToken(context, text(await readJson(req), 'token')!);
      return ok();
    case 'GET /_gantry/security-events':
      await context.events.idle();
      return ok(context.events.list());
    case 'GET /_gantry/requests':
      return ok(hooks.requests());
    case 'DELETE /_gantry/requests':
      hooks.clearRequests();
      return { status: 204 };
    case 'GET /_gantry/stats':
      return ok(context.stats);
    case 'POST /_gantry/reset':
      hooks.reset();
      return ok();
    default:
      return { status: 404, body: { error: `no admin endpoint ${method} ${path}`, routes: ADMIN_ROUTES } };
  }
}
