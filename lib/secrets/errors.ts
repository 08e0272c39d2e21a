import { ExitCode, GantryError, UsageError } from '../errors.js';
import { NetworkError, ServiceError, type HintTable } from '../http/errors.js';
import { redact } from '../redact.js';

/** What was asked when a request failed: never carries the token; the path is shown as sent (segments encoded). */
export interface SecretsRequestDescription {
  method: string;
  /** Path under `/v1/`, as sent. */
  path: string;
  /** The namespace header sent, if any. */
  namespace?: string | undefined;
}

export interface SecretsErrorDetails extends SecretsRequestDescription {
  status: number;
  errors: readonly string[];
  warnings: readonly string[];
  retryable?: boolean;
  attempts?: number | undefined;
  cause?: unknown;
}

/**
 * Hints speak to the face that shows them. `hint` is the library's (options, methods, environment, Pulumi config);
 * `cliHint`, when set, is what the `gantry` command prints instead (flags, environment, commands). Examples in either
 * use placeholders (`<token>`), never values the redactor would mask.
 */
export interface FaceHints {
  hint?: string | undefined;
  cliHint?: string | undefined;
}

/** The hint for the `gantry` command of any error, where it has one of its own. */
export { cliHintOf } from '../errors.js';

/** The code of each status the service answers with; any other is `SECRETS_SERVER_ERROR` (5xx) or `SECRETS_REQUEST_FAILED`. */
const statusCodes = {
  400: 'SECRETS_BAD_REQUEST',
  403: 'SECRETS_PERMISSION_DENIED',
  404: 'SECRETS_NOT_FOUND',
  405: 'SECRETS_METHOD_NOT_ALLOWED',
  412: 'SECRETS_NOT_READY',
  413: 'SECRETS_TOO_LARGE',
  415: 'SECRETS_UNSUPPORTED_MEDIA_TYPE',
  429: 'SECRETS_STANDBY',
  472: 'SECRETS_DR_SECONDARY',
  473: 'SECRETS_PERFORMANCE_STANDBY',
  501: 'SECRETS_NOT_INITIALIZED',
  503: 'SECRETS_UNAVAILABLE',
} as const satisfies Record<number, string>;

/** Every `code` the secrets area raises (test/architecture/exit-codes.test.ts holds lib/ and providers/ to it). */
export const secretsErrorCodes = [
  ...Object.values(statusCodes),
  'SECRETS_SERVER_ERROR',
  'SECRETS_REQUEST_FAILED',
  // A SecretsError for what the service's answer meant to the caller.
  'SECRETS_CAS_MISMATCH',
  'SECRETS_CAS_REQUIRED',
  'SECRETS_MOUNT_UNKNOWN',
  'SECRETS_PROTOCOL',
  'SECRETS_LOGIN_NO_TOKEN',
  'SECRETS_DELETED',
  'SECRETS_DESTROYED',
  'SECRETS_CONNECTION',
  // Refused before sending (exit 2).
  'SECRETS_PATH_INVALID',
  'SECRETS_LIMIT',
  'SECRETS_NO_TOKEN',
  'SECRETS_CONFIG',
  'SECRETS_BAD_ARGUMENT',
  'SECRETS_BAD_DATA',
  'SECRETS_BAD_DURATION',
  'SECRETS_BAD_JSON',
  'SECRETS_BAD_METADATA',
  'SECRETS_BAD_VERSION',
  'SECRETS_BINARY_VALUE',
  'SECRETS_INPUT_FILE',
  'SECRETS_KV_VERSION',
  'SECRETS_MISSING',
  'SECRETS_NAMESPACE_IN',
  'SECRETS_NO_FIELD',
] as const;
export type SecretsErrorCode = (typeof secretsErrorCodes)[number];

/** `auth/<mount>/login` and `auth/<mount>/login/<name>`, in any namespace prefix. */
function isLoginPath(path: string): boolean {
  return /(^|\/)auth\/(?:[^/]+\/)+login(\/[^/]*)?$/.test(path);
}

/** The secrets service's advice by status; statuses not here have none. */
const secretsHints: HintTable = {
  403: {
    hint: 'The token is wrong, expired, or lacks a policy for this path: check the token (the `token` option, SECRETS_TOKEN or gantry:secretsToken), or log in again (loginUserpass, loginAppRole, loginWithToken).',
    cliHint:
      'The token is wrong, expired, or lacks a policy for this path: check SECRETS_TOKEN, or log in again with `gantry secrets login userpass --username <name>` (also approle, token).',
  },
  404: {
    hint: 'Check the mount and the path (client.mounts() lists the mounts, kv.list(<folder>) the keys in a folder), and that the token may read it: the service answers 404 for paths it hides.',
    cliHint:
      'Check the mount and the path (`gantry secrets mounts` lists the mounts, `gantry secrets list <mount>/<folder>/` the keys in a folder), and that the token may read it: the service answers 404 for paths it hides.',
  },
  405: 'This operation is not supported on this path; check the kv version of the mount.',
  412: 'The service is not consistent yet (replication); retry shortly.',
  413: 'The request is larger than the listener accepts.',
  472: 'This node is a disaster-recovery secondary (or in active replication mode): send requests to the primary.',
  473: 'This node is a performance standby: send writes to the active node.',
  501: 'The secrets service is not initialized.',
  503: 'The service is sealed or down for maintenance; retry when it is unsealed.',
};

