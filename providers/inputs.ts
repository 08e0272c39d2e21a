/**
 * The engine's property bags, as every provider's operations read them: which inputs to take from a bag, which
 * changed, which checks wait for a value not known yet. Not serialized: the operations import this module in the
 * plugin, through `gantry/providers`.
 */
import { isDeepStrictEqual } from 'node:util';
import * as pulumi from '@pulumi/pulumi';

/**
 * The `keys` of `Inputs` that `bag` holds, as given, undefined ones left out (the engine's property structs have no
 * `undefined`). Check picks the inputs from the program's values with it — and validates each before anything
 * relies on its type —, create and update from the engine's checked inputs (which also carry `__provider`).
 */
export function pickInputs<Inputs extends object>(bag: { readonly [Key in keyof Inputs]?: unknown }, keys: readonly (keyof Inputs & string)[]): Inputs {
  const picked: { [Key in keyof Inputs]?: unknown } = {};
  for (const key of keys) if (bag[key] !== undefined) picked[key] = bag[key];
  return picked as Inputs;
}

/**
 * The `keys` whose values differ between the state (`olds`) and the checked inputs (`news`), compared as
 * `sameValue` compares. `absent` gives, for a key that has one, what an absent value stands for (`{ flag: false }`:
 * no flag is the same as false).
 */
export function changedInputs<const Key extends string>(
  olds: { readonly [K in NoInfer<Key>]?: unknown },
  news: { readonly [K in NoInfer<Key>]?: unknown },
  keys: readonly Key[],
  absent: { readonly [K in NoInfer<Key>]?: unknown } = {},
): Key[] {
  return keys.filter((key) => !sameValue(olds[key] ?? absent[key], news[key] ?? absent[key]));
}

/** Deep equality of two property values, in any key order; undefined and null are the same: absent. */
export function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a ?? null, b ?? null);
}

/** Keeps the keys whose value is defined: the engine's property structs have no `undefined`. */
export function defined<T extends object>(values: T): T {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as T;
}

// During a preview (and an `up` before a dependency exists) the engine hands Check the placeholder for a value not
// known yet — an input built from another resource's output. Check validates such a value once it is known, on the
// run that knows it, instead of refusing the preview.

export function containsUnknown(value: unknown): boolean {
  if (value === pulumi.runtime.unknownValue) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(containsUnknown);
  return false;
}

/** The failures of Check but those of a property whose value is not known yet: it is checked once known. */
export function knownFailures(inputs: object, failures: pulumi.dynamic.CheckFailure[]): pulumi.dynamic.CheckFailure[] {
  const unknown = new Set(
    Object.entries(inputs)
      .filter(([, value]) => containsUnknown(value))
      .map(([key]) => key),
  );
  return failures.filter((failure) => !unknown.has(failure.property));
}

/** Problems of `triggers`, the values whose change runs a resource again: absent, or names mapped to strings. */
export function triggersProblems(triggers: unknown): pulumi.dynamic.CheckFailure[] {
  if (triggers === undefined) return [];
  const map = typeof triggers === 'object' && triggers !== null && !Array.isArray(triggers);
  if (map && Object.values(triggers).every((value) => typeof value === 'string')) return [];
  return [{ property: 'triggers', reason: 'triggers must map names to text values' }];
}
