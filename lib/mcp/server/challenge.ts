/**
 * The resource server's answers to requests it does not serve (RFC 6750 §3, RFC 9728 §5.1, CTX-ERR-*, AMB-22): the
 * status, the `WWW-Authenticate` challenge and a small JSON body saying the same for people reading a log.
 */
export interface Refusal {
  status: 400 | 401 | 403 | 503;
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'temporarily_unavailable';
  description: string;
  /** The scopes the request needs (401, 403). */
  scopes?: readonly string[];
  retryAfterSeconds?: number;
}

/** Why authorization refused a request, decided where the refusal is (the metrics' `reason` label). */
export type RefusalReason = 'no-token' | 'malformed' | 'expired' | 'wrong-audience' | 'invalid-token' | 'insufficient-scope' | 'unavailable';

/** Why a token itself is refused (InvalidTokenError). */
export type TokenRefusalReason = Extract<RefusalReason, 'expired' | 'wrong-audience' | 'invalid-token'>;

/** A refusal with its reason, set where it is decided: what the metrics count, never read back from the description. */
export interface AuthorizationRefusal extends Refusal {
  reason: RefusalReason;
}

/** RFC 7230 quoted-string: backslash and double quote escaped, control characters dropped. */
function quoted(value: string): string {
  const printable = [...value].map((c) => (c < ' ' || c === '\u007f' ? ' ' : c)).join('');
  return `"${printable.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The `Bearer` challenge. A request without credentials gets no `error` (RFC 6750 §3.1: "the resource server SHOULD
 * NOT include an error code"), only where the metadata is and what scope to ask for (CTX-EP-401-WWW-AUTHENTICATE).
 */
export function challenge(refusal: Refusal, resourceMetadataUrl: string): string {
  const parts = [`resource_metadata=${quoted(resourceMetadataUrl)}`];
  if (refusal.scopes && refusal.scopes.length > 0) parts.push(`scope=${quoted(refusal.scopes.join(' '))}`);
  if (refusal.error && refusal.error !== 'temporarily_unavailable') {
    parts.push(`error=${quoted(refusal.error)}`, `error_description=${quoted(refusal.description)}`);
  }
  return `Bearer ${parts.join(', ')}`;
}

export function refusalBody(refusal: Refusal): Record<string, string> {
  return { error: refusal.error ?? 'unauthorized', error_description: refusal.description };
}

/** RFC 6750 §2.1's b68token: what a bearer credential may be made of. */
const B68TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export type BearerCredential = { kind: 'none' } | { kind: 'malformed'; reason: string } | { kind: 'token'; token: string };

/** The bearer token of an `Authorization` header (the scheme is case-insensitive, RFC 7235 §2.1). */
export function bearerOf(header: string | string[] | undefined): BearerCredential {
  if (header === undefined || header === '') return { kind: 'none' };
  if (Array.isArray(header)) return { kind: 'malformed', reason: 'more than one Authorization header' };
  const match = /^(\S+)(?:\s+(.*))?$/.exec(header.trim());
  if (!match || match[1]!.toLowerCase() !== 'bearer') return { kind: 'none' };
  const token = (match[2] ?? '').trim();
  if (token === '') return { kind: 'malformed', reason: 'the Bearer credential is empty' };
  if (!B68TOKEN.test(token)) return { kind: 'malformed', reason: 'the Bearer credential has characters a token cannot have' };
  return { kind: 'token', token };
}
