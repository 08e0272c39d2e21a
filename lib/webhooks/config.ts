/**
 * `gantry.hooks.json`: which page each protected environment's gate analyses and what it must reach — the
 * vocabulary of `gantry gate` (`min` category scores, `audits` maxima, `runs`, `engine`, `strategy`). Checked whole
 * when the receiver starts: every error names the key (`environments.production.min.performance`), never later in
 * the middle of a deployment.
 */
import { checkAuditId, checkGateOptions, normalizeMinScore, parseCategory, type EngineName, type FormFactor, type Threshold } from '../analysis/index.js';
import { UsageError } from '../errors.js';
import { describeJsonSyntaxProblem, parseEditedJson } from '../json-syntax.js';
import { readLocalText } from '../local-paths.js';
import type { WebhookErrorCode } from './errors.js';

export interface EnvironmentGate {
  urls: string[];
  thresholds: Threshold[];
  runs: number;
  engine: EngineName | undefined;
  strategy: FormFactor | undefined;
  /** The gate is rejected as failed when it runs longer; default 10 minutes. */
  timeoutMs: number;
}

export interface HooksConfig {
  /** By environment name as the platform sends it (compared exactly, then case-insensitively). */
  environments: Map<string, EnvironmentGate>;
  /** Gate a successful `deployment_status`'s `environment_url` and post a commit status; off unless configured. */
  deploymentStatus: { gate: boolean; context: string };
  /** Where it came from, for messages. */
  source: string;
}

const DEFAULT_TIMEOUT_S = 600;
const ENVIRONMENT_KEYS = ['urls', 'min', 'audits', 'runs', 'engine', 'strategy', 'timeoutSeconds'];

function fail(source: string, key: string, problem: string, hint?: string): never {
  throw new UsageError(`${source}: ${key} ${problem}`, { code: 'WEBHOOK_CONFIG' satisfies WebhookErrorCode, ...(hint ? { hint } : {}) });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownKeys(source: string, where: string, value: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) fail(source, `${where}${where ? '.' : ''}${key}`, 'is not a setting here', `the settings are ${allowed.join(', ')}`);
  }
}

function environmentGate(source: string, name: string, value: unknown): EnvironmentGate {
  const where = `environments.${name}`;
  if (!isObject(value)) fail(source, where, 'must be an object', 'e.g. {"urls": ["https://staging.example/"], "min": {"performance": 0.9}}');
  unknownKeys(source, where, value, ENVIRONMENT_KEYS);
  const urls = value.urls;
  if (!Array.isArray(urls) || urls.length === 0 || urls.some((u) => typeof u !== 'string'))
    fail(source, `${where}.urls`, 'must be a list of one or more page URLs');
  for (const [index, url] of (urls as string[]).entries()) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) fail(source, `${where}.urls[${index}]`, 'is not an http(s) URL');
  }
  const thresholds: Threshold[] = [];
  if (value.min !== undefined) {
    if (!isObject(value.min)) fail(source, `${where}.min`, 'must be an object of category minimum scores', 'e.g. {"performance": 0.9, "accessibility": 0.9}');
    for (const [category, min] of Object.entries(value.min)) {
      const key = `${where}.min.${category}`;
      if (typeof min !== 'number') fail(source, key, 'must be a number (0.9 or 90)');
      thresholds.push({
        kind: 'category',
        category: parseCategory(category, `${source}: ${key}`),
        min: normalizeMinScore(min, `${source}: ${key}`, (score) => `"${category}": ${score}`),
      });
    }
  }
  if (value.audits !== undefined) {
    if (!isObject(value.audits))
      fail(source, `${where}.audits`, 'must be an object of audit maxima', 'e.g. {"largest-contentful-paint": 2500} (milliseconds for timings)');
    for (const [audit, max] of Object.entries(value.audits)) {
      const key = `${where}.audits.${audit}`;
      checkAuditId(audit, `${source}: ${key}`);
      if (typeof max !== 'number' || !Number.isFinite(max) || max < 0) fail(source, key, 'must be a number ≥ 0 (the most the audit may measure)');
      thresholds.push({ kind: 'audit', audit, operator: '<=', value: max });
    }
  }
  const runs = value.runs ?? 3;
  if (typeof runs !== 'number') fail(source, `${where}.runs`, 'must be a whole number');
  try {
    checkGateOptions({ urls: urls as string[], runs });
  } catch (error) {
    fail(source, `${where}.runs`, `is not allowed: ${error instanceof Error ? error.message : String(error)}`);
  }
  const engine = value.engine;
  if (engine !== undefined && engine !== 'local' && engine !== 'api')
    fail(source, `${where}.engine`, 'must be "local" (Lighthouse here) or "api" (the page analysis API)');
  const strategy = value.strategy;
  if (strategy !== undefined && strategy !== 'mobile' && strategy !== 'desktop') fail(source, `${where}.strategy`, 'must be "mobile" or "desktop"');
  const timeout = value.timeoutSeconds ?? DEFAULT_TIMEOUT_S;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 10 || timeout > 3_600)
    fail(source, `${where}.timeoutSeconds`, 'must be a whole number of seconds from 10 to 3600');
  return {
    urls: urls as string[],
    thresholds,
    runs,
    engine: engine as EngineName | undefined,
    strategy: strategy === undefined ? undefined : (strategy.toUpperCase() as FormFactor),
    timeoutMs: timeout * 1000,
  };
}

