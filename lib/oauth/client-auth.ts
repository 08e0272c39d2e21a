/**
 * How a client proves who it is at the token, revocation and introspection endpoints (RFC 6749 §2.3.1, RFC 7591
 * §2's `token_endpoint_auth_method`): `none` (a public client: its id in the body), `client_secret_post` (id and
 * secret in the body), `client_secret_basic` (both, form-urlencoded, in a Basic Authorization header),
 * `private_key_jwt` (RFC 7523 §2.2: a JWT the client signs with its private key, in `client_assertion`).
 */
import { createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { UsageError } from '../errors.js';
import type { OAuthAreaErrorCode } from './errors.js';
import { registerSecret } from '../redact.js';

export const clientAuthMethods = ['none', 'client_secret_post', 'client_secret_basic', 'private_key_jwt'] as const;
export type ClientAuthMethod = (typeof clientAuthMethods)[number];

/** A private key to sign client assertions with, and the JWS algorithm it signs with. */
export interface ClientKey {
  key: KeyObject;
  alg: string;
  kid?: string | undefined;
}

export interface OAuthClient {
  clientId: string;
  /** A confidential client's secret; a method other than `none` without one sends only the id. */
  clientSecret?: string | undefined;
  /** For `private_key_jwt`: the key that signs the assertion. */
  privateKey?: ClientKey | undefined;
  /** For `private_key_jwt`: the assertion's `aud`, the authorization server's issuer (RFC 7523 §3). */
  audience?: string | undefined;
  authMethod: ClientAuthMethod;
}

export const clientAssertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** How long a client assertion is good for: long enough for one request, short enough to be useless when seen. */
const assertionLifetimeSeconds = 60;

/** A method named by a server or a registration; one Gantry does not speak sends the client id alone, as `none`. */
export function authMethodOf(name: string | undefined): ClientAuthMethod {
  return clientAuthMethods.find((method) => method === name) ?? 'none';
}

/** The method for a client: `none` without a secret, else `preferred` — the server's first choice when it lists it. */
export function clientAuthFor(clientSecret: string | undefined, supported?: readonly string[]): ClientAuthMethod {
  if (clientSecret === undefined) return 'none';
  // RFC 8414 §2: a server that lists no methods supports client_secret_basic.
  const methods = supported ?? ['client_secret_basic'];
  return methods.includes('client_secret_basic') ? 'client_secret_basic' : 'client_secret_post';
}

/** The JWS algorithm a key implies: RS256 for RSA, ES256/384/512 by the curve, EdDSA for Ed25519. */
function algorithmOf(key: KeyObject): string | undefined {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') return 'RS256';
  if (type === 'rsa-pss') return 'PS256';
  if (type === 'ed25519') return 'EdDSA';
  if (type === 'ec')
    return { 'P-256': 'ES256', prime256v1: 'ES256', 'P-384': 'ES384', secp384r1: 'ES384', 'P-521': 'ES512', secp521r1: 'ES512' }[
      key.asymmetricKeyDetails?.namedCurve ?? ''
    ];
  return undefined;
}

const keyFamilies: Record<string, (key: KeyObject) => boolean> = {
  RS: (key) => key.asymmetricKeyType === 'rsa',
  PS: (key) => key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss',
  ES: (key) => key.asymmetricKeyType === 'ec',
  Ed: (key) => key.asymmetricKeyType === 'ed25519',
};

/**
 * A client's private key from the text of a PEM file (PKCS#8, PKCS#1 or SEC1) or a JWK (JSON), with the algorithm
 * `alg` names, else the JWK's `alg`, else the one the key implies. Anything else — a public key, a certificate, a
 * symmetric key, an algorithm the key cannot sign with — is a UsageError that never quotes the text.
 */
export function clientKeyOf(text: string, alg?: string): ClientKey {
  const trimmed = text.trim();
  registerSecret(trimmed);
  let key: KeyObject;
  let jwk: Record<string, unknown> | undefined;
  try {
    if (trimmed.startsWith('{')) {
      jwk = JSON.parse(trimmed) as Record<string, unknown>;
      if (typeof jwk.d === 'string') registerSecret(jwk.d);
      key = createPrivateKey({ key: jwk as never, format: 'jwk' });
    } else {
      key = createPrivateKey(trimmed);
    }
  } catch {
    throw new UsageError('the client key is no private key (a PEM private key or a private JWK is expected)', {
      code: 'OAUTH_CLIENT_KEY' satisfies OAuthAreaErrorCode,
      hint: 'give the private key the client was registered with (its public half is what the authorization server knows)',
    });
  }
  const chosen = alg ?? (typeof jwk?.alg === 'string' ? jwk.alg : undefined) ?? algorithmOf(key);
  const family = chosen === 'EdDSA' ? 'Ed' : chosen?.slice(0, 2);
  if (chosen === undefined || family === undefined || !keyFamilies[family]?.(key)) {
    throw new UsageError(`the client key (${key.asymmetricKeyType ?? 'unknown type'}) cannot sign with ${chosen ?? 'any JWS algorithm Gantry knows'}`, {
      code: 'OAUTH_CLIENT_KEY' satisfies OAuthAreaErrorCode,
      hint: 'name the algorithm the authorization server expects (RS256, PS256, ES256, ES384, ES512, EdDSA) for a key of that kind',
    });
  }
  return { key, alg: chosen, ...(typeof jwk?.kid === 'string' ? { kid: jwk.kid } : {}) };
}

/** RFC 7523 §3: iss = sub = the client id, aud the authorization server, a short life, a unique jti. */
export async function clientAssertion(clientId: string, privateKey: ClientKey, audience: string): Promise<string> {
  // jose (~40 modules) only when a client signs: every `gantry auth` and storage command loads lib/oauth.
  const { SignJWT } = await import('jose');
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: privateKey.alg, typ: 'JWT', ...(privateKey.kid ? { kid: privateKey.kid } : {}) })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + assertionLifetimeSeconds)
    .setJti(randomUUID())
    .sign(privateKey.key);
  registerSecret(assertion);
  return assertion;
}

/** The form fields and headers that authenticate `client`, to add to a request. */
export async function clientAuthentication(
  client: OAuthClient,
  tokenEndpoint?: string,
): Promise<{ form: Record<string, string>; headers: Record<string, string> }> {
  const { clientId, clientSecret, authMethod } = client;
  if (clientSecret !== undefined) registerSecret(clientSecret);
  if (authMethod === 'client_secret_basic' && clientSecret !== undefined) {
    // RFC 6749 §2.3.1: each part form-urlencoded before the Basic encoding.
    return {
      form: {},
      headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}` },
    };
  }
  if (authMethod === 'client_secret_post' && clientSecret !== undefined) return { form: { client_id: clientId, client_secret: clientSecret }, headers: {} };
  if (authMethod === 'private_key_jwt' && client.privateKey !== undefined) {
    // RFC 7523 §3: the issuer identifies the server; without one, its token endpoint does.
    const audience = client.audience ?? tokenEndpoint;
    if (audience === undefined)
      throw new UsageError('a client assertion needs the authorization server it is for', { code: 'OAUTH_CLIENT_KEY' satisfies OAuthAreaErrorCode });
    return {
      form: { client_id: clientId, client_assertion_type: clientAssertionType, client_assertion: await clientAssertion(clientId, client.privateKey, audience) },
      headers: {},
    };
  }
  return { form: { client_id: clientId }, headers: {} };
}
