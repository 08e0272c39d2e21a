/**
 * Who the client is to the platform, and the primary budget per hour that identity has (RATE-IDENTITY-KINDS,
 * RATE-PRI-*). The identity is configured, or inferred from the token's form: the platform is GitHub's REST API
 * renamed, and GitHub's tokens say what they are by their prefix (`ghp_`, `github_pat_` personal, `gho_` OAuth app,
 * `ghu_` an app acting for a user, `ghs_` an installation or the workflow token). The budget is what the client
 * expects; the `x-ratelimit-*` headers, once they come, are what it keeps to.
 */
import { createHash } from 'node:crypto';
import { UsageError } from '../errors.js';

export type IdentityKind = 'unauthenticated' | 'personal' | 'user-app' | 'oauth-app-token' | 'installation' | 'oauth-app-client' | 'workflow' | 'app';

export const identityKinds: readonly IdentityKind[] = [
  'unauthenticated',
  'personal',
  'user-app',
  'oauth-app-token',
  'installation',
  'oauth-app-client',
  'workflow',
  'app',
];

export interface IdentityOptions {
  kind?: IdentityKind;
  /** The account is on an enterprise plan (RATE-PRI-USER-ENTERPRISE, -INSTALLATION-ENTERPRISE, -WORKFLOW-TOKEN). */
  enterprise?: boolean;
  /** An installation's repositories and organization users, for its budget (RATE-PRI-INSTALLATION-SCALING). */
  repositories?: number;
  users?: number;
}

export interface Identity {
  kind: IdentityKind;
  /** Where the kind came from: configured, the token's prefix, the variable it was read from, or a guess. */
  inferredFrom: 'configured' | 'token prefix' | 'PLATFORM_TOKEN' | 'no credentials' | 'client credentials' | 'unknown token form';
  enterprise: boolean;
  /** The primary budget per hour the client expects for the `core` resource. */
  expectedPerHour: number;
  /** What the budget is per: an IP address, a user, an installation, an app, a repository. */
  per: string;
  /** A stable key for the budgets of this identity: a hash of the credential, never the credential. */
  key: string;
}

/** RATE-PRI-INSTALLATION-MIN / -SCALING / -ENTERPRISE: 5,000, +50 per repository and per user beyond 20, cap 12,500. */
export function installationBudget(options: { enterprise?: boolean; repositories?: number; users?: number }): number {
  if (options.enterprise) return 15_000;
  const beyond = (n: number | undefined) => Math.max(0, Math.floor(n ?? 0) - 20);
  return Math.min(12_500, 5_000 + 50 * beyond(options.repositories) + 50 * beyond(options.users));
}

function budgetOf(kind: IdentityKind, options: IdentityOptions): { expectedPerHour: number; per: string } {
  const enterprise = options.enterprise === true;
  switch (kind) {
    case 'unauthenticated':
      return { expectedPerHour: 60, per: 'originating IP address' };
    case 'personal':
    case 'user-app':
    case 'oauth-app-token':
      return { expectedPerHour: enterprise ? 15_000 : 5_000, per: 'user (every token acting for the user combined)' };
    case 'installation':
      return { expectedPerHour: installationBudget(options), per: 'installation' };
    case 'oauth-app-client':
      return { expectedPerHour: enterprise ? 15_000 : 5_000, per: 'OAuth app' };
    case 'workflow':
      return { expectedPerHour: enterprise ? 15_000 : 1_000, per: 'repository' };
    // An app as itself (its JWT, on /app endpoints): the platform documents no number; a user's is assumed.
    case 'app':
      return { expectedPerHour: enterprise ? 15_000 : 5_000, per: 'app (its JWT)' };
  }
}

/** The kind a token's prefix names, or undefined for a form the platform's documentation does not describe. */
export function kindOfToken(token: string): IdentityKind | undefined {
  if (/^(ghp_|github_pat_)/.test(token)) return 'personal';
  if (token.startsWith('gho_')) return 'oauth-app-token';
  if (token.startsWith('ghu_')) return 'user-app';
  if (token.startsWith('ghs_')) return 'installation';
  return undefined;
}

export function credentialKey(credential: string | undefined): string {
  if (credential === undefined) return 'anonymous';
  return createHash('sha256').update(credential).digest('hex').slice(0, 16);
}

/**
 * The identity of a client: the configured kind when given, else the token's form. A token read from
 * `PLATFORM_TOKEN` is the workflow token (that is the variable automation workflows set) unless its prefix says it
 * is a personal or user token. A token of no known form counts as a user's (5,000 per hour).
 */
export function resolveIdentity(input: {
  token?: string | undefined;
  tokenSource?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  options?: IdentityOptions | undefined;
}): Identity {
  const options = input.options ?? {};
  if (options.kind !== undefined && !identityKinds.includes(options.kind)) {
    throw new UsageError(`PlatformClient: identity.kind must be one of ${identityKinds.join(', ')}, got ${JSON.stringify(options.kind)}`, {
      code: 'INVALID_ARGUMENT',
    });
  }
  for (const name of ['repositories', 'users'] as const) {
    const value = options[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) {
      throw new UsageError(`PlatformClient: identity.${name} must be a whole number ≥ 0, got ${JSON.stringify(value)}`, { code: 'INVALID_ARGUMENT' });
    }
  }
  let kind: IdentityKind;
  let inferredFrom: Identity['inferredFrom'];
  if (options.kind !== undefined) {
    kind = options.kind;
    inferredFrom = 'configured';
  } else if (input.token !== undefined) {
    const byForm = kindOfToken(input.token);
    if (input.tokenSource === 'PLATFORM_TOKEN' && (byForm === undefined || byForm === 'installation')) {
      kind = 'workflow';
      inferredFrom = 'PLATFORM_TOKEN';
    } else if (byForm !== undefined) {
      kind = byForm;
      inferredFrom = 'token prefix';
    } else {
      kind = 'personal';
      inferredFrom = 'unknown token form';
    }
  } else if (input.clientId !== undefined && input.clientSecret !== undefined) {
    kind = 'oauth-app-client';
    inferredFrom = 'client credentials';
  } else {
    kind = 'unauthenticated';
    inferredFrom = 'no credentials';
  }
  const credential = input.token ?? (input.clientId !== undefined ? `client:${input.clientId}` : undefined);
  return { kind, inferredFrom, enterprise: options.enterprise === true, ...budgetOf(kind, options), key: credentialKey(credential) };
}
