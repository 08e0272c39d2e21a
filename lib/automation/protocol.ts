import { terminalText } from '../terminal-text.js';
import { ProtocolError } from '../http/errors.js';
import { WebDriverError, codeForLegacyStatus, isWebDriverErrorCode, type WebDriverErrorCode } from './errors.js';

/** One answer of the remote end, before interpretation: the status and the body text. */
export interface RemoteAnswer {
  status: number;
  text: string;
}

export interface CommandContext {
  method: string;
  path: string;
}

const maxMessageInError = 500;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseBody(answer: RemoteAnswer): { json: unknown; isJson: boolean } {
  if (answer.text.trim() === '') return { json: undefined, isJson: true };
  try {
    return { json: JSON.parse(answer.text), isJson: true };
  } catch {
    return { json: undefined, isJson: false };
  }
}

/** A W3C error (`{value: {error, message, stacktrace}}`) or a legacy one (`{status: N, value: {message}}`), else undefined. */
function errorFromBody(body: unknown, answer: RemoteAnswer, context: CommandContext): WebDriverError | undefined {
  if (!isRecord(body)) return undefined;
  const value = body.value;
  if (isRecord(value) && typeof value.error === 'string') {
    const known = isWebDriverErrorCode(value.error);
    return new WebDriverError({
      code: known ? (value.error as WebDriverErrorCode) : 'unknown error',
      ...(known ? {} : { reportedCode: value.error }),
      status: answer.status,
      remoteMessage: typeof value.message === 'string' ? value.message : '',
      stacktrace: typeof value.stacktrace === 'string' ? value.stacktrace : '',
      data: value.data,
      ...context,
    });
  }
  if (typeof body.status === 'number' && body.status !== 0) {
    const message = isRecord(value) && typeof value.message === 'string' ? value.message : typeof value === 'string' ? value : '';
    return new WebDriverError({ code: codeForLegacyStatus(body.status, message), status: answer.status, remoteMessage: message, ...context });
  }
  return undefined;
}

/** An error status whose body is not a WebDriver error object: classify by status (chromedriver answers a legacy-mode unknown path with a plain-text 404). */
function errorFromStatus(answer: RemoteAnswer, context: CommandContext): WebDriverError {
  const code: WebDriverErrorCode = answer.status === 404 ? 'unknown command' : answer.status === 405 ? 'unknown method' : 'unknown error';
  return new WebDriverError({
    code,
    status: answer.status,
    remoteMessage: answer.text.replace(/\s+/g, ' ').trim().slice(0, maxMessageInError) || `HTTP ${answer.status} without a body`,
    ...context,
  });
}

/**
 * The body of a successful command, or the typed error the remote end reported. Accepts the W3C shape `{value}`
 * and the legacy `{sessionId, status: 0, value}`; an empty body or `{}` (AUT-EP-END-SESSION) reads as no value.
 */
export function interpretAnswer(answer: RemoteAnswer, context: CommandContext): Record<string, unknown> {
  const { json, isJson } = parseBody(answer);
  const error = errorFromBody(json, answer, context);
  if (error) throw error;
  if (answer.status >= 400) throw errorFromStatus(answer, context);
  if (!isJson) {
    throw new ProtocolError(
      `${context.method} ${context.path} answered ${answer.status} with a body that is not JSON: ${terminalText(answer.text.slice(0, 200))}`,
      'check that the address points at a WebDriver remote end',
    );
  }
  if (json === undefined) return {};
  if (!isRecord(json)) {
    throw new ProtocolError(
      `${context.method} ${context.path} answered ${answer.status} with JSON that is not an object`,
      'check that the address points at a WebDriver remote end',
    );
  }
  return json;
}

/** The `value` of a successful command. */
export function commandValue(answer: RemoteAnswer, context: CommandContext): unknown {
  return interpretAnswer(answer, context).value;
}

export interface NewSessionResult {
  sessionId: string;
  capabilities: Record<string, unknown>;
  /** Which shape the remote end answered with. */
  shape: 'w3c' | 'legacy';
}

/**
 * Reads a new-session response in either shape: W3C `{value: {sessionId, capabilities}}`, or the spec's
 * `{sessionId, value}` where `value` holds the capabilities (AUT-NEW-SESSION-RESPONSE; also legacy chromedriver).
 */
export function parseNewSession(answer: RemoteAnswer, context: CommandContext): NewSessionResult {
  const body = interpretAnswer(answer, context);
  const value = body.value;
  if (isRecord(value) && typeof value.sessionId === 'string' && value.sessionId !== '') {
    return { sessionId: value.sessionId, capabilities: isRecord(value.capabilities) ? value.capabilities : {}, shape: 'w3c' };
  }
  if (typeof body.sessionId === 'string' && body.sessionId !== '') {
    return { sessionId: body.sessionId, capabilities: isRecord(value) ? value : {}, shape: 'legacy' };
  }
  throw new ProtocolError(
    `${context.method} ${context.path} answered ${answer.status} without a session id (expected {value: {sessionId, capabilities}} or {sessionId, value})`,
    'check that the address points at a WebDriver remote end',
  );
}
