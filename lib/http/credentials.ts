/**
 * The one credentials plugin of the core: a `Credentials` source asked for a bearer token before every attempt, and
 * told once per request when the service refuses it (401), the request then sent once more with the new token. Every
 * client whose tokens change (a device-grant login, a platform app's installation tokens, a context server's
 * sign-in) renews through `bearerAuth`; nothing else in lib/ answers a 401 by renewing.
 */
import { expectFunction, expectObject, expectString } from '../arguments.js';
import { registerSecret } from '../redact.js';
import { isStreamed } from './bodies.js';
import type { AnswerHead, HttpHooks } from './types.js';

/** The refused answer a `renew` is told of. */
export interface Refusal extends AnswerHead {
  signal?: AbortSignal | undefined;
}

/** Where a client's bearer tokens come from. */
export interface Credentials {
  /** The token for an attempt sent now (a login renews its own before it expires); undefined sends none. */
  token(signal?: AbortSignal): Promise<string | undefined>;
  /**
   * The service refused `refused` (401; undefined when none was sent): make the next `token()` a new one. Asked at
   * most once per request; resolving false says there is nothing new to try, and the 401 stands. Without `renew`, a
   * 401 stands at once.
   */
  renew?(refused: string | undefined, refusal: Refusal): Promise<boolean | void>;
}

/** A login as the storage client has long taken it (`AuthSession`'s face): `getAccessToken`, and `refresh` after a 401. */
export interface AccessTokenSession {
  getAccessToken(): Promise<string>;
  refresh?(): Promise<unknown>;
}

/** Credentials from a fixed token, a `Credentials` source, or a login's `getAccessToken`/`refresh`. */
export function toCredentials(source: string | Credentials | AccessTokenSession): Credentials {
  if (typeof source !== 'string')
    expectObject('toCredentials', 'source', source, 'a token, Credentials ({ token(), renew() }) or an object with getAccessToken() (an AuthSession)');
  if (typeof source === 'string') {
    expectString('toCredentials', 'source', source, 'a token');
    registerSecret(source);
    return { token: () => Promise.resolve(source) };
  }
  if ('token' in source && typeof source.token === 'function') return source as Credentials;
  const session = source as AccessTokenSession;
  expectFunction('toCredentials', 'source.getAccessToken', session.getAccessToken, 'a function giving the access token (or give token())');
  const { refresh } = session;
  return {
    token: () => session.getAccessToken(),
    ...(refresh ? { renew: async () => void (await refresh.call(session)) } : {}),
  };
}

export interface BearerAuthOptions {
  /**
   * Send the token in this query parameter instead of `Authorization` — only where a spec allows it and the caller
   * asked (DEV-AUTH-ACCESS-TOKEN-TRANSPORT: query strings are logged; the redactor masks `access_token`).
   */
  queryParameter?: string;
  /** Told when a refused token is being renewed (before `renew` runs): the client's log line. */
  onRenew?: (refusal: Refusal) => void;
}

/**
 * The 401 renewal, for one request: the first refusal renews (`renew` told the refused token), later ones stand.
 * Resolves true when the request is to go once more. `bearerAuth` makes one per request (the platform's too, after its
 * limiter's hooks, so the resend waits in the limiter).
 */
function renewalFor(credentials: Credentials, options: BearerAuthOptions = {}): (refused: string | undefined, refusal: Refusal) => Promise<boolean> {
  expectCredentials('renewalFor', credentials, options);
  let renewed = false;
  return async (refused, refusal) => {
    if (renewed || !credentials.renew || refusal.status !== 401) return false;
    renewed = true;
    options.onRenew?.(refusal);
    return (await credentials.renew(refused, refusal)) !== false;
  };
}

function expectCredentials(where: string, credentials: Credentials, options: BearerAuthOptions): void {
  expectObject(where, 'credentials', credentials, 'Credentials: { token(), renew() }');
  expectFunction(where, 'credentials.token', credentials.token, 'a function giving a token');
  if (credentials.renew !== undefined) expectFunction(where, 'credentials.renew', credentials.renew, 'a function told of a refused token');
  expectObject(where, 'options', options, 'an object (or left out)');
}

const sentKey = Symbol('bearer token sent');
const renewalKey = Symbol('bearer token renewal');

/** Hooks that send `Authorization: Bearer <token>` on every attempt and renew the token once on a 401. */
export function bearerAuth(credentials: Credentials, options: BearerAuthOptions = {}): HttpHooks {
  expectCredentials('bearerAuth', credentials, options);
  return {
    beforeRequest: [
      async (context) => {
        const token = await credentials.token(context.request.signal);
        context.state.set(sentKey, token);
        if (token === undefined) {
          delete context.headers.authorization;
          if (options.queryParameter) delete context.searchParams[options.queryParameter];
          return;
        }
        registerSecret(token);
        if (options.queryParameter) context.searchParams[options.queryParameter] = token;
        else context.headers.authorization = `Bearer ${token}`;
      },
    ],
    afterResponse: [
      async (answer, context) => {
        // A streamed body is gone once sent: nothing to resend, so nothing to renew for.
        if (answer.status !== 401 || isStreamed(context.request.body)) return undefined;
        let renewal = context.state.get(renewalKey) as ReturnType<typeof renewalFor> | undefined;
        if (!renewal) context.state.set(renewalKey, (renewal = renewalFor(credentials, options)));
        return (await renewal(context.state.get(sentKey) as string | undefined, { ...answer, signal: context.request.signal })) ? 'resend' : undefined;
      },
    ],
  };
}
