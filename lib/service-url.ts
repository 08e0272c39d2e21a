/**
 * The one check of a service's base URL (or any address a credential is sent to) given by the user: it parses, it is
 * http(s) — https, or http on loopback only, unless the caller allows plain http anywhere —, and carries no user,
 * password, query or fragment unless allowed. Every refusal is a UsageError (exit 2) naming the setting as the caller
 * calls it (`--address`, `the storage base URL`, `PlatformClient: the platform API address`), never showing a
 * password.
 */
import { UsageError } from './errors.js';
import { httpsOrLoopbackText, isHttpsOrLoopback } from './loopback.js';
import { redact, redactUrl } from './redact.js';

export interface ServiceUrlCheck {
  /** How messages name the URL: `the storage base URL`, `--address`. */
  name: string;
  /** `loopback` (default): https, or http on loopback only; `anywhere`: http or https. */
  plainHttp?: 'loopback' | 'anywhere';
  /** Whether a user or password in the URL is accepted (default no). */
  userinfo?: boolean;
  /** Whether a query or fragment is accepted (default no). */
  query?: boolean;
  /** Show the refused text in "is not a URL" (default yes, redacted and cut to 120 characters). */
  showValue?: boolean;
  /** The hint of "is not a URL". */
  hint?: string;
  /** The hint of a refused scheme. */
  schemeHint?: string;
  /** The errors' code (default USAGE). */
  code?: string;
}

export function parseServiceUrl(raw: string, check: ServiceUrlCheck): URL {
  const { name } = check;
  const code = check.code !== undefined ? { code: check.code } : {};
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    const value = check.showValue === false ? '' : ` ${JSON.stringify(redact(String(raw)).slice(0, 120))}`;
    throw new UsageError(`${name}${value} is not a URL`, { ...code, ...(check.hint !== undefined ? { hint: check.hint } : {}) });
  }
  const where = `${url.protocol}//${url.host}`;
  const hint = check.schemeHint !== undefined ? { hint: check.schemeHint } : {};
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${name} must be ${check.plainHttp === 'anywhere' ? 'http(s)' : httpsOrLoopbackText}, got ${url.protocol}`, { ...code, ...hint });
  }
  if (check.plainHttp !== 'anywhere' && !isHttpsOrLoopback(url))
    throw new UsageError(`${name} must be ${httpsOrLoopbackText}, got ${where}`, { ...code, ...hint });
  if (!check.userinfo && (url.username || url.password)) throw new UsageError(`${name} must carry no user or password: ${redactUrl(url)}`, code);
  if (!check.query && (url.search || url.hash)) throw new UsageError(`${name} must have no query or fragment: ${where}${url.pathname}`, code);
  return url;
}
