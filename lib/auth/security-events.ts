/**
 * Security events from the authorization server (DEV-RISC-*): Security Event Tokens (RFC 8417) pushed to a receiver
 * (RFC 8935), as Google's Cross-Account Protection delivers them. A token is believed only when its RS256 signature
 * checks against the issuer's published keys (`jwks_uri`), its issuer is the one configured and its audience is one of
 * our client ids; then the account's stored logins are dropped for `sessions-revoked`, `token-revoked` and
 * `account-disabled`. Anything else is answered as RFC 8935 §2.3 says and changes nothing.
 */
import { createHash, createPublicKey, verify as verifySignature, type JsonWebKey, type KeyObject } from 'node:crypto';
import type http from 'node:http';
import type { HttpClient } from '../http/index.js';
import type { OpenTokenStoreOptions } from './store/types.js';
import { getJson } from '../oauth/index.js';

export const secEventBase = 'https://schemas.openid.net/secevent';
export const droppingEvents = [
  `${secEventBase}/risc/event-type/sessions-revoked`,
  `${secEventBase}/oauth/event-type/token-revoked`,
  `${secEventBase}/risc/event-type/account-disabled`,
] as const;

export interface SecurityEvent {
  type: string;
  issuer: string;
  /** The account, for `iss_sub` (and `email`) subjects. */
  sub: string | undefined;
  email: string | undefined;
  /** The token's hash for `oauth_token` subjects (token-revoked). */
  tokenHash: string | undefined;
  jti: string | undefined;
}

export class SecurityEventError extends Error {
  /** RFC 8935 §2.3's error codes. */
  constructor(
    readonly err: 'invalid_request' | 'invalid_key' | 'invalid_issuer' | 'invalid_audience' | 'authentication_failed',
    message: string,
  ) {
    super(message);
  }
}

export interface SecurityEventKeys {
  issuer: string;
  audiences: readonly string[];
  /** The issuer's signing keys by `kid`. */
  key(kid: string | undefined): Promise<KeyObject | undefined>;
}

/** The issuer's keys from its `jwks_uri`, fetched again once when a token names a key not seen yet (key rotation). */
export function jwksKeys(http: HttpClient, jwksUri: string, issuer: string, audiences: readonly string[]): SecurityEventKeys {
  let keys: Map<string, KeyObject> | undefined;
  const load = async () => {
    const answer = await getJson(http, jwksUri);
    const list = Array.isArray(answer.json?.keys) ? (answer.json.keys as JsonWebKey[]) : [];
    keys = new Map();
    for (const jwk of list) {
      if (jwk.kty !== 'RSA') continue;
      try {
        keys.set(String(jwk.kid ?? ''), createPublicKey({ key: jwk, format: 'jwk' }));
      } catch {
        // a malformed key is skipped; a token naming it is refused as invalid_key
      }
    }
  };
  return {
    issuer,
    audiences,
    async key(kid) {
      if (!keys || !keys.has(kid ?? '')) await load();
      if (kid === undefined && keys!.size === 1) return [...keys!.values()][0];
      return keys!.get(kid ?? '');
    },
  };
}

function part(segment: string | undefined, what: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment ?? '', 'base64url').toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new SecurityEventError('invalid_request', `the security event token's ${what} is not a JSON object`);
}

/** Verifies a SET and returns its events; throws SecurityEventError with RFC 8935's code otherwise. */
export async function verifySecurityEventToken(token: string, keys: SecurityEventKeys, now = Date.now()): Promise<SecurityEvent[]> {
  const segments = token.trim().split('.');
  if (segments.length !== 3) throw new SecurityEventError('invalid_request', 'not a signed JWT (three dot-separated parts)');
  const header = part(segments[0], 'header');
  const claims = part(segments[1], 'payload');
  if (header.alg !== 'RS256') throw new SecurityEventError('invalid_request', `signature algorithm ${JSON.stringify(header.alg)} is not accepted (RS256 only)`);
  const key = await keys.key(typeof header.kid === 'string' ? header.kid : undefined);
  if (!key) throw new SecurityEventError('invalid_key', `no published key ${JSON.stringify(header.kid ?? null)} of ${keys.issuer}`);
  const signed = Buffer.from(`${segments[0]}.${segments[1]}`);
  if (!verifySignature('RSA-SHA256', signed, key, Buffer.from(segments[2]!, 'base64url')))
    throw new SecurityEventError('authentication_failed', 'the signature does not match');
  if (claims.iss !== keys.issuer) throw new SecurityEventError('invalid_issuer', `issuer ${JSON.stringify(claims.iss)} is not ${keys.issuer}`);
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.some((aud) => typeof aud === 'string' && keys.audiences.includes(aud)))
    throw new SecurityEventError('invalid_audience', 'the token is for another client');
  if (typeof claims.exp === 'number' && claims.exp * 1000 < now - 60_000) throw new SecurityEventError('invalid_request', 'the token has expired');
  const events = claims.events;
  if (!events || typeof events !== 'object' || Array.isArray(events)) throw new SecurityEventError('invalid_request', 'the token has no events claim');
  return Object.entries(events as Record<string, unknown>).map(([type, body]) => {
    const subject = ((body as { subject?: unknown })?.subject ?? {}) as Record<string, unknown>;
    return {
      type,
      issuer: keys.issuer,
      sub: typeof subject.sub === 'string' ? subject.sub : undefined,
      email: typeof subject.email === 'string' ? subject.email : undefined,
      tokenHash: typeof subject.token === 'string' ? subject.token : undefined,
      jti: typeof claims.jti === 'string' ? claims.jti : undefined,
    };
  });
}

