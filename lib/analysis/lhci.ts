/**
 * Lighthouse CI configuration (`lighthouserc.json`, `.lighthouserc.js`, …) read into a gate: `ci.collect` gives the
 * URLs, the number of runs and the form factor, `ci.assert` the assertions — levels, `minScore`, `maxNumericValue`,
 * `maxLength`, `aggregationMethod` and the `lighthouse:*` presets — as Gantry thresholds. What Gantry cannot honour
 * either warns (a setting that only changes how Lighthouse runs) or is refused (an assertion it would otherwise drop:
 * a gate never passes on a check it did not make).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { readLocalTextSync } from '../local-paths.js';
import { AGGREGATION_METHODS, type AggregationMethod } from './aggregate.js';
import { AUDIT_IDS, auditCategories } from './audits.js';
import type { CategoryId } from './enums.js';
import { MAX_RUNS } from './gate.js';
import { checkAuditId, parseCategory, type Threshold, type ThresholdLevel } from './thresholds.js';

/** The file names Lighthouse CI looks for in the current folder, in the order its loader tries them. */
export const LHCI_CONFIG_FILES = [
  '.lighthouserc.cjs',
  'lighthouserc.cjs',
  '.lighthouserc.js',
  'lighthouserc.js',
  '.lighthouserc.json',
  'lighthouserc.json',
  '.lighthouserc.yml',
  'lighthouserc.yml',
  '.lighthouserc.yaml',
  'lighthouserc.yaml',
] as const;

export interface LhciGateConfig {
  file: string;
  /** `ci.collect.url`. */
  urls: string[];
  /** `ci.collect.numberOfRuns`. */
  runs?: number;
  /** From `ci.collect.settings.preset` / `formFactor`: Lighthouse's default is mobile, `preset: 'desktop'` desktop. */
  strategy: 'DESKTOP' | 'MOBILE';
  /** `ci.collect.settings.onlyCategories`: assertions of the preset outside them are dropped. */
  onlyCategories?: CategoryId[];
  /** Every assertion that is not `off`, each with its level and aggregation. */
  thresholds: Threshold[];
  /** Keys and settings gantry does not use: shown, never fatal. */
  warnings: string[];
}

