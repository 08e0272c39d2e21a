/**
 * How a client proves who it is at the token, revocation and introspection endpoints (RFC 6749 §2.3.1, RFC 7591
 * §2's `token_endpoint_auth_method`): `none` (a public client: its id in the body), `client_secret_post` (id and
 * secret in the body), `client_secret_basic` (both, form-urlencoded, in a Basic Authorization header).
 */
import { registerSecret } from '../redact.js';

export const clientAuthMethods = ['none', 'client_secret_post', 'client_secret_basic'] as const;
export type ClientAuthMethod = (typeof clientAuthMethods)[number];

export interface OAuthClient {
  clientId: string;
  /** A confidential client's secret; a method other than `none` without one sends only the id. */
  clientSecret?: string | undefined;
  authMethod: ClientAuthMethod;
}

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

/** The form fields and headers that authenticate `client`, to add to a request. */
export function clientAuthentication(client: OAuthClient): { form: Record<string, string>; headers: Record<string, string> } {
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
  return { form: { client_id: clientId }, headers: {} };
}
