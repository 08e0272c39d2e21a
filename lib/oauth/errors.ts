/**
 * The OAuth core's one error, neutral: neither the device login's nor the context-server client's. Each face maps it
 * to its own (DeviceLoginError's AUTH_* codes, ContextClientError's CTX_* codes); one left unmapped still exits as a
 * peer's answer does — 1 for a refusal, 3 for a server that failed (5xx, 429, 408). Messages pass the redactor and
 * quote a server's words only through terminalText.
 */
import { ExitCode, GantryError, exitCodeForStatus, type ExitCodeValue } from '../errors.js';
import { redact } from '../redact.js';
import { terminalText } from '../terminal-text.js';
import type { OAuthAnswer } from './answer.js';

/** What went wrong, one code each. */
export const oauthErrorCodes = {
  /** The server answered with an RFC 6749 §5.2 error body (`error`, `error_description`, `error_uri`), or with a status that is no success. */
  errorResponse: 'OAUTH_ERROR_RESPONSE',
  /** A success answer that breaks the protocol: no access_token, a token type other than Bearer, a field of the wrong type. */
  invalidResponse: 'OAUTH_INVALID_RESPONSE',
  /** A metadata document without a field it needs, or with one that is no URL or no list of strings. */
  invalidMetadata: 'OAUTH_INVALID_METADATA',
  /** The metadata names another issuer than the one it was looked up for (RFC 8414 §3.3). */
  issuerMismatch: 'OAUTH_ISSUER_MISMATCH',
  /** An endpoint over plain http on a host that is not this machine. */
  insecureEndpoint: 'OAUTH_INSECURE_ENDPOINT',
} as const;

export type OAuthErrorCode = (typeof oauthErrorCodes)[keyof typeof oauthErrorCodes];

/** Every `code` the OAuth core raises: its OAuthError's, and a client key refused before sending (exit 2). */
export const oauthAreaErrorCodes = [...Object.values(oauthErrorCodes), 'OAUTH_CLIENT_KEY'] as const;
export type OAuthAreaErrorCode = (typeof oauthAreaErrorCodes)[number];

export interface OAuthErrorOptions {
  code: OAuthErrorCode;
  hint?: string;
  /** RFC 6749 §5.2's `error`, when the server sent one. */
  error?: string | undefined;
  description?: string | undefined;
  errorUri?: string | undefined;
  /** The HTTP status of the answer, when there was one. */
  status?: number | undefined;
  /** The address that answered (redacted in messages by the faces). */
  url?: string | undefined;
  /** The metadata or answer field at fault. */
  field?: string | undefined;
}

export class OAuthError extends GantryError {
  declare readonly code: OAuthErrorCode;
  readonly error: string | undefined;
  readonly description: string | undefined;
  readonly errorUri: string | undefined;
  readonly status: number | undefined;
  readonly url: string | undefined;
  readonly field: string | undefined;

  constructor(message: string, options: OAuthErrorOptions) {
    super(redact(message), {
      code: options.code,
      exitCode: options.status !== undefined && options.status >= 400 ? exitCodeForStatus(options.status) : ExitCode.checkFailed,
      ...(options.hint ? { hint: redact(options.hint) } : {}),
    });
    this.error = options.error;
    this.description = options.description;
    this.errorUri = options.errorUri;
    this.status = options.status;
    this.url = options.url;
    this.field = options.field;
  }
}

/** RFC 6749 §5.2: an error answer's body, when it is one (an `error` string); the other two fields only as strings. */
export interface ErrorResponse {
  error: string;
  description: string | undefined;
  uri: string | undefined;
}

export function errorResponse(answer: OAuthAnswer): ErrorResponse | undefined {
  const error = answer.json?.error;
  if (typeof error !== 'string' || error === '') return undefined;
  const description = answer.json?.error_description;
  const uri = answer.json?.error_uri;
  return { error, description: typeof description === 'string' ? description : undefined, uri: typeof uri === 'string' ? uri : undefined };
}

/** The neutral error for an answer that is no success: its §5.2 body when it has one, else its status. */
export function errorOfAnswer(answer: OAuthAnswer, what: string): OAuthError {
  const body = errorResponse(answer);
  const said = terminalText(body ? `: ${body.error}${body.description ? ` (${body.description.slice(0, 200)})` : ''}` : '');
  return new OAuthError(`${what} answered ${answer.status}${said}`, {
    code: oauthErrorCodes.errorResponse,
    status: answer.status,
    url: answer.url,
    ...(body ? { error: body.error, description: body.description, errorUri: body.uri } : {}),
  });
}

export interface OAuthFlowErrorOptions<Code extends string> {
  code: Code;
  /** Over the code's own exit code, where the server's status decides. */
  exitCode?: ExitCodeValue;
  hint?: string;
  /** The hint in the command's words, where it names a setting. */
  cliHint?: string;
  /** The OAuth `error` the server sent, when it sent one. */
  oauthError?: string;
  /** The HTTP status of the answer that ended the flow, when there was one. */
  status?: number;
  cause?: unknown;
}

/**
 * The error of one face of the OAuth core (the device login's, the context-server client's): its own codes, each
 * with its exit code (`exitCodes`) unless the raising site passes one, and what the server said.
 */
export abstract class OAuthFlowError<Code extends string> extends GantryError {
  declare readonly code: Code;
  readonly oauthError: string | undefined;
  readonly status: number | undefined;

  protected constructor(message: string, options: OAuthFlowErrorOptions<Code>, exitCodes: Readonly<Record<Code, ExitCodeValue>>) {
    super(message, {
      code: options.code,
      exitCode: options.exitCode ?? exitCodes[options.code],
      ...(options.hint ? { hint: options.hint } : {}),
      ...(options.cliHint ? { cliHint: options.cliHint } : {}),
      ...(options.cause !== undefined ? { cause: options.cause } : {}),
    });
    this.oauthError = options.oauthError;
    this.status = options.status;
  }
}
