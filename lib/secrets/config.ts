import { registerSecret } from '../redact.js';
import { parseDuration as parseDurationArgument } from '../arguments.js';
import { waitLimits } from '../waits.js';
import { SecretsConfigError } from './errors.js';
import { defaultLimits, type RequestLimits } from './limits.js';
import { normaliseNamespace } from './namespace.js';
import {
  pulumiConfigFromEnvironment,
  refuseUnknownOptions,
  settingsReader,
  type PulumiConfigLookup,
  type SettingOrigin,
  type SettingSources,
  type SettingSpec,
} from '../settings.js';

/**
 * Client configuration. Each setting comes from, in order: the options given in code (or command flags), the
 * environment (`SECRETS_*`, named as the Vault CLI's `VAULT_*`), then Pulumi config (`gantry:secrets*`), then the
 * documented default.
 */
export interface SecretsClientOptions {
  address?: string;
  token?: string;
  namespace?: string;
  /** PEM file of CA certificates to trust (instead of the system CAs). */
  caCert?: string;
  /** Folder of PEM CA certificates to trust. */
  caPath?: string;
  clientCert?: string;
  clientKey?: string;
  /** Do not verify the server certificate (SEC-AUTH-TLS: listeners may run without verification). */
  skipVerify?: boolean;
  tlsServerName?: string;
  /** Retries after the first attempt; 0 disables retries. */
  maxRetries?: number;
  /** Whole-request timeout in milliseconds. */
  timeoutMs?: number;
  /** Send the token as `X-Secrets-Token` (default) or `Authorization: Bearer` (SEC-AUTH-TOKEN-HEADER, SEC-AUTH-BEARER). */
  tokenHeader?: TokenHeader;
  /**
   * Where the namespace goes: the `X-Secrets-Namespace` header (default) or the front of the path, for proxies that
   * drop custom headers. The service treats both alike (SEC-NS-EQUIVALENCE).
   */
  namespaceIn?: NamespaceIn;
  /** Shortest and longest wait between retries, in milliseconds (jittered linearly between them). */
  retryWaitMinMs?: number;
  retryWaitMaxMs?: number;
  /** Request limits checked before sending (SEC-LIMIT-*); each one also from `SECRETS_MAX_*` and `gantry:secretsMax*`. */
  limits?: Partial<RequestLimits>;
}

export type TokenHeader = 'x-secrets-token' | 'authorization';
export type NamespaceIn = 'header' | 'path';

export interface ResolvedSecretsConfig {
  address: string;
  token: string | undefined;
  namespace: string | undefined;
  caCert: string | undefined;
  caPath: string | undefined;
  clientCert: string | undefined;
  clientKey: string | undefined;
  skipVerify: boolean;
  tlsServerName: string | undefined;
  maxRetries: number;
  timeoutMs: number;
  tokenHeader: TokenHeader;
  namespaceIn: NamespaceIn;
  retryWaitMinMs: number;
  retryWaitMaxMs: number;
  limits: RequestLimits;
  /** Where each setting came from, for `--verbose` and error messages (never the values). */
  sources: Record<string, SettingOrigin>;
}

export type { PulumiConfigLookup };

export const defaults = {
  address: 'https://127.0.0.1:8200',
  maxRetries: 2,
  timeoutMs: 60_000,
  retryWaitMinMs: 1000,
  retryWaitMaxMs: 1500,
} as const;

export const settings = {
  address: { env: 'SECRETS_ADDR', pulumi: 'gantry:secretsAddr' },
  token: { env: 'SECRETS_TOKEN', pulumi: 'gantry:secretsToken' },
  namespace: { env: 'SECRETS_NAMESPACE', pulumi: 'gantry:secretsNamespace' },
  caCert: { env: 'SECRETS_CACERT', pulumi: 'gantry:secretsCaCert' },
  caPath: { env: 'SECRETS_CAPATH', pulumi: 'gantry:secretsCaPath' },
  clientCert: { env: 'SECRETS_CLIENT_CERT', pulumi: 'gantry:secretsClientCert' },
  clientKey: { env: 'SECRETS_CLIENT_KEY', pulumi: 'gantry:secretsClientKey' },
  skipVerify: { env: 'SECRETS_SKIP_VERIFY', pulumi: 'gantry:secretsSkipVerify' },
  tlsServerName: { env: 'SECRETS_TLS_SERVER_NAME', pulumi: 'gantry:secretsTlsServerName' },
  maxRetries: { env: 'SECRETS_MAX_RETRIES', pulumi: 'gantry:secretsMaxRetries' },
  timeoutMs: { env: 'SECRETS_CLIENT_TIMEOUT', pulumi: 'gantry:secretsClientTimeout' },
  tokenHeader: { env: 'SECRETS_TOKEN_HEADER', pulumi: 'gantry:secretsTokenHeader' },
  namespaceIn: { env: 'SECRETS_NAMESPACE_IN', pulumi: 'gantry:secretsNamespaceIn' },
  // The request limits, named after the listener options they mirror (max_request_size, max_json_*).
  maxRequestBytes: { env: 'SECRETS_MAX_REQUEST_SIZE', pulumi: 'gantry:secretsMaxRequestSize' },
  maxJsonDepth: { env: 'SECRETS_MAX_JSON_DEPTH', pulumi: 'gantry:secretsMaxJsonDepth' },
  maxJsonStringValueLength: { env: 'SECRETS_MAX_JSON_STRING_VALUE_LENGTH', pulumi: 'gantry:secretsMaxJsonStringValueLength' },
  maxJsonObjectEntryCount: { env: 'SECRETS_MAX_JSON_OBJECT_ENTRY_COUNT', pulumi: 'gantry:secretsMaxJsonObjectEntryCount' },
  maxJsonArrayElementCount: { env: 'SECRETS_MAX_JSON_ARRAY_ELEMENT_COUNT', pulumi: 'gantry:secretsMaxJsonArrayElementCount' },
} as const satisfies Record<string, Required<SettingSpec>>;

