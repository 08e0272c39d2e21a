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
import { RouteTable, type RouteEntry } from '../kit/index.js';
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

interface AdminCall {
  req: IncomingMessage;
  method: string;
  path: string;
  params: Record<string, string>;
}

interface AdminRoute extends RouteEntry {
  answer: (context: OAuthContext, hooks: AdminHooks, call: AdminCall) => Reply | Promise<Reply>;
}

const ok = (body: unknown = { ok: true }, status = 200): Reply => ({ status, body });

/** POST /_gantry/users/{user}/<action>: what a user does at the provider, with the body's fields. */
const userAction = (action: string, act: (context: OAuthContext, who: string, body: Record<string, unknown>) => Reply): AdminRoute => ({
  method: 'POST',
  template: `/_gantry/users/{user}/${action}`,
  answer: async (context, _hooks, { req, params }) => act(context, params.user!, await readJson(req)),
});

/** A client's routes: 404 for a client there is not (whatever the method), then the method's answer, if any. */
const clientRoute = (
  template: string,
  method: string,
  act: (context: OAuthContext, client: Client, req: IncomingMessage) => Reply | Promise<Reply>,
): AdminRoute => ({
  method: '*',
  template,
  answer: (context, _hooks, call) => {
    const found = context.store.clients.get(call.params.id!);
    if (!found) return { status: 404, body: { error: `no client ${call.params.id}` } };
    return call.method === method ? act(context, found, call.req) : noAdminEndpoint(call.method, call.path);
  },
});

const ADMIN_TABLE = new RouteTable<AdminRoute>(
  [
    userAction('revoke-access', (context, who, body) => ok({ revoked: userRevokesAccess(context, who, text(body, 'client_id', false)) })),
    userAction('revoke-sessions', (context, who) => {
      revokeSessions(context, who);
      return ok();
    }),
    userAction('disable', (context, who, body) => {
      disableAccount(context, who, text(body, 'reason', false));
      return ok();
    }),
    userAction('enable', (context, who) => {
      enableAccount(context, who);
      return ok(userJson(userOf(context, who)));
    }),
    clientRoute('/_gantry/clients/{id}/receivers', 'POST', async (context, client, req) => {
      addReceiver(context, client.id, text(await readJson(req), 'url')!);
      return ok(clientJson(client), 201);
    }),
    clientRoute('/_gantry/clients/{id}', 'DELETE', (context, client) => {
      for (const token of context.store.refreshTokens.values()) if (token.clientId === client.id) context.store.revokeGrant(token, 'client-removed');
      context.store.clients.delete(client.id);
      return { status: 204 };
    }),
    { method: 'GET', template: '/_gantry/', answer: () => ok({ routes: ADMIN_ROUTES }) },
    { method: 'GET', template: '/_gantry', answer: () => ok({ routes: ADMIN_ROUTES }) },
    { method: 'GET', template: '/_gantry/clients', answer: (context) => ok([...context.store.clients.values()].map((c) => clientJson(c))) },
    {
      method: 'POST',
      template: '/_gantry/clients',
      answer: async (context, _hooks, { req }) => ok(clientJson(context.store.registerClient((await readJson(req)) as ClientSpec), true), 201),
    },
    { method: 'GET', template: '/_gantry/users', answer: (context) => ok([...context.store.users.values()].map(userJson)) },
    {
      method: 'POST',
      template: '/_gantry/users',
      answer: async (context, _hooks, { req }) => ok(userJson(context.store.addUser((await readJson(req)) as unknown as UserSpec)), 201),
    },
    { method: 'GET', template: '/_gantry/device-codes', answer: (context) => ok(deviceCodes(context)) },
    ...(['approve', 'deny'] as const).map((decision): AdminRoute => ({
      method: 'POST',
      template: `/_gantry/device/${decision}`,
      answer: async (context, _hooks, { req }) => {
        const body = await readJson(req);
        decideCode(context, text(body, 'user_code')!, decision === 'approve' ? 'allow' : 'deny', text(body, 'account', false));
        return ok();
      },
    })),
    {
      method: 'POST',
      template: '/_gantry/device/expire',
      answer: async (context, _hooks, { req }) => {
        expireCode(context, text(await readJson(req), 'user_code')!);
        return ok();
      },
    },
    { method: 'GET', template: '/_gantry/tokens', answer: (context) => ok(tokenSummary(context)) },
    {
      method: 'POST',
      template: '/_gantry/tokens/expire',
      answer: async (context, _hooks, { req }) => {
        expireToken(context, text(await readJson(req), 'token')!);
        return ok();
      },
    },
    {
      method: 'GET',
      template: '/_gantry/security-events',
      answer: async (context) => {
        await context.events.idle();
        return ok(context.events.list());
      },
    },
    { method: 'GET', template: '/_gantry/requests', answer: (_context, hooks) => ok(hooks.requests()) },
    {
      method: 'DELETE',
      template: '/_gantry/requests',
      answer: (_context, hooks) => {
        hooks.clearRequests();
        return { status: 204 };
      },
    },
    { method: 'GET', template: '/_gantry/stats', answer: (context) => ok(context.stats) },
    {
      method: 'POST',
      template: '/_gantry/reset',
      answer: (_context, hooks) => {
        hooks.reset();
        return ok();
      },
    },
  ],
  // As sent: no HEAD for GET; any method or path it does not have is the one 404 below.
  { headAsGet: false },
);

function noAdminEndpoint(method: string, path: string): Reply {
  return { status: 404, body: { error: `no admin endpoint ${method} ${path}`, routes: ADMIN_ROUTES } };
}

export async function handleAdmin(context: OAuthContext, hooks: AdminHooks, method: string, path: string, req: IncomingMessage): Promise<Reply> {
  const found = ADMIN_TABLE.match(method, path);
  return 'route' in found ? found.route.answer(context, hooks, { req, method, path, params: found.params }) : noAdminEndpoint(method, path);
}
