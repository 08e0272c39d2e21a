import { ExitCode, GantryError, UsageError } from '../errors.js';
import { NetworkError } from '../http/errors.js';
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
  errors: string[];
  warnings: string[];
  retryable?: boolean;
  attempts?: number;
  cause?: unknown;
}

/** A secrets-service response with status >= 400, kept with everything the service said. */
export class SecretsError extends GantryError {
  readonly status: number;
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
  readonly method: string;
  readonly path: string;
  readonly namespace: string | undefined;
  /** How many attempts were made (1 + retries). */
  readonly attempts: number;

  constructor(details: SecretsErrorDetails, options: { hint?: string; code?: string } = {}) {
    const where = `${details.method} /v1/${details.path}${details.namespace ? ` (namespace ${details.namespace})` : ''}`;
    const said = details.errors.length > 0 ? `: ${details.errors.join('; ')}` : '';
    const tries = details.attempts && details.attempts > 1 ? ` after ${details.attempts} attempts` : '';
    super(redact(`secrets service answered ${details.status} to ${where}${tries}${said}`), {
      hint: options.hint ?? (isLoginPath(details.path) ? loginHintFor(details.status) : hintFor(details.status)),
      code: options.code ?? codeFor(details.status),
      exitCode: ExitCode.remote,
      cause: details.cause,
    });
    this.status = details.status;
    this.errors = details.errors.map(redact);
    this.warnings = details.warnings.map(redact);
    this.method = details.method;
    this.path = redact(details.path);
    this.namespace = details.namespace;
    this.attempts = details.attempts ?? 1;
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

  constructor(description: SecretsRequestDescription & { attempts: number; errno?: string | undefined; maybeApplied: boolean; cause?: unknown; detail: string }) {
    const where = `${description.method} /v1/${description.path}`;
    const applied = description.maybeApplied && description.method !== 'GET' && description.method !== 'LIST'
      ? ' The connection broke after the request was sent: the change may or may not have been applied; read it back before retrying.'
      : '';
    super(redact(`could not complete ${where} with the secrets service after ${description.attempts} attempt(s): ${description.detail}.${applied}`), {
      code: 'SECRETS_CONNECTION',
      exitCode: ExitCode.remote,
      hint: connectionHint(description.cause),
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

function connectionHint(cause: unknown): string {
  if (cause instanceof NetworkError && cause.diagnosis === 'plain-http-server') {
    const { host } = new URL(cause.url);
    return `The service at ${host} speaks plain http, not TLS: set SECRETS_ADDR (or --address / gantry:secretsAddr) to http://${host}.`;
  }
  if (cause instanceof NetworkError && cause.diagnosis === 'untrusted-certificate') {
    return 'The TLS certificate was not trusted: set SECRETS_CACERT or SECRETS_CAPATH (--ca-cert / --ca-path) to the CA that signed it, or SECRETS_TLS_SERVER_NAME to the name in it.';
  }
  if (cause instanceof NetworkError && cause.diagnosis === 'client-certificate-refused') {
    return 'The service asks for a client certificate it trusts: set SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY (--client-cert / --client-key) to a certificate signed by a CA it accepts.';
  }
  const reach = 'Check SECRETS_ADDR (or --address / gantry:secretsAddr) and that the service is running and reachable.';
  // Under TLS 1.3 a refused client certificate usually reaches the client as a plain reset after the handshake.
  if (cause instanceof NetworkError && cause.errorCode === 'ECONNRESET' && cause.url.startsWith('https:')) {
    return `${reach} If it requires a client certificate, set SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY (--client-cert / --client-key).`;
  }
  return reach;
}

/** A path the service would refuse or misread (empty segment, `..`, trailing period): refused before sending. */
export class SecretsPathError extends UsageError {
  readonly path: string;
  constructor(message: string, path: string) {
    super(message, { code: 'SECRETS_PATH_INVALID', hint: 'Secret paths are `/`-separated names; no segment may be empty, `..`, or end in a period.' });
    this.path = path;
  }
}

/** A request body over one of the configured limits: refused before sending. */
export class SecretsLimitError extends UsageError {
  readonly limit: 'max_request_size' | 'max_json_depth' | 'max_json_string_value_length' | 'max_json_object_entry_count' | 'max_json_array_element_count';
  readonly maximum: number;
  readonly actual: number;
  constructor(limit: SecretsLimitError['limit'], maximum: number, actual: number, where: string) {
    super(`request body is over the ${limit} limit (${actual} > ${maximum}) at ${where}; nothing was sent`, {
      code: 'SECRETS_LIMIT',
      hint: `The secrets service would refuse it. Split the secret, or, if the listener allows more, raise SECRETS_${limit.toUpperCase()} (or the matching --${limit.replaceAll('_', '-')} flag or gantry:secrets setting).`,
    });
    this.limit = limit;
    this.maximum = maximum;
    this.actual = actual;
  }
}

/** An authenticated call with no token set: refused before sending, since the service could only answer 403. */
export class SecretsNoTokenError extends UsageError {
  constructor(what: string) {
    super(`no token for ${what}: set SECRETS_TOKEN or run \`gantry secrets login …\`; nothing was sent`, {
      code: 'SECRETS_NO_TOKEN',
      hint: 'In code: pass `token`, or call loginUserpass / loginAppRole / loginWithToken first. In a Pulumi program: gantry:secretsToken (set it --secret).',
    });
  }
}

/** Client configuration that cannot work (bad address, unparsable number). */
export class SecretsConfigError extends UsageError {
  constructor(message: string, hint?: string) {
    super(redact(message), { code: 'SECRETS_CONFIG', ...(hint ? { hint } : {}) });
  }
}

function codeFor(status: number): string {
  switch (status) {
    case 400: return 'SECRETS_BAD_REQUEST';
    case 403: return 'SECRETS_PERMISSION_DENIED';
    case 404: return 'SECRETS_NOT_FOUND';
    case 405: return 'SECRETS_METHOD_NOT_ALLOWED';
    case 412: return 'SECRETS_NOT_READY';
    case 413: return 'SECRETS_TOO_LARGE';
    case 415: return 'SECRETS_UNSUPPORTED_MEDIA_TYPE';
    case 429: return 'SECRETS_STANDBY';
    case 472: return 'SECRETS_DR_SECONDARY';
    case 473: return 'SECRETS_PERFORMANCE_STANDBY';
    case 501: return 'SECRETS_NOT_INITIALIZED';
    case 503: return 'SECRETS_UNAVAILABLE';
    default: return status >= 500 ? 'SECRETS_SERVER_ERROR' : 'SECRETS_REQUEST_FAILED';
  }
}

/** `auth/<mount>/login` and `auth/<mount>/login/<name>`, in any namespace prefix. */
function isLoginPath(path: string): boolean {
  return /(^|\/)auth\/(?:[^/]+\/)+login(\/[^/]*)?$/.test(path);
}

function loginHintFor(status: number): string | undefined {
  if (status === 400 || status === 403) {
    return 'The login was refused: check the username and password (userpass) or the role id and secret id (approle), and the auth mount (--mount) they belong to.';
  }
  if (status === 404) return 'No auth method is enabled at that mount: check --mount (the default is userpass/ or approle/).';
  return hintFor(status);
}

function hintFor(status: number): string | undefined {
  switch (status) {
    case 403: return 'The token is wrong, expired, or lacks a policy for this path. Check SECRETS_TOKEN or log in again (gantry secrets login).';
    case 404: return 'Check the mount and path (gantry secrets list <mount>/), and that the token may read it: the service answers 404 for paths it hides.';
    case 405: return 'This operation is not supported on this path; check the kv version of the mount.';
    case 412: return 'The service is not consistent yet (replication); retry shortly.';
    case 413: return 'The request is larger than the listener accepts.';
    case 472: return 'This node is a disaster-recovery secondary (or in active replication mode): send requests to the primary.';
    case 473: return 'This node is a performance standby: send writes to the active node.';
    case 501: return 'The secrets service is not initialized.';
    case 503: return 'The service is sealed or down for maintenance; retry when it is unsealed.';
    default: return undefined;
  }
}
