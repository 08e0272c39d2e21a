/**
 * The audits a page load produces: Lighthouse 12.8.2's navigation audits (the version the local engine pins, and the
 * one the v5 API serves), by the category whose report lists them. Thresholds are checked against this list before
 * any analysis starts, so that a misspelt id is a usage error naming close matches, not a failed check minutes later.
 * test/analysis/audits.test.ts holds it to Lighthouse's own default configuration.
 */
import type { CategoryId } from './enums.js';
import { editDistance } from '../spelling.js';

/** Audit ids by the first category that lists them (three are listed by two: see `SECOND_CATEGORY`). */
export const AUDITS_BY_CATEGORY: Readonly<Record<CategoryId, readonly string[]>> = {
  performance: [
    'bf-cache',
    'bootup-time',
    'cache-insight',
    'cls-culprits-insight',
    'critical-request-chains',
    'cumulative-layout-shift',
    'diagnostics',
    'document-latency-insight',
    'dom-size',
    'dom-size-insight',
    'duplicated-javascript',
    'duplicated-javascript-insight',
    'efficient-animated-content',
    'final-screenshot',
    'first-contentful-paint',
    'first-meaningful-paint',
    'font-display',
    'font-display-insight',
    'forced-reflow-insight',
    'image-delivery-insight',
    'inp-breakdown-insight',
    'interactive',
    'largest-contentful-paint',
    'largest-contentful-paint-element',
    'layout-shifts',
    'lcp-breakdown-insight',
    'lcp-discovery-insight',
    'lcp-lazy-loaded',
    'legacy-javascript',
    'legacy-javascript-insight',
    'long-tasks',
    'main-thread-tasks',
    'mainthread-work-breakdown',
    'max-potential-fid',
    'metrics',
    'modern-http-insight',
    'modern-image-formats',
    'network-dependency-tree-insight',
    'network-requests',
    'network-rtt',
    'network-server-latency',
    'no-document-write',
    'non-composited-animations',
    'offscreen-images',
    'prioritize-lcp-image',
    'redirects',
    'render-blocking-insight',
    'render-blocking-resources',
    'resource-summary',
    'screenshot-thumbnails',
    'script-treemap-data',
    'server-response-time',
    'speed-index',
    'third-parties-insight',
    'third-party-facades',
    'third-party-summary',
    'total-blocking-time',
    'total-byte-weight',
    'unminified-css',
    'unminified-javascript',
    'unsized-images',
    'unused-css-rules',
    'unused-javascript',
    'user-timings',
    'uses-http2',
    'uses-long-cache-ttl',
    'uses-optimized-images',
    'uses-passive-event-listeners',
    'uses-rel-preconnect',
    'uses-responsive-images',
    'uses-text-compression',
    'viewport',
    'viewport-insight',
  ],
  accessibility: [
    'accesskeys',
    'aria-allowed-attr',
    'aria-allowed-role',
    'aria-command-name',
    'aria-conditional-attr',
    'aria-deprecated-role',
    'aria-dialog-name',
    'aria-hidden-body',
    'aria-hidden-focus',
    'aria-input-field-name',
    'aria-meter-name',
    'aria-progressbar-name',
    'aria-prohibited-attr',
    'aria-required-attr',
    'aria-required-children',
    'aria-required-parent',
    'aria-roles',
    'aria-text',
    'aria-toggle-field-name',
    'aria-tooltip-name',
    'aria-treeitem-name',
    'aria-valid-attr',
    'aria-valid-attr-value',
    'button-name',
    'bypass',
    'color-contrast',
    'custom-controls-labels',
    'custom-controls-roles',
    'definition-list',
    'dlitem',
    'document-title',
    'duplicate-id-aria',
    'empty-heading',
    'focus-traps',
    'focusable-controls',
    'form-field-multiple-labels',
    'frame-title',
    'heading-order',
    'html-has-lang',
    'html-lang-valid',
    'html-xml-lang-mismatch',
    'identical-links-same-purpose',
    'image-alt',
    'image-redundant-alt',
    'input-button-name',
    'input-image-alt',
    'interactive-element-affordance',
    'label',
    'label-content-name-mismatch',
    'landmark-one-main',
    'link-in-text-block',
    'link-name',
    'list',
    'listitem',
    'logical-tab-order',
    'managed-focus',
    'meta-refresh',
    'meta-viewport',
    'object-alt',
    'offscreen-content-hidden',
    'select-name',
    'skip-link',
    'tabindex',
    'table-duplicate-name',
    'table-fake-caption',
    'target-size',
    'td-has-header',
    'td-headers-attr',
    'th-has-data-cells',
    'use-landmarks',
    'valid-lang',
    'video-caption',
    'visual-order-follows-dom',
  ],
  'best-practices': [
    'charset',
    'clickjacking-mitigation',
    'csp-xss',
    'deprecations',
    'doctype',
    'errors-in-console',
    'font-size',
    'geolocation-on-start',
    'has-hsts',
    'image-aspect-ratio',
    'image-size-responsive',
    'inspector-issues',
    'is-on-https',
    'js-libraries',
    'notification-on-start',
    'origin-isolation',
    'paste-preventing-inputs',
    'redirects-http',
    'third-party-cookies',
    'trusted-types-xss',
    'valid-source-maps',
  ],
  seo: ['canonical', 'crawlable-anchors', 'hreflang', 'http-status-code', 'is-crawlable', 'link-text', 'meta-description', 'robots-txt', 'structured-data'],
};

