/** Loaded on demand by the secrets command, so `gantry --help` does not load the HTTP stack. */
export { SecretsClient } from '../../../secrets/index.js';
import { parseDuration } from '../../../secrets/index.js';

/** `--timeout 30s` / `--timeout 30` (seconds), as SECRETS_CLIENT_TIMEOUT. */
export function parseDurationOption(text: string, flag: string): number {
  return parseDuration(text, flag);
}
