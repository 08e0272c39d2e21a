/**
 * Access-token validation for the context server (CTX-AUTH-VALIDATE-AUDIENCE, CTX-AUTH-SERVER-OWN-TOKENS): a JWT
 * (RFC 9068) is checked against the issuer's JWKS; any other token is asked about at the issuer's introspection
 * endpoint (RFC 7662) with Gantry's own client credentials. Either way the audience must be this server, the issuer
 * the configured one and the token unexpired. Results are cached until the token expires (introspection: at most
 * 30 s, so a revocation is seen within that), so a tool call costs no round trip to the authorization server.
 */
import { hash } from 'node:crypto';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import type { HttpClient } from '../../http/index.js';
import { getJson, introspectionRequest, type AuthorizationServerMetadata } from '../../oauth/index.js';
import { sameResource } from '../resource-uri.js';
import type { TokenRefusalReason } from './challenge.js';

export interface TokenInfo {
  /** The token's subject (the user), when it names one. */
  subject: string | undefined;
  clientId: string | undefined;
  scopes: string[];
  /** Milliseconds since the epoch. */
  expiresAt: number;
  via: 'jwt' | 'introspection';
}

/**
 * Why a token is refused; `message` goes into `error_description`, so it never quotes the token. `reason` is the
 * kind of refusal, decided where it is thrown: what the metrics count, never read from the message.
 */
export class InvalidTokenError extends Error {
  constructor(
    message: string,
    readonly reason: TokenRefusalReason = 'invalid-token',
  ) {
    super(message);
    this.name = 'InvalidTokenError';
  }
}

export interface IntrospectionCredentials {
  clientId: string;
  clientSecret: string;
}

export interface TokenValidatorOptions {
  http: HttpClient;
  metadata: AuthorizationServerMetadata;
  /** The canonical server URI: the audience every token must name. */
  resource: string;
  introspection?: IntrospectionCredentials;
  /** Clock skew allowed on exp/nbf/iat, in seconds (default 60). */
  clockToleranceSeconds?: number;
  now?: () => number;
  /** Told after each fetch of the JWKS (the metrics count them). */
  onKeysFetched?: () => void;
}

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
// RFC 9068 §4 asks for `at+jwt`; many servers (Keycloak, Auth0 without the RFC 9068 profile) send `JWT` or nothing.
// Other types — ID tokens' logout+jwt, security events' secevent+jwt — are never access tokens.
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt', undefined]);
const JWKS_COOLDOWN_MS = 30_000;
const INTROSPECTION_CACHE_MS = 30_000;
const MAX_CACHED = 10_000;

export interface TokenValidator {
  validate(token: string): Promise<TokenInfo>;
  /** Resolves once the authorization server's keys are held (fetched now if not yet); throws when they cannot be. */
  keysReady(): Promise<void>;
}

