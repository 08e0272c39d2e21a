// The authorization code flow for context-server clients (spec §B, CTX-*): OAuth 2.1 with PKCE S256 only, RFC 7591
// dynamic registration, RFC 8707 resource indicators giving RFC 9068 JWT access tokens with `aud` = the resource,
// RFC 9207 `iss` on the authorization response, refresh-token rotation for public clients, RFC 7662 introspection.
// The device flow (token.ts) is untouched: handleToken sends only code-flow grants and code clients' refreshes here.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { UsageError } from '../../lib/errors.js';
import { clientRefreshToken, refreshScopes, tokenError, type OAuthContext } from './context.js';
import { BadBody, basicCredentials, readRaw, sameSecret, type Reply } from './http.js';
import { randomText } from './jwt.js';
import { errorPage, loginPage } from './loginpage.js';
import { CODE_GRANT, REFRESH_GRANT, type TokenEndpointAuthMethod } from './options.js';
import { redirectUriProblem, type AccessToken, type Client, type User } from './store.js';

const REGISTER_MAX = 64 * 1024;
const TRANSACTION_MS = 10 * 60_000;
const CODE_MS = 60_000;
const AUTH_METHODS: TokenEndpointAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];
const OPTIONAL_TEXT = ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri', 'software_id', 'software_version'];

// ---------------------------------------------------------------------------------------------------------------
// POST /register (RFC 7591)

function metadataError(error: 'invalid_client_metadata' | 'invalid_redirect_uri', description: string, status = 400): Reply {
  return { status, body: { error, error_description: description } };
}

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

export async function register(context: OAuthContext, req: IncomingMessage): Promise<Reply> {
  let text: string;
  try {
    text = await readRaw(req, REGISTER_MAX);
  } catch (error) {
    if (error instanceof BadBody) return metadataError('invalid_client_metadata', 'The registration request is larger than 64 KiB.', 413);
    throw error;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return metadataError('invalid_client_metadata', 'The registration request must be application/json.');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return metadataError('invalid_client_metadata', 'The registration request is not valid JSON.');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return metadataError('invalid_client_metadata', 'The registration request must be a JSON object.');
  const meta = body as Record<string, unknown>;

  const applicationType = meta.application_type ?? 'native';
  if (applicationType !== 'native' && applicationType !== 'web') return metadataError('invalid_client_metadata', 'application_type must be "native" or "web".');
  const method = meta.token_endpoint_auth_method ?? 'none';
  if (typeof method !== 'string' || !AUTH_METHODS.includes(method as TokenEndpointAuthMethod)) {
    return metadataError('invalid_client_metadata', `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}.`);
  }
  const grantTypes = meta.grant_types ?? [CODE_GRANT, REFRESH_GRANT];
  if (!isStringList(grantTypes) || grantTypes.length === 0)
    return metadataError('invalid_client_metadata', 'grant_types must be a non-empty array of strings.');
  if (!grantTypes.includes(CODE_GRANT) || grantTypes.some((g) => g !== CODE_GRANT && g !== REFRESH_GRANT)) {
    return metadataError(
      'invalid_client_metadata',
      'grant_types must include "authorization_code" and may add "refresh_token"; no other grant is offered to registered clients.',
    );
  }
  const responseTypes = meta.response_types ?? ['code'];
  if (!isStringList(responseTypes) || responseTypes.length === 0 || responseTypes.some((r) => r !== 'code')) {
    return metadataError('invalid_client_metadata', 'response_types must be ["code"].');
  }
  const name = meta.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 200))
    return metadataError('invalid_client_metadata', 'client_name must be a string of 1-200 characters.');
  const scope = meta.scope;
  if (scope !== undefined) {
    if (typeof scope !== 'string' || scope.trim() === '') return metadataError('invalid_client_metadata', 'scope must be a non-empty space-separated string.');
    const unknown = scope
      .trim()
      .split(/\s+/)
      .filter((s) => !context.options.authorizationScopes.includes(s));
    if (unknown.length > 0) return metadataError('invalid_client_metadata', `Scopes this server does not offer: ${unknown.join(' ').slice(0, 300)}.`);
  }
  const extra: Record<string, unknown> = {};
  for (const field of OPTIONAL_TEXT) {
    if (meta[field] === undefined) continue;
    if (typeof meta[field] !== 'string') return metadataError('invalid_client_metadata', `${field} must be a string.`);
    extra[field] = meta[field];
  }
  if (meta.contacts !== undefined) {
    if (!isStringList(meta.contacts)) return metadataError('invalid_client_metadata', 'contacts must be an array of strings.');
    extra.contacts = meta.contacts;
  }
  const redirectUris = meta.redirect_uris;
  if (redirectUris === undefined) return metadataError('invalid_redirect_uri', 'redirect_uris is required.');
  if (!isStringList(redirectUris)) return metadataError('invalid_client_metadata', 'redirect_uris must be an array of strings.');
  if (redirectUris.length === 0) return metadataError('invalid_redirect_uri', 'redirect_uris must name at least one redirect URI.');
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri, applicationType);
    if (problem) return metadataError('invalid_redirect_uri', `${problem[0]!.toUpperCase()}${problem.slice(1)}.`);
  }
  const client = context.store.registerClient(
    {
      redirectUris: [...new Set(redirectUris)],
      tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
      grantTypes,
      type: applicationType,
      ...(typeof name === 'string' ? { name: name.trim() } : {}),
      ...(typeof scope === 'string' ? { scope } : {}),
    },
    extra,
  );
  return { status: 201, body: registrationJson(client) };
}

