/**
 * The local engine: Lighthouse from npm driving Chromium on this machine, one fresh browser and profile per run
 * (as Lighthouse CI does), its result mapped into the v5 model so that gates cannot tell the engines apart.
 */
import { ExitCode, GantryError } from '../errors.js';
import { redact, redactUrl } from '../redact.js';
import { launchBrowser, type LaunchOptions } from './chrome.js';
import type { AnalysisEngine, AnalysisRequest, AnalysisRun } from './engine.js';
import { parsePageanalysisResponse, type PageanalysisApiResponse } from './model.js';

export class LocalEngineError extends GantryError {
  constructor(message: string, cause?: unknown) {
    // Lighthouse's own error names the page, which may carry a credential: the cause kept is a redacted copy.
    super(redact(message), {
      code: 'LOCAL_ENGINE',
      exitCode: ExitCode.remote,
      hint: 'run with --verbose for the engine log; check that Chromium starts (CHROME_PATH)',
      ...(cause === undefined ? {} : { cause: redactedCopy(cause) }),
    });
  }
}

function redactedCopy(error: unknown): Error {
  const copy = new Error(redact(error instanceof Error ? error.message : String(error)));
  copy.stack = error instanceof Error && error.stack ? redact(error.stack) : copy.stack;
  return copy;
}

type Lhr = Record<string, unknown> & {
  lighthouseVersion?: string;
  finalDisplayedUrl?: string;
  finalUrl?: string;
  mainDocumentUrl?: string;
  requestedUrl?: string;
  fetchTime?: string;
  runtimeError?: { code?: string; message?: string; errorStack?: string };
  configSettings?: Record<string, unknown>;
};

/**
 * Lighthouse result → v5 response: `lighthouseVersion` becomes `beaconVersion`; `id` is the final URL;
 * `analysisUTCTimestamp` is the fetch time; there is no field data, so no `loadingExperience`. Everything else is
 * carried as it is (unknown fields are part of the model).
 */
export function lighthouseResultToResponse(lhr: Lhr): PageanalysisApiResponse {
  const { lighthouseVersion, runtimeError, ...rest } = lhr;
  const finalUrl = lhr.finalDisplayedUrl ?? lhr.finalUrl ?? lhr.mainDocumentUrl ?? lhr.requestedUrl;
  const [major, minor] = (lighthouseVersion ?? '').split('.');
  const beaconResult: Record<string, unknown> = {
    ...rest,
    finalUrl,
    beaconVersion: lighthouseVersion,
    runWarnings: Array.isArray(lhr.runWarnings) ? lhr.runWarnings : [],
  };
  // The stack trace points into our node_modules: noise for a deployment log, so only code and message travel.
  if (runtimeError) beaconResult.runtimeError = { code: runtimeError.code, message: runtimeError.message };
  const response = {
    kind: 'pageanalysis#result',
    id: finalUrl,
    analysisUTCTimestamp: lhr.fetchTime ?? new Date().toISOString(),
    beaconResult,
    ...(major ? { version: { major, minor: minor ?? '0' } } : {}),
  };
  return parsePageanalysisResponse(response, 'the Lighthouse result');
}

/** v5 beaconResult → the Lighthouse result shape its report renderer expects. */
export function responseToLighthouseResult(response: PageanalysisApiResponse): Record<string, unknown> {
  const { beaconVersion, ...rest } = response.beaconResult ?? { runWarnings: [] };
  return { ...rest, lighthouseVersion: beaconVersion };
}

export interface LocalEngineOptions extends LaunchOptions {
  /** Lighthouse's log level; `error` unless debugging. */
  logLevel?: 'silent' | 'error' | 'warn' | 'info' | 'verbose';
}

export function createLocalEngine(options: LocalEngineOptions = {}): AnalysisEngine {
  return {
    name: 'local',
    async analyze(request: AnalysisRequest): Promise<AnalysisRun> {
      // Loaded on first use: Lighthouse is large, and the command should start fast when it is not needed.
      const lighthouseModule = await import('lighthouse');
      const browser = await launchBrowser(options);
      try {
        const config = request.strategy === 'DESKTOP' ? lighthouseModule.desktopConfig : undefined;
        let runner;
        try {
          runner = await lighthouseModule.default(
            request.url,
            {
              port: browser.port,
              hostname: '127.0.0.1',
              output: 'json',
              logLevel: options.logLevel ?? 'error',
              onlyCategories: [...request.categories],
              // Lighthouse knows a fixed list of locales and falls back to English for others.
              ...(request.locale ? { locale: request.locale as never } : {}),
            },
            config,
          );
        } catch (error) {
          throw new LocalEngineError(`Lighthouse failed on ${redactUrl(request.url)}: ${error instanceof Error ? error.message : String(error)}`, error);
        }
        if (!runner) throw new LocalEngineError(`Lighthouse returned no result for ${redactUrl(request.url)}`);
        const lhr = runner.lhr as unknown as Lhr;
        const response = lighthouseResultToResponse(lhr);
        return { response, html: () => lighthouseModule.generateReport(runner.lhr, 'html') };
      } finally {
        await browser.close();
      }
    },
  };
}
