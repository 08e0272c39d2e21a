/**
 * An embedded page analysis API v5 (spec doc 3 §B): `GET /pageanalysis/v5/runPageanalysis` answering
 * PageanalysisApiResponse documents. It either runs Lighthouse itself or serves recorded Lighthouse results,
 * re-stamped for the URL asked. It checks the request the way the spec describes it (GET, empty body, `url`
 * required, enum values, API key or bearer token with scope `openid`), answers errors in the API's
 * `{error: {code, message, errors[], status}}` shape, and can inject 429/500/400 faults for client tests.
 * Shares no code with lib/analysis.
 */
import http from 'node:http';
import { close, countBody, HttpFailure, listen, sendReply, type ReplyStyle } from '../kit/index.js';
import { FaultSet } from '../kit/faults.js';
import { runLighthouseCli } from './lighthouse.js';

export const RUN_PAGEANALYSIS_PATH = '/pageanalysis/v5/runPageanalysis';

const CATEGORY_VALUES = ['CATEGORY_UNSPECIFIED', 'ACCESSIBILITY', 'BEST_PRACTICES', 'PERFORMANCE', 'SEO'];
const STRATEGY_VALUES = ['STRATEGY_UNSPECIFIED', 'DESKTOP', 'MOBILE'];
const LIGHTHOUSE_CATEGORY: Record<string, string> = {
  ACCESSIBILITY: 'accessibility',
  BEST_PRACTICES: 'best-practices',
  PERFORMANCE: 'performance',
  SEO: 'seo',
};

/** What the analyser is asked: validated and defaulted. */
export interface AnalysisAsk {
  url: string;
  /** Lighthouse category ids; `performance` when none was given (PAG-Q-CATEGORY). */
  categories: string[];
  /** DESKTOP unless MOBILE was asked (PAG-Q-STRATEGY). */
  strategy: 'DESKTOP' | 'MOBILE';
  locale?: string;
}

/** Produces a Lighthouse result (LHR) for an ask. */
export type Analyser = (ask: AnalysisAsk) => Promise<Record<string, unknown>>;

export interface Fault {
  status: 400 | 429 | 500 | 503;
  /** How many requests in a row get it (default 1). */
  times?: number;
  /** Seconds, sent as Retry-After. */
  retryAfter?: number;
  message?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Array<[string, string]>;
  headers: http.IncomingHttpHeaders;
  bodyBytes: number;
  status: number;
}

export interface PageanalysisServerOptions {
  host?: string;
  port?: number;
  /** Accepted `key=` values. With neither keys nor tokens the API is open (a dev convenience). */
  apiKeys?: string[];
  /** Accepted bearer tokens and their scopes; a token needs `openid` (PAG-AUTH-SCOPE-OPENID). */
  tokens?: Record<string, string[]>;
  /** `lighthouse` runs the Lighthouse CLI per request (default); a function serves whatever it returns. */
  analyser?: 'lighthouse' | Analyser;
  faults?: Fault[];
}

export interface PageanalysisServer {
  name: string;
  url: string;
  credentials: Record<string, string>;
  requests: RecordedRequest[];
  injectFault(fault: Fault): void;
  stop(): Promise<void>;
}

/** A failure the API answers as `{error: {code, message, errors: [{message, domain, reason, location?}], status}}`. */
class ApiFailure extends HttpFailure {
  readonly statusText: string;

