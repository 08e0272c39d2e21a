import { UsageError } from '../errors.js';

/**
 * Durations the secrets service takes in a body (`delete_version_after`), checked before sending as the service
 * reads them (Vault's `parseutil.ParseDurationSecond`): a whole number of seconds (`0`, `3600`, `-1`), a whole number
 * of days (`7d`), or a Go duration (`30s`, `1h30m`, `1.5h`, `500ms`, optionally signed). Anything else (`3x`, `1 h`,
 * `1d12h`) the service would refuse with a 400, so it is a usage error here and nothing is sent.
 */
const goUnitSeconds: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, μs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
const goDuration = /^[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/;
/** Go's time.Duration is an int64 of nanoseconds: about 292 years. */
const maxSeconds = 9_223_372_036;

export const durationExamples = '0 (never), 3600 (seconds), 30s, 90m, 1h30m, 768h or 7d';

/** The duration in seconds, or undefined when the service would refuse the text. */
export function vaultDurationSeconds(text: string): number | undefined {
  let seconds: number;
  if (/^[-+]?\d+$/.test(text)) seconds = Number(text);
  else if (/^[-+]?\d+d$/.test(text)) seconds = Number(text.slice(0, -1)) * 86_400;
  else if (goDuration.test(text)) {
    const sign = text.startsWith('-') ? -1 : 1;
    seconds = 0;
    for (const part of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) seconds += Number(part[1]) * goUnitSeconds[part[2]!]!;
    seconds *= sign;
  } else return undefined;
  return Number.isFinite(seconds) && Math.abs(seconds) <= maxSeconds ? seconds : undefined;
}

/** `text` unchanged when the service would read it as a duration; a usage error naming `what` otherwise. */
export function checkVaultDuration(text: unknown, what: string): string {
  const value = typeof text === 'number' && Number.isInteger(text) ? String(text) : text;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`${what} must be a duration such as ${durationExamples}`, { code: 'SECRETS_BAD_DURATION' });
  }
  if (vaultDurationSeconds(value) === undefined) {
    const shown = value.length <= 24 ? `"${value}"` : `a value of ${value.length} characters`;
    throw new UsageError(`${what} must be a duration such as ${durationExamples}, got ${shown}; nothing was sent`, {
      code: 'SECRETS_BAD_DURATION',
      hint: 'Units are ns, us, ms, s, m and h (combined as in 1h30m) or d alone (7d); a bare number is seconds.',
    });
  }
  return value;
}
