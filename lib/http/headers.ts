/** Headers as the core sends them: lower-case names, values Node accepts, credentials registered for redaction. */
import { UsageError } from '../errors.js';
import { registerSecret, sensitiveHeaders } from '../redact.js';

/**
 * A header value Node would refuse to send (a line break, a control character) is bad input found before sending —
 * typically a token or name read from a file, an env file or an HCL heredoc with its final newline — never a
 * network error. The value is not shown: headers carry credentials.
 */
function checkHeaderValue(name: string, value: string): void {
  const bad = /[^\t\x20-\x7e\x80-\xff]/.exec(value);
  if (!bad) return;
  const what =
    bad[0] === '\n' || bad[0] === '\r' ? 'a line break' : `the control character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  throw new UsageError(`the ${name.toLowerCase()} header's value contains ${what} at position ${bad.index + 1} of ${value.length}; nothing was sent`, {
    code: 'INVALID_HEADER_VALUE',
    hint: 'strip it from the token, name or setting this header carries: a value read from a file, an env file or an HCL heredoc often ends with a newline',
  });
}

/** Sets `given` on `headers` (undefined values left out), checking each value and registering credentials. */
export function addHeaders(headers: Record<string, string>, given: Record<string, string | undefined> | undefined): Record<string, string> {
  for (const [name, value] of Object.entries(given ?? {})) {
    if (value === undefined) continue;
    checkHeaderValue(name, value);
    headers[name.toLowerCase()] = value;
    if (sensitiveHeaders.has(name.toLowerCase())) registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ''));
  }
  return headers;
}
