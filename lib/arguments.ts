// Checks of the arguments of the library's public functions: JavaScript callers (and TypeScript callers with `any`)
// reach them with whatever they have, and a wrong type must be a UsageError that names the function, the argument
// and what it takes, never a TypeError from deep inside ("Cannot read properties of undefined (reading 'trim')").
import { UsageError, shown } from './errors.js';

/** What a wrong argument was, for "got …": its kind, never its value (it may be a secret). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'undefined' ? 'nothing' : `${typeof value === 'number' ? 'a number' : `a ${typeof value}`}`;
}

/** The one refusal of a wrong argument: `<where>: <name> must be <takes>, got <kind>`, a UsageError (INVALID_ARGUMENT). */
export function refuseArgument(where: string, name: string, takes: string, value: unknown): never {
  throw new UsageError(`${where}: ${name} must be ${takes}, got ${describeValue(value)}`, { code: 'INVALID_ARGUMENT' });
}

/** A non-empty string. `takes` says what kind, e.g. `a module address such as "hashicorp/consul/aws"`. */
export function expectString(where: string, name: string, value: unknown, takes = 'a non-empty string'): asserts value is string {
  if (typeof value !== 'string' || value === '') refuseArgument(where, name, takes, value);
}

/** A plain object (not null, not an array). */
export function expectObject(where: string, name: string, value: unknown, takes = 'an object'): asserts value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) refuseArgument(where, name, takes, value);
}

/** An options object that may be left out: undefined passes, anything else must be an object. */
export function expectOptions(where: string, value: unknown, name = 'options'): asserts value is Record<string, unknown> | undefined {
  if (value !== undefined) expectObject(where, name, value, 'an object (or left out)');
}

export function expectArray(where: string, name: string, value: unknown, takes = 'an array'): asserts value is unknown[] {
  if (!Array.isArray(value)) refuseArgument(where, name, takes, value);
}

export function expectFunction(where: string, name: string, value: unknown, takes = 'a function'): asserts value is (...args: never[]) => unknown {
  if (typeof value !== 'function') refuseArgument(where, name, takes, value);
}

const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration given by a person: a bare number of seconds (milliseconds with `numberIsMilliseconds`, for options a
 * program passes), or a Go-style duration as the Vault CLI reads them (`500ms`, `30s`, `1m30s`). Positive unless
 * `allowZero`. A UsageError naming `from` (the flag or variable) otherwise.
 */
export function parseDuration(raw: unknown, from: string, options: { numberIsMilliseconds?: boolean; allowZero?: boolean } = {}): number {
  const { numberIsMilliseconds = false, allowZero = false } = options;
  const ok = (ms: number) => ms > 0 || (allowZero && ms === 0);
  const takes = `${from} must be a ${allowZero ? '' : 'positive '}duration such as 60, 30s or 1m30s`;
  if (typeof raw === 'number') {
    const ms = numberIsMilliseconds ? raw : raw * 1000;
    if (Number.isFinite(raw) && ok(ms)) return ms;
    throw new UsageError(`${takes}, got ${raw}`, { code: 'INVALID_ARGUMENT' });
  }
  const value = String(raw).trim();
  if (/^\d+(\.\d+)?$/.test(value)) {
    const ms = Number(value) * (numberIsMilliseconds ? 1 : 1000);
    if (ok(ms)) return ms;
  }
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length > 0 && parts.map((p) => p[0]).join('') === value) {
    const total = parts.reduce((sum, p) => sum + Number(p[1]) * durationUnits[p[2]!]!, 0);
    if (ok(total)) return total;
  }
  // A duration is short; a long value is more likely a token set in the wrong variable than a typo: not echoed.
  const got = value.length <= 16 ? shown(value) : `a value of ${value.length} characters (not shown)`;
  throw new UsageError(`${takes}, got ${got}`, { code: 'INVALID_ARGUMENT' });
}
