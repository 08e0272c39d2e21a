import { terminalText } from '../terminal-text.js';
import { GantryError, ExitCode, exitCodeForStatus } from '../errors.js';
import { redact, redactHeaders, redactUrl, redactValue } from '../redact.js';

const maxBodyInMessage = 500;

function hintForStatus(status: number): string {
  if (status === 401) return 'check the credentials: the token is missing, wrong or expired';
  if (status === 403) return 'the credentials are valid but not allowed here: check the policy or scope for this path';
  if (status === 404) return 'check the address or path; it does not exist on this server';
  if (status === 405) return 'the server does not allow this method on this path';
  if (status === 413) return 'the request body is too large for the server';
  if (status === 429) return 'the server is rate limiting; try again later or lower the concurrency';
  if (status === 503) return 'the service is unavailable (sealed, in maintenance or overloaded); try again later';
  if (status >= 500) return 'the server failed; try again later, and check the service if it persists';
  return 'check the request';
}

/** Extracts the service's error strings from the shapes in use: `{errors: [...]}` and `{error: {message, errors}}`. */
export function serviceErrors(body: unknown): string[] | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  if (Array.isArray(record.errors)) return record.errors.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
  const nested = record.error;
  if (nested && typeof nested === 'object') {
    const { message } = nested as { message?: unknown };
    if (typeof message === 'string') return [message];
  }
  if (typeof nested === 'string') return [nested];
  return undefined;
}

export interface HttpErrorDetails {
  status: number;
  method: string;
  url: string;
  /** The parsed JSON body, when it was JSON. */
  body?: unknown;
  /** The raw text, when the body was not JSON (a proxy's HTML 502, say). */
  rawBody?: string;
  headers?: Record<string, string | string[] | undefined>;
  attempts?: number;
  retryNote?: string;
  hint?: string;
}

/** A response with a status the caller did not accept. */
export class HttpError extends GantryError {
  readonly status: number;
  readonly method: string;
  /** Redacted. */
  readonly url: string;
  /** The service's `errors` array, when it sent one (possibly empty). */
  readonly errors: string[] | undefined;
  /** The parsed body, redacted (registered secrets and credential-named fields masked). */
  readonly body: unknown;
  readonly rawBody: string | undefined;
  /** The response headers, credential-carrying ones (`set-cookie`, …) masked. */
  readonly headers: Record<string, string | string[] | undefined>;
  readonly attempts: number;

  constructor(details: HttpErrorDetails) {
    const url = redactUrl(details.url);
    const errors = serviceErrors(details.body);
    // The service's own words, on the message's one line (lib/terminal-text.ts).
    const detail = errors && errors.length > 0
      ? terminalText(errors.join('; '))
      : details.rawBody
        ? `non-JSON body: ${terminalText(details.rawBody.replace(/\s+/g, ' ').trim().slice(0, maxBodyInMessage))}`
        : '';
    const attempts = details.attempts ?? 1;
    const tried = attempts > 1 ? ` after ${attempts} attempts` : '';
    const message = redact(`${details.method} ${url} answered ${details.status}${tried}${detail ? `: ${detail}` : ''}`);
    super(message, {
      hint: details.hint ?? hintForStatus(details.status),
      exitCode: exitCodeForStatus(details.status),
      code: `HTTP_${details.status}`,
    });
    this.status = details.status;
    this.method = details.method;
    this.url = url;
    this.errors = errors?.map(redact);
    // Errors get logged, printed with --verbose and serialized: what they keep of the answer is redacted too.
    this.body = redactValue(details.body);
    this.rawBody = details.rawBody === undefined ? undefined : redact(details.rawBody);
    this.headers = redactHeaders(details.headers ?? {});
    this.attempts = attempts;
  }
}

/** What most likely went wrong with a connection that gave no response: decides the hint, and lets clients say it in their own terms. */
export type NetworkDiagnosis = 'plain-http-server' | 'untrusted-certificate' | 'client-certificate-refused' | 'unreachable';