/** The first Lighthouse CI configuration file in `dir`, in Lighthouse CI's order. */
export function findLhciConfig(dir: string = process.cwd()): string | undefined {
  for (const name of LHCI_CONFIG_FILES) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

type Assertion = string | [string, Record<string, unknown>?];

// Lighthouse CI's presets, in our own terms. `lighthouse:all` asserts a perfect-enough score (the default minScore)
// at `error` on every audit of its list; that list is Lighthouse's navigation audits except the diagnostics that have
// no score to speak of (OFF) and those Lighthouse CI's presets leave out (NOT_ASSERTED: manual accessibility checks,
// the performance insights, which repeat the diagnostics, and newer informative audits).
const OFF = [
  'critical-request-chains',
  'diagnostics',
  'final-screenshot',
  'js-libraries',
  'largest-contentful-paint-element',
  'layout-shifts',
  'main-thread-tasks',
  'metrics',
  'network-requests',
  'network-rtt',
  'network-server-latency',
  'resource-summary',
  'screenshot-thumbnails',
  'script-treemap-data',
  'third-party-summary',
  'total-blocking-time',
  'user-timings',
];
const NOT_ASSERTED = new Set([
  'custom-controls-labels',
  'custom-controls-roles',
  'focus-traps',
  'focusable-controls',
  'interactive-element-affordance',
  'logical-tab-order',
  'managed-focus',
  'offscreen-content-hidden',
  'use-landmarks',
  'visual-order-follows-dom',
  'clickjacking-mitigation',
  'has-hsts',
  'origin-isolation',
  'trusted-types-xss',
  'structured-data',
  ...AUDIT_IDS.filter((id) => id.endsWith('-insight')),
]);
// `lighthouse:recommended` on top of that: metrics that vary between runs only warn; opportunities must list no
// item (`maxLength: 0`), some only warning; two audits are off.
const WARN = [
  'bootup-time',
  'cumulative-layout-shift',
  'dom-size',
  'first-contentful-paint',
  'first-meaningful-paint',
  'interactive',
  'is-on-https',
  'largest-contentful-paint',
  'mainthread-work-breakdown',
  'max-potential-fid',
  'server-response-time',
  'speed-index',
];
const WARN_NO_ITEMS = ['duplicated-javascript', 'legacy-javascript', 'modern-image-formats', 'render-blocking-resources', 'uses-long-cache-ttl'];
const ERROR_NO_ITEMS = [
  'efficient-animated-content',
  'offscreen-images',
  'unminified-css',
  'unminified-javascript',
  'unused-css-rules',
  'unused-javascript',
  'uses-optimized-images',
  'uses-rel-preconnect',
  'uses-responsive-images',
  'uses-text-compression',
];
const RECOMMENDED_OFF = ['long-tasks', 'uses-http2'];

function presetAssertions(name: string): Record<string, Assertion> {
  const all: Record<string, Assertion> = {};
  for (const id of AUDIT_IDS) if (!NOT_ASSERTED.has(id)) all[id] = ['error', {}];
  for (const id of OFF) all[id] = ['off', {}];
  if (name === 'lighthouse:all') return all;
  const recommended = { ...all };
  for (const id of WARN) recommended[id] = ['warn', {}];
  for (const id of WARN_NO_ITEMS) recommended[id] = ['warn', { maxLength: 0 }];
  for (const id of ERROR_NO_ITEMS) recommended[id] = ['error', { maxLength: 0 }];
  for (const id of RECOMMENDED_OFF) recommended[id] = ['off', {}];
  if (name === 'lighthouse:recommended') return recommended;
  // lighthouse:no-pwa: recommended without the audits that were part of the (removed) PWA category.
  return { ...recommended, 'is-on-https': 'off', viewport: 'off' };
}

export const LHCI_PRESETS = ['lighthouse:all', 'lighthouse:recommended', 'lighthouse:no-pwa'] as const;

/** Lighthouse CI's default when an assertion names no property (its assertions code; its docs say 1). */
const DEFAULT_MIN_SCORE = 0.9;
/** Lighthouse CI's default aggregation of an assertion. */
const DEFAULT_AGGREGATION: AggregationMethod = 'optimistic';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Settings and keys Lighthouse CI knows that only change how it runs or what it does after: ignored, with a warning. */
const IGNORED_COLLECT = new Set([
  'method',
  'headful',
  'additive',
  'staticDistDir',
  'autodiscoverUrlBlocklist',
  'isSinglePageApplication',
  'chromePath',
  'puppeteerScript',
  'puppeteerLaunchOptions',
  'psiApiKey',
  'psiApiEndpoint',
  'psiStrategy',
  'startServerCommand',
  'startServerReadyPattern',
  'startServerReadyTimeout',
  'maxAutodiscoverUrls',
  'staticDirFileDiscoveryDepth',
]);

/** Reads a configuration file (JSON, or CommonJS/ESM JavaScript as Lighthouse CI runs it) into a gate. */
export function loadLhciConfig(path: string, origin = '--config'): LhciGateConfig {
  if (typeof path !== 'string' || path.trim() === '')
    throw new UsageError(`${origin}: the path is empty`, { hint: `give a Lighthouse CI configuration file such as lighthouserc.json` });
  const file = resolve(path);
  const name = basename(file);
  if (!existsSync(file)) throw new UsageError(`--config: ${path} does not exist`, { hint: `Lighthouse CI's file names are ${LHCI_CONFIG_FILES.join(', ')}` });
  // Read (or, for JavaScript, looked at) before anything runs: a folder, a device (/dev/zero), a FIFO or more than a
  // few MB is refused naming the file, never read without end or waited on.
  const text = readLocalTextSync(file, {
    what: `the Lighthouse CI configuration (${origin})`,
    hint: `give a Lighthouse CI configuration file such as lighthouserc.json`,
  });
  if (/\.ya?ml$/i.test(name)) {
    throw new UsageError(`${path}: YAML configuration is not supported (gantry has no YAML parser)`, {
      hint: `write the same keys as JSON in ${name.replace(/\.ya?ml$/i, '.json')}`,
    });
  }
  let raw: unknown;
  if (/\.c?js$/i.test(name)) {
    try {
      const loaded = withoutExit(path, () => createRequire(file)(file) as unknown);
      raw = isObject(loaded) && 'default' in loaded && Object.keys(loaded).every((key) => key === 'default' || key === '__esModule') ? loaded.default : loaded;
    } catch (error) {
      if (error instanceof UsageError && error.code === 'LHCI_CONFIG_EXITS') throw error;
      throw new UsageError(`${path}: the configuration could not be loaded: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
  } else {
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`${path}:${jsonErrorPosition(text, error)}: not valid JSON: ${jsonErrorReason(error)}`, {
        hint: 'Lighthouse CI reads lighthouserc.json as plain JSON: no comments, no trailing commas',
      });
    }
  }
  return lhciToGate(raw, path);
}

/**
 * Runs `load` (a JavaScript configuration being required) with process.exit and process.reallyExit refused: a
 * configuration that ends the process (`process.exit(0)`) would end the gate with success, having analysed nothing.
 * Such a configuration is a usage error (exit 2). Both are restored afterwards, whatever happened.
 */
function withoutExit<T>(path: string, load: () => T): T {
  const exit = process.exit;
  const reallyExit = (process as unknown as { reallyExit: (code?: number) => never }).reallyExit;
  const refuse = (code?: unknown): never => {
    throw new UsageError(
      `${path}: the configuration called process.exit(${code === undefined ? '' : String(code)}) while it was loaded; a configuration must only export its settings, and nothing was analysed`,
      {
        code: 'LHCI_CONFIG_EXITS',
        hint: 'remove the process.exit call from the configuration file',
      },
    );
  };
  process.exit = refuse as typeof process.exit;
  (process as unknown as { reallyExit: unknown }).reallyExit = refuse;
  try {
    return load();
  } finally {
    process.exit = exit;
    (process as unknown as { reallyExit: unknown }).reallyExit = reallyExit;
  }
}

/** `line:column` of a JSON.parse error (V8 gives the position; the end of the text when it ran out). */
function jsonErrorPosition(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const position = /at position (\d+)/.exec(message);
  const offset = position ? Number(position[1]) : text.length;
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${before.at(-1)!.length + 1}`;
}

/** The parser's reason without the text it quotes (a configuration may hold a token). */
function jsonErrorReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (
    message
      .replace(/,? ?"[^"]*" is not valid JSON$/, '')
      .replace(/ in JSON at position \d+.*$/, '')
      .replace(/^Unexpected token '?(.)'?.*$/, "unexpected '$1'") || 'unexpected end'
  );
}

/** The decoded configuration (what `lighthouserc.json` holds) into a gate; `file` names it in messages. */
export function lhciToGate(raw: unknown, file: string): LhciGateConfig {
  const warnings: string[] = [];
  const unknownKeys = (object: Record<string, unknown>, known: readonly string[], where: string) => {
    for (const key of Object.keys(object)) if (!known.includes(key)) warnings.push(`${file}: ${where}${key} is not a Lighthouse CI key gantry knows (ignored)`);
  };
  if (!isObject(raw)) throw new UsageError(`${file}: the configuration must be an object with a "ci" key`);
  unknownKeys(raw, ['ci', 'lhci'], '');
  const ci = { ...(isObject(raw.lhci) ? raw.lhci : {}), ...(isObject(raw.ci) ? raw.ci : {}) };
  if (!isObject(raw.ci) && !isObject(raw.lhci))
    throw new UsageError(`${file}: no "ci" object`, { hint: 'Lighthouse CI reads {"ci": {"collect": {...}, "assert": {...}}}' });
  if ('extends' in ci) throw new UsageError(`${file}: ci.extends is not supported`, { hint: 'copy the assertions of the extended file into this one' });
  for (const key of ['upload', 'server', 'wizard']) if (key in ci) warnings.push(`${file}: ci.${key} is for lhci ${key}; gantry gate ignores it`);
  unknownKeys(ci, ['collect', 'assert', 'upload', 'server', 'wizard'], 'ci.');

  const collect = ci.collect === undefined ? {} : ci.collect;
  if (!isObject(collect)) throw new UsageError(`${file}: ci.collect must be an object`);
  for (const key of Object.keys(collect)) if (IGNORED_COLLECT.has(key)) warnings.push(`${file}: ci.collect.${key} is not used by gantry gate (ignored)`);
  unknownKeys(collect, ['url', 'numberOfRuns', 'settings', ...IGNORED_COLLECT], 'ci.collect.');
  const urls = collect.url === undefined ? [] : Array.isArray(collect.url) ? collect.url : [collect.url];
  if (!urls.every((url): url is string => typeof url === 'string')) throw new UsageError(`${file}: ci.collect.url must be a URL or a list of URLs`);
  let runs: number | undefined;
  if (collect.numberOfRuns !== undefined) {
    runs = collect.numberOfRuns as number;
    if (!Number.isInteger(runs) || runs < 1 || runs > MAX_RUNS)
      throw new UsageError(`${file}: ci.collect.numberOfRuns must be a whole number from 1 to ${MAX_RUNS}, not ${JSON.stringify(collect.numberOfRuns)}`);
  }
  const settings = collect.settings === undefined ? {} : collect.settings;
  if (!isObject(settings)) throw new UsageError(`${file}: ci.collect.settings must be an object`);
  let strategy: 'DESKTOP' | 'MOBILE' = 'MOBILE';
  if (settings.preset !== undefined) {
    if (settings.preset === 'desktop') strategy = 'DESKTOP';
    else if (settings.preset === 'perf' || settings.preset === 'experimental')
      warnings.push(`${file}: ci.collect.settings.preset "${settings.preset}" is not used by gantry gate (mobile, all categories asked for)`);
    else throw new UsageError(`${file}: ci.collect.settings.preset must be desktop, perf or experimental, not ${JSON.stringify(settings.preset)}`);
  }
  if (settings.formFactor !== undefined) {
    if (settings.formFactor !== 'desktop' && settings.formFactor !== 'mobile')
      throw new UsageError(`${file}: ci.collect.settings.formFactor must be desktop or mobile`);
    strategy = settings.formFactor === 'desktop' ? 'DESKTOP' : 'MOBILE';
  }
  let onlyCategories: CategoryId[] | undefined;
  if (settings.onlyCategories !== undefined) {
    if (!Array.isArray(settings.onlyCategories)) throw new UsageError(`${file}: ci.collect.settings.onlyCategories must be a list of categories`);
    onlyCategories = settings.onlyCategories.map((id) => parseCategory(String(id), `${file}: ci.collect.settings.onlyCategories`));
  }
  for (const key of Object.keys(settings)) {
    if (!['preset', 'formFactor', 'onlyCategories'].includes(key)) warnings.push(`${file}: ci.collect.settings.${key} is not used by gantry gate (ignored)`);
  }

  const assert = ci.assert === undefined ? {} : ci.assert;
  if (!isObject(assert)) throw new UsageError(`${file}: ci.assert must be an object`);
  for (const key of ['assertMatrix', 'budgetsFile']) {
    if (key in assert)
      throw new UsageError(`${file}: ci.assert.${key} is not supported`, { hint: 'write the assertions in ci.assert.assertions (one gate per set of URLs)' });
  }
  if ('includePassedAssertions' in assert) warnings.push(`${file}: ci.assert.includePassedAssertions is not needed: gantry shows every check`);
  unknownKeys(assert, ['preset', 'assertions', 'aggregationMethod', 'includePassedAssertions', 'assertMatrix', 'budgetsFile'], 'ci.assert.');
  const topAggregation = assert.aggregationMethod === undefined ? undefined : aggregationOf(assert.aggregationMethod, `${file}: ci.assert.aggregationMethod`);
  if (assert.preset !== undefined && !(LHCI_PRESETS as readonly unknown[]).includes(assert.preset)) {
    throw new UsageError(`${file}: ci.assert.preset ${JSON.stringify(assert.preset)} is not a Lighthouse CI preset`, {
      hint: `the presets are ${LHCI_PRESETS.join(', ')}`,
    });
  }
  const preset = typeof assert.preset === 'string' ? presetAssertions(assert.preset) : {};
  const own = assert.assertions === undefined ? {} : assert.assertions;
  if (!isObject(own)) throw new UsageError(`${file}: ci.assert.assertions must be an object`);

  // The file's own assertions over the preset's (options merged, as Lighthouse CI merges them); dots in keys read as colons.
  const merged: Record<string, Assertion> = { ...preset };
  const written = new Set<string>();
  for (const [rawKey, value] of Object.entries(own)) {
    const key = rawKey.replaceAll('.', ':').toLowerCase();
    written.add(key);
    const base = merged[key];
    merged[key] =
      Array.isArray(value) && Array.isArray(base) ? [String(value[0]), { ...base[1], ...(isObject(value[1]) ? value[1] : {}) }] : (value as Assertion);
  }

  const thresholds: Threshold[] = [];
  for (const [key, value] of Object.entries(merged)) {
    const where = `${file}: assertions["${key}"]`;
    const [level, options] = typeof value === 'string' ? [value, {}] : Array.isArray(value) ? [value[0], value[1] ?? {}] : [undefined, undefined];
    if (level !== 'off' && level !== 'warn' && level !== 'error')
      throw new UsageError(`${where}: the level must be off, warn or error, not ${JSON.stringify(level ?? value)}`, {
        hint: 'write "error", "warn", "off" or ["error", {"minScore": 0.9}]',
      });
    if (level === 'off') continue;
    if (!isObject(options)) throw new UsageError(`${where}: the options must be an object such as {"minScore": 0.9}`);
    const [prefix, ...rest] = key.split(':');
    if (prefix !== 'categories' && (rest.length > 0 || prefix === 'performance-budget')) {
      throw new UsageError(`${where}: ${prefix} assertions are not supported by gantry gate`, {
        hint: 'set it "off", or write a limit on an audit: total-byte-weight with maxNumericValue',
      });
    }
    const isCategory = prefix === 'categories';
    const audit = isCategory ? undefined : key;
    if (audit !== undefined) {
      // An assertion the preset brought for a category left out by onlyCategories is dropped, not failed.
      if (!written.has(key) && onlyCategories && !auditCategories(audit).some((c) => onlyCategories.includes(c))) continue;
      checkAuditId(audit, where);
      if (onlyCategories && !auditCategories(audit).some((c) => onlyCategories.includes(c))) {
        throw new UsageError(`${where}: the audit ${audit} is in ${auditCategories(audit).join(' and ')}, which ci.collect.settings.onlyCategories leaves out`);
      }
    }
    const category = isCategory ? parseCategory(rest.join(':'), where) : undefined;
    if (category && onlyCategories && !onlyCategories.includes(category))
      throw new UsageError(`${where}: ci.collect.settings.onlyCategories leaves out ${category}`);
    for (const option of Object.keys(options)) {
      if (!['minScore', 'maxNumericValue', 'maxLength', 'aggregationMethod'].includes(option))
        warnings.push(`${where}: ${option} is not an assertion option gantry knows (ignored)`);
    }
    const common = {
      level: level as ThresholdLevel,
      aggregation:
        options.aggregationMethod === undefined
          ? (topAggregation ?? DEFAULT_AGGREGATION)
          : aggregationOf(options.aggregationMethod, `${where}.aggregationMethod`),
    };
    const minScore =
      options.minScore === undefined && options.maxNumericValue === undefined && options.maxLength === undefined ? DEFAULT_MIN_SCORE : options.minScore;
    if (minScore !== undefined) {
      if (typeof minScore !== 'number' || !(minScore >= 0 && minScore <= 1))
        throw new UsageError(`${where}: minScore is a score from 0 to 1, not ${JSON.stringify(minScore)}`);
      thresholds.push(
        category
          ? { kind: 'category', category, min: minScore, ...common }
          : { kind: 'audit', audit: audit!, property: 'score', operator: '>=', value: minScore, ...common },
      );
    }
    for (const [option, property] of [
      ['maxNumericValue', 'numericValue'],
      ['maxLength', 'length'],
    ] as const) {
      const limit = options[option];
      if (limit === undefined) continue;
      if (category) throw new UsageError(`${where}: a category has a score only; use minScore`);
      if (typeof limit !== 'number' || !Number.isFinite(limit) || (property === 'length' && !(Number.isInteger(limit) && limit >= 0))) {
        throw new UsageError(`${where}: ${option} must be a ${property === 'length' ? 'whole number >= 0' : 'number'}, not ${JSON.stringify(limit)}`);
      }
      thresholds.push({ kind: 'audit', audit: audit!, property, operator: '<=', value: limit, ...common });
    }
  }
  return { file, urls, ...(runs === undefined ? {} : { runs }), strategy, ...(onlyCategories ? { onlyCategories } : {}), thresholds, warnings };
}

function aggregationOf(value: unknown, where: string): AggregationMethod {
  if (typeof value === 'string' && (AGGREGATION_METHODS as readonly string[]).includes(value)) return value as AggregationMethod;
  throw new UsageError(`${where}: ${JSON.stringify(value)} is not an aggregation method`, { hint: `use one of ${AGGREGATION_METHODS.join(', ')}` });
}
