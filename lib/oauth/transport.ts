/**
 * The one way Gantry talks to an authorization server: form-encoded POSTs and GETs through the HTTP core, every status
 * handed back (OAuth decides by the `error` field, not the status) unless the caller lets the core raise a server's
 * failure, JSON read leniently, small bodies only, no redirect followed. Every token sent or received is registered
 * with the redactor before anything can log it.
 */
import { createHttpClient, noRetry, registerSecret, waitLimits, type HttpClient } from '../http/index.js';
import type { OAuthAnswer } from './answer.js';
import { OAuthError, oauthErrorCodes } from './errors.js';

export type { OAuthAnswer } from './answer.js';

/** Authorization-server answers are small; anything larger is not one. */
const maxAnswerBytes = 256 * 1024;

export interface SendOptions {
  signal?: AbortSignal | undefined;
  headers?: Record<string, string>;
  /**
   * Statuses the HTTP core raises as its HttpError (after its retry policy) instead of handing them back as an
   * answer; default none.
   */
  serverFailure?: ((status: number) => boolean) | undefined;
  /** Follow a redirect (default not: an OAuth endpoint answers where it is). */
  followRedirects?: boolean;
  /** Sending it twice does no more than once (revocation, introspection): see RequestOptions' `repeatable`. */
  repeatable?: boolean;
}

/** A client for authorization servers: no retries (a token request is not repeated), no redirects, GANTRY_TIMEOUT. */
export function oauthHttpClient(options: { logger?: import('../log.js').Logger; userAgent?: string } = {}): HttpClient {
  return createHttpClient({
    retry: noRetry,
    timeouts: { connect: 10_000, response: waitLimits().timeoutMs ?? 30_000 },
    maxRedirects: 0,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.userAgent ? { userAgent: options.userAgent } : {}),
  });
}

function answerOf(response: { status: number; headers: Record<string, string | string[] | undefined>; body: unknown; url: string }): OAuthAnswer {
  const text = typeof response.body === 'string' ? response.body : '';
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = text.trim() === '' ? undefined : JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  for (const field of ['access_token', 'refresh_token', 'id_token', 'device_code', 'client_secret']) {
    const value = json?.[field];
    if (typeof value === 'string') registerSecret(value);
  }
  return { status: response.status, headers: response.headers, json, text: json ? '' : text.replace(/\s+/g, ' ').trim().slice(0, 200), url: response.url };
}

/**
 * Form fields whose names look like a credential's but whose values are protocol words: registered as secrets, they
 * would mask `access_token` or `S256` in every later line.
 */
const namesNoSecret = new Set(['grant_type', 'token_type_hint', 'code_challenge_method', 'requested_token_type', 'subject_token_type', 'actor_token_type']);

function sent(options: SendOptions) {
  return {
    responseType: 'text' as const,
    accept: options.serverFailure ? (status: number) => !options.serverFailure!(status) : () => true,
    followRedirects: options.followRedirects ?? false,
    maxBodyBytes: maxAnswerBytes,
    ...(options.repeatable ? { repeatable: true } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/** POST `form` as application/x-www-form-urlencoded in the body (never in the URL). */
export async function postForm(http: HttpClient, url: string, form: Record<string, string | undefined>, options: SendOptions = {}): Promise<OAuthAnswer> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) {
    if (value === undefined) continue;
    if (/token|secret|code/.test(name) && !namesNoSecret.has(name)) registerSecret(value);
    body.append(name, value);
  }
  const response = await http.request<string>({
    method: 'POST',
    url,
    body: body.toString(),
    // No Connection header: the core's connection policy (lib/http/keep-alive.ts) keeps an idle connection 4 s, less
    // than the polls' interval, and resends once what a reused connection lost before any answer.
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...options.headers },
    ...sent(options),
  });
  return answerOf(response);
}

/** POST a JSON document (RFC 7591's registration request). */
export async function postJson(http: HttpClient, url: string, json: Record<string, unknown>, options: SendOptions = {}): Promise<OAuthAnswer> {
  const response = await http.request<string>({ method: 'POST', url, json, headers: { accept: 'application/json', ...options.headers }, ...sent(options) });
  return answerOf(response);
}

export async function getJson(http: HttpClient, url: string, options: SendOptions = {}): Promise<OAuthAnswer> {
  const response = await http.request<string>({ method: 'GET', url, headers: { accept: 'application/json', ...options.headers }, ...sent(options) });
  return answerOf(response);
}

function invalid(answer: OAuthAnswer, message: string, field: string): OAuthError {
  return new OAuthError(message, { code: oauthErrorCodes.invalidResponse, status: answer.status, url: answer.url, field });
}

/** A field the answer must have as a non-empty string. */
export function requiredString(answer: OAuthAnswer, field: string, what: string): string {
  const value = answer.json?.[field];
  if (typeof value !== 'string' || value === '') throw invalid(answer, `${what} from ${answer.url} has no ${field}`, field);
  return value;
}

/** A field the answer may have as a string; anything else is as absent. */
export function optionalString(answer: OAuthAnswer, field: string): string | undefined {
  const value = answer.json?.[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A field given as a positive number of seconds (integers; numeric strings too, as some servers send). */
export function optionalSeconds(answer: OAuthAnswer, field: string, what: string): number | undefined {
  const value = answer.json?.[field];
  if (value === undefined || value === null) return undefined;
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number) || number < 0)
    throw invalid(answer, `${what} from ${answer.url}: ${field} is not a number of seconds (${JSON.stringify(value).slice(0, 40)})`, field);
  return number;
}
