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

export function parseEngineName(text: string): EngineName {
  const token = text.trim().toLowerCase();
  if (token === 'local' || token === 'api') return token;
  throw new UsageError(`unknown engine "${text}"`, { hint: 'use --engine local (Lighthouse here) or --engine api (the page analysis API)' });
}

export function createEngine(choice: EngineChoice = {}): AnalysisEngine {
  expectOptions('createEngine', choice, 'choice');
  const env = choice.env ?? process.env;
  const baseUrl = choice.baseUrl ?? env.PAGEANALYSIS_BASE_URL;
  const engine = choice.engine ?? (baseUrl ? 'api' : 'local');
  if (engine === 'local') return createLocalEngine(choice.chromePath ? { chromePath: choice.chromePath } : {});
  if (!baseUrl) {
    throw new UsageError('the api engine needs the page analysis base URL', { hint: 'set PAGEANALYSIS_BASE_URL, or use --engine local' });
  }
  const apiKey = choice.apiKey ?? env.PAGEANALYSIS_API_KEY;
  const oauthToken = choice.oauthToken ?? env.PAGEANALYSIS_TOKEN;
  return createRemoteEngine({
    baseUrl,
    ...(apiKey ? { apiKey } : {}),
    ...(oauthToken ? { oauthToken } : {}),
    ...(choice.retry ? { retry: choice.retry } : {}),
    ...(choice.logger ? { logger: choice.logger } : {}),
  });
}