const refusedLogin = 'The login was refused: check the username and password (userpass) or the role id and secret id (approle), and the auth mount';

/** A login's advice: the refusal and a missing auth mount in the words of a login, the rest as any request. */
const loginHints: HintTable = {
  ...secretsHints,
  400: { hint: `${refusedLogin} (the \`mount\` option) they belong to.`, cliHint: `${refusedLogin} (--path) they belong to.` },
  403: { hint: `${refusedLogin} (the \`mount\` option) they belong to.`, cliHint: `${refusedLogin} (--path) they belong to.` },
  404: {
    hint: 'No auth method is enabled at that mount: check the `mount` option (the default is userpass/ or approle/).',
    cliHint: 'No auth method is enabled at that mount: check --path (the default is userpass or approle).',
  },
};

/**
 * A secrets-service response with status >= 400, kept with everything the service said. Its `url` is the path asked
 * under the service's address (`/v1/<path>`).
 */
export class SecretsError extends ServiceError {
  declare readonly code: SecretsErrorCode;
  declare readonly errors: readonly string[];
  readonly warnings: readonly string[];
  readonly path: string;
  readonly namespace: string | undefined;

  constructor(details: SecretsErrorDetails, options: FaceHints & { code?: SecretsErrorCode } = {}) {
    const { status, method, errors } = details;
    super(
      { status, method, url: `/v1/${details.path}`, attempts: details.attempts, cause: details.cause },
      {
        by: 'secrets service',
        to: ` to ${method} /v1/${details.path}${details.namespace ? ` (namespace ${details.namespace})` : ''}`,
        said: errors.length > 0 ? `: ${errors.join('; ')}` : '',
        errors,
        ...(options.hint !== undefined ? { hint: { hint: options.hint, cliHint: options.cliHint } } : {}),
        code: options.code ?? statusCodes[status as keyof typeof statusCodes] ?? (status >= 500 ? 'SECRETS_SERVER_ERROR' : 'SECRETS_REQUEST_FAILED'),
        // 412 (not yet consistent) and 472/473 (replication, standby) are the service's own "not now", retried like 5xx.
        notNow: status === 412 || status === 472 || status === 473,
      },
      isLoginPath(details.path) ? loginHints : secretsHints,
    );
    this.warnings = details.warnings.map(redact);
    this.path = redact(details.path);
    this.namespace = details.namespace;
  }
}

/** The service could not be reached, or the connection broke before an answer came. */
export class SecretsConnectionError extends GantryError {
  readonly method: string;
  readonly path: string;
  readonly namespace: string | undefined;
  readonly attempts: number;
  /** The system error code (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ...), when known. */
  readonly errno: string | undefined;
  /** True when the request may have reached the server (the write may or may not have been applied). */
  readonly maybeApplied: boolean;

  constructor(
    description: SecretsRequestDescription & { attempts: number; errno?: string | undefined; maybeApplied: boolean; cause?: unknown; detail: string },
  ) {
    const where = `${description.method} /v1/${description.path}`;
    const applied =
      description.maybeApplied && description.method !== 'GET' && description.method !== 'LIST'
        ? ' The connection broke after the request was sent: the change may or may not have been applied; read it back before retrying.'
        : '';
    const hints = connectionHints(description.cause);
    super(`could not complete ${where} with the secrets service after ${description.attempts} attempt(s): ${description.detail}.${applied}`, {
      code: 'SECRETS_CONNECTION',
      exitCode: ExitCode.remote,
      hint: hints.hint,
      cliHint: hints.cliHint,
      cause: description.cause,
    });
    this.method = description.method;
    this.path = redact(description.path);
    this.namespace = description.namespace;
    this.attempts = description.attempts;
    this.errno = description.errno;
    this.maybeApplied = description.maybeApplied;
  }
}

/**
 * A setting as each face names it: the library's option, environment variable and Pulumi config key; the command's
 * flag and environment variable.
 */
function setting(option: string, env: string, pulumi: string, flag: string): { library: string; cli: string } {
  // The flags are gantry secrets' own; the same hint reaches auth, mcp and platform, which read only the variable.
  return { library: `the \`${option}\` option, ${env} or ${pulumi}`, cli: `${env}, or ${flag} in gantry secrets` };
}

const addressSetting = setting('address', 'SECRETS_ADDR', 'gantry:secretsAddr', '--address');

