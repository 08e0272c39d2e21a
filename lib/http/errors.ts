import { terminalText } from '../terminal-text.js';
import { GantryError, ExitCode, exitCodeForStatus } from '../errors.js';
import { redact, redactHeaders, redactUrl, redactValue } from '../redact.js';

const maxBodyInMessage = 500;

/** Advice: the library's words, and the command's (`cliHint`) where they differ. */
export type Hint = string | { hint: string | undefined; cliHint?: string | undefined };

/**
 * A service's advice per status: the exact status first, then `5xx` for any server failure, then `other`. Each
 * service's error is its body reader and one of these.
 */
export type HintTable = Readonly<{ [status: number]: Hint | undefined; '5xx'?: Hint | undefined; other?: Hint | undefined }>;

/** The advice a table gives for a status. */
export function hintFrom(table: HintTable, status: number): Hint | undefined {
  return table[status] ?? (status >= 500 ? table['5xx'] : undefined) ?? table.other;
}

/** The HTTP core's advice, for any service that has none of its own for a status. */
export const httpHints: HintTable = {
  401: 'check the credentials: the token is missing, wrong or expired',
  403: 'the credentials are valid but not allowed here: check the policy or scope for this path',
  404: 'check the address or path; it does not exist on this server',
  405: 'the server does not allow this method on this path',
  413: 'the request body is too large for the server',
  429: 'the server is rate limiting; try again later or lower the concurrency',
  503: 'the service is unavailable (sealed, in maintenance or overloaded); try again later',
  '5xx': 'the server failed; try again later, and check the service if it persists',
  other: 'check the request',
};

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
  rawBody?: string | undefined;
  headers?: Record<string, string | string[] | undefined>;
  attempts?: number | undefined;
  retryNote?: string;
  /** Advice that replaces the status's. */
  hint?: string | undefined;
  cause?: unknown;
}

/** What a service's error is made from: the request it refused, and what the answer's body held. */
export type ServiceErrorDetails = Pick<HttpErrorDetails, 'status' | 'method' | 'url' | 'body' | 'rawBody' | 'headers' | 'attempts' | 'hint'>;

/** What a service reads in an answer it refused: its own words, entries, advice and code. */
export interface ServiceAnswer<Item = string> {
  /** The service's words as they follow the status in the message (`: Not Found`, ` notFound (fileId): …`). */
  said: string;
  /** The entries of the body's error list, kept (redacted) on the error. */
  errors?: readonly Item[] | undefined;
  /** Advice the body itself calls for (a reason the service names), before the status's. */
  hint?: Hint | undefined;
  /** Where the service documents this answer: added to the status's advice. */
  seeAlso?: string | undefined;
  code: string;
  /** A 4xx the service means as "not now" (a rate-limit reason, replication lag): exit 3, like a 5xx. */
  notNow?: boolean;
  /** Who answered, where the message names the service rather than the request (`secrets service`); and then the request (` to GET /v1/x`). */
  by?: string;
  to?: string;
}

/** The core's reading of an answer: the `{errors: [...]}` / `{error: {message}}` shapes, or the first 500 characters of a body that is not JSON. */
function coreAnswer(details: HttpErrorDetails): ServiceAnswer {
  const errors = serviceErrors(details.body);
  const detail =
    errors && errors.length > 0
      ? errors.join('; ')
      : details.rawBody
        ? `non-JSON body: ${details.rawBody.replace(/\s+/g, ' ').trim().slice(0, maxBodyInMessage)}`
        : '';
  return { said: detail ? `: ${detail}` : '', errors, code: `HTTP_${details.status}` };
}

/**
 * A response with a status the caller did not accept. Owns what every service's refusal has: status, method, URL,
 * attempts, the body kept redacted, the message (`GET <url> answered 404 after 3 attempts: …`), the exit code of the
 * status and the advice for it. A service says what its body means through `ServiceError`.
 */