const limitKeys = [
  'maxRequestBytes',
  'maxJsonDepth',
  'maxJsonStringValueLength',
  'maxJsonObjectEntryCount',
  'maxJsonArrayElementCount',
] as const satisfies ReadonlyArray<keyof RequestLimits & keyof typeof settings>;

export { pulumiConfigFromEnvironment };

export interface ResolveSources extends Omit<SettingSources, 'optionNames'> {
  /**
   * How errors name a setting given as an option: `option address` by default; the command passes its flags
   * (`--address`), so that a bad value is reported by the name the user typed.
   */
  optionNames?: Partial<Record<keyof typeof settings, string>>;
}

/** Resolve the configuration: options, then environment, then Pulumi config, then defaults. */
export function resolveSecretsConfig(options: SecretsClientOptions = {}, sources: ResolveSources = {}): ResolvedSecretsConfig {
  const reader = settingsReader(settings, sources);
  const { env } = reader;
  const pick = (key: keyof typeof settings, option: unknown): { raw: unknown; from: string } | undefined => {
    const limit = (limitKeys as readonly string[]).includes(key);
    const got = reader.pick(key, option, `option ${limit ? 'limits.' : ''}${key}`);
    return got && { raw: got.value, from: got.from };
  };
  const text = (key: keyof typeof settings, option: unknown): string | undefined => reader.text(key, option);

  // The token first, and registered with the redactor at once: an error about any other setting must not show it
  // (a token pasted into SECRETS_ADDR, say).
  const token = text('token', options.token);
  registerSecret(token);

  const addressPick = pick('address', options.address);
  const address = parseAddress(addressPick ? String(addressPick.raw) : defaults.address, addressPick?.from ?? 'default');

  const skipPick = pick('skipVerify', options.skipVerify);
  const retriesPick = pick('maxRetries', options.maxRetries);
  const timeoutPick = pick('timeoutMs', options.timeoutMs);

  const namespaceText = text('namespace', options.namespace);
  if (options.limits !== undefined && options.limits !== null && typeof options.limits === 'object')
    refuseUnknownOptions('SecretsClient', options.limits, limitKeys, 'options.limits');
  const limits: RequestLimits = { ...defaultLimits };
  for (const key of limitKeys) {
    const got = pick(key, options.limits?.[key]);
    if (got) limits[key] = parsePositiveInteger(got.raw, got.from, key === 'maxRequestBytes' ? 'bytes' : undefined);
  }

  const retryWaitMinMs = options.retryWaitMinMs ?? defaults.retryWaitMinMs;
  const retryWaitMaxMs = options.retryWaitMaxMs ?? Math.max(defaults.retryWaitMaxMs, retryWaitMinMs);
  if (!(retryWaitMinMs >= 0) || !(retryWaitMaxMs >= retryWaitMinMs)) {
    throw new SecretsConfigError(`retry waits must satisfy 0 <= min <= max, got ${retryWaitMinMs}..${retryWaitMaxMs} ms`);
  }

  const tokenHeaderPick = pick('tokenHeader', options.tokenHeader);
  const tokenHeader = tokenHeaderPick ? parseTokenHeader(tokenHeaderPick.raw, tokenHeaderPick.from) : 'x-secrets-token';
  const namespaceInPick = pick('namespaceIn', options.namespaceIn);
  const namespaceIn = namespaceInPick ? parseNamespaceIn(namespaceInPick.raw, namespaceInPick.from) : 'header';

  return {
    address,
    token,
    namespace: normaliseNamespace(namespaceText),
    caCert: text('caCert', options.caCert),
    caPath: text('caPath', options.caPath),
    clientCert: text('clientCert', options.clientCert),
    clientKey: text('clientKey', options.clientKey),
    skipVerify: skipPick ? parseBoolean(skipPick.raw, skipPick.from) : false,
    tlsServerName: text('tlsServerName', options.tlsServerName),
    maxRetries: retriesPick ? parseRetries(retriesPick.raw, retriesPick.from) : defaults.maxRetries,
    timeoutMs: timeoutPick
      ? parseDuration(timeoutPick.raw, timeoutPick.from, reader.origins.timeoutMs === 'option')
      : (waitLimits(env).timeoutMs ?? defaults.timeoutMs),
    tokenHeader,
    namespaceIn,
    retryWaitMinMs,
    retryWaitMaxMs,
    limits,
    sources: reader.origins as ResolvedSecretsConfig['sources'],
  };
}

