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

/**
 * The addresses of an issuer's metadata, in order (RFC 8414 §3.1, then OpenID Connect Discovery's two forms): for
 * `https://as/tenant`, `/.well-known/oauth-authorization-server/tenant`, `/.well-known/openid-configuration/tenant`,
 * `/tenant/.well-known/openid-configuration`; for an issuer without a path, the two root forms.
 */
export function metadataUrls(issuer: string): string[] {
  const urls = [
    wellKnownUrl(issuer, 'oauth-authorization-server', 'inserted'),
    wellKnownUrl(issuer, 'openid-configuration', 'inserted'),
    wellKnownUrl(issuer, 'openid-configuration', 'appended'),
  ];
  return [...new Set(urls)];
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
  /**
   * Where no issuer formed the address (the 2025-03-26 MCP revision reads the document at a server's origin): the
   * document must name an issuer on this origin, the one it was read from.
   */
  issuerOrigin?: string;
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
  if (checks.issuerOrigin !== undefined && !onOrigin(document.issuer, checks.issuerOrigin)) {
    throw new OAuthError(
      `the authorization server metadata at ${url} is for issuer ${typeof document.issuer === 'string' ? shown(document.issuer.slice(0, 200)) : '(none)'}, which is not on ${checks.issuerOrigin}; refusing it`,
      {
        code: oauthErrorCodes.issuerMismatch,
        url,
        field: 'issuer',
        hint: 'a document read at an origin must name an issuer of that origin: a mix-up or a misconfigured server',
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

function onOrigin(issuer: unknown, origin: string): issuer is string {
  if (typeof issuer !== 'string') return false;
  try {
    const url = new URL(issuer);
    return url.origin === new URL(origin).origin && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

export interface DiscoveryOptions extends SendOptions {
  /** The addresses to read, in order (default `metadataUrls(issuer)`). */
  urls?: readonly string[];
  /** What the document must be (default: for `issuer`, exactly). */
  checks?: MetadataChecks;
  /**
   * The metadata to use when no address has a document (a server that publishes none, whose endpoints are at fixed
   * paths: `endpointsAt`); checked as a document would be. Without one, no document means undefined.
   */
  fallback?: () => Record<string, unknown>;
}

export interface DiscoveredMetadata {
  /** The document, checked; the fallback's where there is none; undefined where there is neither. */
  metadata: AuthorizationServerMetadata | undefined;
  /** Where the document came from; undefined for the fallback. */
  url: string | undefined;
  /** What the addresses before it answered (`<url> (404)`), for messages. */
  tried: string[];
}

/**
 * An authorization server's metadata: the first of the addresses that has a JSON object, checked (`checkMetadata`);
 * else the fallback, checked the same way; else none. A status `options.serverFailure` names is raised by the HTTP
 * core.
 */
export async function discoverMetadata(http: HttpClient, issuer: string, options: DiscoveryOptions = {}): Promise<DiscoveredMetadata> {
  const { urls, checks, fallback, ...sending } = options;
  const { found, tried } = await findMetadata(http, urls ?? metadataUrls(issuer), sending);
  if (found) return { metadata: checkMetadata(found, checks ?? { issuer }), url: found.url, tried };
  if (!fallback) return { metadata: undefined, url: undefined, tried };
  const required = checks?.required ? { required: checks.required } : {};
  return { metadata: checkMetadata({ url: `${issuer}'s default endpoints`, document: fallback() }, { ...required, server: issuer }), url: undefined, tried };
}

/** Metadata for a server that publishes none: `issuer`, and each endpoint at its path under `base` (RFC 8414's names). */
export function endpointsAt(base: string, paths: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const origin = new URL(base);
  const endpoints = Object.fromEntries(Object.entries(paths).map(([field, path]) => [field, new URL(path, origin).href]));
  return { issuer: base, ...endpoints, ...extra };
}
