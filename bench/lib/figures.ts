// The arithmetic of the benchmarks that compare sides over rotating rounds: medians of each figure, per-round ratios.

/** Two decimals. */
export const round = (n: number): number => Math.round(n * 100) / 100;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The `q` quantile (0.5, 0.99) of latencies sorted ascending, in the unit they are in, to two decimals. */
export const quantile = (sorted: number[], q: number): number => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);

/**
 * Each figure's median over the rounds, in the order the first round lists them: milliseconds (`…Ms`) to two
 * decimals, the rest whole; a figure the first round leaves undefined (not measured) is left out.
 */
export function medianFigures<F extends object>(rounds: F[]): Partial<Record<keyof F, number>> {
  const first = rounds[0] as Record<string, number | undefined>;
  const keys = Object.keys(first).filter((key) => first[key] !== undefined);
  return Object.fromEntries(
    keys.map((key) => {
      const value = median(rounds.map((figures) => (figures as Record<string, number>)[key]!));
      return [key, key.endsWith('Ms') ? round(value) : Math.round(value)];
    }),
  ) as Partial<Record<keyof F, number>>;
}

/** Round by round, `side`'s figure over `base`'s (the rounds in the same order on both sides). */
export const roundRatios = <F>(side: F[], base: F[], figure: (figures: F) => number): number[] =>
  side.map((figures, i) => round(figure(figures) / figure(base[i]!)));

/** The ratio a comparison reports: the median of its per-round ratios, to two decimals. */
export const medianRatio = (ratios: number[]): number => round(median(ratios));

/** Each side's `medianFigures`, under the side's name, in the order the sides are listed. */
export const mediansBySide = <S extends string, F extends object>(figures: Record<S, F[]>): Record<S, Partial<Record<keyof F, number>>> =>
  Object.fromEntries(Object.entries<F[]>(figures).map(([side, rounds]) => [side, medianFigures(rounds)])) as Record<S, Partial<Record<keyof F, number>>>;

/**
 * Six orders of three sides, one round each: over six rounds each side runs first, second and last twice, so warm-up
 * and drift in the machine's load fall on all of them alike.
 */
export const rotatingOrders = <S>([a, b, c]: readonly [S, S, S]): S[][] => [
  [a, b, c],
  [c, b, a],
  [b, c, a],
  [a, c, b],
  [c, a, b],
  [b, a, c],
];
