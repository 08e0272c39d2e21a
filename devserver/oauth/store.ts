// What the authorization server remembers: clients, users, device codes, grants and their tokens, the code-request
// quota, and the refresh-token issuance limits. No HTTP here; server.ts and token.ts answer from it.
import { httpUrl } from '../kit/index.js';
import { randomInt } from 'node:crypto';
import { UsageError } from '../../lib/errors.js';
import { randomText } from './jwt.js';
import {
  CODE_GRANT,
  REFRESH_GRANT,
  stableSub,
  type ClientSpec,
  type ClientType,
  type ResolvedOptions,
  type TokenEndpointAuthMethod,
  type UserSpec,
} from './options.js';

export interface Client {
  id: string;
  secret: string | null;
  type: ClientType;
  name: string;
  orgInternal?: string;
  timeBasedAccessSeconds?: number;
  adminPolicyScopes: string[];
  receivers: string[];
  /** An authorization-code (context-server) client, registered with redirect URIs or a token endpoint auth method. */
  codeClient: boolean;
  /** Exact redirect URIs (authorization-code clients). */
  redirectUris: string[];
  /** Authorization-code clients: how they authenticate at the token endpoint. */
  authMethod?: TokenEndpointAuthMethod;
  grantTypes: string[];
  scope?: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  /** RFC 7591 metadata echoed in the registration response (client_uri, contacts …). */
  extraMetadata: Record<string, unknown>;
}

export interface User {
  username: string;
  email: string;
  sub: string;
  name: string;
  adminPolicyScopes: string[];
  channelTitle: string | null;
  disabled: boolean;
  password: string;
}

export type CodeState = 'pending' | 'granted' | 'denied' | 'claimed';

export interface DeviceCode {
  deviceCode: string;
  userCode: string;
  clientId: string;
  scopes: string[];
  issuedAt: number;
  expiresAt: number;
  /** The seconds now required between polls: the issued interval, plus 5 for every slow_down (RFC 8628 §3.5). */
  interval: number;
  lastPollAt?: number;
  polls: number;
  slowDowns: number;
  state: CodeState;
  username?: string;
}

export type RevokedWhy = 'revoked' | 'user-revoked' | 'issuance-limit' | 'account-disabled' | 'client-removed' | 'rotated' | 'refresh-reuse' | 'code-replay';

export interface RefreshToken {
  value: string;
  clientId: string;
  username: string;
  scopes: string[];
  issuedAt: number;
  /** Issue order (the oldest has the smallest). */
  seq: number;
  expiresAt?: number;
  revoked?: RevokedWhy;
  /** The authorization (code flow) it belongs to. */
  grantId?: string;
  /** The audience of the access tokens it gives when a refresh names none (code flow). */
  resource?: string;
}

export interface AccessToken {
  value: string;
  clientId: string;
  username: string;
  scopes: string[];
  /** The refresh token it came with or from. */
  refreshToken: string;
  expiresAt: number;
  revoked?: RevokedWhy;
  issuedAt?: number;
  /** The authorization (code flow) it belongs to. */
  grantId?: string;
  /** `aud`, when issued for a resource (a JWT per RFC 9068). */
  resource?: string;
  jwt?: boolean;
}

/** One authorization of the code flow: its code, and every token issued from it. */
export interface Grant {
  id: string;
  clientId: string;
  username: string;
  scopes: string[];
  /** The resource the authorization request named, if any. */
  resource?: string;
  /** Resources the grant's tokens may be issued for (the authorization's, or the one named when the code was redeemed). */
  resources: string[];
  revoked?: RevokedWhy;
}

/** A transaction between GET /authorize and POST /authorize/decision (the hidden form field). */
export interface AuthorizeTransaction {
  id: string;
  clientId: string;
  redirectUri: string;
  redirectUriGiven: boolean;
  state: string | null;
  codeChallenge: string;
  scopes: string[];
  resource?: string;
  expiresAt: number;
}

export interface AuthorizationCode {
  value: string;
  grantId: string;
  clientId: string;
  redirectUri: string;
  redirectUriGiven: boolean;
  codeChallenge: string;
  scopes: string[];
  resource?: string;
  username: string;
  expiresAt: number;
  used: boolean;
}

const USER_CODE_LETTERS = 'BCDFGHJKLMNPQRSTVWXZ';

export class Store {
  clients = new Map<string, Client>();
  users = new Map<string, User>();
  codes = new Map<string, DeviceCode>();
  codesByUserCode = new Map<string, DeviceCode>();
  refreshTokens = new Map<string, RefreshToken>();
  accessTokens = new Map<string, AccessToken>();
  grants = new Map<string, Grant>();
  transactions = new Map<string, AuthorizeTransaction>();
  authorizationCodes = new Map<string, AuthorizationCode>();
  private quota = new Map<string, number[]>();
  private issueOrder = 0;

