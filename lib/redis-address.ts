/**
 * A Redis address given by the user (the shared rate-limit budgets, the webhook queue): parsed, its password handed to
 * the redactor before anything can print it, and anything but redis:// or rediss:// refused — one place for both.
 */
import { expectObject, expectString } from './arguments.js';
import { UsageError } from './errors.js';
import { redactUrl, registerSecret } from './redact.js';
import { refuseUnknownOptions } from './settings.js';

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

/**
 * A Redis store's options, checked before anything is opened: an object, its `url` a string, no key but `known`, the
 * address redis:// or rediss:// (`example` shows one; `what` and `hint` as for parseRedisAddress).
 */
export function checkRedisStoreOptions(where: string, options: { url: string }, known: readonly string[], what: string, example: string, hint: string): URL {
  expectObject(where, 'options', options, `an object such as { url: '${example}' }`);
  expectString(where, 'url', options.url, 'a redis:// or rediss:// address');
  refuseUnknownOptions(where, options, known);
  return parseRedisAddress(where, options.url, what, `e.g. ${example} — ${hint}`);
}