/** The registration response (RFC 7591 §3.2.1): the client's id, its secret when confidential, and its metadata. */
export function registrationJson(client: Client): Record<string, unknown> {
  return {
    client_id: client.id,
    client_id_issued_at: client.issuedAt,
    ...(client.secret !== null ? { client_secret: client.secret, client_secret_expires_at: 0 } : {}),
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: client.authMethod,
    grant_types: client.grantTypes,
    response_types: ['code'],
    application_type: client.type,
    client_name: client.name,
    ...(client.scope !== undefined ? { scope: client.scope } : {}),
    ...client.extraMetadata,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// GET /authorize and POST /authorize/decision

/** Why a `resource` (RFC 8707 §2) is refused, or undefined: an absolute URI without a fragment. */
export function resourceProblem(resource: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(resource)) return 'resource must be an absolute URI';
  try {
    new URL(resource);
  } catch {
    return 'resource must be an absolute URI';
  }
  if (resource.includes('#')) return 'resource must not contain a fragment';
  return undefined;
}

/** A 302 to the client's redirect URI with the response parameters and `iss` (RFC 9207, or as `callbackIssuer` says). */
function redirectTo(context: OAuthContext, redirectUri: string, params: Record<string, string | null | undefined>): Reply {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined) url.searchParams.append(name, value);
  const iss = context.options.callbackIssuer === undefined ? context.origin() : context.options.callbackIssuer;
  if (iss !== null) url.searchParams.append('iss', iss);
  return { status: 302, headers: { location: url.href } };
}

function dropExpired(context: OAuthContext, now: number): void {
  for (const [id, tx] of context.store.transactions) if (tx.expiresAt <= now) context.store.transactions.delete(id);
  for (const [value, code] of context.store.authorizationCodes) if (code.expiresAt + TRANSACTION_MS <= now) context.store.authorizationCodes.delete(value);
}

