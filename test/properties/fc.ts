/**
 * The one way the property tests run fast-check, so every file replays the same way:
 *
 *   FC_SEED=<seed> [FC_PATH=<path>] npx mocha test/properties/<file>.test.ts   replays a reported failure
 *   FC_RUNS=<n>                                                              runs each property n times
 *
 * fast-check's own report (the thrown message mocha prints) names the seed, the path and the shrunk counterexample.
 * Every property also holds each input to a time bound: a parser that goes quadratic (or loops) on a crafted header is
 * the failure these tests exist to catch, and fast-check's `interruptAfterTimeLimit` only stops between runs. The bound
 * is FC_INPUT_MS (default 250 ms).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { GantryError } from '../../lib/errors.js';

/** Milliseconds one input may take; generous because the machine is shared, far below what a real blow-up costs. */
export const perInputMs = Number(process.env.FC_INPUT_MS ?? 250);

function settings(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED;
  const path = process.env.FC_PATH;
  const runs = process.env.FC_RUNS;
  return {
    numRuns: runs ? Number(runs) : numRuns,
    ...(seed ? { seed: Number(seed) } : {}),
    ...(path ? { path } : {}),
    interruptAfterTimeLimit: 15_000,
    markInterruptAsFailure: true,
    verbose: 1,
  };
}

/** Runs a synchronous property; `numRuns` is the default, tuned so the whole set stays under a minute. */
export function check<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => void, numRuns = 300): void {
  fc.assert(
    fc.property(arbitrary, (value) => {
      let took = Infinity;
      // A slow input is measured twice more and judged by its fastest run: a GC pause or a neighbour's build on this
      // shared machine is not a blow-up, and a real one is slow every time.
      for (let attempt = 0; attempt < 3 && took >= perInputMs; attempt += 1) {
        const started = performance.now();
        predicate(value);
        took = Math.min(took, performance.now() - started);
      }
      assert.ok(took < perInputMs, `one input took ${took.toFixed(0)} ms (bound ${perInputMs} ms)`);
    }),
    settings(numRuns) as fc.Parameters<[T]>,
  );
}

/** The asynchronous twin of `check`. */
export async function checkAsync<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns = 100): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arbitrary, async (value) => {
      let took = Infinity;
      for (let attempt = 0; attempt < 3 && took >= perInputMs; attempt += 1) {
        const started = performance.now();
        await predicate(value);
        took = Math.min(took, performance.now() - started);
      }
      assert.ok(took < perInputMs, `one input took ${took.toFixed(0)} ms (bound ${perInputMs} ms)`);
    }),
    settings(numRuns) as fc.Parameters<[T]>,
  );
}

/**
 * Calls `parse`; a GantryError (the parser's refusal) is an answer, returned as such; anything else thrown (a
 * TypeError, a RangeError from a regex, a bare Error) fails the property with the input in fast-check's report.
 */
export function typed<R>(parse: () => R): { ok: true; value: R } | { ok: false; error: GantryError } {
  try {
    return { ok: true, value: parse() };
  } catch (error) {
    if (error instanceof GantryError) return { ok: false, error };
    throw new Error(`threw ${(error as Error)?.constructor?.name ?? typeof error}, not a GantryError: ${String((error as Error)?.message ?? error)}`, {
      cause: error,
    });
  }
}

export async function typedAsync<R>(parse: () => Promise<R>): Promise<{ ok: true; value: R } | { ok: false; error: GantryError }> {
  try {
    return { ok: true, value: await parse() };
  } catch (error) {
    if (error instanceof GantryError) return { ok: false, error };
    throw new Error(`threw ${(error as Error)?.constructor?.name ?? typeof error}, not a GantryError: ${String((error as Error)?.message ?? error)}`, {
      cause: error,
    });
  }
}

/** Strings from a small alphabet of the grammar's own characters: near-valid input finds far more than noise. */
export function fromAlphabet(alphabet: readonly string[], maxLength = 40): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...alphabet), { maxLength }).map((pieces) => pieces.join(''));
}

/** Arbitrary text of every kind: unicode, ASCII, and the grammar-built one given. */
export function anyText(grammar?: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const noise = [
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.string({ maxLength: 80 }),
    // Lone surrogates, which 'binary' never makes: encodeURIComponent throws a URIError on them.
    fc.string({
      unit: fc.oneof(fc.constantFrom('\uD800', '\uDFFF', '\uDBFF\uDFFF'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
      maxLength: 20,
    }),
  ];
  const [binary, ascii, surrogates] = noise as [fc.Arbitrary<string>, fc.Arbitrary<string>, fc.Arbitrary<string>];
  if (!grammar) return fc.oneof(binary, ascii, surrogates);
  // Grammar-built text interleaved with a lone surrogate, where a parser meets it past its first checks.
  const spliced = fc
    .tuple(grammar, fc.nat(), fc.constantFrom('\uD800', '\uDC00'))
    .map(([text, at, c]) => text.slice(0, at % (text.length + 1)) + c + text.slice(at % (text.length + 1)));
  return fc.oneof(
    { weight: 1, arbitrary: binary },
    { weight: 1, arbitrary: ascii },
    { weight: 1, arbitrary: surrogates },
    { weight: 1, arbitrary: spliced },
    { weight: 4, arbitrary: grammar },
  );
}

export { fc };