export class HttpError<Item = string> extends GantryError {
  readonly status: number;
  readonly method: string;
  /** Redacted. */
  readonly url: string;
  /** The service's `errors` array, when it sent one (possibly empty). */
  readonly errors: readonly Item[] | undefined;
  /** The parsed body, redacted (registered secrets and credential-named fields masked). */
  readonly body: unknown;
  readonly rawBody: string | undefined;
  /** The response headers, credential-carrying ones (`set-cookie`, …) masked. */
  readonly headers: Record<string, string | string[] | undefined>;
  readonly attempts: number;

  /** `answer` and `hints`: how a service reads its body (`ServiceError`); the core's reading otherwise. */
  constructor(details: HttpErrorDetails, answer?: ServiceAnswer<Item>, hints: HintTable = httpHints) {
    const read = answer ?? (coreAnswer(details) as ServiceAnswer<unknown> as ServiceAnswer<Item>);
    const url = redactUrl(details.url);
    const attempts = details.attempts ?? 1;
    const tried = attempts > 1 ? ` after ${attempts} attempts` : '';
    // The service's own words, on the message's one line (lib/terminal-text.ts).
    const message = `${read.by ?? `${details.method} ${url}`} answered ${details.status}${read.to ?? ''}${tried}${terminalText(read.said)}`;
    super(message, {
      ...adviceFor(details, read, hints),
      exitCode: read.notNow ? ExitCode.remote : exitCodeForStatus(details.status),
      code: read.code,
      cause: details.cause,
    });
    this.status = details.status;
    this.method = details.method;
    this.url = url;
    // Errors get logged, printed with --verbose and serialized: what they keep of the answer is redacted too.
    this.errors = read.errors === undefined ? undefined : (redactValue(read.errors) as Item[]);
    this.body = redactValue(details.body);
    this.rawBody = details.rawBody === undefined ? undefined : redact(details.rawBody);
    this.headers = redactHeaders(details.headers ?? {});
    this.attempts = attempts;
  }
}

/** The hint and cliHint of an answer: the caller's, else the body's, else the status's (with the service's link). */
function adviceFor(details: HttpErrorDetails, answer: ServiceAnswer<unknown>, hints: HintTable): { hint: string | undefined; cliHint: string | undefined } {
  if (details.hint !== undefined) return { hint: details.hint, cliHint: undefined };
  const chosen = answer.hint ?? hintFrom(hints, details.status);
  const { hint, cliHint } = typeof chosen === 'object' ? chosen : { hint: chosen, cliHint: undefined };
  const see = answer.seeAlso && answer.hint === undefined ? `; see ${terminalText(answer.seeAlso)}` : '';
  return { hint: hint === undefined ? undefined : `${hint}${see}`, cliHint: cliHint === undefined ? undefined : `${cliHint}${see}` };
}

/**
 * A service's refusal: an `HttpError` (so `error instanceof HttpError && error.status === 404` holds for every
 * service) whose subclass gives only how to read the service's body (`ServiceAnswer`) and its advice (`HintTable`).
 * No subclass sets its exit code: a 4xx is 1, 408, 429 and 5xx are 3, and an answer the service means as "not now"
 * (`notNow`) is 3.
 */
export class ServiceError<Item = string> extends HttpError<Item> {
  constructor(details: HttpErrorDetails, answer: ServiceAnswer<Item>, hints: HintTable) {
    super(details, answer, hints);
  }
}

/** What most likely went wrong with a connection that gave no response: decides the hint, and lets clients say it in their own terms. */
export type NetworkDiagnosis = 'plain-http-server' | 'untrusted-certificate' | 'client-certificate-refused' | 'unreachable';

/** TLS alerts a server sends when it wants a client certificate and got none, or one it does not trust. */
const clientCertificateAlert =
  /ALERT_CERTIFICATE_REQUIRED|ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA|ALERT_HANDSHAKE_FAILURE|certificate required|alert number (?:116|42|48|40)\b/i;

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
