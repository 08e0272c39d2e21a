/**
 * The fetch the SDK's Streamable HTTP transport sends with: every request through the HTTP core (proxies, TLS,
 * redaction, credential headers dropped on a cross-origin redirect), `Authorization: Bearer` on every one
 * (CTX-EP-RESOURCE-REQUEST; never in the query: CTX-AUTH-NO-QUERY-TOKEN), a 401 answered by one refresh or fresh
 * authorization and one retry, a 403 `insufficient_scope` by one fresh authorization with the merged scopes and one
 * retry — a second 403 is `CTX_STEP_UP_REFUSED`, never a loop (the SDK's #1582, #2255).
 */
import { Readable } from 'node:stream';
import type { HttpClient, StreamResponse } from '../../http/index.js';
import { bearerAuth, definePolicy, networkErrorCodes, waitLimits } from '../../http/index.js';
import { ContextClientError } from './errors.js';
import type { Authorizer } from './session.js';
import { bearerChallenge } from './www-authenticate.js';

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * Retries for context-server requests: only failures where nothing reached the server (refused, unreachable, no
 * name), for every method — a JSON-RPC POST is safe to send again only then. Statuses are the SDK's to handle.
 */
export const contextServerRetry = definePolicy({
  retries: 3,
  statuses: [],
  errorCodes: networkErrorCodes.filter((code) => ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH'].includes(code)),
  methods: undefined,
  backoff: { initialMs: 250, maxMs: 2_000, factor: 2, jitter: 0.3 },
  budgetMs: 10_000,
});

export interface AuthorizedFetchOptions {
  http: HttpClient;
  authorizer: Authorizer;
  /** The longest wait for headers and between two pieces of a body (an SSE stream may be quiet a long time). */
  idleTimeoutMs?: number;
}

const noBody = new Set([101, 103, 204, 205, 304]);

function requestBody(body: RequestInit['body']): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('the context-server fetch sends string or byte bodies only');
}

/** Reads an answer's body to its end, unheard: a body that breaks off then is no one's concern. */
function drain(answer: StreamResponse): void {
  answer.body.on('error', () => undefined);
  answer.body.resume();
}

function toResponse(answer: StreamResponse, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, String(item));
  }
  if (noBody.has(answer.status) || method === 'HEAD') {
    drain(answer);
    return new Response(null, { status: answer.status, headers });
  }
  return new Response(Readable.toWeb(answer.body) as ReadableStream<Uint8Array>, { status: answer.status, headers });
}

/** A fetch for `StreamableHTTPClientTransport({ fetch })`, signed in through `authorizer`. */
export function authorizedFetch(options: AuthorizedFetchOptions): FetchLike {
  const { http, authorizer } = options;
  // GANTRY_TIMEOUT bounds it when set: a person who asked for short waits gets them here too.
  const idle = options.idleTimeoutMs ?? waitLimits().timeoutMs ?? 300_000;
  return async (input, init = {}) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    if (url.searchParams.has('access_token'))
      throw new ContextClientError('refusing to send an access token in a URL query (CTX-AUTH-NO-QUERY-TOKEN)', { code: 'CTX_UNAUTHORIZED' });
    const method = (init.method ?? 'GET').toUpperCase();
    const body = requestBody(init.body);
    const given: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      given[name] = value;
    });
    delete given.authorization;
    const signal = init.signal ?? undefined;
    // The 401 is the core's bearerAuth: one refresh or fresh authorization per fetch, however many step-ups follow.
    let recovered401 = false;
    let sent: string | undefined;
    const hooks = bearerAuth({
      token: async (attemptSignal) => (sent = await authorizer.accessToken(attemptSignal)),
      renew: async (refused, refusal) => {
        if (recovered401) return false;
        recovered401 = true;
        await authorizer.unauthorized(refusal.headers['www-authenticate'], refused, refusal.signal);
        return true;
      },
    });
    let steppedUp = false;
    for (;;) {
      const answer = await http.stream({
        method,
        url,
        headers: given,
        ...(body !== undefined ? { body } : {}),
        accept: () => true,
        followRedirects: init.redirect !== 'manual',
        retry: contextServerRetry,
        timeouts: { response: idle },
        hooks,
        ...(signal ? { signal } : {}),
      });
      if (answer.status === 401 && sent) {
        drain(answer);
        throw new ContextClientError(`${authorizer.resource} still answered 401 to a fresh token`, {
          code: 'CTX_UNAUTHORIZED',
          status: 401,
          hint: 'the server does not accept tokens of its own authorization server for itself: check its resource and audience settings',
        });
      }
      if (answer.status === 403) {
        const challenge = bearerChallenge(answer.headers['www-authenticate']);
        if (challenge?.error === 'insufficient_scope') {
          drain(answer);
          if (steppedUp) {
            throw new ContextClientError(
              `${authorizer.resource} still answered 403 insufficient_scope (needs ${challenge.scope ?? 'unnamed scopes'}) after signing in again with ${authorizer.grantedScopes().join(' ') || 'no scopes'}; not asking again`,
              {
                code: 'CTX_STEP_UP_REFUSED',
                status: 403,
                oauthError: 'insufficient_scope',
                hint: 'the authorization server did not grant the scopes the tool needs to this account or client',
              },
            );
          }
          steppedUp = true;
          await authorizer.insufficientScope(answer.headers['www-authenticate'], signal ?? undefined);
          continue;
        }
      }
      return toResponse(answer, method);
    }
  };
}
