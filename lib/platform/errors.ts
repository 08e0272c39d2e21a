/**
 * The platform's answers as typed errors. Each carries what the platform said (`message`, `documentation_url`,
 * `errors`), what was asked (method and path, never the token: messages pass through the redactor) and what to do.
 */
import { terminalText } from '../terminal-text.js';
import { ExitCode, GantryError } from '../errors.js';
import { ServiceError, type HintTable, type ServiceErrorDetails } from '../http/errors.js';
import { redact, redactUrl } from '../redact.js';

/**
 * Every `code` the platform area raises: `PLATFORM_<status>` for an answer, and these (test/architecture/
 * exit-codes.test.ts holds lib/ and providers/ to the list).
 */
export const platformErrorCodes = [
  'PLATFORM_BAD_CREDENTIALS',
  'PLATFORM_PRIMARY_LIMIT',
  'PLATFORM_SECONDARY_LIMIT',
  'PLATFORM_LIMITS_STORE',
  'PLATFORM_NO_URL',
  'PLATFORM_CLIENT_SECRET',
  'PLATFORM_APP_BAD_KEY',
  'PLATFORM_APP_NO_ID',
  'PLATFORM_APP_NO_KEY',
  'PLATFORM_APP_KEY_NOT_FOUND',
] as const;
export type PlatformErrorCode = (typeof platformErrorCodes)[number] | `PLATFORM_${number}`;

/** The platform's error body: `{ message, documentation_url, errors?, status? }`. */
export interface PlatformErrorBody {
  message?: string;
  documentationUrl?: string;
  errors?: unknown[];
}

export function readErrorBody(body: unknown): PlatformErrorBody {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return {};
  const record = body as Record<string, unknown>;
  return {
    ...(typeof record.message === 'string' ? { message: record.message } : {}),
    ...(typeof record.documentation_url === 'string' ? { documentationUrl: record.documentation_url } : {}),
    ...(Array.isArray(record.errors) ? { errors: record.errors } : {}),
  };
}

function describeErrors(errors: unknown[] | undefined): string {
  if (!errors || errors.length === 0) return '';
  const parts = errors.slice(0, 5).map((e) => {
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object') {
      const { resource, field, code, message } = e as Record<string, unknown>;
      if (typeof message === 'string') return message;
      return [resource, field, code].filter((x) => typeof x === 'string').join(' ');
    }
    return String(e);
  });
  return ` (${parts.join('; ')})`;
}

/** The URL (or path) asked is redacted here. */
export type PlatformApiErrorDetails = ServiceErrorDetails;

/** `; see <the platform's documentation_url>`, escaped whole: it is the server's text, and ends up in a hint line. */
function see(documentationUrl: string | undefined): string {
  return documentationUrl ? `; see ${terminalText(documentationUrl)}` : '';
}

/** The platform's advice by status; its `documentation_url` for the answer is added. */
const platformHints: HintTable = {
  403: "the token is valid but not allowed to do this: check its scopes or the app's permissions",
  404: 'check the owner, repository and path; the platform also answers 404 when the token may not see the repository',
  422: "the platform refused the request's content",
  '5xx': 'the platform failed; try again later',
  other: 'check the request',
};

/** An answer the platform refused: 4xx (exit 1, 429 and 408 3) or 5xx (3) after the retries that were safe. */
export class PlatformApiError extends ServiceError<unknown> {
  declare readonly code: PlatformErrorCode;
  /** The platform's `message`. */
  readonly platformMessage: string | undefined;
  readonly documentationUrl: string | undefined;

  constructor(details: PlatformApiErrorDetails) {
    const parsed = readErrorBody(details.body);
    const said = parsed.message ?? (details.rawBody ? `non-JSON body: ${details.rawBody.replace(/\s+/g, ' ').trim().slice(0, 300)}` : '');
    super(
      details,
      {
        said: `${said ? `: ${said}` : ''}${describeErrors(parsed.errors)}`,
        errors: parsed.errors,
        seeAlso: parsed.documentationUrl,
        code: `PLATFORM_${details.status}`,
      },
      platformHints,
    );
    this.platformMessage = parsed.message === undefined ? undefined : redact(parsed.message);
    this.documentationUrl = parsed.documentationUrl;
  }
}