export interface SecurityEventHandlerOptions {
  keys: SecurityEventKeys;
  /** Acts on each verified event (drops the account's logins); its failure answers 500 so the server pushes again. */
  onEvent: (event: SecurityEvent) => Promise<void>;
  /** Largest body accepted (default 64 KiB). */
  maxBytes?: number;
}

/** A node `http` handler for RFC 8935 push delivery: 202 when taken, 400 with `{err, description}` when refused. */
export function securityEventHandler(options: SecurityEventHandlerOptions): (request: http.IncomingMessage, response: http.ServerResponse) => void {
  const maxBytes = options.maxBytes ?? 64 * 1024;
  const answer = (response: http.ServerResponse, status: number, body?: unknown) => {
    response.writeHead(status, body ? { 'content-type': 'application/json' } : {});
    response.end(body ? JSON.stringify(body) : undefined);
  };
  return (request, response) => {
    if (request.method !== 'POST') return answer(response, 405, { err: 'invalid_request', description: 'POST a security event token' });
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/secevent+jwt')
      return answer(response, 400, { err: 'invalid_request', description: 'Content-Type must be application/secevent+jwt' });
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        answer(response, 413, { err: 'invalid_request', description: `larger than ${maxBytes} bytes` });
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > maxBytes) return;
      void (async () => {
        try {
          const events = await verifySecurityEventToken(Buffer.concat(chunks).toString('utf8'), options.keys);
          for (const event of events) await options.onEvent(event);
          answer(response, 202);
        } catch (error) {
          if (error instanceof SecurityEventError) answer(response, 400, { err: error.err, description: error.message });
          else answer(response, 500, { err: 'invalid_request', description: 'the event could not be applied; push it again' });
        }
      })();
    });
  };
}

/** Google's `hash_base64_sha512_sha512` token identifier: base64 of SHA-512 over the raw SHA-512 of the token. */
export function tokenIdentifier(token: string): string {
  return createHash('sha512').update(createHash('sha512').update(token).digest()).digest('base64');
}

/**
 * Drops the stored logins a verified event is about: the account's (by issuer and sub, or email) for
 * `sessions-revoked` and `account-disabled`; for `token-revoked`, the login whose refresh token the event's hash names.
 * Other event types change nothing. Returns the logins dropped, as "<server> (profile <name>)".
 */
export async function applySecurityEvent(event: SecurityEvent, storeOptions: OpenTokenStoreOptions = {}): Promise<string[]> {
  if (!(droppingEvents as readonly string[]).includes(event.type)) return [];
  const { dropAccountLogins, listProfiles, openStoreFor, forgetProfile } = await import('./store/index.js');
  const label = (entry: { authUrl: string; profile: string }) => `${entry.authUrl} (profile ${entry.profile})`;
  if (event.sub !== undefined || event.email !== undefined) {
    const { dropped, failed } = await dropAccountLogins(
      { issuer: event.issuer, ...(event.sub !== undefined ? { sub: event.sub } : {}), ...(event.email !== undefined ? { email: event.email } : {}) },
      storeOptions,
    );
    if (failed.length > 0 && dropped.length === 0) throw new Error(`the logins of the account could not be dropped: ${failed.map((f) => f.reason).join('; ')}`);
    return dropped.map(label);
  }
  if (event.tokenHash === undefined) return [];
  const dropped: string[] = [];
  for (const entry of await listProfiles(storeOptions)) {
    const opened = await openStoreFor(entry, storeOptions).catch(() => undefined);
    const login = await opened?.store.read(entry).catch(() => undefined);
    const refresh = login?.tokens.refreshToken;
    if (!opened || !refresh || tokenIdentifier(refresh) !== event.tokenHash) continue;
    await opened.store.delete(entry);
    await forgetProfile(entry, storeOptions);
    dropped.push(label(entry));
  }
  return dropped;
}