/** Audits that a second category also lists. */
const SECOND_CATEGORY: Readonly<Record<string, CategoryId>> = { viewport: 'best-practices', 'document-title': 'seo', 'image-alt': 'seo' };

/** Audits that exist only in timespan or snapshot mode: a page-load analysis never produces them. */
export const NON_NAVIGATION_AUDITS: readonly string[] = ['interaction-to-next-paint', 'uses-responsive-images-snapshot', 'work-during-interaction'];

/** The unit of each audit's `numericValue`, where it has one. */
const UNITS: Readonly<Record<string, string>> = {
  'cumulative-layout-shift': 'unitless',
  'total-byte-weight': 'byte',
  'uses-long-cache-ttl': 'byte',
  'dom-size': 'element',
};
const TIMINGS = new Set([
  'bootup-time',
  'duplicated-javascript',
  'efficient-animated-content',
  'first-contentful-paint',
  'interactive',
  'largest-contentful-paint',
  'legacy-javascript',
  'mainthread-work-breakdown',
  'max-potential-fid',
  'metrics',
  'modern-image-formats',
  'network-rtt',
  'network-server-latency',
  'offscreen-images',
  'redirects',
  'render-blocking-resources',
  'server-response-time',
  'speed-index',
  'total-blocking-time',
  'unminified-css',
  'unminified-javascript',
  'unused-css-rules',
  'unused-javascript',
  'uses-http2',
  'uses-optimized-images',
  'uses-rel-preconnect',
  'uses-responsive-images',
  'uses-text-compression',
]);

const CATEGORY_OF = new Map<string, CategoryId>(
  (Object.entries(AUDITS_BY_CATEGORY) as Array<[CategoryId, readonly string[]]>).flatMap(([category, ids]) => ids.map((id) => [id, category] as const)),
);

/** Every audit id, sorted. */
export const AUDIT_IDS: readonly string[] = [...CATEGORY_OF.keys()].sort();

export function isKnownAudit(id: string): boolean {
  return CATEGORY_OF.has(id);
}

/** The categories whose report lists the audit (the first one is analysed to get it). */
export function auditCategories(id: string): CategoryId[] {
  const first = CATEGORY_OF.get(id);
  if (!first) return [];
  const second = SECOND_CATEGORY[id];
  return second ? [first, second] : [first];
}

/** `millisecond`, `byte`, `element`, `unitless`, or undefined for audits without a numeric value. */
export function auditUnit(id: string): string | undefined {
  return UNITS[id] ?? (TIMINGS.has(id) ? 'millisecond' : undefined);
}

/** What people call the metrics, for suggestions only: a threshold is always written with the audit id. */
const ABBREVIATIONS: Readonly<Record<string, string>> = {
  fcp: 'first-contentful-paint',
  lcp: 'largest-contentful-paint',
  cls: 'cumulative-layout-shift',
  tbt: 'total-blocking-time',
  si: 'speed-index',
  tti: 'interactive',
  fmp: 'first-meaningful-paint',
  fid: 'max-potential-fid',
  ttfb: 'server-response-time',
  inp: 'interaction-to-next-paint',
};

/** Up to `limit` ids close to `text`: its expansion when it is an abbreviation, near spellings, ids containing it. */
export function closeMatches(text: string, candidates: readonly string[], limit = 3): string[] {
  const wanted = text.trim().toLowerCase();
  const found: string[] = [];
  const expanded = ABBREVIATIONS[wanted];
  if (expanded) found.push(expanded);
  const scored = candidates
    .map((id) => ({ id, score: editDistance(wanted, id) }))
    .filter(({ id, score }) => score <= Math.max(2, Math.floor(id.length / 4)) || (wanted.length >= 4 && id.includes(wanted)))
    .sort((a, b) => a.score - b.score || a.id.localeCompare(b.id));
  for (const { id } of scored) if (!found.includes(id)) found.push(id);
  return found.slice(0, limit);
}