function connectionHints(cause: unknown): Required<FaceHints> {
  const both = (f: (s: string, t?: string) => string, s: { library: string; cli: string }, t?: { library: string; cli: string }) => ({
    hint: f(s.library, t?.library),
    cliHint: f(s.cli, t?.cli),
  });
  if (cause instanceof NetworkError && cause.diagnosis === 'plain-http-server') {
    const { host } = new URL(cause.url);
    return both((s) => `The service at ${host} speaks plain http, not TLS: set the address (${s}) to http://${host}.`, addressSetting);
  }
  if (cause instanceof NetworkError && cause.diagnosis === 'untrusted-certificate') {
    return {
      hint: 'The TLS certificate was not trusted: give the CA that signed it (the `caCert` or `caPath` option, SECRETS_CACERT / SECRETS_CAPATH, gantry:secretsCaCert / gantry:secretsCaPath), or the name in it (`tlsServerName`, SECRETS_TLS_SERVER_NAME).',
      cliHint:
        'The TLS certificate was not trusted: give the CA that signed it (SECRETS_CACERT / SECRETS_CAPATH, or --ca-cert <file> / --ca-path <dir> in gantry secrets), or the name in it (SECRETS_TLS_SERVER_NAME, or --tls-server-name).',
    };
  }
  const clientCert = {
    library: 'the `clientCert` and `clientKey` options, SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY, or gantry:secretsClientCert and gantry:secretsClientKey',
    cli: 'SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY, or --client-cert <file> and --client-key <file> in gantry secrets',
  };
  if (cause instanceof NetworkError && cause.diagnosis === 'client-certificate-refused') {
    return both((s) => `The service asks for a client certificate it trusts: give one signed by a CA it accepts (${s}).`, clientCert);
  }
  const reach = (s: string) => `Check the address (${s}) and that the service is running and reachable.`;
  // Under TLS 1.3 a refused client certificate usually reaches the client as a plain reset after the handshake.
  if (cause instanceof NetworkError && cause.errorCode === 'ECONNRESET' && cause.url.startsWith('https:')) {
    return both((s, t) => `${reach(s)} If it requires a client certificate, give one (${t}).`, addressSetting, clientCert);
  }
  return both(reach, addressSetting);
}

/** A path the service would refuse or misread (empty segment, `..`, trailing period): refused before sending. */
export class SecretsPathError extends UsageError {
  readonly path: string;
  constructor(message: string, path: string) {
    super(message, { code: 'SECRETS_PATH_INVALID', hint: 'Secret paths are `/`-separated names; no segment may be empty, `..`, or end in a period.' });
    this.path = path;
  }
}

/** The library's name of each limit (`limits.<key>`, `gantry:secrets<Key>`). */
const limitOptions = {
  max_request_size: 'maxRequestBytes',
  max_json_depth: 'maxJsonDepth',
  max_json_string_value_length: 'maxJsonStringValueLength',
  max_json_object_entry_count: 'maxJsonObjectEntryCount',
  max_json_array_element_count: 'maxJsonArrayElementCount',
} as const;

/** A request body over one of the configured limits: refused before sending. */
export class SecretsLimitError extends UsageError {
  readonly limit: keyof typeof limitOptions;
  readonly maximum: number;
  readonly actual: number;
  declare readonly cliHint: string;
  constructor(limit: SecretsLimitError['limit'], maximum: number, actual: number, where: string) {
    const env = `SECRETS_${limit.toUpperCase()}`;
    const pulumi = `gantry:secrets${limit === 'max_request_size' ? 'MaxRequestSize' : limitOptions[limit].replace(/^./, (c) => c.toUpperCase())}`;
    const first = 'The secrets service would refuse it. Split the secret, or, if the listener allows more, raise';
    super(`request body is over the ${limit} limit (${actual} > ${maximum}) at ${where}; nothing was sent`, {
      code: 'SECRETS_LIMIT',
      hint: `${first} the \`limits.${limitOptions[limit]}\` option, ${env} or ${pulumi}.`,
      cliHint: `${first} --${limit.replaceAll('_', '-')} <n> or ${env}.`,
    });
    this.limit = limit;
    this.maximum = maximum;
    this.actual = actual;
  }
}

/** An authenticated call with no token set: refused before sending, since the service could only answer 403. */
export class SecretsNoTokenError extends UsageError {
  declare readonly cliHint: string;
  constructor(what: string) {
    super(`no token for ${what}; nothing was sent`, {
      code: 'SECRETS_NO_TOKEN',
      hint: 'Give a token: the `token` option of SecretsClient, SECRETS_TOKEN, or in a Pulumi program gantry:secretsToken (pulumi config set --secret gantry:secretsToken <token>); or log in first with loginUserpass, loginAppRole or loginWithToken.',
      cliHint:
        'Set SECRETS_TOKEN (export SECRETS_TOKEN=<token>), or log in: `gantry secrets login userpass --username <name>` (also approle, token); add --token-only to print the token for SECRETS_TOKEN.',
    });
  }
}

/** Client configuration that cannot work (bad address, unparsable number). */
export class SecretsConfigError extends UsageError {
  constructor(message: string, hint?: string) {
    super(message, { code: 'SECRETS_CONFIG', ...(hint ? { hint } : {}) });
  }
}
