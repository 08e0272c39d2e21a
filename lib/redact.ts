/**
 * Redaction: every log line and every error message passes through `redact`. A root module of lib/, like log.ts and
 * errors.ts, so that the logger, the HTTP core and every area use it without importing each other in a ring.
 * Known secret values (tokens we sent, passwords we were given) are registered at run time and replaced wherever
 * they appear (also JSON-escaped or URL-encoded); well-known credential carriers (headers, also quoted as JSON, cookies,
 * bearer tokens in prose, query and fragment parameters, URL userinfo, credential-named JSON fields and environment
 * assignments) are masked by shape.
 */
export const REDACTED = '[REDACTED]';

export const sensitiveHeaders = new Set(['authorization', 'proxy-authorization', 'x-secrets-token', 'x-api-key', 'cookie', 'set-cookie']);

export const sensitiveQueryParameters = new Set([
  'access_token',
  'refresh_token',
  'id_token',
  'key',
  'api_key',
  'apikey',
  'token',
  'password',
  'client_secret',
  'secret_id',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'signature',
]);

const knownSecrets = new Set<string>();
let knownSecretsPattern: RegExp | undefined;
// A long-running process (a context server, a webhook receiver) sees tokens without end: the oldest are forgotten
// beyond this many forms (four per secret), so the pattern neither grows nor slows down for ever.
const MAX_KNOWN_FORMS = 4096;

/** Remember a secret value so it is masked wherever it appears later. Values shorter than 4 characters are ignored. */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < 4 || knownSecrets.has(value)) return;
  // Also the forms the value takes when echoed inside a JSON body or a URL (once, or twice when that URL is itself a
  // query parameter of another URL).
  for (const form of [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), encodeURIComponent(encodeURIComponent(value))]) {
    knownSecrets.delete(form);
    knownSecrets.add(form);
  }
  for (const oldest of knownSecrets) {
    if (knownSecrets.size <= MAX_KNOWN_FORMS) break;
    knownSecrets.delete(oldest);
  }
  knownSecretsPattern = undefined;
}

function secretsPattern(): RegExp | undefined {
  if (knownSecrets.size === 0) return undefined;
  if (!knownSecretsPattern) {
    const alternatives = [...knownSecrets].sort((a, b) => b.length - a.length).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    knownSecretsPattern = new RegExp(alternatives.join('|'), 'g');
  }
  return knownSecretsPattern;
}