/** 401: the token is wrong, expired or revoked (RATE-REVOKED-TOKEN-401). Never retried; exit 1. */
export class PlatformCredentialsError extends ServiceError<unknown> {
  declare readonly code: 'PLATFORM_BAD_CREDENTIALS';
  declare readonly status: 401;
  readonly platformMessage: string | undefined;
  readonly documentationUrl: string | undefined;

  constructor(details: { method: string; url: string; body?: unknown; tokenSource?: string | undefined; hint?: string }) {
    const parsed = readErrorBody(details.body);
    const where = details.tokenSource ? ` (from ${details.tokenSource})` : '';
    super(
      { status: 401, method: details.method, url: details.url, body: details.body },
      {
        said: `: ${parsed.message ?? 'Bad credentials'} — the platform does not accept the token${where}`,
        errors: parsed.errors,
        hint: `${details.hint ?? 'renew the token: it is wrong, expired or revoked; set a valid one in PLATFORM_TOKEN or GANTRY_PLATFORM_TOKEN (or the token option)'}${see(parsed.documentationUrl)}`,
        code: 'PLATFORM_BAD_CREDENTIALS',
      },
      platformHints,
    );
    this.platformMessage = parsed.message === undefined ? undefined : redact(parsed.message);
    this.documentationUrl = parsed.documentationUrl;
  }
}

export interface PlatformRateLimitDetails {
  kind: 'primary' | 'secondary';
  method: string;
  url: string;
  status: number;
  /** Time spent waiting on this request's rate-limit answers, in ms. */
  waitedMs: number;
  attempts: number;
  body?: unknown;
  /** Why the client gave up: retries spent, or a wait longer than allowed. */
  reason: string;
  /** When the platform said sending may resume (epoch ms), when it said. */
  resumeAt?: number | undefined;
}

function seconds(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/** The client gave up on a rate-limited request (RATE-ERR-PRIMARY, RATE-ERR-SECONDARY-BACKOFF): exit 3, try later. */
export class PlatformRateLimitError extends GantryError {
  readonly kind: 'primary' | 'secondary';
  readonly status: number;
  readonly method: string;
  readonly url: string;
  readonly waitedMs: number;
  readonly attempts: number;
  readonly platformMessage: string | undefined;
  readonly documentationUrl: string | undefined;
  readonly resumeAt: number | undefined;

  constructor(details: PlatformRateLimitDetails) {
    const parsed = readErrorBody(details.body);
    const url = redactUrl(details.url);
    const what = details.kind === 'primary' ? 'primary rate limit' : 'secondary rate limit';
    const resume = details.resumeAt !== undefined ? `; the platform allows it again at ${new Date(details.resumeAt).toISOString()}` : '';
    super(
      redact(
        `${details.method} ${url}: gave up on the ${what} after waiting ${seconds(details.waitedMs)} over ${details.attempts} attempts (${details.reason})${resume}${parsed.message ? `: ${parsed.message}` : ''}`,
      ),
      {
        hint: `try again later; keep fewer requests going at once, or raise the limits only if the platform allows more${see(parsed.documentationUrl)}`,
        exitCode: ExitCode.remote,
        code: details.kind === 'primary' ? 'PLATFORM_PRIMARY_LIMIT' : 'PLATFORM_SECONDARY_LIMIT',
      },
    );
    this.kind = details.kind;
    this.status = details.status;
    this.method = details.method;
    this.url = url;
    this.waitedMs = details.waitedMs;
    this.attempts = details.attempts;
    this.platformMessage = parsed.message === undefined ? undefined : redact(parsed.message);
    this.documentationUrl = parsed.documentationUrl;
    this.resumeAt = details.resumeAt;
  }
}
