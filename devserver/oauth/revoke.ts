// POST /revoke (RFC 7009; Google's revocation endpoint renamed, DEV-EP-REVOKE). The client authenticates first, as it
// does at /token (RFC 7009 §2.1): a confidential client by HTTP Basic or client_secret_post (an authorization-code
// client by the method it registered), a public client by client_id alone. A failure is 401 invalid_client, with
// WWW-Authenticate: Basic when Basic was tried; a request naming no client is refused the same way, so a token that
// leaked cannot be revoked by whoever holds it. A token issued to another client is answered as an unknown one in the
// server's dialect and stays live: the answer says nothing about another client's tokens.
import type { IncomingMessage } from 'node:http';
import type { OAuthContext } from './context.js';
import { oauthError } from './context.js';
import { basicCredentials, sameSecret, type Reply } from './http.js';
import type { Client } from './store.js';

/** What /revoke accepts, advertised as revocation_endpoint_auth_methods_supported. */
export const REVOCATION_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="gantry-dev-oauth"' };

/** The client the request authenticates as, or the 400/401 reply. */
function authenticate(context: OAuthContext, form: URLSearchParams, req: IncomingMessage): Client | Reply {
  const basic = basicCredentials(req);
  const triedBasic = basic !== undefined || /^Basic\b/i.test(req.headers.authorization ?? '');
  const challenge = triedBasic ? BASIC_CHALLENGE : undefined;
  if (basic && (form.has('client_secret') || (form.has('client_id') && form.get('client_id') !== basic.id))) {
    return oauthError(400, 'invalid_request', 'Client credentials given both in the Authorization header and the body');
  }
  const id = basic?.id ?? form.get('client_id');
  const secret = basic?.secret ?? form.get('client_secret');
  if (!id)
    return oauthError(
      401,
      'invalid_client',
      'Client authentication is required: send client_id (and the client secret, by HTTP Basic or client_secret).',
      challenge,
    );
  const client = context.store.clients.get(id);
  if (!client) return oauthError(401, 'invalid_client', 'The OAuth client was not found.', challenge);
  const given = secret !== null && secret !== '';
  if (client.secret === null) {
    // A public client has nothing to prove; a secret it sends means it is not the client it names.
    return given ? oauthError(401, 'invalid_client', 'A public client sends no secret.', challenge) : client;
  }
  if (!given || !sameSecret(secret, client.secret)) return oauthError(401, 'invalid_client', 'Client authentication failed.', challenge);
  // An authorization-code client authenticates the way it registered, as at /token.
  if (client.authMethod === 'client_secret_basic' && !basic)
    return oauthError(401, 'invalid_client', 'Client authentication failed (client_secret_basic).', BASIC_CHALLENGE);
  if (client.authMethod === 'client_secret_post' && basic)
    return oauthError(401, 'invalid_client', 'Client authentication failed (client_secret_post).', BASIC_CHALLENGE);
  return client;
}

export function revoke(context: OAuthContext, form: URLSearchParams, url: URL, req: IncomingMessage): Reply {
  const client = authenticate(context, form, req);
  if ('status' in client) return client;
  const { store, options } = context;
  const value = form.get('token') ?? url.searchParams.get('token');
  if (!value) return oauthError(400, 'invalid_request', 'Missing required parameter: token');
  const now = Date.now();
  const access = store.accessTokens.get(value);
  const refresh = access ? store.refreshTokens.get(access.refreshToken) : store.refreshTokens.get(value);
  const owner = access?.clientId ?? refresh?.clientId;
  const live =
    owner === client.id &&
    (access
      ? !access.revoked && access.expiresAt > now
      : refresh !== undefined && !refresh.revoked && !(refresh.expiresAt !== undefined && refresh.expiresAt <= now));
  if (!live) {
    // Google answers 400 invalid_token; RFC 7009 §2.2 answers 200 to a token that is already invalid.
    return options.dialect === 'google' ? oauthError(400, 'invalid_token', 'Token expired or revoked') : { status: 200, body: {} };
  }
  context.stats.revocations++;
  // DEV-TL-REVOKE: an access token's refresh token goes with it, and a refresh token takes its access tokens.
  if (refresh) store.revokeGrant(refresh, 'revoked');
  else if (access) access.revoked = 'revoked';
  return { status: 200, body: {} };
}
