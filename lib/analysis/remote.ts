/**
 * The remote engine: the page analysis API v5 (`GET {base}/pageanalysis/v5/runPageanalysis`, PAG-EP-RUN) through the
 * one HTTP core. Authenticates with an API key (`key=`, masked in every log line and error) or an OAuth bearer token
 * with scope `openid` (PAG-AUTH-SCOPE-OPENID). Retries 429 and 5xx with backoff; real analyses take 10–60 s, so the
 * response timeout is generous.
 */
import { expectObject } from '../arguments.js';
import { UsageError } from '../errors.js';
import {
  createHttpClient,
  definePolicy,
  HttpError,
  redactUrl,
  registerSecret,
  ServiceError,
  httpHints,
  type HintTable,
  type HttpClient,
  type RetryPolicy,
  waitLimits,
} from '../http/index.js';
import { parseServiceUrl } from '../service-url.js';
import { optionKeys, refuseUnknownOptions } from '../settings.js';
import type { Logger } from '../log.js';
import { idToCategory, type Category, type Strategy } from './enums.js';
import type { AnalysisEngine, AnalysisRequest, AnalysisRun } from './engine.js';
import { parsePageanalysisResponse, type PageanalysisApiResponse } from './model.js';

export const RUN_PATH = 'pageanalysis/v5/runPageanalysis';

/** Retries for the analysis API: rate limits and server failures, with room for a slow service. */
export const pageanalysisRetryPolicy: RetryPolicy = definePolicy({
  retries: 4,
  statuses: [429, 500, 502, 503, 504],
  backoff: { initialMs: 2_000, maxMs: 30_000, factor: 2, jitter: 0.3 },
  statusBackoff: {},
  retryAfterMaxMs: 120_000,
  budgetMs: 180_000,
});

export interface RemoteEngineOptions {
  /** `PAGEANALYSIS_BASE_URL`; the API root under which `/pageanalysis/v5/...` lives. */
  baseUrl: string;
  /** `PAGEANALYSIS_API_KEY`: sent as `key=`. */
  apiKey?: string;
  /** `PAGEANALYSIS_TOKEN`: an OAuth access token with scope `openid`, sent as a bearer token. */
  oauthToken?: string;
  retry?: RetryPolicy;
  /** Per-request response timeout, ms (default 120 s). */
  timeoutMs?: number;
  logger?: Logger;
  /** Extra query parameters of the API (PAG-Q-UTM-CAMPAIGN, PAG-Q-UTM-SOURCE, PAG-Q-CAPTCHA-TOKEN). */
  utmCampaign?: string;
  utmSource?: string;
  captchaToken?: string;
}

const remoteEngineOptionKeys = optionKeys<RemoteEngineOptions>({
  baseUrl: true,
  apiKey: true,
  oauthToken: true,
  retry: true,
  timeoutMs: true,
  logger: true,
  utmCampaign: true,
  utmSource: true,
  captchaToken: true,
});

export interface RunPageanalysisParams {
  /** PAG-Q-URL: required. */
  url: string;
  /** PAG-Q-CATEGORY: repeated; omitted means PERFORMANCE only. */
  category?: readonly Category[];
  /** PAG-Q-STRATEGY: omitted means DESKTOP. */
  strategy?: Strategy;
  locale?: string;
  utm_campaign?: string;
  utm_source?: string;
  captchaToken?: string;
  signal?: AbortSignal;
}

interface ApiErrorBody {
  error?: { code?: unknown; message?: unknown; status?: unknown; errors?: Array<{ reason?: unknown; message?: unknown; domain?: unknown }> };
}

/** The API's advice by status, over the HTTP core's. */
const pageanalysisHints: HintTable = {
  ...httpHints,
  400: 'the API rejected the request: check the URL to analyse, the categories, the strategy and the API key',
  401: 'set PAGEANALYSIS_API_KEY, or PAGEANALYSIS_TOKEN to an OAuth access token',
  403: 'the credentials are not allowed to run analyses: an OAuth token needs the openid scope',
};

/** Every `code` the page analysis API's errors carry: `PAGEANALYSIS_<status>` for an answer, and these. */
export const pageanalysisErrorCodes = ['PAGEANALYSIS_INVALID_RESPONSE'] as const;
export type PageanalysisErrorCode = (typeof pageanalysisErrorCodes)[number] | `PAGEANALYSIS_${number}`;

