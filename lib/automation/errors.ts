import { terminalText } from '../terminal-text.js';
import { ExitCode, GantryError } from '../errors.js';
import { redact } from '../redact.js';

/**
 * The W3C WebDriver error table (https://www.w3.org/TR/webdriver2/#errors): each error code with the HTTP status a
 * conforming remote end answers with. The spec we implement shows only `unknown method` (AUT-ERR-UNKNOWN-METHOD) and
 * leaves the other codes and every status to the W3C table.
 */
export const webDriverErrorStatus = {
  'element click intercepted': 400,
  'element not interactable': 400,
  'insecure certificate': 400,
  'invalid argument': 400,
  'invalid cookie domain': 400,
  'invalid element state': 400,
  'invalid selector': 400,
  'invalid session id': 404,
  'javascript error': 500,
  'move target out of bounds': 500,
  'no such alert': 404,
  'no such cookie': 404,
  'no such element': 404,
  'no such frame': 404,
  'no such window': 404,
  'no such shadow root': 404,
  'script timeout': 500,
  'session not created': 500,
  'stale element reference': 404,
  'detached shadow root': 404,
  timeout: 500,
  'unable to set cookie': 500,
  'unable to capture screen': 500,
  'unexpected alert open': 500,
  'unknown command': 404,
  'unknown error': 500,
  'unknown method': 405,
  'unsupported operation': 500,
} as const satisfies Record<string, number>;

export type WebDriverErrorCode = keyof typeof webDriverErrorStatus;

export const webDriverErrorCodes = Object.keys(webDriverErrorStatus) as WebDriverErrorCode[];

export function isWebDriverErrorCode(value: unknown): value is WebDriverErrorCode {
  return typeof value === 'string' && Object.hasOwn(webDriverErrorStatus, value);
}

/**
 * Numeric `status` values of the legacy JSON Wire Protocol (and chromedriver's extensions of it, 60–66), which
 * drivers in legacy mode (`goog:chromeOptions.w3c: false`) still send instead of the `error` string.
 */
const legacyStatusCodes: Readonly<Record<number, WebDriverErrorCode>> = {
  6: 'invalid session id',
  7: 'no such element',
  8: 'no such frame',
  9: 'unknown command',
  10: 'stale element reference',
  11: 'element not interactable',
  12: 'invalid element state',
  13: 'unknown error',
  17: 'javascript error',
  19: 'invalid selector',
  21: 'timeout',
  23: 'no such window',
  24: 'invalid cookie domain',
  25: 'unable to set cookie',
  26: 'unexpected alert open',
  27: 'no such alert',
  28: 'script timeout',
  29: 'invalid argument',
  32: 'invalid selector',
  33: 'session not created',
  34: 'move target out of bounds',
  60: 'element not interactable',
  61: 'invalid argument',
  62: 'no such cookie',
  63: 'unable to capture screen',
  64: 'element click intercepted',
  65: 'no such shadow root',
  66: 'detached shadow root',
};

/** The W3C code for a legacy numeric status; falls back to a code named at the start of the message, then `unknown error`. */
export function codeForLegacyStatus(status: number, message: string): WebDriverErrorCode {
  const known = legacyStatusCodes[status];
  if (known) return known;
  const named = webDriverErrorCodes.filter((code) => message.startsWith(code)).sort((a, b) => b.length - a.length)[0];
  return named ?? 'unknown error';
}

const hints: Partial<Record<WebDriverErrorCode, string>> = {
  'unknown method': 'the endpoint exists but not with this HTTP method: check the method the command uses',
  'unknown command': 'the driver does not know this endpoint: check the path, and that the driver speaks the W3C protocol',
  'invalid session id': 'the session does not exist or has ended (deleted, or the browser crashed): start a new session',
  'invalid argument': 'check the command arguments: a URL must be absolute (with its scheme), a body must be a JSON object',
  'session not created':
    'the browser did not start: check CHROME_PATH (or /usr/bin/chromium), that chromium and chromedriver have the same major version, and the capabilities',
  timeout: 'the page did not load within the page-load timeout: raise it, or check that the page answers',
  'insecure certificate': 'the page has a TLS certificate the browser does not trust',
  'unknown error': 'the driver failed: its message above says why',
};

export interface WebDriverErrorDetails {
  code: WebDriverErrorCode;
  /** The HTTP status the remote end answered with. */
  status: number;
  /** The remote end's `message`. */
  remoteMessage: string;
  stacktrace?: string;
  data?: unknown;
  /** What was asked: the method and path of the command (session ids are not secrets). */
  method: string;
  path: string;
  /** The `error` string as sent, when it is not in the W3C table (then `code` is `unknown error`). */
  reportedCode?: string;
}

/**
 * A WebDriver protocol error, typed by its W3C `error` code: narrow on `error.code`
 * (`if (e instanceof WebDriverError && e.code === 'invalid session id')`).
 */
export class WebDriverError extends GantryError {
  /** The W3C error code; `GantryError.code` as the machine-readable code. */
  declare readonly code: WebDriverErrorCode;
  readonly status: number;
  readonly remoteMessage: string;
  readonly stacktrace: string;
  readonly data: unknown;
  readonly method: string;
  readonly path: string;
  readonly reportedCode: string | undefined;

  constructor(details: WebDriverErrorDetails) {
    const firstLine = details.remoteMessage.split('\n')[0]?.trim() ?? '';
    const said = firstLine && firstLine !== details.code ? `: ${terminalText(firstLine)}` : '';
    super(`${details.method} ${details.path} answered ${details.status} ${details.code}${said}`, {
      hint: hints[details.code],
      exitCode: ExitCode.remote,
      code: details.code,
    });
    this.status = details.status;
    this.remoteMessage = redact(details.remoteMessage);
    this.stacktrace = details.stacktrace ?? '';
    this.data = details.data;
    this.method = details.method;
    this.path = details.path;
    this.reportedCode = details.reportedCode;
  }

  /** The status the W3C table gives this code; a driver may differ (then `status` says what it sent). */
  get expectedStatus(): number {
    return webDriverErrorStatus[this.code];
  }
}

export function isWebDriverError<C extends WebDriverErrorCode>(error: unknown, code?: C): error is WebDriverError & { code: C } {
  return error instanceof WebDriverError && (code === undefined || error.code === code);
}

/** The driver process could not be started, or stopped answering. */
export class DriverProcessError extends GantryError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, { ...options, exitCode: ExitCode.remote, code: 'WEBDRIVER_PROCESS' });
  }
}
