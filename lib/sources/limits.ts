import { GantryError } from '../errors.js';
import type { SourceErrorCode } from './errors.js';

/** Caps applied to every fetched source; documented in docs/modules.md. */
export interface ExtractLimits {
  /** Total bytes of extracted file contents (default 1 GiB). */
  maxBytes: number;
  /** Entries of any kind (default 100 000). */
  maxFiles: number;
  /** Bytes of a downloaded archive (default 1 GiB). */
  maxDownloadBytes: number;
}

export const defaultLimits: ExtractLimits = {
  maxBytes: 1024 ** 3,
  maxFiles: 100_000,
  maxDownloadBytes: 1024 ** 3,
};

export function resolveLimits(partial: Partial<ExtractLimits> | undefined): ExtractLimits {
  return { ...defaultLimits, ...partial };
}

/** A fetched source that Gantry refuses to install: a hostile or broken archive, a checksum that does not match. */
export class SourceRefusedError extends GantryError {
  constructor(message: string, hint?: string) {
    super(message, { code: 'SOURCE_REFUSED' satisfies SourceErrorCode, exitCode: 1, ...(hint === undefined ? {} : { hint }) });
  }
}
