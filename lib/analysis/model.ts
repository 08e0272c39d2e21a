/**
 * The page analysis API v5 result model (spec doc 3 §B, PAG-RESP-*, PAG-LE-*, PAG-BR-*, PAG-OBJ-*), validated at the
 * boundary. Every object keeps the fields it does not know (an index signature), optional fields are tolerated,
 * and a field of the wrong type is a clear error naming its JSON path.
 *
 * AMB-26: the spec says result types "carry suffix V5" but names none that way; we use the documented names.
 */
import { ExitCode, GantryError } from '../errors.js';
import { redact } from '../redact.js';
import { anyValue, arrayOf, boolean, isPlainObject, lazy, mapOf, nullable, number, object, string, type Check } from './shape.js';

type Open = { [unknownField: string]: unknown };

/** Fields of UserPageLoadMetric are not shown in the spec: kept as they come. */
export type UserPageLoadMetric = Open;
/** Fields of AuditResult are not shown in the spec; these are the ones gates read. */
export interface AuditResult extends Open {
  id?: string;
  title?: string;
  description?: string;
  score?: number | null;
  scoreDisplayMode?: string;
  numericValue?: number;
  numericUnit?: string;
  displayValue?: string;
}
/** Fields of CategoryGroup are not shown in the spec. */
export type CategoryGroup = Open;

export interface LoadingExperience extends Open {
  id?: string;
  metrics?: Record<string, UserPageLoadMetric>;
  overall_category?: string;
  initial_url?: string;
  origin_fallback?: boolean;
}

export const RENDERER_FORMATTED_STRING_NAMES = [
  'varianceDisclaimer',
  'opportunityResourceColumnLabel',
  'opportunitySavingsColumnLabel',
  'errorMissingAuditInfo',
  'errorLabel',
  'warningHeader',
  'auditGroupExpandTooltip',
  'passedAuditsGroupTitle',
  'notApplicableAuditsGroupTitle',
  'manualAuditsGroupTitle',
  'toplevelWarningsMessage',
  'scorescaleLabel',
  'crcLongestDurationLabel',
  'crcInitialNavigation',
  'lsPerformanceCategoryDescription',
  'labDataTitle',
] as const;
export type RendererFormattedStrings = Partial<Record<(typeof RENDERER_FORMATTED_STRING_NAMES)[number], string>> & Open;

export interface I18n extends Open {
  rendererFormattedStrings?: RendererFormattedStrings;
}

export interface StackPack extends Open {
  id?: string;
  title?: string;
  iconDataURL?: string;
  descriptions?: Record<string, string>;
}

export interface Environment extends Open {
  networkUserAgent?: string;
  hostUserAgent?: string;
  benchmarkIndex?: number;
}

export interface RuntimeError extends Open {
  code?: string;
  message?: string;
}

export interface AuditRef extends Open {
  id?: string;
  weight?: number;
  group?: string;
}

export interface BeaconCategory extends Open {
  id?: string;
  title?: string;
  description?: string;
  manualDescription?: string;
  auditRefs?: AuditRef[];
  /** The weighted average of the audits, 0..1; null when it could not be computed. */
  score?: number | null;
}

export interface Categories extends Open {
  accessibility?: BeaconCategory;
  'best-practices'?: BeaconCategory;
  seo?: BeaconCategory;
  performance?: BeaconCategory;
}

export interface Timing extends Open {
  total?: number;
}

export interface ConfigSettings extends Open {
  onlyCategories?: unknown;
  /** Deprecated: use formFactor. */
  emulatedFormFactor?: string;
  locale?: string;
  channel?: string;
  formFactor?: string;
}

export interface Version extends Open {
  major?: string;
  minor?: string;
}

export interface BeaconResult extends Open {
  fetchTime?: string;
  requestedUrl?: string;
  finalUrl?: string;
  beaconVersion?: string;
  i18n?: I18n;
  userAgent?: string;
  audits?: Record<string, AuditResult>;
  categoryGroups?: Record<string, CategoryGroup>;
  stackPacks?: StackPack[];
  environment?: Environment;
  /** Always present after parsing, at least `[]` (PAG-BR-RUN-WARNINGS). */
  runWarnings: unknown[];
  runtimeError?: RuntimeError;
  categories?: Categories;
  timing?: Timing;
  configSettings?: ConfigSettings;
}

