// The embedded authorization server's options, defaults and their checks (spec §A; Google's device flow where the spec
// is silent, then RFC 8628). Bad options are refused before anything listens.
import { createHash } from 'node:crypto';
import { UsageError } from '../../lib/errors.js';

export type Dialect = 'google' | 'rfc8628';
/** `limited-input` and `web` are device-flow (Google) types; an authorization-code client is `native` or `web` (RFC 7591 application_type). */
export type ClientType = 'limited-input' | 'web' | 'native';
/** How an authorization-code client authenticates at the token endpoint (RFC 7591 token_endpoint_auth_method). */
export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';
export type UserCodeCase = 'upper' | 'lower' | 'mixed';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const REFRESH_GRANT = 'refresh_token';
export const CODE_GRANT = 'authorization_code';
/** The scopes of Gantry's context server (`gantry mcp serve`), allowed in the authorization code flow by default. */
export const CONTEXT_SCOPES = ['modules:read', 'gates:run', 'secrets:list', 'platform:read'];
export const DEFAULT_SCOPE_BASE = 'https://www.googleapis.com';
export const SECEVENT_BASE = 'https://schemas.openid.net/secevent';
export const EVENT_SESSIONS_REVOKED = `${SECEVENT_BASE}/risc/event-type/sessions-revoked`;
export const EVENT_TOKEN_REVOKED = `${SECEVENT_BASE}/oauth/event-type/token-revoked`;
export const EVENT_ACCOUNT_DISABLED = `${SECEVENT_BASE}/risc/event-type/account-disabled`;

/** The scopes the device flow permits (DEV-SCOPE-DEVICE-ALLOWED), under a scope base. */
export function deviceScopes(scopeBase: string): string[] {
  return ['email', 'openid', 'profile', ...['storage.appdata', 'storage.file', 'video', 'video.readonly'].map((s) => `${scopeBase}/auth/${s}`)];
}

export interface ClientSpec {
  /** Default: a random Google-style id (`<digits>-<random>.apps.gantry.test`). */
  id?: string;
  /** Default: a random `GOCSPX-` secret; `null` registers a public client (accepted without a secret in the rfc8628 dialect only). */
  secret?: string | null;
  /** Default `limited-input` ("TVs and Limited Input devices"); a `web` client gets 401 invalid_client. */
  type?: ClientType;
  /** The name shown on the consent page. */
  name?: string;
  /** The organization's e-mail domain: only its accounts may authorize the client (else 403 org_internal). */
  orgInternal?: string;
  /** Time-based access: refresh tokens live this many seconds and the token response says so. */
  timeBasedAccessSeconds?: number;
  /** Scopes an administrator blocks for this client: asking for one ends in 400 admin_policy_enforced. */
  adminPolicyScopes?: string[];
  /** RFC 8935 push receivers for its security events. */
  securityEventReceivers?: string[];
  /**
   * An authorization-code (context-server) client: its redirect URIs, matched exactly (https, or http on a loopback
   * host; no fragment). Giving these or `tokenEndpointAuthMethod` registers such a client instead of a device client.
   */
  redirectUris?: string[];
  /** Default `none` (a public client, no secret); the other two get `secret` (or a random one). */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /** Default `["authorization_code", "refresh_token"]`. */
  grantTypes?: string[];
  /** The scopes used when an authorization request names none (space separated). */
  scope?: string;
}

export interface UserSpec {
  username: string;
  email: string;
  /** Default: a stable 21-digit number derived from the e-mail address. */
  sub?: string;
  name?: string;
  /** Scopes the user's administrator blocks (400 admin_policy_enforced). */
  adminPolicyScopes?: string[];
  /** The video channel's title; `null`: the user has no channel. Default "<name>'s channel". */
  channelTitle?: string | null;
  disabled?: boolean;
  /** The password of the authorization code flow's login page. Default: the username (the dev user logs in as dev/dev). */
  password?: string;
}

export interface OAuthServerOptions {
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Default `google`. */
  dialect?: Dialect;
  /** Seconds between polls (default 5). */
  interval?: number;
  /** Seconds a device code and user code live (default 1800). */
  expiresIn?: number;
  /** Device code requests per client per window (default 100 per 60 s). */
  codeQuota?: { requests: number; windowSeconds: number };
  /** Refresh tokens kept per client and user, and per user across clients (defaults 100 and 500): beyond, the oldest stop working. */
  refreshLimit?: { perClientUser?: number; perUser?: number };
  /** Seconds an access token lives (default 3599, Google's). */
  accessTokenTtl?: number;
  /** Seconds an id_token lives (default 3600). */
  idTokenTtl?: number;
  /** Default `https://www.googleapis.com`. */
  scopeBase?: string;
  /** Default `upper` (Google's `ABCD-EFGH`); `mixed` proves a client keeps the case. */
  userCodeCase?: UserCodeCase;
  /** Where the device authorization endpoint is served and advertised (default `/device/code`); only there. */
  devicePath?: string;
  /** Serve the discovery documents (default true). */
  discovery?: boolean;
  clients?: ClientSpec[];
  /** Default: one user `dev` <dev@gantry.test>. */
  users?: UserSpec[];
  /** One line per request (method, path, status; never a credential). */
  log?: (line: string) => void;
  /** The scopes the authorization code flow allows (default CONTEXT_SCOPES); advertised in scopes_supported too. */
  authorizationScopes?: string[];
  /** Shallow-merged into both metadata documents (e.g. drop S256 or change the issuer, to test a client's checks). */
  metadataOverrides?: Record<string, unknown>;
  /** The `iss` of authorization responses (RFC 9207): default the issuer; `null` leaves it out; another string is sent as is. */
  callbackIssuer?: string | null;
}