  constructor(private readonly options: ResolvedOptions) {}

  registerClient(spec: ClientSpec, extraMetadata: Record<string, unknown> = {}): Client {
    if (spec.redirectUris !== undefined || spec.tokenEndpointAuthMethod !== undefined) return this.registerCodeClient(spec, extraMetadata);
    const type = spec.type ?? 'limited-input';
    if (type !== 'limited-input' && type !== 'web') throw new UsageError(`client type must be limited-input or web, got ${String(type)}`);
    checkIdAndSecret(spec);
    const seconds = spec.timeBasedAccessSeconds;
    if (seconds !== undefined && (!Number.isSafeInteger(seconds) || seconds < 1))
      throw new UsageError(`timeBasedAccessSeconds must be a whole number of at least 1, got ${String(seconds)}`);
    const client: Client = {
      id:
        spec.id ??
        `${String(randomInt(1e11, 1e12))}-${randomText(24)
          .toLowerCase()
          .replace(/[^a-z0-9]/g, '0')}.apps.gantry.test`,
      secret: spec.secret === null ? null : (spec.secret ?? `GOCSPX-${randomText(21)}`),
      type,
      name: spec.name ?? 'Gantry device login',
      adminPolicyScopes: stringList('adminPolicyScopes', spec.adminPolicyScopes),
      receivers: stringList('securityEventReceivers', spec.securityEventReceivers).map(checkReceiverUrl),
      ...(spec.orgInternal ? { orgInternal: spec.orgInternal.toLowerCase() } : {}),
      ...(seconds ? { timeBasedAccessSeconds: seconds } : {}),
      codeClient: false,
      redirectUris: [],
      grantTypes: [],
      issuedAt: Math.floor(Date.now() / 1000),
      extraMetadata: {},
    };
    this.clients.set(client.id, client);
    return client;
  }

  /** An authorization-code client (RFC 7591 metadata; POST /register checks the wire format before it comes here). */
  private registerCodeClient(spec: ClientSpec, extraMetadata: Record<string, unknown>): Client {
    const type = spec.type ?? 'native';
    if (type !== 'native' && type !== 'web')
      throw new UsageError(`an authorization-code client's type (application_type) must be native or web, got ${String(type)}`);
    const method = spec.tokenEndpointAuthMethod ?? 'none';
    if (!['none', 'client_secret_basic', 'client_secret_post'].includes(method))
      throw new UsageError(`tokenEndpointAuthMethod must be none, client_secret_basic or client_secret_post, got ${String(method)}`);
    checkIdAndSecret(spec);
    if (method === 'none' && typeof spec.secret === 'string') throw new UsageError('a public client (tokenEndpointAuthMethod none) has no secret');
    if (method !== 'none' && spec.secret === null) throw new UsageError(`a ${method} client needs a secret`);
    const redirectUris = stringList('redirectUris', spec.redirectUris);
    for (const uri of redirectUris) {
      const problem = redirectUriProblem(uri, type);
      if (problem) throw new UsageError(problem);
    }
    const grantTypes = spec.grantTypes === undefined ? [CODE_GRANT, REFRESH_GRANT] : [...new Set(stringList('grantTypes', spec.grantTypes))];
    const unknown = grantTypes.filter((g) => g !== CODE_GRANT && g !== REFRESH_GRANT);
    if (unknown.length > 0 || (redirectUris.length > 0 && !grantTypes.includes(CODE_GRANT)))
      throw new UsageError(`grantTypes must include authorization_code and may add refresh_token, got ${grantTypes.join(' ')}`);
    if (spec.scope !== undefined && (typeof spec.scope !== 'string' || spec.scope.trim() === ''))
      throw new UsageError('scope must be a non-empty space-separated string');
    if (spec.id !== undefined && this.clients.has(spec.id)) throw new UsageError(`a client ${spec.id} is already registered`);
    const client: Client = {
      id: spec.id ?? `gantry-${randomText(18).replace(/[^A-Za-z0-9]/g, 'x')}`,
      secret: method === 'none' ? null : (spec.secret ?? `gcs-${randomText(32)}`),
      type,
      name: spec.name ?? 'Context client',
      adminPolicyScopes: [],
      receivers: [],
      codeClient: true,
      redirectUris,
      authMethod: method,
      grantTypes,
      ...(spec.scope !== undefined ? { scope: spec.scope.trim().split(/\s+/).join(' ') } : {}),
      issuedAt: Math.floor(Date.now() / 1000),
      extraMetadata,
    };
    this.clients.set(client.id, client);
    return client;
  }