/** TLS alerts a server sends when it wants a client certificate and got none, or one it does not trust. */
const clientCertificateAlert = /ALERT_CERTIFICATE_REQUIRED|ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA|ALERT_HANDSHAKE_FAILURE|certificate required|alert number (?:116|42|48|40)\b/i;

function diagnose(errorCode: string, reason: string, url: string): NetworkDiagnosis {
  // OpenSSL's answer when the bytes back are not a TLS record: an `HTTP/1.1 400` from a plain-http server, typically.
  if (url.startsWith('https:') && (errorCode === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number|packet length too long|http request/i.test(reason))) {
    return 'plain-http-server';
  }
  if (url.startsWith('https:') && (clientCertificateAlert.test(errorCode) || clientCertificateAlert.test(reason))) return 'client-certificate-refused';
  if (errorCode.startsWith('ERR_TLS') || /certificate|self.signed/i.test(reason)) return 'untrusted-certificate';
  return 'unreachable';
}

function networkHint(diagnosis: NetworkDiagnosis, url: string, errorCode: string, proxy: string | undefined): string {
  if (diagnosis === 'plain-http-server') {
    const { host } = new URL(url);
    return `the server at ${host} speaks plain http, not TLS: use http://${host}, or serve TLS there`;
  }
  if (diagnosis === 'untrusted-certificate') return 'the TLS certificate was not trusted: pass a CA bundle, or fix the server name';
  if (diagnosis === 'client-certificate-refused') return 'the server wants a client certificate it trusts: pass a client certificate and key';
  if (proxy && errorCode === 'ERR_PROXY_AUTH') {
    return `the proxy ${proxy} wants credentials it accepts: check the user and password in the proxy URL (HTTPS_PROXY or HTTP_PROXY, http://user:password@host:port)`;
  }
  if (proxy) {
    return `check that the proxy ${proxy} (HTTPS_PROXY or HTTP_PROXY) is running, reachable and lets this host through; a host listed in NO_PROXY goes direct`;
  }
  // Under TLS 1.3 a server that refuses the client's certificate often just closes the connection after the handshake.
  if (url.startsWith('https:') && errorCode === 'ECONNRESET') {
    return 'check that the server is running and reachable at that address; a TLS server that requires a client certificate also closes the connection like this';
  }
  return 'check that the server is running and reachable at that address';
}

/** No usable response: refused, reset, timed out, TLS failure. */
export class NetworkError extends GantryError {
  readonly method: string;
  readonly url: string;
  readonly errorCode: string;
  readonly attempts: number;
  readonly diagnosis: NetworkDiagnosis;
  /** The proxy the request went through (scheme, host and port), when it went through one. */
  readonly proxy: string | undefined;

  constructor(details: { method: string; url: string; errorCode: string; cause: unknown; attempts?: number; proxy?: string }) {
    const url = redactUrl(details.url);
    const proxy = details.proxy === undefined ? undefined : redactUrl(details.proxy).replace(/\/$/, '');
    const attempts = details.attempts ?? 1;
    const tried = attempts > 1 ? ` after ${attempts} attempts` : '';
    const through = proxy ? ` through the proxy ${proxy}` : '';
    const reason = details.cause instanceof Error ? details.cause.message : String(details.cause);
    const diagnosis = diagnose(details.errorCode, reason, url);
    super(`${details.method} ${url} failed${through}${tried}: ${details.errorCode} (${reason})`, {
      hint: networkHint(diagnosis, url, details.errorCode, proxy),
      exitCode: ExitCode.remote,
      code: details.errorCode,
      cause: details.cause,
    });
    this.method = details.method;
    this.url = url;
    this.errorCode = details.errorCode;
    this.attempts = attempts;
    this.diagnosis = diagnosis;
    this.proxy = proxy;
  }
}

/** The server answered, but not with what the protocol promises (bad JSON, an oversized body). */
export class ProtocolError extends GantryError {
  /** `hint`: advice, or the library's and the command's (`bothFaces`). */
  constructor(message: string, hint?: string | { hint: string; cliHint: string }) {
    super(message, { ...(typeof hint === 'object' ? hint : { hint }), exitCode: ExitCode.remote, code: 'PROTOCOL' });
  }
}
