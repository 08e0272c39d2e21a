import { redact } from './redact.js';
import { terminalText } from './terminal-text.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** What a line is about, beside its message: a delivery's GUID, a request id … (members of a JSON line; text lines leave them out). */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** `text`: a line for people (`warn: …`); `json`: one object a line, {time, level, msg, …fields}, for a log pipeline. */
export type LogFormat = 'text' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  write?: (line: string) => void;
}

export const LOG_LEVELS = Object.keys(order) as LogLevel[];
const warnedAbout = new Set<string>();

/** GANTRY_LOG, or `warn`; a value that is no level is said once (per value), not silently ignored. */
function levelFromEnvironment(write: (line: string) => void): LogLevel {
  const raw = process.env.GANTRY_LOG?.trim() ?? '';
  const value = raw.toLowerCase();
  if (Object.hasOwn(order, value)) return value as LogLevel;
  if (raw !== '' && !warnedAbout.has(raw)) {
    warnedAbout.add(raw);
    write(terminalText(redact(`warn: GANTRY_LOG=${raw} is not a log level; using warn (the levels are ${LOG_LEVELS.join(', ')})`)));
  }
  return 'warn';
}

/** One JSON line: every string redacted, as a text line is; JSON's escaping keeps it one line. */
function jsonLine(level: LogLevel, message: string, fields: LogFields | undefined): string {
  const line: Record<string, unknown> = { time: new Date().toISOString(), level, msg: redact(message) };
  for (const [name, value] of Object.entries(fields ?? {}))
    if (value !== undefined && !Object.hasOwn(line, name)) line[name] = typeof value === 'string' ? redact(value) : value;
  return JSON.stringify(line);
}

/**
 * A logger whose every line passes through redaction, then `terminalText`: a log line is one line, whatever a server
 * or a payload put in it (a line break cannot forge a second line, an escape sequence cannot drive the terminal).
 * Writes to stderr by default.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const threshold = order[options.level ?? levelFromEnvironment(write)];
  const json = options.format === 'json';
  const emit = (level: LogLevel) => (message: string, fields?: LogFields) => {
    if (order[level] < threshold) return;
    write(json ? jsonLine(level, message, fields) : terminalText(redact(level === 'info' ? message : `${level}: ${message}`)));
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** One logger that writes each line to every one given, in order (the context server: its log and the caller). */
export function teeLogger(...loggers: Logger[]): Logger {
  const each = (level: keyof Logger) => (message: string, fields?: LogFields) => loggers.forEach((logger) => logger[level](message, fields));
  return { debug: each('debug'), info: each('info'), warn: each('warn'), error: each('error') };
}

let defaultLogger: Logger | undefined;
/** The process-wide logger, used when a caller passes none. The command replaces it to honour --verbose. */
export function getLogger(): Logger {
  defaultLogger ??= createLogger();
  return defaultLogger;
}
export function setLogger(logger: Logger): void {
  defaultLogger = logger;
}