/** The API said no: carries the status and the API's own error code, message and reasons. */
export class PageanalysisApiError extends ServiceError {
  declare readonly code: PageanalysisErrorCode;
  readonly apiCode: number | undefined;
  readonly reasons: string[];
  constructor(error: HttpError) {
    const body = (error.body ?? {}) as ApiErrorBody;
    const apiError = body.error && typeof body.error === 'object' ? body.error : undefined;
    const message = typeof apiError?.message === 'string' ? apiError.message : undefined;
    const reasons = (Array.isArray(apiError?.errors) ? apiError.errors : [])
      .map((e) => [e?.reason, e?.message === message ? undefined : e?.message].filter((part) => typeof part === 'string' && part !== '').join(': '))
      .filter((text) => text !== '');
    const detail = message ?? (error.rawBody ? error.rawBody.slice(0, 300) : 'no error body');
    const { status, method, url, body: kept, rawBody, headers, attempts } = error;
    // The URL (already redacted) stands before the colon: a redacted query value runs to the next space.
    super(
      { status, method, url, body: kept, rawBody, headers, attempts, cause: error },
      {
        by: `page analysis API: GET ${url}`,
        said: `: ${detail}${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}`,
        errors: error.errors,
        code: `PAGEANALYSIS_${status}`,
      },
      pageanalysisHints,
    );
    this.apiCode = typeof apiError?.code === 'number' ? apiError.code : undefined;
    this.reasons = reasons;
  }
}

export interface PageanalysisClient {
  run(params: RunPageanalysisParams): Promise<PageanalysisApiResponse>;
  close(): void;
}

export function createPageanalysisClient(options: RemoteEngineOptions): PageanalysisClient {
  expectObject('createPageanalysisClient', 'options', options, 'an object with baseUrl and apiKey or token');
  refuseUnknownOptions('createPageanalysisClient', options, remoteEngineOptionKeys);
  if (!options.baseUrl) throw new UsageError('the page analysis API needs a base URL (PAGEANALYSIS_BASE_URL)');
  const base = parseServiceUrl(options.baseUrl, { name: 'the page analysis base URL', plainHttp: 'anywhere', userinfo: true, query: true });
  registerSecret(options.apiKey);
  registerSecret(options.oauthToken);
  const http: HttpClient = createHttpClient({
    baseUrl: base.toString(),
    headers: options.oauthToken ? { authorization: `Bearer ${options.oauthToken}` } : {},
    retry: options.retry ?? pageanalysisRetryPolicy,
    timeouts: { connect: 10_000, response: options.timeoutMs ?? waitLimits().timeoutMs ?? 120_000 },
    ...(options.logger ? { logger: options.logger } : {}),
  });

  return {
    async run(params) {
      if (!params.url) throw new UsageError('runPageanalysis needs a url (PAG-Q-URL)');
      const query = new URLSearchParams();
      query.set('url', params.url);
      for (const category of params.category ?? []) query.append('category', category);
      if (params.strategy) query.set('strategy', params.strategy);
      if (params.locale) query.set('locale', params.locale);
      const utmCampaign = params.utm_campaign ?? options.utmCampaign;
      const utmSource = params.utm_source ?? options.utmSource;
      const captchaToken = params.captchaToken ?? options.captchaToken;
      if (utmCampaign) query.set('utm_campaign', utmCampaign);
      if (utmSource) query.set('utm_source', utmSource);
      if (captchaToken) query.set('captchaToken', captchaToken);
      if (options.apiKey) query.set('key', options.apiKey);
      try {
        // PAG-EP-EMPTY-BODY: a GET with no body at all.
        const response = await http.request<unknown>({
          method: 'GET',
          url: RUN_PATH,
          searchParams: query,
          ...(params.signal ? { signal: params.signal } : {}),
        });
        return parsePageanalysisResponse(response.body, `the page analysis API's answer for ${redactUrl(params.url)}`);
      } catch (error) {
        if (error instanceof HttpError) throw new PageanalysisApiError(error);
        throw error;
      }
    },
    close: () => http.close(),
  };
}

export function createRemoteEngine(options: RemoteEngineOptions): AnalysisEngine {
  expectObject('createRemoteEngine', 'options', options, 'an object with baseUrl and apiKey or token');
  const client = createPageanalysisClient(options);
  return {
    name: 'api',
    async analyze(request: AnalysisRequest): Promise<AnalysisRun> {
      const response = await client.run({
        url: request.url,
        category: request.categories.map(idToCategory),
        strategy: request.strategy,
        ...(request.locale ? { locale: request.locale } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      return { response };
    },
  };
}