// The IANA HTTP authentication schemes (and GitHub's `token`): the scheme stays readable, the credential is masked.
const authSchemes = [
  'Bearer',
  'Basic',
  'token',
  'Digest',
  'Negotiate',
  'NTLM',
  'OAuth',
  'DPoP',
  'GNAP',
  'HOBA',
  'Mutual',
  'PrivateToken',
  'Concealed',
  'SCRAM-SHA-1',
  'SCRAM-SHA-256',
  'vapid',
  'AWS4-HMAC-SHA256',
];
const valueHeaders = [...sensitiveHeaders].filter((name) => !name.endsWith('cookie'));
// `Name: value`, `name=value`, and the JSON or quoted forms `"Name": "value"` / `'name': 'value'`.
const headerLine = new RegExp(`\\b(${valueHeaders.join('|')})(["']?\\s*[:=]\\s*)(["']?)(?:(${authSchemes.join('|')})\\s+)?([^\\s"',;]+)`, 'gi');
// What a message shows in place of a credential is no credential: a placeholder (`Bearer <token>`), or a scheme named
// alone (`(Authorization: Bearer)`). Masking those would eat Gantry's own hints.
const placeholder = /^<[^<>\s]*>[).,\]]*$/;
const schemeAlone = new RegExp(`^(?:${authSchemes.join('|')})[).,\\]]*$`, 'i');
// A cookie header holds several `name=value` pairs: everything up to the end of the line or the quote is masked.
const cookieLine = /\b((?:set-)?cookie)(["']?\s*[:=]\s*)(["']?)(?!\[REDACTED\])[^\s"'][^\r\n"']*/gi;
// A bearer credential quoted in prose (`invalid Bearer eyJ…`): token68 characters with at least one digit.
const bareBearer = /\b(Bearer\s+)(?=[A-Za-z0-9\-._~+/]*\d)[A-Za-z0-9\-._~+/]{8,}=*/gi;
// `SECRETS_TOKEN=…`, `PAGEANALYSIS_API_KEY=…`, `GANTRY_TOKEN_<host>=…` as echoed environment assignments.
const envAssignment = /\b((?:[A-Z][A-Z0-9]*_)*(?:TOKEN|API_KEY|SECRET|SECRET_ID|PASSWORD)(?:_[A-Za-z0-9_]+)?=)[^\s"'<>&[\]]+/g;
// A credential-named string field of a JSON body echoed in an error (`"client_token": "…"`, `"password": "…"`),
// also when that body is itself quoted inside a JSON string (`\"password\":\"…\"`).
const jsonField =
  /((\\*)"(?:access_token|refresh_token|id_token|client_token|token|password|secret_id|client_secret|api_key|apikey)\2"\s*:\s*\2")[^\r\n]*?(?<!\\)\2"/gi;
// A value ends where a URL or the prose around it does; tokens never hold brackets, quotes or separators.
// An already masked value is matched whole, so that redacting twice changes nothing.
const queryValue = new RegExp(`([?&#;](?:${[...sensitiveQueryParameters].join('|')})=)(?:\\[REDACTED\\]|[^&#\\s"'<>()\\[\\]{},;]*)`, 'gi');
// The same inside a URL that is itself percent-encoded into another URL's query (`?url=https%3A%2F%2Fh%2F%3Ftoken%3Dabc`),
// once or several times (`%253F`): the value runs to the next `&`, `#` or `;` encoded no more times than its own `?`
// (one encoded more belongs to the value: `%2526` in a value after `%3F` is the token's own `&`), or to the end of the
// outer value.
const pct = (hex: string) => `%(?:25)*(?:${hex})`;
const encodedQueryValue = new RegExp(
  `(%((?:25)*)(?:3F|26|23|3B)(?:${[...sensitiveQueryParameters].join('|')})${pct('3D')})` +
    `(?:\\[REDACTED\\]|(?:%(?:25)*5BREDACTED%(?:25)*5D)|(?:[^&#\\s"'<>()\\[\\]{},;%]|%(?:(?!(?:25)*(?:26|23|3B))|(?=\\2(?:25)))[0-9A-Fa-f]{2})*)`,
  'gi',
);
// Userinfo of an encoded URL (`https%3A%2F%2Fuser%3Apass%40host`): up to the first encoded `@` before its path. The
// scheme starts a word, or follows an escape (`%3Dhttp%253A…` in a URL nested twice). Its delimiters are escaped as
// often as its `://` (the `25`s captured); an escape of one more `25` is a character of the userinfo itself (a `#`
// the inner URL holds as `%23` reads `%2523` once nested).
const encodedUserinfo = new RegExp(
  `(?<=^|[^a-z0-9+.-]|%(?:25)*[0-9A-F]{2})([a-z][a-z0-9+.-]*%((?:25)*)3A%\\2(?:2F)%\\2(?:2F))(?:(?!%\\2(?:2F|3F|23|40))[^/\\s?#&@])+(%\\2(?:40))`,
  'gi',
);
// Userinfo runs to the last `@` before the path, as URL parsers read it (a password may hold `@`; the user may be empty).
const urlUserinfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s?#@]*(?:@[^/\s?#@]*)*@/gi;

/** Mask credentials in free text: registered secrets, sensitive header lines, query values and URL userinfo. */
export function redact(text: string): string {
  let out = text;
  const pattern = secretsPattern();
  if (pattern) out = out.replace(pattern, REDACTED);
  out = out.replace(headerLine, (match: string, name: string, sep: string, quote: string, scheme: string | undefined, value: string) =>
    placeholder.test(value) || (!scheme && schemeAlone.test(value)) ? match : `${name}${sep}${quote}${scheme ? `${scheme} ` : ''}${REDACTED}`,
  );
  out = out.replace(cookieLine, `$1$2$3${REDACTED}`);
  out = out.replace(bareBearer, `$1${REDACTED}`);
  out = out.replace(envAssignment, `$1${REDACTED}`);
  out = out.replace(jsonField, `$1${REDACTED}$2"`);
  out = out.replace(queryValue, `$1${REDACTED}`);
  out = out.replace(encodedQueryValue, `$1${REDACTED}`);
  out = out.replace(urlUserinfo, `$1${REDACTED}@`);
  out = out.replace(encodedUserinfo, `$1${REDACTED}$3`);
  return out;
}

/**
 * A URL safe to show: userinfo and sensitive query values masked — also in a URL carried as a query value of this
 * one (`…/runPageanalysis?url=https%3A%2F%2Fshop%2F%3Ftoken%3D…`), to any depth, so a URL that reaches a message
 * inside another is masked like one that reaches it alone.
 */
export function redactUrl(url: string | URL): string {
  return redact(maskUrl(String(url), 0));
}

/** `redactUrl` without the final free-text pass, for URLs nested in query values (`[REDACTED]` kept raw at every depth). */
function maskUrl(text: string, depth: number): string {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return text;
  }
  if (parsed.username || parsed.password) {
    parsed.username = REDACTED;
    parsed.password = '';
  }
  const pairs = [...parsed.searchParams];
  let changed = false;
  const masked = pairs.map(([name, value]): [string, string] => {
    let next = value;
    if (sensitiveQueryParameters.has(name.toLowerCase())) next = REDACTED;
    // Any value the parser reads as a URL is one (` https:…`, `https:\\…` and `https:u:p@…` are, for it), so the
    // parser, not a pattern, decides; the depth bound keeps a hostile URL nested without end within the stack.
    else if (depth < 8) next = maskUrl(value, depth + 1);
    if (next !== value) changed = true;
    return [name, next];
  });
  // Nothing to mask: the URL as it was given, not as the parser respells it (`http://host` stays without the `/` the
  // parser adds), so a printed address can be pasted back where an exact spelling matters, such as an OAuth issuer.
  if (!changed && !parsed.username && !parsed.password) return text;
  if (changed) parsed.search = new URLSearchParams(masked).toString();
  return parsed.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

/** JSON field names whose values are credentials, whatever the text (kept in step with `jsonField` above). */
const credentialFields = /^(?:access_token|refresh_token|id_token|client_token|token|password|secret_id|client_secret|api_key|apikey)$/i;

/**
 * A copy of a parsed body safe to keep on an error or print: every string through `redact`, and the value of every
 * credential-named field masked.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (!value || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, credentialFields.test(key) && typeof item === 'string' ? REDACTED : redactValue(item, depth + 1)]),
  );
}

/** A copy of the headers safe to keep: credential-carrying ones masked, the others through `redact`. */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      value === undefined ? undefined : sensitiveHeaders.has(name.toLowerCase()) ? REDACTED : Array.isArray(value) ? value.map(redact) : redact(value),
    ]),
  );
}
