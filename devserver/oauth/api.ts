// The resource endpoints: GET /userinfo and the video API's channels list (DEV-EP-VIDEO-CHANNELS, YouTube Data API v3
// channels.list renamed). The access token comes in `Authorization: Bearer` or in query `access_token`
// (DEV-AUTH-ACCESS-TOKEN-TRANSPORT); both at once is a 400, as RFC 6750 §2 says.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { OAuthContext } from './context.js';
import type { Reply } from './http.js';
import type { AccessToken, User } from './store.js';

const CHANNEL_PARTS = new Set(['id', 'snippet', 'statistics', 'status']);

function apiError(status: number, reason: string, message: string, statusText: string, headers?: Record<string, string>): Reply {
  return {
    status,
    body: { error: { code: status, message, errors: [{ message, domain: 'global', reason }], status: statusText } },
    ...(headers ? { headers } : {}),
  };
}

type Authorized = { token: AccessToken; user: User } | Reply;

/** The caller's live access token and its user, or the 400/401 answer. */
export function authorize(context: OAuthContext, req: IncomingMessage, url: URL): Authorized {
  const realm = `realm="${context.origin()}"`;
  const header = req.headers.authorization;
  const fromHeader = header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  const fromQuery = url.searchParams.get('access_token');
  if (header !== undefined && fromHeader === undefined) {
    return apiError(401, 'authError', 'The Authorization header must be "Bearer <access token>".', 'UNAUTHENTICATED', {
      'www-authenticate': `Bearer ${realm}, error="invalid_request"`,
    });
  }
  if (fromHeader !== undefined && fromQuery !== null) {
    return apiError(400, 'badRequest', 'Send the access token in one place: the Authorization header or the access_token parameter.', 'INVALID_ARGUMENT', {
      'www-authenticate': `Bearer ${realm}, error="invalid_request"`,
    });
  }
  const value = fromHeader ?? fromQuery;
  if (!value) {
    return apiError(401, 'required', 'Request is missing required authentication credential. Expected OAuth 2 access token.', 'UNAUTHENTICATED', {
      'www-authenticate': `Bearer ${realm}`,
    });
  }
  const token = context.store.accessTokens.get(value);
  const user = token ? context.store.users.get(token.username) : undefined;
  if (!token || token.revoked || token.expiresAt <= Date.now() || !user || user.disabled) {
    return apiError(401, 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token.', 'UNAUTHENTICATED', {
      'www-authenticate': `Bearer ${realm}, error="invalid_token", error_description="The access token is invalid, expired or revoked"`,
    });
  }
  return { token, user };
}

/** GET /userinfo (OpenID Connect): sub always, e-mail with `email`, name with `profile`. */
export function userinfo(context: OAuthContext, req: IncomingMessage, url: URL): Reply {
  const auth = authorize(context, req, url);
  if (!('token' in auth)) return auth;
  const { token, user } = auth;
  return {
    status: 200,
    body: {
      sub: user.sub,
      ...(token.scopes.includes('email') ? { email: user.email, email_verified: true } : {}),
      ...(token.scopes.includes('profile') ? { name: user.name } : {}),
    },
  };
}

/**
 * POST /tokeninfo (Google's token information endpoint): what a resource server asks to accept an access token — its
 * client, subject, scopes and expiry. The token comes in the form body; Google also takes it in the query, which
 * would put it in access logs, so only the body is accepted here. An unknown, expired or revoked token is a 400
 * `invalid_token`, as Google answers.
 */
export function tokeninfo(context: OAuthContext, form: URLSearchParams): Reply {
  const value = form.get('access_token');
  if (!value) return { status: 400, body: { error: 'invalid_request', error_description: 'access_token is required in the form body' } };
  const token = context.store.accessTokens.get(value);
  const user = token ? context.store.users.get(token.username) : undefined;
  const now = Date.now();
  if (!token || token.revoked || token.expiresAt <= now || !user || user.disabled)
    return { status: 400, body: { error: 'invalid_token', error_description: 'Invalid Value' } };
  return {
    status: 200,
    body: {
      azp: token.clientId,
      aud: token.clientId,
      sub: user.sub,
      scope: token.scopes.join(' '),
      exp: String(Math.floor(token.expiresAt / 1000)),
      expires_in: String(Math.max(0, Math.floor((token.expiresAt - now) / 1000))),
      ...(token.scopes.includes('email') ? { email: user.email, email_verified: 'true' } : {}),
    },
  };
}

/** GET /video/v3/channels?part=…&mine=true (or id=…). */
export function channels(context: OAuthContext, req: IncomingMessage, url: URL): Reply {
  const auth = authorize(context, req, url);
  if (!('token' in auth)) return auth;
  const { token, user } = auth;
  const video = [`${context.options.scopeBase}/auth/video`, `${context.options.scopeBase}/auth/video.readonly`];
  if (!token.scopes.some((s) => video.includes(s))) {
    return apiError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED', {
      'www-authenticate': `Bearer realm="${context.origin()}", error="insufficient_scope", scope="${video.join(' ')}"`,
    });
  }
  const part = url.searchParams.get('part');
  if (!part) return apiError(400, 'required', 'Required parameter: part', 'INVALID_ARGUMENT');
  const parts = part.split(',').map((p) => p.trim());
  const unknown = parts.find((p) => !CHANNEL_PARTS.has(p));
  if (unknown !== undefined)
    return apiError(400, 'invalidPart', `The part "${unknown}" is not known. Known parts: ${[...CHANNEL_PARTS].join(', ')}.`, 'INVALID_ARGUMENT');
  const mine = url.searchParams.get('mine');
  const ids = url.searchParams.get('id');
  if (mine !== 'true' && !ids) return apiError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: mine, id.', 'INVALID_ARGUMENT');
  const channel = channelOf(user);
  const items = channel && (mine === 'true' || ids!.split(',').includes(channel.id)) ? [channelItem(channel, parts)] : [];
  return {
    status: 200,
    body: { kind: 'video#channelListResponse', etag: etag(items), pageInfo: { totalResults: items.length, resultsPerPage: 5 }, items },
  };
}

function channelOf(user: User): { id: string; title: string; user: User } | undefined {
  if (user.channelTitle === null) return undefined;
  const id = `UC${createHash('sha256').update(`channel:${user.sub}`).digest('base64url').slice(0, 22)}`;
  return { id, title: user.channelTitle, user };
}

function channelItem(channel: { id: string; title: string; user: User }, parts: string[]): Record<string, unknown> {
  const item: Record<string, unknown> = { kind: 'video#channel', etag: etag(channel.id), id: channel.id };
  if (parts.includes('snippet')) {
    item.snippet = {
      title: channel.title,
      description: `The channel of ${channel.user.name} on the Gantry dev authorization server.`,
      customUrl: `@${channel.user.username.toLowerCase()}`,
      publishedAt: '2024-01-01T00:00:00Z',
      localized: { title: channel.title, description: '' },
    };
  }
  if (parts.includes('statistics')) item.statistics = { viewCount: '0', subscriberCount: '0', hiddenSubscriberCount: false, videoCount: '0' };
  if (parts.includes('status')) item.status = { privacyStatus: 'public', isLinked: true, longUploadsStatus: 'allowed' };
  return item;
}

function etag(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 27);
}