/** GET /authorize: a 400 page for an unknown client or redirect URI, errors by redirect, else the login and consent page. */
export function authorize(context: OAuthContext, url: URL): Reply {
  const query = url.searchParams;
  const { store, options } = context;
  if (query.getAll('client_id').length > 1 || query.getAll('redirect_uri').length > 1) return errorPage('client_id and redirect_uri may each be given once.');
  const clientId = query.get('client_id');
  if (!clientId) return errorPage('The request names no client (client_id is missing).');
  const client = store.clients.get(clientId);
  if (!client || !client.codeClient) return errorPage('The client is not registered here. Register it (POST /register) and start again.');
  const given = query.get('redirect_uri');
  let redirectUri: string;
  if (given === null) {
    if (client.redirectUris.length !== 1) return errorPage('redirect_uri is required: the client registered more than one (or none).');
    redirectUri = client.redirectUris[0]!;
  } else if (!client.redirectUris.includes(given)) {
    // CTX-AS-REDIRECT-EXACT-MATCH: string equality with a registered URI, nothing looser; never redirect elsewhere.
    return errorPage('The redirect_uri is not one the client registered (it must match exactly).');
  } else redirectUri = given;
  const state = query.get('state');
  const fail = (error: string, description: string) => redirectTo(context, redirectUri, { error, error_description: description, state });
  for (const name of ['response_type', 'state', 'code_challenge', 'code_challenge_method', 'scope']) {
    if (query.getAll(name).length > 1) return fail('invalid_request', `${name} is given more than once`);
  }
  if (!client.grantTypes.includes(CODE_GRANT)) return fail('unauthorized_client', 'The client is not registered for the authorization code grant');
  if (query.get('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  const challenge = query.get('code_challenge');
  const method = query.get('code_challenge_method');
  if (!challenge) return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method S256');
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)');
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters)');
  const resources = query.getAll('resource');
  if (resources.length > 1) return fail('invalid_target', 'Name one resource');
  const resource = resources[0];
  if (resource !== undefined) {
    const problem = resourceProblem(resource);
    if (problem) return fail('invalid_target', problem);
  }
  const asked = query.get('scope');
  const scopeText = asked !== null && asked.trim() !== '' ? asked : (client.scope ?? options.authorizationScopes.join(' '));
  const scopes = [...new Set(scopeText.trim().split(/\s+/))];
  const refused = scopes.filter((s) => !options.authorizationScopes.includes(s));
  if (refused.length > 0) return fail('invalid_scope', `Scopes not offered: ${refused.join(' ').slice(0, 300)}`);
  const now = Date.now();
  dropExpired(context, now);
  const tx = {
    id: randomText(32),
    clientId: client.id,
    redirectUri,
    redirectUriGiven: given !== null,
    state,
    codeChallenge: challenge,
    scopes,
    ...(resource !== undefined ? { resource } : {}),
    expiresAt: now + TRANSACTION_MS,
  };
  store.transactions.set(tx.id, tx);
  return loginPage(client, tx);
}

/** POST /authorize/decision: Deny, or Allow after the password: a 302 back to the client with a code or access_denied. */
export function decide(context: OAuthContext, form: URLSearchParams): Reply {
  const { store } = context;
  const now = Date.now();
  const id = form.get('transaction') ?? '';
  const tx = store.transactions.get(id);
  const client = tx ? store.clients.get(tx.clientId) : undefined;
  if (!tx || tx.expiresAt <= now || !client) {
    if (tx) store.transactions.delete(id);
    return errorPage('This sign-in request has expired or was already answered. Start again from the application.');
  }
  const decision = form.get('decision');
  if (decision === 'deny') {
    store.transactions.delete(id);
    return redirectTo(context, tx.redirectUri, { error: 'access_denied', error_description: 'The user denied the request', state: tx.state });
  }
  const username = (form.get('username') ?? '').trim();
  if (decision !== 'allow') return loginPage(client, tx, { message: 'Choose Allow or Deny.', status: 400, username });
  const user = username ? (store.users.get(username) ?? [...store.users.values()].find((u) => u.email === username)) : undefined;
  if (!user || !sameSecret(form.get('password') ?? '', user.password))
    return loginPage(client, tx, { message: 'Wrong username or password.', status: 401, username });
  if (user.disabled) return loginPage(client, tx, { message: `The account ${user.email} is disabled.`, status: 403, username });
  store.transactions.delete(id);
  const grantId = randomText(16);
  store.grants.set(grantId, {
    id: grantId,
    clientId: client.id,
    username: user.username,
    scopes: tx.scopes,
    ...(tx.resource !== undefined ? { resource: tx.resource } : {}),
    resources: tx.resource !== undefined ? [tx.resource] : [],
  });
  const code = {
    value: randomText(32),
    grantId,
    clientId: client.id,
    redirectUri: tx.redirectUri,
    redirectUriGiven: tx.redirectUriGiven,
    codeChallenge: tx.codeChallenge,
    scopes: tx.scopes,
    ...(tx.resource !== undefined ? { resource: tx.resource } : {}),
    username: user.username,
    expiresAt: now + CODE_MS,
    used: false,
  };
  store.authorizationCodes.set(code.value, code);
  return redirectTo(context, tx.redirectUri, { code: code.value, state: tx.state });
}

// ---------------------------------------------------------------------------------------------------------------
// POST /token for code clients