  addUser(spec: UserSpec): User {
    if (!spec || typeof spec.username !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(spec.username))
      throw new UsageError('a user needs a username of 1-64 letters, digits, dots, dashes or underscores');
    if (typeof spec.email !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(spec.email)) throw new UsageError(`user ${spec.username} needs an e-mail address`);
    const name = spec.name ?? spec.username;
    const user: User = {
      username: spec.username,
      email: spec.email,
      sub: spec.sub ?? stableSub(spec.email),
      name,
      adminPolicyScopes: stringList('adminPolicyScopes', spec.adminPolicyScopes),
      channelTitle: spec.channelTitle === undefined ? `${name}'s channel` : spec.channelTitle,
      disabled: spec.disabled ?? false,
      password: spec.password ?? spec.username,
    };
    if (typeof user.password !== 'string' || user.password === '') throw new UsageError(`user ${spec.username} needs a non-empty password`);
    this.users.set(user.username, user);
    return user;
  }

  /** A user by username, e-mail address or subject. */
  findUser(who: string): User | undefined {
    return this.users.get(who) ?? [...this.users.values()].find((u) => u.email === who || u.sub === who);
  }

  /** Counts a code request against the client's quota; false when the window's budget is spent. */
  takeQuota(clientId: string, now = Date.now()): { ok: boolean; retryAfter: number } {
    const windowMs = this.options.codeQuota.windowSeconds * 1000;
    const recent = (this.quota.get(clientId) ?? []).filter((t) => t > now - windowMs);
    this.quota.set(clientId, recent);
    if (recent.length >= this.options.codeQuota.requests) return { ok: false, retryAfter: Math.max(1, Math.ceil((recent[0]! + windowMs - now) / 1000)) };
    recent.push(now);
    return { ok: true, retryAfter: 0 };
  }

  newDeviceCode(clientId: string, scopes: string[], now = Date.now()): DeviceCode {
    let userCode: string;
    do userCode = this.newUserCode();
    while (this.codesByUserCode.has(normalizeUserCode(userCode)));
    const code: DeviceCode = {
      deviceCode: `AH-1Ng${randomText(48)}`,
      userCode,
      clientId,
      scopes,
      issuedAt: now,
      expiresAt: now + this.options.expiresIn * 1000,
      interval: this.options.interval,
      polls: 0,
      slowDowns: 0,
      state: 'pending',
    };
    this.codes.set(code.deviceCode, code);
    this.codesByUserCode.set(normalizeUserCode(userCode), code);
    return code;
  }

  private newUserCode(): string {
    const letters = Array.from({ length: 8 }, () => USER_CODE_LETTERS[randomInt(USER_CODE_LETTERS.length)]!);
    if (this.options.userCodeCase === 'lower') letters.forEach((c, i) => (letters[i] = c.toLowerCase()));
    if (this.options.userCodeCase === 'mixed') {
      // Upper and lower case both, on random letters: a client that changes the case sends a code that fails.
      const lowered = new Set<number>([randomInt(8)]);
      for (let i = 0; i < 8; i++) if (randomInt(2) === 1) lowered.add(i);
      if (lowered.size === 8) lowered.delete(randomInt(8));
      for (const i of lowered) letters[i] = letters[i]!.toLowerCase();
    }
    return `${letters.slice(0, 4).join('')}-${letters.slice(4).join('')}`;
  }

  /** The live code a person typed: case kept (user codes are case-sensitive), the dash and spaces optional. */
  codeByUserCode(typed: string, now = Date.now()): DeviceCode | undefined {
    const code = this.codesByUserCode.get(normalizeUserCode(typed));
    return code && code.expiresAt > now ? code : undefined;
  }

  /** A new refresh token for a client and user, pushing out the oldest beyond the issuance limits (DEV-AUTH-REFRESH-ISSUANCE-LIMIT). */
  issueRefreshToken(client: Client, username: string, scopes: string[], now = Date.now()): { token: RefreshToken; pushedOut: RefreshToken[] } {
    const token: RefreshToken = {
      value: `1//0${randomText(64)}`,
      clientId: client.id,
      username,
      scopes,
      issuedAt: now,
      seq: this.issueOrder++,
      ...(client.timeBasedAccessSeconds ? { expiresAt: now + client.timeBasedAccessSeconds * 1000 } : {}),
    };
    this.refreshTokens.set(token.value, token);
    const live = [...this.refreshTokens.values()].filter((t) => !t.revoked && !(t.expiresAt !== undefined && t.expiresAt <= now) && t.username === username);
    const pushedOut: RefreshToken[] = [];
    const trim = (tokens: RefreshToken[], limit: number) => {
      const sorted = tokens.filter((t) => !t.revoked).sort((a, b) => a.seq - b.seq);
      for (const old of sorted.slice(0, Math.max(0, sorted.length - limit))) {
        old.revoked = 'issuance-limit';
        pushedOut.push(old);
      }
    };
    trim(
      live.filter((t) => t.clientId === client.id),
      this.options.refreshLimit.perClientUser,
    );
    trim(live, this.options.refreshLimit.perUser);
    return { token, pushedOut };
  }

