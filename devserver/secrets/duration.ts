/**
 * Durations as the secrets service speaks them: a number of seconds, a numeric string, whole days ("7d"), or a Go
 * duration string ("1h30m", "90s"). Output is Go's `Duration.String()` form ("0s", "1m30s", "1h0m0s"), which is what kv v2 returns for
 * `delete_version_after`.
 */
const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, μs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

export function parseDurationSeconds(raw: unknown): number {
  if (typeof raw === 'number' && Number.isFinite(raw)) return Math.trunc(raw);
  if (typeof raw !== 'string') throw new Error(`invalid duration ${JSON.stringify(raw)}`);
  const text = raw.trim();
  if (text === '') return 0;
  if (/^[-+]?\d+$/.test(text)) return Number(text);
  // Whole days, as the reference server's parser reads them (ParseDurationSecond): `7d`, not `1d12h`.
  if (/^[-+]?\d+d$/.test(text)) return Number(text.slice(0, -1)) * 86_400;
  const match = /^([-+]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text);
  if (!match) throw new Error(`invalid duration ${JSON.stringify(raw)}`);
  let seconds = 0;
  for (const part of match[2].matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) seconds += Number(part[1]) * UNIT_SECONDS[part[2]];
  return (match[1] === '-' ? -1 : 1) * Math.trunc(seconds);
}

export function formatGoDuration(totalSeconds: number): string {
  if (totalSeconds === 0) return '0s';
  const sign = totalSeconds < 0 ? '-' : '';
  let rest = Math.abs(totalSeconds);
  const hours = Math.floor(rest / 3600);
  rest -= hours * 3600;
  const minutes = Math.floor(rest / 60);
  const seconds = rest - minutes * 60;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