  constructor(
    status: number,
    message: string,
    readonly reason: string,
    readonly location?: string,
    headers?: Record<string, string>,
  ) {
    super(status, message, headers);
    this.statusText = STATUS_TEXT[status] ?? 'UNKNOWN';
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function failure(status: number, message: string, reason: string, location?: string): ApiFailure {
  return new ApiFailure(status, message, reason, location);
}

const STYLE: ReplyStyle = { json: 'application/json; charset=UTF-8' };

function sendFailure(res: http.ServerResponse, f: ApiFailure): void {
  const body = {
    error: {
      code: f.status,
      message: f.message,
      errors: [{ message: f.message, domain: 'global', reason: f.reason, ...(f.location ? { location: f.location, locationType: 'parameter' } : {}) }],
      status: f.statusText,
    },
  };
  sendReply(res, { status: f.status, body, headers: f.headers }, STYLE);
}

const FAULT_REASONS: Record<number, string> = { 400: 'badRequest', 429: 'rateLimitExceeded', 500: 'backendError', 503: 'backendError' };
const FAULT_MESSAGES: Record<number, string> = {
  400: 'Invalid request (injected fault).',
  429: "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'.",
  500: 'Internal error encountered.',
  503: 'The service is currently unavailable.',
};

function parseAsk(query: URLSearchParams): AnalysisAsk | ApiFailure {
  const url = query.get('url');
  if (!url) return failure(400, 'Required parameter: url', 'required', 'url');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return failure(400, `Invalid value at 'url' (${url}): not an absolute URL`, 'invalid', 'url');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return failure(400, `Invalid value at 'url' (${url}): only http and https URLs can be analysed`, 'invalid', 'url');
  const categories: string[] = [];
  for (const value of query.getAll('category')) {
    if (!CATEGORY_VALUES.includes(value)) return failure(400, `Invalid value at 'category' (${value})`, 'invalid', 'category');
    const id = LIGHTHOUSE_CATEGORY[value];
    if (id && !categories.includes(id)) categories.push(id);
  }
  const strategyValue = query.get('strategy') ?? 'DESKTOP';
  if (!STRATEGY_VALUES.includes(strategyValue)) return failure(400, `Invalid value at 'strategy' (${strategyValue})`, 'invalid', 'strategy');
  const locale = query.get('locale') ?? undefined;
  return {
    url,
    categories: categories.length > 0 ? categories : ['performance'],
    strategy: strategyValue === 'MOBILE' ? 'MOBILE' : 'DESKTOP',
    ...(locale ? { locale } : {}),
  };
}

/** LHR → v5 response: the engine's own fields under `beaconResult`, its version as `beaconVersion`. */
function toV5(lhr: Record<string, unknown>, ask: AnalysisAsk): Record<string, unknown> {
  const { lighthouseVersion, runtimeError, ...rest } = lhr as Record<string, unknown> & {
    lighthouseVersion?: string;
    runtimeError?: { code?: string; message?: string };
  };
  const finalUrl = (lhr.finalDisplayedUrl as string | undefined) ?? (lhr.finalUrl as string | undefined) ?? ask.url;
  const version = String(lighthouseVersion ?? '0.0').split('.');
  return {
    kind: 'pageanalysis#result',
    id: finalUrl,
    analysisUTCTimestamp: (lhr.fetchTime as string | undefined) ?? new Date().toISOString(),
    beaconResult: {
      ...rest,
      requestedUrl: ask.url,
      finalUrl,
      beaconVersion: lighthouseVersion,
      runWarnings: Array.isArray(lhr.runWarnings) ? lhr.runWarnings : [],
      ...(runtimeError ? { runtimeError: { code: runtimeError.code, message: runtimeError.message } } : {}),
    },
    version: { major: version[0], minor: version[1] ?? '0' },
  };
}

/**
 * A recorded LHR served for any URL: re-stamped with the asked URL and the current time, and cut down to the
 * asked categories, as a fresh run would be.
 */
export function recordedAnalyser(lhrFor: (ask: AnalysisAsk) => Record<string, unknown>): Analyser {
  return async (ask) => {
    const lhr = structuredClone(lhrFor(ask)) as Record<string, unknown> & { categories?: Record<string, unknown>; configSettings?: Record<string, unknown> };
    const categories = Object.fromEntries(Object.entries(lhr.categories ?? {}).filter(([id]) => ask.categories.includes(id)));
    return {
      ...lhr,
      requestedUrl: ask.url,
      finalUrl: ask.url,
      finalDisplayedUrl: ask.url,
      mainDocumentUrl: ask.url,
      fetchTime: new Date().toISOString(),
      categories,
      configSettings: { ...lhr.configSettings, onlyCategories: ask.categories, formFactor: ask.strategy.toLowerCase() },
    };
  };
}

function authorize(req: http.IncomingMessage, query: URLSearchParams, options: PageanalysisServerOptions): ApiFailure | undefined {
  const keys = options.apiKeys ?? [];
  const tokens = options.tokens ?? {};
  if (keys.length === 0 && Object.keys(tokens).length === 0) return undefined;
  const key = query.get('key');
  if (key !== null) return keys.includes(key) ? undefined : failure(400, 'API key not valid. Please pass a valid API key.', 'badRequest');
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) return failure(401, 'Request is missing required authentication credential. Expected OAuth 2 access token or API key.', 'required');
  const scopes = tokens[match[1]];
  if (!scopes) return failure(401, 'Request had invalid authentication credentials.', 'authError');
  if (!scopes.includes('openid')) return failure(403, 'Request had insufficient authentication scopes: openid is required.', 'insufficientPermissions');
  return undefined;
}

export async function startPageanalysisServer(options: PageanalysisServerOptions = {}): Promise<PageanalysisServer> {
  // Faults answer a request that got past the path, method and body checks, one each, first armed first.
  const faults = new FaultSet();
  const injectFault = (fault: Fault) =>
    faults.add([
      {
        kind: 'status',
        status: fault.status,
        times: Math.max(1, fault.times ?? 1),
        ...(fault.retryAfter !== undefined ? { retryAfter: fault.retryAfter } : {}),
        ...(fault.message !== undefined ? { message: fault.message } : {}),
      },
    ]);
  for (const fault of options.faults ?? []) injectFault(fault);
  const requests: RecordedRequest[] = [];
  const analyser: Analyser =
    typeof options.analyser === 'function'
      ? options.analyser
      : (ask) =>
          runLighthouseCli({ url: ask.url, categories: ask.categories, desktop: ask.strategy === 'DESKTOP', ...(ask.locale ? { locale: ask.locale } : {}) });
  // One analysis at a time: each one is a whole browser and a gigabyte of memory.
  let queue: Promise<unknown> = Promise.resolve();

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const target = new URL(req.url ?? '/', 'http://localhost');
    const bodyBytes = await countBody(req);
    const record: RecordedRequest = {
      method: req.method ?? '',
      path: target.pathname,
      query: [...target.searchParams],
      headers: req.headers,
      bodyBytes,
      status: 0,
    };
    requests.push(record);
    const fail = (f: ApiFailure) => {
      record.status = f.status;
      sendFailure(res, f);
    };

    if (target.pathname !== RUN_PAGEANALYSIS_PATH) return fail(failure(404, `The requested URL ${target.pathname} was not found on this server.`, 'notFound'));
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      return fail(failure(405, `Method ${req.method} is not allowed: runPageanalysis is GET only.`, 'methodNotAllowed'));
    }
    if (bodyBytes > 0) return fail(failure(400, 'The request body of runPageanalysis must be empty.', 'invalid'));
    const fault = faults.decide(req.method, target.pathname).action;
    if (fault?.kind === 'status') {
      const headers = fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : undefined;
      return fail(new ApiFailure(fault.status, fault.message ?? FAULT_MESSAGES[fault.status]!, FAULT_REASONS[fault.status]!, undefined, headers));
    }
    const denied = authorize(req, target.searchParams, options);
    if (denied) return fail(denied);
    const ask = parseAsk(target.searchParams);
    if (ask instanceof ApiFailure) return fail(ask);
    const job = queue.then(() => analyser(ask));
    queue = job.catch(() => undefined);
    try {
      const lhr = await job;
      record.status = 200;
      sendReply(res, { status: 200, body: toV5(lhr, ask) }, STYLE);
    } catch (error) {
      fail(failure(500, `Lighthouse failed: ${error instanceof Error ? error.message : String(error)}`, 'backendError'));
    }
  };
  const server = http.createServer((req, res) => void handle(req, res).catch(() => res.destroy()));

  const { origin } = await listen(server, options.host ?? '127.0.0.1', options.port ?? 0);
  const credentials: Record<string, string> = {};
  if (options.apiKeys?.[0]) credentials.PAGEANALYSIS_API_KEY = options.apiKeys[0];
  return {
    name: 'pageanalysis',
    url: origin,
    credentials,
    requests,
    injectFault,
    stop: () => close(server),
  };
}
