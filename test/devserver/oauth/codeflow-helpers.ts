// Plain-fetch helpers for the authorization code flow of the embedded server: PKCE pairs, registration, the
// authorization request, the login form posted as a browser would, and token requests (nothing of lib/mcp or lib/auth).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { form, type Answer, type Json } from './helpers.js';

export const REDIRECT = 'http://127.0.0.1:8976/callback';
export const RESOURCE = 'https://mcp.gantry.test/mcp';

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function registerJson(base: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<Answer> {
  const response = await fetch(`${base}/register`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export interface Page {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

async function page(response: Response): Promise<Page> {
  return { status: response.status, location: response.headers.get('location'), html: await response.text(), headers: response.headers };
}

export function authorizeUrl(base: string, params: Record<string, string | string[] | undefined>): string {
  const url = new URL(`${base}/authorize`);
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, v);
  }
  return url.href;
}

export async function getAuthorize(base: string, params: Record<string, string | string[] | undefined>): Promise<Page> {
  return page(await fetch(authorizeUrl(base, params), { redirect: 'manual' }));
}

export function transactionOf(html: string): string {
  const match = /name="transaction" value="([^"]+)"/.exec(html);
  assert.ok(match, 'the page carries a transaction id');
  return match[1]!;
}

export async function postDecision(base: string, fields: Record<string, string>): Promise<Page> {
  return page(
    await fetch(`${base}/authorize/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    }),
  );
}

/** The query of a redirect's Location, as an object. */
export function callbackParams(location: string | null): Record<string, string> {
  assert.ok(location, 'a redirect');
  return Object.fromEntries(new URL(location).searchParams);
}

export interface Flow {
  clientId: string;
  redirectUri?: string;
  scope?: string;
  resource?: string;
  state?: string;
  username?: string;
  password?: string;
}

/** The whole front channel as a person would go through it: authorize, sign in as dev/dev, Allow; the callback's query and the verifier. */
export async function authorizeAndAllow(base: string, flow: Flow): Promise<{ code: string; verifier: string; params: Record<string, string> }> {
  const { verifier, challenge } = pkce();
  const shown = await getAuthorize(base, {
    client_id: flow.clientId,
    redirect_uri: flow.redirectUri ?? REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: flow.state ?? 'st-1',
    scope: flow.scope,
    resource: flow.resource,
  });
  assert.equal(shown.status, 200, shown.location ?? shown.html);
  const answer = await postDecision(base, {
    transaction: transactionOf(shown.html),
    username: flow.username ?? 'dev',
    password: flow.password ?? 'dev',
    decision: 'allow',
  });
  assert.equal(answer.status, 302, answer.html);
  const params = callbackParams(answer.location);
  assert.ok(params.code, JSON.stringify(params));
  return { code: params.code!, verifier, params };
}

export function redeem(base: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  return form(`${base}/token`, { grant_type: 'authorization_code', ...fields }, headers);
}

export function basic(id: string, secret: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}` };
}

/** Authorization, code redemption with resource, for a public client: the token response. */
export async function tokensFor(base: string, clientId: string, scope = 'modules:read gates:run', resource = RESOURCE): Promise<Json> {
  const { code, verifier } = await authorizeAndAllow(base, { clientId, scope, resource });
  const answer = await redeem(base, { client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}
