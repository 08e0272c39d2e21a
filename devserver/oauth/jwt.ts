// The server's signing key: RS256 JWTs (id_tokens, security event tokens) and the JWK set at jwks_uri.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwks(): { keys: Record<string, unknown>[] };
  /** A compact JWS, RS256, with `kid` and the given `typ` (default `JWT`). */
  sign(claims: Record<string, unknown>, typ?: string): string;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

export function newSigningKey(): SigningKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' }) as { kty: string; n: string; e: string };
  const kid = createHash('sha256').update(jwk.n).digest('base64url').slice(0, 16);
  return {
    kid,
    privateKey,
    jwks: () => ({ keys: [{ kty: jwk.kty, n: jwk.n, e: jwk.e, kid, alg: 'RS256', use: 'sig' }] }),
    sign(claims, typ = 'JWT') {
      const input = `${b64url(JSON.stringify({ alg: 'RS256', kid, typ }))}.${b64url(JSON.stringify(claims))}`;
      return `${input}.${b64url(sign('RSA-SHA256', Buffer.from(input), privateKey))}`;
    },
  };
}

/** Random base64url text of `bytes` random bytes. */
export function randomText(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

/** Google's `hash_base64_sha512_sha512` token identifier: base64 of SHA-512 over the raw SHA-512 digest of the token. */
export function tokenIdentifier(token: string): string {
  return createHash('sha512').update(createHash('sha512').update(token).digest()).digest('base64');
}
