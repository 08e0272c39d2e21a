import { redact } from './redact.js';
import { terminalText } from './terminal-text.js';

/**
 * Exit codes shared by the command and by every error the library throws; each means one thing. The table of error
 * classes and their codes is in docs/architecture.md ("Exit codes"), and test/architecture/exit-codes.test.ts holds
 * every error class to it.
 */
export const ExitCode = {
  ok: 0,
  /** A definite "no": a gate or check failed, a hash mismatch, not found, a conflict, a lie in a lock file. */
  checkFailed: 1,
  /** Bad input or a machine that cannot run the command, found before anything was sent. */
  usage: 2,
  /** The remote side (a service, a driver, a browser) failed, after retries where retrying was safe. */
  remote: 3,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The exit code of a service's answer: a 4xx is the service's definite "no" (not found, forbidden, conflict, a body
 * it refuses), which asking again will not change; 408 and 429 are "not now", and 5xx the service failing.
 */
export function exitCodeForStatus(status: number): ExitCodeValue {
  return status >= 400 && status < 500 && status !== 408 && status !== 429 ? ExitCode.checkFailed : ExitCode.remote;
}

/** System error codes that mean a local path given to Gantry cannot be used as asked: bad input, not an outage. */
const localInputErrnos = new Set(['ENOENT', 'EISDIR', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'EEXIST', 'ENAMETOOLONG', 'ELOOP', 'EINVAL']);

/** The exit code of an error no Gantry code wrapped: a file the user named that cannot be read or written is 2. */
export function exitCodeForSystemError(error: unknown): ExitCodeValue {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  if (typeof code === 'string' && typeof syscall === 'string' && localInputErrnos.has(code) && !['connect', 'getaddrinfo', 'spawn'].includes(syscall)) {
    return ExitCode.usage;
  }
  return ExitCode.remote;
}

export interface GantryErrorOptions {
  /** What the user can do about it, in the library's terms (options, environment); printed after the message. */
  hint?: string | undefined;
  /** The same advice in the command's terms (flags, environment), when they differ: what `gantry` prints. */
  cliHint?: string | undefined;
  /** Required: every error says which of the four outcomes it is (docs/architecture.md, "Exit codes"). */
  exitCode: ExitCodeValue;
  cause?: unknown;
  /** A stable machine-readable code, e.g. `REGISTRY_NOT_FOUND`. */
  code?: string;
}

/**
 * Base of every error Gantry throws on purpose. Its message, hint and cliHint pass through `redact` here, so no error
 * needs to remember to: a token in a service's words or an echoed URL never reaches a terminal or a log.
 */
export class GantryError extends Error {
  readonly hint: string | undefined;
  readonly cliHint: string | undefined;
  readonly exitCode: ExitCodeValue;
  readonly code: string;

  constructor(message: string, options: GantryErrorOptions) {
    super(redact(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint === undefined ? undefined : redact(options.hint);
    this.cliHint = options.cliHint === undefined ? undefined : redact(options.cliHint);
    this.exitCode = options.exitCode;
    this.code = options.code ?? 'GANTRY_ERROR';
  }
}

/**
 * The hint an error carries for the `gantry` command (its `cliHint`: flags, environment, `gantry …` commands), where
 * it has one besides its library hint (options, methods, environment). The command prints that one, for every error.
 */
export function cliHintOf(error: unknown): string | undefined {
  const value = (error as { cliHint?: unknown } | null | undefined)?.cliHint;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Advice in the words of each face: `say` is given how the library names a setting (an option, a variable) and how
 * the command does (a flag, a variable). The result goes into an error's options.
 */
export function bothFaces(say: (name: string) => string, library: string, cli: string): { hint: string; cliHint: string } {
  if (typeof say !== 'function' || typeof library !== 'string' || typeof cli !== 'string') {
    throw new UsageError('bothFaces: give a function that words the advice and the two names of the setting (library, command)', { code: 'INVALID_ARGUMENT' });
  }
  return { hint: say(library), cliHint: say(cli) };
}

/** Bad input from the user: a flag, an address, a file. Exit code 2. */
export class UsageError extends GantryError {
  constructor(message: string, options: Omit<GantryErrorOptions, 'exitCode'> = {}) {
    super(message, { code: 'USAGE', ...options, exitCode: ExitCode.usage });
  }
}

/** A check said no: a gate below threshold, a hash mismatch, a failed browser check. Exit code 1. */
export class CheckFailedError extends GantryError {
  constructor(message: string, options: Omit<GantryErrorOptions, 'exitCode'> = {}) {
    super(message, { code: 'CHECK_FAILED', ...options, exitCode: ExitCode.checkFailed });
  }
}

export function isGantryError(error: unknown): error is GantryError {
  return error instanceof GantryError;
}

/**
 * A path or value as a message shows it: as it is, or JSON-quoted (`"secret/app/d\nb"`) when it holds a character a
 * terminal acts on or that hides text (`terminalText`), so a newline, a tab or an escape sequence in it can neither
 * break the message's lines nor hide.
 */
export function shown(text: string): string {
  // A public function: whatever a caller passes is shown as its text, not a TypeError.
  const value = typeof text === 'string' ? text : String(text);
  return terminalText(value) === value ? value : `"${terminalText(value.replace(/["\\]/g, '\\$&'))}"`;
}