/** Whether a token request belongs to the code flow: its client is a code client, or its refresh token came from one. */
export function isCodeFlowRequest(context: OAuthContext, form: URLSearchParams, req: IncomingMessage): boolean {
  const id = basicCredentials(req)?.id ?? form.get('client_id');
  if (id && context.store.clients.get(id)?.codeClient) return true;
  const refresh = form.get('refresh_token');
  return refresh !== null && context.store.refreshTokens.get(refresh)?.grantId !== undefined;
}

/** The client, authenticated the way it registered: public with client_id only, or its secret by Basic or in the form. */
function authenticateCodeClient(context: OAuthContext, form: URLSearchParams, req: IncomingMessage): Client | Reply {
  const basic = basicCredentials(req);
  if (basic && (form.has('client_secret') || (form.has('client_id') && form.get('client_id') !== basic.id))) {
    return tokenError(context, 'invalid_request', 'Client credentials given both in the Authorization header and the body');
  }
  const id = basic?.id ?? form.get('client_id');
  if (!id) return tokenError(context, 'invalid_request', 'Missing required parameter: client_id');
  const client = context.store.clients.get(id);
  const header = { 'www-authenticate': 'Basic realm="gantry-dev-oauth"' };
  if (!client || !client.codeClient) return tokenError(context, 'invalid_client', 'The OAuth client was not found.', basic ? header : undefined);
  const postSecret = form.get('client_secret');
  switch (client.authMethod) {
    case 'client_secret_basic':
      if (!basic || !sameSecret(basic.secret, client.secret ?? ''))
        return tokenError(context, 'invalid_client', 'Client authentication failed (client_secret_basic).', header);
      return client;
    case 'client_secret_post':
      if (basic || !postSecret || !sameSecret(postSecret, client.secret ?? ''))
        return tokenError(context, 'invalid_client', 'Client authentication failed (client_secret_post).', basic ? header : undefined);
      return client;
    default:
      if (basic || postSecret) return tokenError(context, 'invalid_client', 'A public client sends no secret.', basic ? header : undefined);
      return client;
  }
}

/** One `resource` of a token request, checked (RFC 8707): the value, undefined when none, or the error reply. */
function requestedResource(context: OAuthContext, form: URLSearchParams): { resource?: string } | Reply {
  const all = form.getAll('resource');
  if (all.length > 1) return tokenError(context, 'invalid_target', 'Name one resource');
  if (all.length === 0) return {};
  const problem = resourceProblem(all[0]!);
  return problem ? tokenError(context, 'invalid_target', problem) : { resource: all[0]! };
}

const isReply = (value: object): value is Reply => 'status' in value;

export function handleCodeFlowToken(context: OAuthContext, grantType: string, form: URLSearchParams, req: IncomingMessage): Reply {
  const client = authenticateCodeClient(context, form, req);
  if (isReply(client)) return client;
  if (!client.grantTypes.includes(grantType)) return tokenError(context, 'unauthorized_client', `The client is not registered for ${grantType}`);
  return grantType === CODE_GRANT ? redeemCode(context, client, form) : refreshCodeGrant(context, client, form);
}

