/** Exit codes shared by the command and by every error the library throws. */
export const ExitCode = {
  ok: 0,
  checkFailed: 1,
  usage: 2,
  remote: 3,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface GantryErrorOptions {
  /** What the user can do about it; printed after the message. */
  hint?: string;
  exitCode?: ExitCodeValue;
  cause?: unknown;
  /** A stable machine-readable code, e.g. `REGISTRY_NOT_FOUND`. */
  code?: string;
}

/** Base of every error Gantry throws on purpose. Messages must already be redacted. */
export class GantryError extends Error {
  readonly hint: string | undefined;
  readonly exitCode: ExitCodeValue;
  readonly code: string;

  constructor(message: string, options: GantryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? ExitCode.remote;
    this.code = options.code ?? 'GANTRY_ERROR';
  }
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