/** Checks a parsed configuration; `source` names it in messages. */
export function parseHooksConfig(value: unknown, source = 'gantry.hooks.json'): HooksConfig {
  if (!isObject(value)) fail(source, 'the file', 'must hold a JSON object', 'e.g. {"environments": {"production": {"urls": ["https://example.com/"]}}}');
  unknownKeys(source, '', value, ['environments', 'deploymentStatus', '$schema']);
  const environments = new Map<string, EnvironmentGate>();
  if (value.environments !== undefined) {
    if (!isObject(value.environments)) fail(source, 'environments', 'must be an object keyed by environment name');
    for (const [name, gate] of Object.entries(value.environments)) environments.set(name, environmentGate(source, name, gate));
  }
  let deploymentStatus = { gate: false, context: 'gantry/gate' };
  if (value.deploymentStatus !== undefined) {
    const ds = value.deploymentStatus;
    if (!isObject(ds)) fail(source, 'deploymentStatus', 'must be an object: {"gate": true, "context": "gantry/gate"}');
    unknownKeys(source, 'deploymentStatus', ds, ['gate', 'context']);
    if (ds.gate !== undefined && typeof ds.gate !== 'boolean') fail(source, 'deploymentStatus.gate', 'must be true or false');
    if (ds.context !== undefined && (typeof ds.context !== 'string' || ds.context.trim() === ''))
      fail(source, 'deploymentStatus.context', 'must be a non-empty label such as "gantry/gate"');
    deploymentStatus = { gate: ds.gate === true, context: (ds.context as string | undefined) ?? 'gantry/gate' };
  }
  return { environments, deploymentStatus, source };
}

/** Reads and checks `gantry.hooks.json` (or the file given); a usage error naming the file and the key otherwise. */
export async function loadHooksConfig(file: string): Promise<HooksConfig> {
  const text = await readLocalText(file, { what: 'the hooks configuration', hint: 'give a JSON file such as gantry.hooks.json (docs/webhooks.md shows one)' });
  const value = parseEditedJson(text, {
    invalid: () => new UsageError(`${file} is not JSON: ${describeJsonSyntaxProblem(text)}`, { code: 'WEBHOOK_CONFIG' satisfies WebhookErrorCode }),
    duplicate: (duplicate) =>
      new UsageError(
        `${file}: line ${duplicate.line}: the key ${JSON.stringify(duplicate.key)} is given twice in one object (first on line ${duplicate.firstLine})`,
        { code: 'WEBHOOK_CONFIG' satisfies WebhookErrorCode, hint: 'JSON keeps only the last silently; give each key once' },
      ),
  });
  return parseHooksConfig(value, file);
}

/** The environment's gate: exact name first, then ignoring case (the platform keeps the case it was created with). */
export function gateFor(config: HooksConfig, environment: string): EnvironmentGate | undefined {
  const exact = config.environments.get(environment);
  if (exact) return exact;
  const lower = environment.toLowerCase();
  for (const [name, gate] of config.environments) if (name.toLowerCase() === lower) return gate;
  return undefined;
}