function redeemCode(context: OAuthContext, client: Client, form: URLSearchParams): Reply {
  const { store } = context;
  const value = form.get('code');
  if (!value) return tokenError(context, 'invalid_request', 'Missing required parameter: code');
  const code = store.authorizationCodes.get(value);
  if (!code || code.clientId !== client.id) return tokenError(context, 'invalid_grant', 'The authorization code is not valid.');
  if (code.used) {
    // OAuth 2.1 §4.1.3: a code used twice revokes what it gave.
    store.revokeAuthorization(code.grantId, 'code-replay');
    return tokenError(context, 'invalid_grant', 'The authorization code was already used; the tokens issued from it are revoked.');
  }
  // Any attempt uses the code up, so a stolen code cannot be tried against many verifiers.
  code.used = true;
  const now = Date.now();
  if (code.expiresAt <= now) return tokenError(context, 'invalid_grant', 'The authorization code has expired.');
  const redirectUri = form.get('redirect_uri');
  if (code.redirectUriGiven ? redirectUri !== code.redirectUri : redirectUri !== null && redirectUri !== code.redirectUri) {
    return tokenError(context, 'invalid_grant', "redirect_uri differs from the authorization request's.");
  }
  const verifier = form.get('code_verifier');
  if (!verifier) return tokenError(context, 'invalid_grant', 'code_verifier is missing (PKCE is required).');
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !sameSecret(createHash('sha256').update(verifier).digest('base64url'), code.codeChallenge)) {
    return tokenError(context, 'invalid_grant', 'code_verifier does not match the code_challenge.');
  }
  const asked = requestedResource(context, form);
  if (isReply(asked)) return asked;
  if (code.resource !== undefined && asked.resource !== code.resource)
    return tokenError(context, 'invalid_target', 'resource must be the one named in the authorization request.');
  const grant = store.grants.get(code.grantId);
  const user = store.users.get(code.username);
  if (!grant || grant.revoked || !user || user.disabled) return tokenError(context, 'invalid_grant', 'The authorization was revoked.');
  const resource = asked.resource ?? code.resource;
  if (resource !== undefined && !grant.resources.includes(resource)) grant.resources.push(resource);
  let refreshValue = '';
  if (client.grantTypes.includes(REFRESH_GRANT)) {
    const { token } = store.issueRefreshToken(client, user.username, grant.scopes, now);
    token.grantId = grant.id;
    if (resource !== undefined) token.resource = resource;
    refreshValue = token.value;
  }
  const access = issueAccess(context, {
    clientId: client.id,
    user,
    scopes: grant.scopes,
    ...(resource !== undefined ? { resource } : {}),
    grantId: grant.id,
    refreshToken: refreshValue,
    now,
  });
  context.stats.tokensIssued++;
  return { status: 200, body: tokenResponse(context, access, refreshValue || undefined) };
}

function refreshCodeGrant(context: OAuthContext, client: Client, form: URLSearchParams): Reply {
  const { store } = context;
  const token = clientRefreshToken(context, client, form, 'The refresh token is not valid.');
  if ('status' in token) return token;
  const now = Date.now();
  if (token.grantId === undefined) return tokenError(context, 'invalid_grant', 'The refresh token is not valid.');
  if (token.revoked === 'rotated') {
    // CTX-AS-REFRESH-ROTATION: a rotated refresh token presented again means two holders: the whole grant ends.
    store.revokeAuthorization(token.grantId, 'refresh-reuse');
    return tokenError(context, 'invalid_grant', 'The refresh token was already used; the authorization is revoked.');
  }
  const grant = store.grants.get(token.grantId);
  const user = store.users.get(token.username);
  if (token.revoked || (token.expiresAt !== undefined && token.expiresAt <= now) || !grant || grant.revoked || !user || user.disabled) {
    return tokenError(context, 'invalid_grant', 'The refresh token has expired or was revoked.');
  }
  const scopes = refreshScopes(context, form.get('scope'), token.scopes, 300);
  if (!Array.isArray(scopes)) return scopes;
  const asked = requestedResource(context, form);
  if (isReply(asked)) return asked;
  if (asked.resource !== undefined && !grant.resources.includes(asked.resource))
    return tokenError(context, 'invalid_target', 'resource was not granted by this authorization.');
  const resource = asked.resource ?? token.resource;
  let refreshValue = token.value;
  let rotated: string | undefined;
  if (client.authMethod === 'none') {
    token.revoked = 'rotated';
    const { token: next } = store.issueRefreshToken(client, user.username, token.scopes, now);
    next.grantId = grant.id;
    if (token.resource !== undefined) next.resource = token.resource;
    refreshValue = rotated = next.value;
  }
  const access = issueAccess(context, {
    clientId: client.id,
    user,
    scopes,
    ...(resource !== undefined ? { resource } : {}),
    grantId: grant.id,
    refreshToken: refreshValue,
    now,
  });
  context.stats.refreshes++;
  return { status: 200, body: tokenResponse(context, access, rotated) };
}

function tokenResponse(context: OAuthContext, access: AccessToken, refreshToken: string | undefined): Record<string, unknown> {
  return {
    access_token: access.value,
    token_type: 'Bearer',
    expires_in: Math.max(0, Math.round((access.expiresAt - (access.issuedAt ?? Date.now())) / 1000)),
    scope: access.scopes.join(' '),
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
  };
}

/**
 * An access token: with a resource, an RS256 JWT per RFC 9068 (typ at+jwt; iss, sub, aud = the resource as
 * requested, client_id, scope, iat, exp, jti); without, an opaque one. Either is recorded, for introspection.
 */
