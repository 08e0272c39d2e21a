import { randomBytes } from 'node:crypto';
import type { ProfileKey, StoredLogin } from '../../../../lib/auth/store/index.js';

/** Token values no message, log line, index or location may ever contain. */
export interface Canaries {
  access: string;
  refresh: string;
  id: string;
}

export function canaries(tag = ''): Canaries {
  const r = () => randomBytes(9).toString('base64url');
  return { access: `CANARY-ACCESS-${tag}${r()}`, refresh: `CANARY-REFRESH-${tag}${r()}`, id: `CANARY-ID-${tag}${r()}` };
}

export function makeLogin(
  key: ProfileKey,
  tokens: Canaries,
  account: StoredLogin['account'] = { issuer: key.authUrl, sub: 'user-1', email: 'Person@Example.org' },
): StoredLogin {
  const now = Date.now();
  return {
    ...key,
    tokens: {
      accessToken: tokens.access,
      tokenType: 'Bearer',
      expiresAt: now + 3_600_000,
      // Case kept, space separated (DEV-TOK-SCOPE).
      scope: 'openid email {scope_base}/auth/Video.ReadOnly',
      refreshToken: tokens.refresh,
      refreshTokenExpiresAt: now + 7 * 86_400_000,
      idToken: tokens.id,
      obtainedAt: now,
    },
    ...(account ? { account } : {}),
  };
}

/** Fails when any canary appears in `texts`. */
export function assertNoCanary(tokens: Canaries, texts: Array<string | undefined>, where: string): void {
  for (const text of texts) {
    if (text === undefined) continue;
    for (const value of [tokens.access, tokens.refresh, tokens.id]) {
      if (text.includes(value)) throw new Error(`${where} shows a token: ${text.slice(0, 300)}`);
    }
  }
}
