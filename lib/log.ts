import { redact } from './http/redact.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  write?: (line: string) => void;
}

function levelFromEnvironment(): LogLevel {
  const value = process.env.GANTRY_LOG?.toLowerCase();
  return value && value in order ? (value as LogLevel) : 'warn';
}

/** A logger whose every line passes through redaction. Writes to stderr by default. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = order[options.level ?? levelFromEnvironment()];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const emit = (level: LogLevel) => (message: string) => {
    if (order[level] >= threshold) write(redact(level === 'info' ? message : `${level}: ${message}`));
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

let defaultLogger: Logger | undefined;
/** The process-wide logger, used when a caller passes none. The command replaces it to honour --verbose. */
export function getLogger(): Logger {
  defaultLogger ??= createLogger();
  return defaultLogger;
}
export function setLogger(logger: Logger): void {
  defaultLogger = logger;
}
