/**
 * A Redis address given by the user (the shared rate-limit budgets, the webhook queue): parsed, its password handed to
 * the redactor before anything can print it, and anything but redis:// or rediss:// refused — one place for both.
 */
import { UsageError } from './errors.js';
import { redactUrl, registerSecret } from './redact.js';

/** `what` names the store in messages ("the limits store"); `hint` says what happens without one. */
export function parseRedisAddress(where: string, url: string, what: string, hint: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${where}: ${what} must be a redis:// or rediss:// URL, got ${JSON.stringify(redactUrl(String(url)).slice(0, 120))}`, {
      code: 'INVALID_ARGUMENT',
    });
  }
  if (parsed.password) {
    registerSecret(decodeURIComponent(parsed.password));
    registerSecret(parsed.password);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new UsageError(`${where}: ${what} must be a redis:// or rediss:// URL, got ${redactUrl(parsed)}`, { code: 'INVALID_ARGUMENT', hint });
  }
  return parsed;
}
