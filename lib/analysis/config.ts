/**
 * Choosing an engine from flags and the environment: `api` when a base URL is known (`PAGEANALYSIS_BASE_URL`),
 * otherwise `local`. Credentials come from `PAGEANALYSIS_API_KEY` or `PAGEANALYSIS_TOKEN` at run time.
 */
import { expectOptions } from '../arguments.js';
import { UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import type { AnalysisEngine, EngineName } from './engine.js';
import { createLocalEngine } from './local.js';
import { createRemoteEngine } from './remote.js';
import type { RetryPolicy } from '../http/index.js';
import { optionKeys, refuseUnknownOptions, settingsReader, type SettingSpec } from '../settings.js';

export interface EngineChoice {
  engine?: EngineName;
  baseUrl?: string;
  apiKey?: string;
  oauthToken?: string;
  chromePath?: string;
  retry?: RetryPolicy;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
}

/** Where the API settings are read besides the options (lib/settings.ts: options, environment, Pulumi config). */
export const analysisSettings = {
  baseUrl: { env: 'PAGEANALYSIS_BASE_URL', pulumi: 'gantry:pageanalysisBaseUrl' },
  apiKey: { env: 'PAGEANALYSIS_API_KEY', pulumi: 'gantry:pageanalysisApiKey' },
  oauthToken: { env: 'PAGEANALYSIS_TOKEN' },
} as const satisfies Record<string, SettingSpec>;

const engineChoiceKeys = optionKeys<EngineChoice>({
  engine: true,
  baseUrl: true,
  apiKey: true,
  oauthToken: true,
  chromePath: true,
  retry: true,
  logger: true,
  env: true,
});

export function parseEngineName(text: string): EngineName {
  const token = text.trim().toLowerCase();
  if (token === 'local' || token === 'api') return token;
  throw new UsageError(`unknown engine "${text}"`, { hint: 'use --engine local (Lighthouse here) or --engine api (the page analysis API)' });
}

export function createEngine(choice: EngineChoice = {}): AnalysisEngine {
  expectOptions('createEngine', choice, 'choice');
  refuseUnknownOptions('createEngine', choice, engineChoiceKeys, 'choice');
  const settings = settingsReader(analysisSettings, { env: choice.env ?? process.env });
  const baseUrl = settings.pick('baseUrl', choice.baseUrl)?.value as string | undefined;
  const engine = choice.engine ?? (baseUrl ? 'api' : 'local');
  if (engine === 'local') return createLocalEngine(choice.chromePath ? { chromePath: choice.chromePath } : {});
  if (!baseUrl) {
    throw new UsageError('the api engine needs the page analysis base URL', { hint: 'set PAGEANALYSIS_BASE_URL, or use --engine local' });
  }
  const apiKey = settings.pick('apiKey', choice.apiKey)?.value as string | undefined;
  const oauthToken = settings.pick('oauthToken', choice.oauthToken)?.value as string | undefined;
  return createRemoteEngine({
    baseUrl,
    ...(apiKey ? { apiKey } : {}),
    ...(oauthToken ? { oauthToken } : {}),
    ...(choice.retry ? { retry: choice.retry } : {}),
    ...(choice.logger ? { logger: choice.logger } : {}),
  });
}
