/**
 * The one credentials plugin of the core: a `Credentials` source asked for a bearer token before every attempt, and
 * told once per request when the service refuses it (401), the request then sent once more with the new token. Every
 * client whose tokens change (a device-grant login, a platform app's installation tokens, a context server's
 * sign-in) renews through `bearerAuth`; nothing else in lib/ answers a 401 by renewing.
 */
import { Readable } from 'node:stream';
import { registerSecret } from '../redact.js';
import type { AnswerHead, HookContext, HttpHooks } from './types.js';

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
  if (typeof source === 'string') {
    registerSecret(source);
    return { token: () => Promise.resolve(source) };
  }
  if ('token' in source && typeof source.token === 'function') return source;
  const session = source as AccessTokenSession;
  const { refresh } = session;
  return {
    token: () => session.getAccessToken(),
    ...(refresh ? { renew: async () => void (await refresh.call(session)) } : {}),
  };
}

const sentKey = Symbol('bearer token sent');
const renewedKey = Symbol('bearer token renewed');

export interface BearerAuthOptions {
  /** Told when a refused token is being renewed (before `renew` runs): the client's log line. */
  onRenew?: (refusal: Refusal, context: HookContext) => void;
}

/** Hooks that send `Authorization: Bearer <token>` on every attempt and renew the token once on a 401. */
export function bearerAuth(credentials: Credentials, options: BearerAuthOptions = {}): HttpHooks {
  return {
    beforeRequest: [
      async (context) => {
        const token = await credentials.token(context.request.signal);
        context.state.set(sentKey, token);
        if (token === undefined) {
          delete context.headers.authorization;
          return;
        }
        registerSecret(token);
        context.headers.authorization = `Bearer ${token}`;
      },
    ],
    afterResponse: [
      async (answer, context) => {
        if (answer.status !== 401 || !credentials.renew || context.state.has(renewedKey)) return undefined;
        // A streamed body is gone once sent: nothing to resend, so nothing to renew for.
        if (context.request.body instanceof Readable) return undefined;
        context.state.set(renewedKey, true);
        const refusal: Refusal = { ...answer, signal: context.request.signal };
        options.onRenew?.(refusal, context);
        const renewed = await credentials.renew(context.state.get(sentKey) as string | undefined, refusal);
        return renewed === false ? undefined : 'resend';
      },
    ],
  };
}
