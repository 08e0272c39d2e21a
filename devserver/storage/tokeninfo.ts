// Bearer tokens issued by an authorization server, as a resource server accepts them: asked of its token information
// endpoint (Google's `tokeninfo`), the answer kept until the token expires (at most five minutes, so a revoke is
// seen soon). Only tokens whose scopes include a storage scope are let in; anything else is "Invalid Credentials".
import { createHash } from 'node:crypto';

const STORAGE_SCOPES = /\/auth\/storage(?:\.file|\.appdata)?$/;
const MAX_CACHE_MS = 5 * 60 * 1000;
const MAX_ENTRIES = 1000;

export type TokenVerdict = 'ok' | 'invalid' | 'no-scope';

export class TokenInfo {
  readonly #url: string;
  readonly #cache = new Map<string, { verdict: TokenVerdict; until: number }>();

  constructor(url: string) {
    this.#url = url;
  }

  async check(token: string): Promise<TokenVerdict> {
    const key = createHash('sha256').update(token).digest('hex');
    const now = Date.now();
    const cached = this.#cache.get(key);
    if (cached && cached.until > now) return cached.verdict;
    let verdict: TokenVerdict = 'invalid';
    let until = now + MAX_CACHE_MS;
    try {
      const response = await fetch(this.#url, { method: 'POST', body: new URLSearchParams({ access_token: token }), signal: AbortSignal.timeout(5000) });
      const body = (await response.json().catch(() => undefined)) as { scope?: unknown; exp?: unknown } | undefined;
      if (response.status === 200 && body) {
        const scopes = typeof body.scope === 'string' ? body.scope.split(' ') : [];
        verdict = scopes.some((scope) => STORAGE_SCOPES.test(scope)) ? 'ok' : 'no-scope';
        const exp = Number(body.exp) * 1000;
        if (Number.isFinite(exp)) until = Math.min(until, exp);
      }
    } catch {
      // The authorization server did not answer: the token is not accepted, and not remembered as bad either.
      return 'invalid';
    }
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(key, { verdict, until });
    return verdict;
  }
}