  issueAccessToken(refresh: RefreshToken, now = Date.now()): AccessToken {
    const token: AccessToken = {
      value: `ya29.${randomText(96)}`,
      clientId: refresh.clientId,
      username: refresh.username,
      scopes: refresh.scopes,
      refreshToken: refresh.value,
      expiresAt: now + this.options.accessTokenTtl * 1000,
    };
    this.accessTokens.set(token.value, token);
    return token;
  }

  /** Revokes a refresh token and every access token that came with it. */
  revokeGrant(refresh: RefreshToken, why: RevokedWhy): void {
    if (refresh.grantId !== undefined) {
      this.revokeAuthorization(refresh.grantId, why);
      return;
    }
    refresh.revoked ??= why;
    for (const access of this.accessTokens.values()) if (access.refreshToken === refresh.value) access.revoked ??= why;
  }

  /** Revokes a code-flow authorization: every refresh and access token issued from it, and its unused code. */
  revokeAuthorization(grantId: string, why: RevokedWhy): void {
    const grant = this.grants.get(grantId);
    if (grant) grant.revoked ??= why;
    for (const token of this.refreshTokens.values()) if (token.grantId === grantId) token.revoked ??= why;
    for (const token of this.accessTokens.values()) if (token.grantId === grantId) token.revoked ??= why;
    for (const code of this.authorizationCodes.values()) if (code.grantId === grantId) code.used = true;
  }

  /** The live refresh tokens of a user (for one client, or all). */
  grantsOf(username: string, clientId?: string, now = Date.now()): RefreshToken[] {
    return [...this.refreshTokens.values()].filter(
      (t) => t.username === username && (!clientId || t.clientId === clientId) && !t.revoked && !(t.expiresAt !== undefined && t.expiresAt <= now),
    );
  }

  /** Forgets codes, tokens and quota windows; clients and users stay. */
  reset(): void {
    this.codes.clear();
    this.codesByUserCode.clear();
    this.refreshTokens.clear();
    this.accessTokens.clear();
    this.grants.clear();
    this.transactions.clear();
    this.authorizationCodes.clear();
    this.quota.clear();
  }
}

function checkIdAndSecret(spec: ClientSpec): void {
  if (spec.id !== undefined && (typeof spec.id !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(spec.id)))
    throw new UsageError('client id must be 1-200 printable ASCII characters');
  if (spec.secret !== undefined && spec.secret !== null && (typeof spec.secret !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(spec.secret)))
    throw new UsageError('client secret must be 1-200 printable ASCII characters, or null for a public client');
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Why a redirect URI cannot be registered (CTX-AS-REDIRECT-URI-SCHEME), or undefined: an absolute https URI, or an
 * http URI on a loopback host (127.0.0.1, [::1], localhost) for a native client; never a fragment or userinfo.
 */
export function redirectUriProblem(uri: string, applicationType: 'native' | 'web' | ClientType): string | undefined {
  if (typeof uri !== 'string' || uri === '') return 'a redirect URI must be a non-empty string';
  const shown = JSON.stringify(uri.slice(0, 200));
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect URI ${shown} is not an absolute URI`;
  }
  if (uri.includes('#')) return `redirect URI ${shown} has a fragment`;
  if (url.username !== '' || url.password !== '') return `redirect URI ${shown} carries credentials`;
  if (url.protocol === 'https:') return url.hostname === '' ? `redirect URI ${shown} has no host` : undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) {
    return applicationType === 'web' ? `redirect URI ${shown}: a web client's redirect URIs must be https (loopback http is for native clients)` : undefined;
  }
  return `redirect URI ${shown} must be https, or http on a loopback host (127.0.0.1, [::1], localhost)`;
}

export function normalizeUserCode(typed: string): string {
  return typed.replace(/[\s-]/g, '');
}

function stringList(name: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new UsageError(`${name} must be a list of strings`);
  return [...value] as string[];
}

export function checkReceiverUrl(url: string): string {
  if (!httpUrl(url)) throw new UsageError(`a security event receiver must be an http(s) URL, got "${url}"`);
  return url;
}
