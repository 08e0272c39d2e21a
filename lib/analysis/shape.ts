/**
 * Tiny structural checks for data that crosses a boundary (API responses, engine output). A check records every
 * problem with its JSON path instead of stopping at the first, and never removes fields it does not know: the v5
 * model keeps unknown fields so that newer servers do not lose data on the way through.
 */

export type Check = (value: unknown, path: string, problems: string[]) => void;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)?.slice(0, 40)}`;
}

function expect(ok: boolean, what: string): Check {
  return (value, path, problems) => {
    if (!ok) return;
    problems.push(`${path}: expected ${what}, got ${describe(value)}`);
  };
}

export const string: Check = (value, path, problems) => expect(typeof value !== 'string', 'a string')(value, path, problems);
export const number: Check = (value, path, problems) => expect(typeof value !== 'number' || !Number.isFinite(value), 'a finite number')(value, path, problems);
export const boolean: Check = (value, path, problems) => expect(typeof value !== 'boolean', 'a boolean')(value, path, problems);

export function nullable(check: Check): Check {
  return (value, path, problems) => {
    if (value !== null) check(value, path, problems);
  };
}

/** Anything JSON: the spec's "value" type (`google.protobuf.Value`). */
export const anyValue: Check = () => undefined;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function arrayOf(item: Check): Check {
  return (value, path, problems) => {
    if (!Array.isArray(value)) return void problems.push(`${path}: expected an array, got ${describe(value)}`);
    value.forEach((element, index) => item(element, `${path}[${index}]`, problems));
  };
}

export function mapOf(item: Check): Check {
  return (value, path, problems) => {
    if (!isPlainObject(value)) return void problems.push(`${path}: expected an object, got ${describe(value)}`);
    for (const [key, element] of Object.entries(value)) item(element, `${path}[${JSON.stringify(key)}]`, problems);
  };
}

/** Known fields are checked when present; absent ones are tolerated; unknown ones are left alone. */
export function object(fields: Record<string, Check>): Check {
  return (value, path, problems) => {
    if (!isPlainObject(value)) return void problems.push(`${path}: expected an object, got ${describe(value)}`);
    for (const [name, check] of Object.entries(fields)) {
      if (value[name] !== undefined) check(value[name], `${path}.${name}`, problems);
    }
  };
}

/** Lets a recursive or later-defined check be referenced before it exists. */
export function lazy(get: () => Check): Check {
  return (value, path, problems) => get()(value, path, problems);
}