export interface PageanalysisApiResponse extends Open {
  kind?: string;
  captchaResult?: string;
  id?: string;
  loadingExperience?: LoadingExperience;
  originLoadingExperience?: LoadingExperience;
  analysisUTCTimestamp?: string;
  beaconResult?: BeaconResult;
  version?: Version;
}

const loadingExperience = object({
  id: string,
  metrics: mapOf(object({})),
  overall_category: string,
  initial_url: string,
  origin_fallback: boolean,
});

const rendererFormattedStrings = object(Object.fromEntries(RENDERER_FORMATTED_STRING_NAMES.map((name) => [name, string])));

/** A score is a fraction 0..1 or null. */
const score: Check = (value, path, problems) => {
  nullable(number)(value, path, problems);
  if (typeof value === 'number' && (value < 0 || value > 1)) problems.push(`${path}: expected a score between 0 and 1, got ${value}`);
};

const beaconCategory = object({
  id: string,
  title: string,
  description: string,
  manualDescription: string,
  auditRefs: arrayOf(object({ id: string, weight: number, group: string })),
  score,
});

const auditResult = object({
  id: string,
  title: string,
  description: string,
  score,
  scoreDisplayMode: string,
  numericValue: number,
  numericUnit: string,
  displayValue: string,
});

const beaconResult = object({
  fetchTime: string,
  requestedUrl: string,
  finalUrl: string,
  beaconVersion: string,
  i18n: object({ rendererFormattedStrings }),
  userAgent: string,
  audits: mapOf(auditResult),
  categoryGroups: mapOf(object({})),
  stackPacks: arrayOf(object({ id: string, title: string, iconDataURL: string, descriptions: mapOf(string) })),
  environment: object({ networkUserAgent: string, hostUserAgent: string, benchmarkIndex: number }),
  runWarnings: arrayOf(anyValue),
  runtimeError: object({ code: string, message: string }),
  categories: object({
    accessibility: beaconCategory,
    'best-practices': beaconCategory,
    seo: beaconCategory,
    performance: beaconCategory,
  }),
  timing: object({ total: number }),
  configSettings: object({
    onlyCategories: anyValue,
    emulatedFormFactor: string,
    locale: string,
    channel: string,
    formFactor: string,
  }),
});

const response = object({
  kind: string,
  captchaResult: string,
  id: string,
  loadingExperience,
  originLoadingExperience: lazy(() => loadingExperience),
  analysisUTCTimestamp: string,
  beaconResult,
  version: object({ major: string, minor: string }),
});

/** The response (or engine output) does not have the v5 shape. */
export class PageanalysisResponseError extends GantryError {
  readonly problems: string[];
  constructor(problems: string[], source: string) {
    const shown = problems.slice(0, 5).join('; ');
    const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
    // The source names the page URL, and a bad value may quote one: both may carry a credential.
    super(redact(`${source} is not a valid page analysis v5 response: ${shown}${more}`), {
      code: 'PAGEANALYSIS_INVALID_RESPONSE',
      exitCode: ExitCode.remote,
      hint: 'check that the base URL points at a page analysis v5 API',
    });
    this.problems = problems.map(redact);
  }
}

/**
 * Validates a decoded JSON value as a PageanalysisApiResponse. Unknown fields are kept as they are; `runWarnings`
 * is filled in as `[]` when the service left it out (PAG-BR-RUN-WARNINGS). Throws PageanalysisResponseError listing
 * every field of the wrong type.
 */
export function parsePageanalysisResponse(value: unknown, source = 'the response'): PageanalysisApiResponse {
  const problems: string[] = [];
  response(value, '$', problems);
  if (problems.length > 0) throw new PageanalysisResponseError(problems, source);
  const parsed = value as PageanalysisApiResponse;
  if (isPlainObject(parsed.beaconResult) && parsed.beaconResult.runWarnings === undefined) parsed.beaconResult.runWarnings = [];
  return parsed;
}
