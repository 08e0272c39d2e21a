/**
 * The v5 API's enums (PAG-ENUM-CATEGORY, PAG-ENUM-STRATEGY) and their mapping onto the category ids that appear as
 * keys of `beaconResult.categories` (PAG-OBJ-CATEGORIES).
 */

export const CATEGORIES = ['CATEGORY_UNSPECIFIED', 'ACCESSIBILITY', 'BEST_PRACTICES', 'PERFORMANCE', 'SEO'] as const;
export type Category = (typeof CATEGORIES)[number];

export const STRATEGIES = ['STRATEGY_UNSPECIFIED', 'DESKTOP', 'MOBILE'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** Keys of `beaconResult.categories`. */
export const CATEGORY_IDS = ['performance', 'accessibility', 'best-practices', 'seo'] as const;
export type CategoryId = (typeof CATEGORY_IDS)[number];

const ID_BY_CATEGORY: Record<Exclude<Category, 'CATEGORY_UNSPECIFIED'>, CategoryId> = {
  ACCESSIBILITY: 'accessibility',
  BEST_PRACTICES: 'best-practices',
  PERFORMANCE: 'performance',
  SEO: 'seo',
};

/** PAG-Q-CATEGORY: with no category the service runs PERFORMANCE only. */
export const DEFAULT_CATEGORIES: readonly CategoryId[] = ['performance'];
/** PAG-Q-STRATEGY: the default strategy is DESKTOP. */
export const DEFAULT_STRATEGY: Strategy = 'DESKTOP';

export function categoryToId(category: Category): CategoryId | undefined {
  return category === 'CATEGORY_UNSPECIFIED' ? undefined : ID_BY_CATEGORY[category];
}

export function idToCategory(id: CategoryId): Category {
  const found = (Object.keys(ID_BY_CATEGORY) as (keyof typeof ID_BY_CATEGORY)[]).find((c) => ID_BY_CATEGORY[c] === id);
  return found as Category;
}

function normalizeToken(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
}

/** Accepts `best-practices`, `BEST_PRACTICES`, `Best Practices`; undefined for anything else. */
export function parseCategoryId(text: string): CategoryId | undefined {
  const token = normalizeToken(text);
  return (CATEGORY_IDS as readonly string[]).includes(token) ? (token as CategoryId) : undefined;
}

/** Accepts `mobile`, `MOBILE`, `desktop`, `DESKTOP`; undefined for anything else. */
export function parseStrategy(text: string): Exclude<Strategy, 'STRATEGY_UNSPECIFIED'> | undefined {
  const token = text.trim().toUpperCase();
  return token === 'MOBILE' || token === 'DESKTOP' ? token : undefined;
}

/**
 * AMB-27: the spec does not say what an explicit `STRATEGY_UNSPECIFIED` means; we treat it as the documented
 * default (DESKTOP), which is what omitting the parameter means.
 */
export function effectiveStrategy(strategy: Strategy | undefined): Exclude<Strategy, 'STRATEGY_UNSPECIFIED'> {
  return strategy === 'MOBILE' ? 'MOBILE' : 'DESKTOP';
}

/**
 * AMB-27: an explicit `CATEGORY_UNSPECIFIED` carries no category; if nothing else is left, PERFORMANCE runs, as
 * when the parameter is omitted.
 */
export function effectiveCategories(categories: readonly Category[] | undefined): CategoryId[] {
  const ids = [...new Set((categories ?? []).map(categoryToId).filter((id): id is CategoryId => id !== undefined))];
  return ids.length > 0 ? ids : [...DEFAULT_CATEGORIES];
}
