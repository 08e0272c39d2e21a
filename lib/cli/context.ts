import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Output } from './output.js';

/**
 * What every command group is given and what it returns to the program. Its own module so that the groups depend on it
 * and program.ts depends on the groups (program.ts → groups.ts → each group → context.ts), one way.
 */

export interface GlobalOptions {
  json: boolean;
  verbose: boolean;
}

export interface CliContext {
  out: Output;
  logger: Logger;
  /** The global options as they apply to `command` (flags may stand before or after the verb). */
  globals(command: Command): GlobalOptions;
}

export interface CommandGroup {
  register(program: Command, context: CliContext): void;
}

/** For actions: turn a malformed argument into a usage error with a next step. */
export function usage(message: string, hint?: string): UsageError {
  return new UsageError(message, hint ? { hint } : {});
}
