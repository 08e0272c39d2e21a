/**
 * Redaction: every log line and every error message passes through `redact`.
 * Known secret values (tokens we sent, passwords we were given) are registered at run time and replaced wherever
 * they appear; well-known credential carriers (headers, query parameters, URL userinfo) are masked by shape.
 */
export const REDACTED = '[REDACTED]';

export const sensitiveHeaders = new Set([
  'authorization',
  'proxy-authorization',
  'x-secrets-token',
  'x-api-key',
  'cookie',
  'set-cookie',
]);

export const sensitiveQueryParameters = new Set(['access_token', 'key', 'token', 'client_secret', 'x-amz-signature', 'x-amz-credential', 'x-amz-security-token', 'signature']);

const knownSecrets = new Set<string>();
let knownSecretsPattern: RegExp | undefined;

/** Remember a secret value so it is masked wherever it appears later. Values shorter than 4 characters are ignored. */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < 4 || knownSecrets.has(value)) return;
  knownSecrets.add(value);
  knownSecretsPattern = undefined;
}

function secretsPattern(): RegExp | undefined {
  if (knownSecrets.size === 0) return undefined;
  if (!knownSecretsPattern) {
    const alternatives = [...knownSecrets]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    knownSecretsPattern = new RegExp(alternatives.join('|'), 'g');
  }
  return knownSecretsPattern;
}

const headerLine = new RegExp(`\\b(${[...sensitiveHeaders].join('|')})(\\s*[:=]\\s*)("?)(?:(Bearer|Basic|token)\\s+)?[^\\s",;]+`, 'gi');
// A value ends where a URL or the prose around it does; tokens never hold brackets, quotes or separators.
// An already masked value is matched whole, so that redacting twice changes nothing.
const queryValue = new RegExp(`([?&](?:${[...sensitiveQueryParameters].join('|')})=)(?:\\[REDACTED\\]|[^&#\\s"'<>()\\[\\]{},;]*)`, 'gi');
const urlUserinfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+(?::[^/\s@]*)?@/gi;

/** Mask credentials in free text: registered secrets, sensitive header lines, query values and URL userinfo. */
export function redact(text: string): string {
  let out = text;
  const pattern = secretsPattern();
  if (pattern) out = out.replace(pattern, REDACTED);
  out = out.replace(headerLine, (_m, name: string, sep: string, quote: string, scheme: string | undefined) =>
    `${name}${sep}${quote}${scheme ? `${scheme} ` : ''}${REDACTED}`);
  out = out.replace(queryValue, `$1${REDACTED}`);
  out = out.replace(urlUserinfo, `$1${REDACTED}@`);
  return out;
}

/** A URL safe to show: userinfo and sensitive query values masked. */
export function redactUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return redact(String(url));
  }
  if (parsed.username || parsed.password) {
    parsed.username = REDACTED;
    parsed.password = '';
  }
  for (const name of [...parsed.searchParams.keys()]) {
    if (sensitiveQueryParameters.has(name.toLowerCase())) parsed.searchParams.set(name, REDACTED);
  }
  return redact(parsed.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED));
}

/** A copy of the headers with sensitive values masked. */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = sensitiveHeaders.has(name.toLowerCase()) && value !== undefined ? REDACTED : value;
  }
  return out;
}