export function issueAccess(
  context: OAuthContext,
  p: { clientId: string; user: User; scopes: string[]; resource?: string; grantId?: string; refreshToken: string; now: number; ttlSeconds?: number },
): AccessToken {
  const ttl = p.ttlSeconds ?? context.options.accessTokenTtl;
  const iat = Math.floor(p.now / 1000);
  const exp = iat + ttl;
  const value =
    p.resource !== undefined
      ? context.key.sign(
          { iss: context.origin(), sub: p.user.sub, aud: p.resource, client_id: p.clientId, scope: p.scopes.join(' '), iat, exp, jti: randomText(16) },
          'at+jwt',
        )
      : `ya29.${randomText(96)}`;
  const token: AccessToken = {
    value,
    clientId: p.clientId,
    username: p.user.username,
    scopes: p.scopes,
    refreshToken: p.refreshToken,
    issuedAt: iat * 1000,
    expiresAt: exp * 1000,
    ...(p.grantId !== undefined ? { grantId: p.grantId } : {}),
    ...(p.resource !== undefined ? { resource: p.resource, jwt: true } : {}),
  };
  context.store.accessTokens.set(value, token);
  return token;
}

/** The programmatic issueAccessToken of the server object (resource-server tests: other audiences, expired tokens). */
export function issueTestAccessToken(
  context: OAuthContext,
  spec: { resource: string; scopes: string[]; username?: string; clientId?: string; ttlSeconds?: number },
): string {
  if (!spec || typeof spec.resource !== 'string' || resourceProblem(spec.resource))
    throw new UsageError('issueAccessToken needs resource, an absolute URI without a fragment');
  if (!Array.isArray(spec.scopes) || spec.scopes.some((s) => typeof s !== 'string' || !/^\S+$/.test(s)))
    throw new UsageError('issueAccessToken needs scopes, a list of scope tokens');
  if (spec.ttlSeconds !== undefined && !Number.isSafeInteger(spec.ttlSeconds))
    throw new UsageError('ttlSeconds must be a whole number (negative for an expired token)');
  const user = spec.username !== undefined ? context.store.findUser(spec.username) : [...context.store.users.values()][0];
  if (!user) throw new UsageError(`no user ${spec.username ?? ''}`.trim());
  return issueAccess(context, {
    clientId: spec.clientId ?? 'gantry-test-client',
    user,
    scopes: [...spec.scopes],
    resource: spec.resource,
    refreshToken: '',
    now: Date.now(),
    ...(spec.ttlSeconds !== undefined ? { ttlSeconds: spec.ttlSeconds } : {}),
  }).value;
}

// ---------------------------------------------------------------------------------------------------------------
// POST /introspect (RFC 7662)

/** A confidential client (Basic or client_secret_post) asks about a token: `{active:false}` unless a live access token. */
export function introspect(context: OAuthContext, form: URLSearchParams, req: IncomingMessage): Reply {
  const basic = basicCredentials(req);
  const id = basic?.id ?? form.get('client_id');
  const secret = basic?.secret ?? form.get('client_secret');
  const client = id ? context.store.clients.get(id) : undefined;
  if (!client || client.secret === null || !secret || !sameSecret(secret, client.secret)) {
    return {
      status: 401,
      body: { error: 'invalid_client', error_description: 'Introspection needs a registered confidential client (HTTP Basic or client_secret_post).' },
      headers: { 'www-authenticate': 'Basic realm="gantry-dev-oauth"' },
    };
  }
  const value = form.get('token');
  if (!value) return { status: 400, body: { error: 'invalid_request', error_description: 'Missing required parameter: token' } };
  const token = context.store.accessTokens.get(value);
  const user = token ? context.store.users.get(token.username) : undefined;
  // Refresh tokens are never reported active: a resource server asking about one must not take it for an access token.
  if (!token || token.revoked || token.expiresAt <= Date.now() || !user || user.disabled) return { status: 200, body: { active: false } };
  return {
    status: 200,
    body: {
      active: true,
      scope: token.scopes.join(' '),
      client_id: token.clientId,
      username: user.username,
      sub: user.sub,
      ...(token.resource !== undefined ? { aud: token.resource } : {}),
      iss: context.origin(),
      exp: Math.floor(token.expiresAt / 1000),
      iat: Math.floor((token.issuedAt ?? token.expiresAt - context.options.accessTokenTtl * 1000) / 1000),
      token_type: 'Bearer',
    },
  };
}