export function createTokenValidator(options: TokenValidatorOptions): TokenValidator {
  const now = options.now ?? Date.now;
  const tolerance = options.clockToleranceSeconds ?? 60;
  const { metadata, resource, http } = options;
  const cache = new Map<string, { info: TokenInfo; until: number }>();
  let keys: ReturnType<typeof createLocalJWKSet> | undefined;
  let keysFetchedAt = 0;
  let loading: Promise<void> | undefined;

  const loadKeys = async () => {
    if (typeof metadata.jwks_uri !== 'string') throw new InvalidTokenError('the authorization server publishes no JWKS (jwks_uri), so a JWT cannot be checked');
    loading ??= (async () => {
      try {
        const answer = await getJson(http, metadata.jwks_uri as string);
        if (answer.status !== 200 || !Array.isArray(answer.json?.keys))
          throw new InvalidTokenError(`the authorization server's JWKS (${answer.status}) is not a key set`);
        keys = createLocalJWKSet(answer.json as unknown as JSONWebKeySet);
        keysFetchedAt = now();
        options.onKeysFetched?.();
      } finally {
        loading = undefined;
      }
    })();
    await loading;
  };

  const verifyJwt = async (token: string): Promise<JWTPayload> => {
    if (!keys) await loadKeys();
    const verify = async () =>
      (
        await jwtVerify(token, keys!, {
          issuer: metadata.issuer,
          algorithms: ALGORITHMS,
          clockTolerance: tolerance,
          currentDate: new Date(now()),
          requiredClaims: ['exp'],
        })
      ).payload;
    try {
      return await verify();
    } catch (error) {
      // A key not seen yet: the issuer may have rotated. Fetched again at most every 30 s, so a stream of tokens with
      // made-up key ids cannot turn into a stream of requests to the authorization server.
      if (error instanceof joseErrors.JWKSNoMatchingKey && now() - keysFetchedAt > JWKS_COOLDOWN_MS) {
        await loadKeys();
        return verify().catch((again: unknown) => Promise.reject(describe(again)));
      }
      throw describe(error);
    }
  };

  const fromJwt = async (token: string): Promise<TokenInfo> => {
    const header = decodeHeader(token);
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : undefined;
    if (!ACCESS_TOKEN_TYPES.has(typ)) throw new InvalidTokenError(`a ${String(header.typ)} token is not an access token`);
    const claims = await verifyJwt(token);
    checkAudience(claims.aud, resource);
    return {
      subject: typeof claims.sub === 'string' ? claims.sub : undefined,
      clientId: typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : undefined,
      scopes: scopesOf(claims.scope ?? claims.scp),
      expiresAt: (claims.exp as number) * 1000,
      via: 'jwt',
    };
  };

  const fromIntrospection = async (token: string): Promise<TokenInfo> => {
    if (typeof metadata.introspection_endpoint !== 'string' || !options.introspection)
      throw new InvalidTokenError('the token is not a JWT, and introspection is not configured');
    const { clientId, clientSecret } = options.introspection;
    const config = { http, server: metadata, client: { clientId, clientSecret, authMethod: 'client_secret_post' as const } };
    const answer = await introspectionRequest(config, token, { token_type_hint: 'access_token' });
    if (answer.status !== 200 || !answer.json) throw new IntrospectionFailed(`the introspection endpoint answered ${answer.status}`);
    const body = answer.json;
    if (body.active !== true) throw new InvalidTokenError('the token is not active (expired, revoked or unknown)');
    if (body.iss !== undefined && body.iss !== metadata.issuer) throw new InvalidTokenError('the token was issued by another authorization server');
    // RFC 7662 makes `aud` optional; a token that names no audience could be meant for anyone, so it is refused.
    checkAudience(body.aud, resource);
    const exp = typeof body.exp === 'number' ? body.exp * 1000 : now() + INTROSPECTION_CACHE_MS;
    if (exp <= now() - tolerance * 1000) throw new InvalidTokenError('the token has expired', 'expired');
    return {
      subject: typeof body.sub === 'string' ? body.sub : undefined,
      clientId: typeof body.client_id === 'string' ? body.client_id : undefined,
      scopes: scopesOf(body.scope),
      expiresAt: exp,
      via: 'introspection',
    };
  };

  return {
    async validate(token) {
      // Not registered with the redactor: the server never writes a token anywhere, and registering every token of
      // every caller would grow the redactor's pattern for as long as the server runs.
      const key = hash('sha256', token, 'base64url');
      const cached = cache.get(key);
      const at = now();
      if (cached && cached.until > at) return cached.info;
      if (cached) cache.delete(key);
      const info = token.split('.').length === 3 ? await fromJwt(token) : await fromIntrospection(token);
      if (info.expiresAt <= at - tolerance * 1000) throw new InvalidTokenError('the token has expired', 'expired');
      const until = info.via === 'introspection' ? Math.min(info.expiresAt, at + INTROSPECTION_CACHE_MS) : info.expiresAt;
      if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
      cache.set(key, { info, until });
      return info;
    },
    async keysReady() {
      // A server that only introspects has no keys to hold.
      if (!keys && typeof metadata.jwks_uri === 'string') await loadKeys();
    },
  };
}

/** The authorization server could not answer: the request gets 503, not 401 — the token may well be good. */
export class IntrospectionFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IntrospectionFailed';
  }
}

function checkAudience(aud: unknown, resource: string): void {
  const audiences = Array.isArray(aud) ? aud : aud === undefined ? [] : [aud];
  if (audiences.length === 0) throw new InvalidTokenError('the token names no audience; it must be issued for this server', 'wrong-audience');
  if (!audiences.some((value) => typeof value === 'string' && sameResource(value, resource))) {
    throw new InvalidTokenError(`the token was issued for another audience, not ${resource}`, 'wrong-audience');
  }
}

function scopesOf(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  return [];
}

function decodeHeader(token: string): Record<string, unknown> {
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8'));
    if (header && typeof header === 'object' && !Array.isArray(header)) return header as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new InvalidTokenError('the token is not a well-formed JWT');
}

function describe(error: unknown): InvalidTokenError {
  if (error instanceof InvalidTokenError) return error;
  if (error instanceof joseErrors.JWTExpired) return new InvalidTokenError('the token has expired', 'expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed)
    return new InvalidTokenError(`the token's ${error.claim} claim is not acceptable (${error.reason})`);
  if (error instanceof joseErrors.JWKSNoMatchingKey) return new InvalidTokenError('the token is signed with a key the authorization server does not publish');
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return new InvalidTokenError("the token's signature does not verify");
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return new InvalidTokenError("the token's signature algorithm is not accepted");
  if (error instanceof joseErrors.JOSEError) return new InvalidTokenError('the token is not a valid JWT');
  throw error;
}
