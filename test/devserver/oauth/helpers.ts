// Plain-fetch helpers for the embedded authorization server's tests: form posts, device codes, polls, and RS256 JWTs
// checked against the server's jwks_uri with node:crypto (nothing of lib/auth).
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const VIDEO = 'https://www.googleapis.com/auth/video';
export const VIDEO_READONLY = 'https://www.googleapis.com/auth/video.readonly';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

export async function form(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export async function admin(base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${base}/_gantry/${path}`, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export interface TestClient {
  id: string;
  secret: string | null;
}

export async function requestCode(base: string, client: TestClient, scope = `openid email ${VIDEO_READONLY}`): Promise<Json> {
  const answer = await form(`${base}/device/code`, { client_id: client.id, scope });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

export function poll(base: string, client: TestClient, deviceCode: string, extra: Record<string, string> = {}): Promise<Answer> {
  return form(`${base}/token`, {
    client_id: client.id,
    ...(client.secret ? { client_secret: client.secret } : {}),
    device_code: deviceCode,
    grant_type: DEVICE_GRANT,
    ...extra,
  });
}

export function refresh(base: string, client: TestClient, refreshToken: string, withSecret = false): Promise<Answer> {
  return form(`${base}/token`, {
    client_id: client.id,
    ...(withSecret && client.secret ? { client_secret: client.secret } : {}),
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
  });
}

/** POST /revoke as `client` (client_secret_post, or client_id alone for a public client), as RFC 7009 §2.1 asks. */
export function revoke(base: string, client: TestClient, token: string): Promise<Answer> {
  return form(`${base}/revoke`, { token, client_id: client.id, ...(client.secret ? { client_secret: client.secret } : {}) });
}

/** Requests a code, approves it through the admin API and polls once: the token response. */
export async function login(base: string, client: TestClient, scope?: string, account?: string): Promise<Json> {
  const code = await requestCode(base, client, scope);
  assert.equal((await admin(base, 'POST', 'device/approve', { user_code: code.user_code, ...(account ? { account } : {}) })).status, 200);
  const answer = await poll(base, client, code.device_code);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Verifies an RS256 JWT against the JWK set at `jwksUri`; returns its header and claims. */
export async function verifyJwt(token: string, jwksUri: string): Promise<{ header: Json; claims: Json }> {
  const [h, p, s] = token.split('.');
  assert.ok(h && p && s, 'a compact JWS has three parts');
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
  assert.equal(header.alg, 'RS256');
  const jwks = (await getJson(jwksUri)).body as { keys: Json[] };
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  assert.ok(jwk, `the key ${header.kid} is at jwks_uri`);
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  assert.ok(verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url')), 'the signature verifies');
  return { header, claims: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) };
}
