// Who a request is, from its Authorization header (RATE-IDENTITY-KINDS): the identity decides the primary budget.
// The server knows every token it accepts (configured, issued by an admin call or by an app installation), so the
// identity comes from its own table, never from a token's prefix; the prefixes only follow GitHub's forms.
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import type { PlatformLimits } from './limits.js';
import { HttpFailure } from '../kit/index.js';

export type TokenKind = 'personal' | 'user-to-server' | 'oauth' | 'installation' | 'workflow';

/** GitHub's token prefixes (ghp_ personal, ghu_ an app's user token, gho_ OAuth app token, ghs_ installation and workflow). */
const PREFIX: Record<TokenKind, string> = { personal: 'ghp_', 'user-to-server': 'ghu_', oauth: 'gho_', installation: 'ghs_', workflow: 'ghs_' };

export interface TokenSpec {
  token?: string;
  kind: TokenKind;
  /** The user a personal, user-to-server or OAuth token acts for (their budgets are combined per user). */
  login?: string;
  /** For installation tokens: the installation. */
  installationId?: number;
  /** For the workflow token: the one repository it may touch, `owner/name`. */
  repository?: string;
  /** Enterprise plan (15,000 per hour where the spec says so). */
  enterprise?: boolean;
  /** Epoch ms; an installation token's one hour. */
  expiresAt?: number;
}

export interface TokenRecord extends Required<Pick<TokenSpec, 'token' | 'kind'>>, Omit<TokenSpec, 'token' | 'kind'> {
  revoked: boolean;
}

export interface InstallationSpec {
  id: number;
  /** The account (organization or user) it is installed on. */
  account: string;
  /** Repositories it may reach (`owner/name`); every repository of `account` when absent. */
  repositories?: string[];
  /** Organization users, for RATE-PRI-INSTALLATION-SCALING. */
  users?: number;
  enterprise?: boolean;
}

export interface AppSpec {
  id: number;
  /** PEM public key of the app's signing key (RS256 JWTs). */
  publicKey: string | KeyObject;
  installations: InstallationSpec[];
  /** The app's webhook (webhooks.ts): deliveries to its installations' repositories, `deployment_protection_rule` included. */
  webhook?: AppWebhookSpec;
}

export interface AppWebhookSpec {
  /** Payload URL (http or https); none: nothing is delivered until PATCH /app/hook/config sets one. */
  url?: string;
  secret?: string;
  /** `json` (default) or `form`. */
  contentType?: 'json' | 'form';
  /** Events it is subscribed to; every event the server sends when absent. */
  events?: string[];
  /** Skip TLS verification of an https URL (GitHub's insecure_ssl "1"). */
  insecureSsl?: boolean;
}

export interface OAuthAppSpec {
  clientId: string;
  clientSecret: string;
  enterprise?: boolean;
}

/** The identity a budget belongs to. `key` names the budget; `describe` is what a limit message says. */
export interface Identity {
  kind: 'unauthenticated' | 'user' | 'installation' | 'oauth-app' | 'workflow' | 'app';
  key: string;
  primary: number;
  search: number;
  /** Text of the primary-limit message: "for 127.0.0.1", "for user ID 3" ... */
  describe: string;
  /** What it may reach: undefined is everything its kind allows. */
  repositories?: (fullName: string, owner: string) => boolean;
  token?: TokenRecord;
  appId?: number;
}

export function newToken(kind: TokenKind): string {
  return PREFIX[kind] + randomBytes(27).toString('base64url').replace(/[-_]/g, 'x').slice(0, 36);
}

/** A credential refused: 401 unless said otherwise, answered as any other ApiFailure. */
export class AuthError extends HttpFailure {
  constructor(message: string, status = 401) {
    super(status, message);
  }
}

/** The installation's hourly budget (RATE-PRI-INSTALLATION-*). `repositories` counts what it reaches. */
export function installationBudget(limits: PlatformLimits, installation: InstallationSpec, repositories: number): number {
  if (installation.enterprise) return limits.installationEnterprise;
  const extraRepos = Math.max(0, repositories - limits.installationFreeCount);
  const extraUsers = Math.max(0, (installation.users ?? 0) - limits.installationFreeCount);
  return Math.min(limits.installationCap, limits.installationMin + limits.installationStep * (extraRepos + extraUsers));
}

// ---- JWT (RS256) as an app signs it to ask for installation tokens ----

export interface JwtClaims {
  iss: string;
  iat: number;
  exp: number;
}

const JWT_UNDECODABLE = 'A JSON web token could not be decoded';

/** Checks an app's JWT against the apps the server knows; GitHub's messages for what is wrong. */
export function verifyAppJwt(token: string, apps: Map<number, AppSpec & { key: KeyObject }>, nowMs: number): { app: AppSpec; claims: JwtClaims } {
  const parts = token.split('.');
  if (parts.length !== 3) throw new AuthError(JWT_UNDECODABLE);
  let header: { alg?: unknown; typ?: unknown };
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as typeof header;
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    throw new AuthError(JWT_UNDECODABLE);
  }
  if (header.alg !== 'RS256' || typeof claims !== 'object' || claims === null) throw new AuthError(JWT_UNDECODABLE);
  const iss = typeof claims.iss === 'number' || typeof claims.iss === 'string' ? String(claims.iss) : undefined;
  const app = iss !== undefined && /^\d+$/.test(iss) ? apps.get(Number(iss)) : undefined;
  if (!app) throw new AuthError(`'Issuer' claim ('iss') must be an Integer naming a known app`);
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  if (!verify('sha256', signed, app.key, Buffer.from(parts[2]!, 'base64url'))) throw new AuthError(JWT_UNDECODABLE);
  const now = Math.floor(nowMs / 1000);
  if (typeof claims.iat !== 'number' || !Number.isInteger(claims.iat))
    throw new AuthError(`'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued`);
  if (claims.iat > now + 60) throw new AuthError(`'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued`);
  if (typeof claims.exp !== 'number' || !Number.isInteger(claims.exp) || claims.exp <= now) {
    throw new AuthError(`'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires`);
  }
  if (claims.exp - claims.iat > 600 || claims.exp > now + 600 + 60) throw new AuthError(`'Expiration time' claim ('exp') is too far in the future`);
  return { app, claims: { iss: iss!, iat: claims.iat, exp: claims.exp } };
}

export function publicKeyOf(spec: AppSpec): KeyObject {
  return typeof spec.publicKey === 'string' ? createPublicKey(spec.publicKey) : spec.publicKey;
}

/** The credentials of an Authorization header: a token (`token x`, `Bearer x`), or Basic user:password. */
export function parseAuthorization(
  header: string | undefined,
): { scheme: 'none' } | { scheme: 'token'; token: string } | { scheme: 'basic'; user: string; password: string } | { scheme: 'bad' } {
  if (header === undefined || header.trim() === '') return { scheme: 'none' };
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header.trim());
  if (!match) return { scheme: 'bad' };
  const scheme = match[1]!.toLowerCase();
  if (scheme === 'token' || scheme === 'bearer') return { scheme: 'token', token: match[2]! };
  if (scheme === 'basic') {
    const decoded = Buffer.from(match[2]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return { scheme: 'bad' };
    return { scheme: 'basic', user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return { scheme: 'bad' };
}