const addressHint = 'Give the service address as a URL with its scheme and host, e.g. https://127.0.0.1:8200 (or http://127.0.0.1:8200 for a dev server).';

function parseAddress(raw: string, from: string): string {
  const text = raw.trim();
  // Said for what it is: a port alone, or a host and port without the scheme (both safe to show: no credential has
  // these shapes). Anything else that is no URL is described, not shown: it may be a credential in the wrong variable.
  if (/^\d{1,5}$/.test(text)) {
    throw new SecretsConfigError(
      `${from} is "${text}", a port number alone, not an address: give the scheme and host too, e.g. http://127.0.0.1:${text}`,
      addressHint,
    );
  }
  if (/^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\]):\d{1,5}\/?$/.test(text)) {
    throw new SecretsConfigError(
      `${from} is "${text}", a host and port without a scheme: write https://${text} (or http://${text} for a plain-http server)`,
      addressHint,
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SecretsConfigError(`${from} is not a URL: ${describe(text)} that does not start with a scheme and host such as https://host:8200`, addressHint);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SecretsConfigError(`${from} must be an http or https URL, got ${shown(url.protocol)}`);
  }
  if (url.username || url.password) {
    throw new SecretsConfigError(`${from} must not carry credentials in the URL; use SECRETS_TOKEN or a login method`);
  }
  if (url.search || url.hash) throw new SecretsConfigError(`${from} must not have a query or fragment`);
  // The API lives under {base_url}/v1/; a base URL may carry a path prefix (a proxy), kept without its trailing slash.
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The size of a value, without the value (not shown: it may be a credential set in the wrong variable). */
function describe(value: string): string {
  return `a value of ${value.length} character${value.length === 1 ? '' : 's'} (not shown)`;
}

/**
 * A bad setting as it may be shown: the short values these settings take (`yes`, `3x`, `ftp:`) quoted, anything longer
 * described only, since it may be a credential set in the wrong variable.
 */
function shown(value: string): string {
  return value.length <= 12 ? `"${value}"` : describe(value);
}

/** Boolean as Go's strconv.ParseBool reads it (the Vault CLI's VAULT_SKIP_VERIFY). */
export function parseBoolean(raw: unknown, from: string): boolean {
  if (typeof raw === 'boolean') return raw;
  const value = String(raw).trim();
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  throw new SecretsConfigError(`${from} must be true or false, got ${shown(value)}`);
}

function parseRetries(raw: unknown, from: string): number {
  const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isInteger(value) || value < 0 || String(raw).trim() === '') {
    throw new SecretsConfigError(`${from} must be a whole number of retries (0 or more), got ${shown(String(raw))}`);
  }
  return value;
}

/**
 * Which header carries the token: `x-secrets-token` (SEC-AUTH-TOKEN-HEADER) or `authorization`, sent as
 * `Authorization: Bearer <token>` (SEC-AUTH-BEARER); `bearer` is accepted for the latter. Any case.
 */
export function parseTokenHeader(raw: unknown, from: string): TokenHeader {
  const value = String(raw).trim();
  const lower = value.toLowerCase();
  if (lower === 'x-secrets-token') return 'x-secrets-token';
  if (lower === 'authorization' || lower === 'bearer') return 'authorization';
  throw new SecretsConfigError(`${from} must be x-secrets-token or authorization (Authorization: Bearer), got ${shown(value)}`);
}

/** Where the namespace goes: `header` (X-Secrets-Namespace) or `path` (in front of the request path). Any case. */
export function parseNamespaceIn(raw: unknown, from: string): NamespaceIn {
  const value = String(raw).trim();
  const lower = value.toLowerCase();
  if (lower === 'header' || lower === 'path') return lower;
  throw new SecretsConfigError(`${from} must be header or path, got ${shown(value)}`);
}

/** A request limit: a whole number of at least 1 (digits only in text: no units, signs or exponents). */
export function parsePositiveInteger(raw: unknown, from: string, unit?: string): number {
  const text = String(raw).trim();
  const value = typeof raw === 'number' ? raw : /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new SecretsConfigError(`${from} must be a whole number${unit ? ` of ${unit}` : ''} of at least 1, got ${shown(text)}`);
  }
  return value;
}

/**
 * A timeout. Environment and Pulumi values follow the Vault CLI: a bare number is seconds, or a Go-style duration
 * (`500ms`, `30s`, `1m30s`). Numbers given as options are milliseconds. The one duration parser (lib/arguments.ts),
 * its refusal said as this area's configuration error.
 */
export function parseDuration(raw: unknown, from: string, numberIsMilliseconds = false): number {
  try {
    return parseDurationArgument(raw, from, { numberIsMilliseconds });
  } catch (error) {
    throw new SecretsConfigError((error as Error).message);
  }
}