export interface ResolvedOptions {
  dialect: Dialect;
  interval: number;
  expiresIn: number;
  codeQuota: { requests: number; windowSeconds: number };
  refreshLimit: { perClientUser: number; perUser: number };
  accessTokenTtl: number;
  idTokenTtl: number;
  scopeBase: string;
  userCodeCase: UserCodeCase;
  devicePath: string;
  discovery: boolean;
  authorizationScopes: string[];
  metadataOverrides: Record<string, unknown>;
  /** undefined: the issuer. */
  callbackIssuer: string | null | undefined;
}

const TAKEN_PATHS = [
  '/device',
  '/device/decision',
  '/token',
  '/revoke',
  '/userinfo',
  '/tokeninfo',
  '/jwks',
  '/authorize',
  '/authorize/decision',
  '/register',
  '/introspect',
];
const TAKEN_PREFIXES = ['/.well-known/', '/_gantry/', '/video/'];

function wholeNumber(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

export function resolveOptions(options: OAuthServerOptions): ResolvedOptions {
  const dialect = options.dialect ?? 'google';
  if (dialect !== 'google' && dialect !== 'rfc8628') throw new UsageError(`dialect must be google or rfc8628, got ${String(dialect)}`);
  const userCodeCase = options.userCodeCase ?? 'upper';
  if (!['upper', 'lower', 'mixed'].includes(userCodeCase)) throw new UsageError(`userCodeCase must be upper, lower or mixed, got ${String(userCodeCase)}`);
  const scopeBase = options.scopeBase ?? DEFAULT_SCOPE_BASE;
  if (!/^https?:\/\/[^\s/?#]+(?:\/[^\s?#]*[^\s/?#])?$/.test(scopeBase))
    throw new UsageError(`scopeBase must be an http(s) URL without a trailing slash, got "${scopeBase}"`);
  const devicePath = options.devicePath ?? '/device/code';
  const taken = TAKEN_PATHS.includes(devicePath) || TAKEN_PREFIXES.some((p) => devicePath.startsWith(p));
  if (!/^\/[A-Za-z0-9._~\-/]+$/.test(devicePath) || devicePath.endsWith('/') || taken) {
    throw new UsageError(`devicePath must be a path like /device/code that no other endpoint uses, got "${devicePath}"`);
  }
  const quota = options.codeQuota ?? { requests: 100, windowSeconds: 60 };
  return {
    dialect,
    interval: wholeNumber('interval', options.interval ?? 5, 0, 3600),
    expiresIn: wholeNumber('expiresIn', options.expiresIn ?? 1800, 1, 86_400),
    codeQuota: {
      requests: wholeNumber('codeQuota.requests', quota.requests, 1, 1_000_000),
      windowSeconds: wholeNumber('codeQuota.windowSeconds', quota.windowSeconds, 1, 86_400),
    },
    refreshLimit: {
      perClientUser: wholeNumber('refreshLimit.perClientUser', options.refreshLimit?.perClientUser ?? 100, 1, 1_000_000),
      perUser: wholeNumber('refreshLimit.perUser', options.refreshLimit?.perUser ?? 500, 1, 1_000_000),
    },
    accessTokenTtl: wholeNumber('accessTokenTtl', options.accessTokenTtl ?? 3599, 1, 86_400),
    idTokenTtl: wholeNumber('idTokenTtl', options.idTokenTtl ?? 3600, 1, 86_400),
    scopeBase,
    userCodeCase,
    devicePath,
    discovery: options.discovery ?? true,
    authorizationScopes: scopeList(options.authorizationScopes),
    metadataOverrides: overrides(options.metadataOverrides),
    callbackIssuer: callbackIssuer(options.callbackIssuer),
  };
}

function scopeList(value: unknown): string[] {
  if (value === undefined) return [...CONTEXT_SCOPES];
  if (!Array.isArray(value) || value.length === 0 || value.some((s) => typeof s !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) {
    throw new UsageError('authorizationScopes must be a non-empty list of scope tokens (printable ASCII without spaces, quotes or backslashes)');
  }
  return [...new Set(value as string[])];
}

function overrides(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('metadataOverrides must be an object');
  return { ...(value as Record<string, unknown>) };
}

function callbackIssuer(value: unknown): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string' || value === '') throw new UsageError('callbackIssuer must be a non-empty string, or null to leave iss out');
  return value;
}

/** A stable Google-style subject (21 digits) for an e-mail address. */
export function stableSub(email: string): string {
  const digest = createHash('sha256').update(`gantry-dev-oauth:${email.toLowerCase()}`).digest();
  let digits = '1';
  for (const byte of digest) {
    if (digits.length >= 21) break;
    digits += String(byte % 10);
  }
  return digits;
}

export const DEFAULT_USERS: UserSpec[] = [{ username: 'dev', email: 'dev@gantry.test', name: 'Gantry Dev' }];
