/**
 * Authorization-server discovery: where the metadata documents are (RFC 8414 §3.1 inserts the well-known segment
 * between the host and the issuer's path; OpenID Connect Discovery §4 appends it), reading them in turn until one is a
 * JSON object, and checking what is read before any of it is used — the issuer (RFC 8414 §3.3), the endpoints (https,
 * or http on this machine only: tokens and secrets travel to them) and the lists. Which documents, in which order,
 * and what a missing one means is each face's: a context server's issuer must publish metadata, the device login
 * falls back to the spec's path shapes.
 */
import { shown } from '../errors.js';
import type { HttpClient } from '../http/index.js';
import { isLoopbackHost } from '../loopback.js';
import { OAuthError, oauthErrorCodes } from './errors.js';
import { getJson, type SendOptions } from './transport.js';

/** RFC 8414 §2 (and what OAuth 2.1 and OpenID clients read of it), as far as Gantry uses it. */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  device_authorization_endpoint?: string;
  revocation_endpoint?: string;
  introspection_endpoint?: string;
  registration_endpoint?: string;
  userinfo_endpoint?: string;
  jwks_uri?: string;
  scopes_supported?: string[];
  response_types_supported?: string[];
  grant_types_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
  code_challenge_methods_supported?: string[];
  authorization_response_iss_parameter_supported?: boolean;
  client_id_metadata_document_supported?: boolean;
  [field: string]: unknown;
}

export type MetadataDocument = 'oauth-authorization-server' | 'openid-configuration';

/**
 * Where `document` is for `issuer`: `inserted` (RFC 8414 §3.1: `https://as/.well-known/<document>/tenant`) or
 * `appended` (OpenID Connect Discovery §4: `https://as/tenant/.well-known/<document>`); the same for an issuer
 * without a path.
 */
export function wellKnownUrl(issuer: string, document: MetadataDocument, placement: 'inserted' | 'appended'): string {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return placement === 'inserted' ? `${url.origin}/.well-known/${document}${path}` : `${url.origin}${path}/.well-known/${document}`;
}

export interface MetadataFound {
  url: string;
  document: Record<string, unknown>;
}

/**
 * The first of `urls` that answers 200 with a JSON object, and what the others answered (`tried`, for messages:
 * `<url> (404)`, `<url> (not a JSON object)`). A status `options.serverFailure` names is raised by the HTTP core.
 */
export async function findMetadata(
  http: HttpClient,
  urls: readonly string[],
  options: SendOptions = {},
): Promise<{ found: MetadataFound | undefined; tried: string[]; notJson: string[] }> {
  const tried: string[] = [];
  const notJson: string[] = [];
  for (const url of urls) {
    const answer = await getJson(http, url, options);
    if (answer.status === 200 && answer.json) return { found: { url, document: answer.json }, tried, notJson };
    if (answer.status === 200) notJson.push(url);
    tried.push(`${url} (${answer.status === 200 ? 'not a JSON object' : answer.status})`);
  }
  return { found: undefined, tried, notJson };
}

/**
 * An endpoint a server names: a URL, https or plain http on a loopback host (where a local or test server runs).
 * `server` names the server in messages (its issuer, or where the metadata came from).
 */
export function checkEndpoint(value: unknown, field: string, server: string): URL {
  if (typeof value !== 'string' || value === '') {
    throw new OAuthError(`the authorization server ${server} names no ${field}`, {
      code: oauthErrorCodes.invalidMetadata,
      field,
      hint: 'its RFC 8414 metadata must list it',
    });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError(`the authorization server ${server}'s ${field} ${shown(value.slice(0, 200))} is no URL`, {
      code: oauthErrorCodes.invalidMetadata,
      field,
    });
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return url;
  throw new OAuthError(`the authorization server ${server}'s ${field} ${url.protocol}//${url.host}${url.pathname} is not https`, {
    code: oauthErrorCodes.insecureEndpoint,
    field,
    hint: 'an authorization server must serve every endpoint over https; plain http is accepted only on a loopback address',
  });
}

/** An endpoint the metadata may name: undefined when absent, else checked as `checkEndpoint` does. */
export function optionalEndpoint(value: unknown, field: string, server: string): string | undefined {
  return value === undefined || value === null ? undefined : checkEndpoint(value, field, server).href;
}

const stringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');
const listFields = [
  'scopes_supported',
  'code_challenge_methods_supported',
  'token_endpoint_auth_methods_supported',
  'grant_types_supported',
  'response_types_supported',
];
const endpointFields = [
  'authorization_endpoint',
  'token_endpoint',
  'device_authorization_endpoint',
  'revocation_endpoint',
  'introspection_endpoint',
  'registration_endpoint',
  'userinfo_endpoint',
  'jwks_uri',
];

/** `https://as.example` and `https://as.example/`: a mismatch the person can fix by copying the server's spelling. */
function onlySlashApart(named: unknown, given: string): named is string {
  return typeof named === 'string' && named !== given && named.replace(/\/+$/, '') === given.replace(/\/+$/, '');
}

export interface MetadataChecks {
  /** The issuer it was looked up for, which the document must name exactly (RFC 8414 §3.3); unchecked when absent. */
  issuer?: string;
  /** Endpoints the document must name; every other endpoint it names is checked too. */
  required?: readonly string[];
  /** How messages name the server (default: the issuer, else the document's address). */
  server?: string;
}

/** A metadata document checked: its issuer, every endpoint it names, its lists of strings. */
export function checkMetadata(found: MetadataFound, checks: MetadataChecks = {}): AuthorizationServerMetadata {
  const { url, document } = found;
  const server = checks.server ?? checks.issuer ?? url;
  if (checks.issuer !== undefined && document.issuer !== checks.issuer) {
    throw new OAuthError(
      `the authorization server metadata at ${url} is for issuer ${typeof document.issuer === 'string' ? shown(document.issuer.slice(0, 200)) : '(none)'}, not ${checks.issuer}; refusing it (RFC 8414 §3.3)`,
      {
        code: oauthErrorCodes.issuerMismatch,
        url,
        field: 'issuer',
        hint: onlySlashApart(document.issuer, checks.issuer)
          ? `give the issuer exactly as the server names it: ${document.issuer} (RFC 8414 compares issuers character for character, a trailing slash included)`
          : 'the metadata must name the very issuer it was looked up for: a mix-up or a misconfigured server',
      },
    );
  }
  for (const field of checks.required ?? []) checkEndpoint(document[field], field, server);
  for (const field of endpointFields) optionalEndpoint(document[field], field, server);
  for (const field of listFields) {
    if (document[field] !== undefined && !stringList(document[field]))
      throw new OAuthError(`the authorization server metadata at ${url} has a ${field} that is no list of strings`, {
        code: oauthErrorCodes.invalidMetadata,
        url,
        field,
      });
  }
  return document as AuthorizationServerMetadata;
}
