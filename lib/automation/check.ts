import { terminalText } from '../terminal-text.js';
import { expectArray, expectObject } from '../arguments.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import { createHttpClient, noRetry, redactUrl } from '../http/index.js';
import { getLogger, type Logger } from '../log.js';
import type { Session } from './client.js';
import { startChromeDriver, type ChromeDriver, type ChromeDriverOptions } from './driver.js';
import { isWebDriverError } from './errors.js';

export type TitleMatch = 'contains' | 'equals';
/** An exact status, `2xx` (any success, the default) or `any` (not checked, only reported). */
export type ExpectedStatus = number | '2xx' | 'any';
/** Where the page's HTTP status comes from: the browser's own navigation (Navigation Timing), or a separate GET. */
export type StatusSource = 'browser' | 'http';

export interface BrowserCheckOptions {
  /** An absolute http(s) URL. */
  url: string;
  /** Text the page title must contain (or equal, with `titleMatch: 'equals'`). */
  title?: string;
  titleMatch?: TitleMatch;
  status?: ExpectedStatus;
  /** `browser` (default) reads the status of the navigation itself; `http` asks again through the HTTP core. */
  statusSource?: StatusSource;
  /** How long the page may take to load, in ms (default 30 s). */
  pageLoadTimeoutMs?: number;
  /** How long to wait for a title set by script after the load, in ms (default 2 s). */
  titleWaitMs?: number;
  /** A running driver to use; without one, a driver is started for this check and stopped afterwards. */
  driver?: ChromeDriver;
  /**
   * A session to run in (several checks in one browser, e.g. the pages of one site, as `gantry demo` checks its own); it
   * is left open, cookies and storage included.
   * Without one, each check gets a fresh session and profile, deleted afterwards.
   */
  session?: Session;
  driverOptions?: ChromeDriverOptions;
  logger?: Logger;
}

export interface BrowserCheckItem {
  name: 'load' | 'title' | 'status';
  expected: string;
  actual: string | null;
  passed: boolean;
}

export interface BrowserCheckResult {
  /** The URL asked for, credentials redacted. */
  url: string;
  /** Where the browser ended up after redirects (redacted); null when the page did not load. */
  finalUrl: string | null;
  title: string | null;
  status: number | null;
  statusSource: StatusSource | null;
  /** Why the page did not load (`ERR_CONNECTION_REFUSED`, `page load timed out after 30000 ms`). */
  loadError: string | null;
  passed: boolean;
  checks: BrowserCheckItem[];
  /** The failed checks in one sentence; empty when passed. */
  reason: string;
  browserVersion: string | null;
  checkedAt: string;
  durationMs: number;
}

export const defaultPageLoadTimeoutMs = 30_000;
export const defaultTitleWaitMs = 2_000;
/** The longest page-load timeout or title wait accepted (an hour). */
export const maxBrowserWaitMs = 3_600_000;

export interface BrowserCheckProblem {
  property: 'url' | 'title' | 'titleMatch' | 'status' | 'statusSource' | 'pageLoadTimeoutMs' | 'titleWaitMs';
  reason: string;
}

/** Every problem with the options, each naming its property (Pulumi's Check reports them all at once). */
export function browserCheckProblems(options: Partial<BrowserCheckOptions>): BrowserCheckProblem[] {
  expectObject('browserCheckProblems', 'options', options, 'an object with the url to check');
  const problems: BrowserCheckProblem[] = [];
  let parsed: URL | undefined;
  try {
    parsed = new URL(String(options.url));
  } catch {
    problems.push({
      property: 'url',
      reason: `the URL to check is not an absolute URL: ${redactUrl(String(options.url))}; give the full address, e.g. https://example.com/`,
    });
  }
  if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    problems.push({ property: 'url', reason: `the browser check only opens http and https pages, not ${parsed.protocol}` });
  }
  if (options.title !== undefined && (typeof options.title !== 'string' || options.title.length === 0)) {
    problems.push({ property: 'title', reason: 'the expected title must be a non-empty text' });
  }
  if (options.titleMatch !== undefined && options.titleMatch !== 'contains' && options.titleMatch !== 'equals') {
    problems.push({ property: 'titleMatch', reason: `the title match must be contains or equals, not ${String(options.titleMatch)}` });
  }
  const status = options.status;
  if (
    status !== undefined &&
    status !== '2xx' &&
    status !== 'any' &&
    !(typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599)
  ) {
    problems.push({ property: 'status', reason: `the expected status must be an HTTP status code (100-599), 2xx or any, not ${String(status)}` });
  }
  if (options.statusSource !== undefined && options.statusSource !== 'browser' && options.statusSource !== 'http') {
    problems.push({ property: 'statusSource', reason: `the status source must be browser or http, not ${String(options.statusSource)}` });
  }
  // A page-load timeout of 0 would fail every page as "timed out after 0 ms" (a lie about the page, exit 1), so it
  // starts at 1; the title wait may be 0 (do not wait). Both are whole milliseconds up to an hour: beyond that a
  // timer or the driver would overflow or never answer.
  for (const [property, what, min] of [
    ['pageLoadTimeoutMs', 'the page-load timeout', 1],
    ['titleWaitMs', 'the title wait', 0],
  ] as const) {
    const value = options[property];
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > maxBrowserWaitMs)) {
      problems.push({ property, reason: `${what} must be a whole number of milliseconds from ${min} to ${maxBrowserWaitMs}, not ${String(value)}` });
    }
  }
  return problems;
}

/** Validates and normalises the options at the boundary; every face (command, resource, library) goes through here. */
export function validateBrowserCheckOptions(
  options: BrowserCheckOptions,
): Required<Pick<BrowserCheckOptions, 'url' | 'titleMatch' | 'status' | 'statusSource' | 'pageLoadTimeoutMs' | 'titleWaitMs'>> & { title: string | undefined } {
  const [problem] = browserCheckProblems(options);
  if (problem) throw new UsageError(problem.reason);
  return {
    url: new URL(options.url).toString(),
    title: options.title,
    titleMatch: options.titleMatch ?? 'contains',
    status: options.status ?? '2xx',
    statusSource: options.statusSource ?? 'browser',
    pageLoadTimeoutMs: options.pageLoadTimeoutMs ?? defaultPageLoadTimeoutMs,
    titleWaitMs: options.titleWaitMs ?? defaultTitleWaitMs,
  };
}

/** The result as a plain-text table, for error messages and logs where no terminal table helper exists. */
export function renderBrowserCheck(result: BrowserCheckResult): string {
  expectObject('renderBrowserCheck', 'result', result, 'a BrowserCheckResult from runBrowserCheck');
  expectArray('renderBrowserCheck', 'result.checks', result.checks, 'an array (a BrowserCheckResult from runBrowserCheck)');
  const rows = [
    ['check', 'expected', 'actual', 'result'],
    ...result.checks.map((c) => [c.name, c.expected, c.actual ?? '-', c.passed ? 'pass' : 'FAIL'].map((cell) => terminalText(cell))),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  return [`${result.passed ? 'passed' : 'FAILED'}: ${terminalText(result.url)}`, ...lines].join('\n');
}

function titleMatches(actual: string, expected: string, match: TitleMatch): boolean {
  return match === 'equals' ? actual === expected : actual.includes(expected);
}

function statusMatches(actual: number | null, expected: ExpectedStatus): boolean {
  if (expected === 'any') return true;
  if (actual === null) return false;
  if (expected === '2xx') return actual >= 200 && actual < 300;
  return actual === expected;
}

/**
 * Reads the page state in one round trip. `responseStatus` is Navigation Timing Level 2 (Chromium 109+); 0 means
 * the browser does not know (older browsers leave it out), and then the status is asked for over HTTP.
 */
const pageStateScript = `
const state = { href: '', title: '', status: null, errorCode: null };
// Each read on its own: a page that replaced one of these objects must not turn the check into a driver failure.
try { state.href = String(location.href); } catch (e) {}
try { state.title = String(document.title); } catch (e) {}
try {
  const entry = performance.getEntriesByType('navigation')[0];
  if (entry && typeof entry.responseStatus === 'number' && entry.responseStatus > 0) state.status = entry.responseStatus;
} catch (e) {}
try {
  const code = location.protocol === 'chrome-error:' ? document.querySelector('.error-code') : null;
  if (code) state.errorCode = code.textContent.trim();
} catch (e) {}
return state;`;

interface PageState {
  href: string;
  title: string;
  status: number | null;
  errorCode: string | null;
}

async function readPageState(session: Session): Promise<PageState> {
  let value: Partial<PageState> | null = null;
  // With unhandledPromptBehavior `dismiss`, a prompt the page opens makes the command fail once and is dismissed:
  // ask again (a page that keeps opening prompts gets a few tries, then the error stands).
  for (let attempt = 1; ; attempt += 1) {
    try {
      value = (await session.executeScript(pageStateScript)) as Partial<PageState> | null;
      break;
    } catch (error) {
      if (!isWebDriverError(error, 'unexpected alert open') || attempt >= 5) throw error;
    }
  }
  return {
    href: typeof value?.href === 'string' && value.href !== '' ? value.href : await session.getCurrentUrl(),
    title: typeof value?.title === 'string' ? value.title : await session.getTitle(),
    status: typeof value?.status === 'number' ? value.status : null,
    errorCode: typeof value?.errorCode === 'string' && value.errorCode !== '' ? networkErrorName(value.errorCode) : null,
  };
}

/** `net::ERR_CERT_AUTHORITY_INVALID` (the error page's text) and `ERR_CERT_AUTHORITY_INVALID` read the same. */
function networkErrorName(text: string): string {
  return text.replace(/^net::/, '');
}

/** The status of a separate GET through the HTTP core (no retries, body not read), when the browser cannot tell. */
async function statusOverHttp(url: string, timeoutMs: number, logger: Logger): Promise<number | null> {
  const http = createHttpClient({ retry: noRetry, timeouts: { connect: Math.min(timeoutMs, 10_000), response: timeoutMs }, logger });
  try {
    const response = await http.stream({ url, accept: () => true });
    response.body.destroy();
    return response.status;
  } catch (error) {
    logger.debug(`GET ${redactUrl(url)} for its status failed: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  } finally {
    http.close();
  }
}

/**
 * WebDriver errors that are a verdict about the page (the check fails, exit 1), as opposed to a failure of the
 * driver or the browser (thrown, exit 3). `step` says when it happened: during the navigation, or in a command sent
 * to the loaded page (chromedriver waits up to the page-load timeout for a busy or still-loading renderer before each
 * command, and answers `timeout` when it does not come).
 */
export function pageVerdictOf(error: unknown, step: 'navigation' | 'page', pageLoadTimeoutMs: number): string | undefined {
  if (isWebDriverError(error, 'timeout')) {
    return step === 'navigation' || /receiving message from renderer/i.test(error.remoteMessage)
      ? `page load timed out after ${pageLoadTimeoutMs} ms`
      : `the page did not answer within the ${pageLoadTimeoutMs} ms page-load timeout`;
  }
  if (isWebDriverError(error, 'script timeout')) return 'the page stopped responding: its main thread stayed busy past the script timeout';
  if (isWebDriverError(error, 'insecure certificate')) return 'the page has a TLS certificate the browser does not trust';
  if (isWebDriverError(error, 'unknown error')) {
    const net = /net::(ERR_[A-Z0-9_]+)/.exec(error.remoteMessage);
    if (net) return net[1];
  }
  return undefined;
}

/** Runs a command on the page; a page verdict becomes `{loadError}`, anything else (the machinery) is thrown. */
async function onPage<T>(step: 'navigation' | 'page', pageLoadTimeoutMs: number, work: () => Promise<T>): Promise<{ value: T } | { loadError: string }> {
  try {
    return { value: await work() };
  } catch (error) {
    const loadError = pageVerdictOf(error, step, pageLoadTimeoutMs);
    if (loadError === undefined) throw error;
    return { loadError };
  }
}

function summarise(checks: BrowserCheckItem[]): string {
  return checks
    .filter((check) => !check.passed)
    .map((check) => `${check.name}: expected ${check.expected}, got ${check.actual ?? 'nothing'}`)
    .join('; ');
}

/**
 * Opens `url` in headless Chromium through WebDriver and checks that it loads, its title, and its HTTP status.
 * Resolves with the result whether it passed or not; throws only when the driver or browser failed (exit code 3)
 * or the options are wrong (exit code 2).
 */
export async function runBrowserCheck(options: BrowserCheckOptions): Promise<BrowserCheckResult> {
  expectObject('runBrowserCheck', 'options', options, 'an object with the url to check');
  const settings = validateBrowserCheckOptions(options);
  const logger = options.logger ?? getLogger();
  if (options.session) {
    await options.session.setTimeouts({ pageLoad: settings.pageLoadTimeoutMs });
    return checkInSession(options.session, settings, logger);
  }
  // The command timeout outlasts the page-load timeout, so a slow page is the browser's `timeout`, not a socket error.
  const driver = options.driver ?? (await startChromeDriver({ logger, commandTimeoutMs: settings.pageLoadTimeoutMs + 30_000, ...options.driverOptions }));
  try {
    return await driver.withSession((session) => checkInSession(session, settings, logger), { pageLoadTimeoutMs: settings.pageLoadTimeoutMs });
  } finally {
    if (!options.driver) await driver.stop();
  }
}

async function checkInSession(session: Session, settings: ReturnType<typeof validateBrowserCheckOptions>, logger: Logger): Promise<BrowserCheckResult> {
  const started = Date.now();
  const checkedAt = new Date(started).toISOString();
  const browserVersion = typeof session.capabilities.browserVersion === 'string' ? session.capabilities.browserVersion : null;
  const base = { url: redactUrl(settings.url), browserVersion, checkedAt };
  const expectedStatus = settings.status === 'any' ? 'any' : String(settings.status);

  const failedLoad = (loadError: string): BrowserCheckResult => {
    const checks: BrowserCheckItem[] = [{ name: 'load', expected: 'the page loads', actual: loadError, passed: false }];
    return {
      ...base,
      finalUrl: null,
      title: null,
      status: null,
      statusSource: null,
      loadError,
      passed: false,
      checks,
      reason: summarise(checks),
      durationMs: Date.now() - started,
    };
  };
  const { pageLoadTimeoutMs } = settings;

  const navigated = await onPage('navigation', pageLoadTimeoutMs, () => session.navigateTo(settings.url));
  // After a failed navigation no further command is sent: each would wait for the same page again.
  if ('loadError' in navigated) return failedLoad(navigated.loadError);
  const first = await onPage('page', pageLoadTimeoutMs, () => readPageState(session));
  if ('loadError' in first) return failedLoad(first.loadError);
  let state = first.value;
  if (state.href.startsWith('chrome-error:')) return failedLoad(state.errorCode ?? 'the browser showed an error page');

  if (settings.title !== undefined && settings.titleWaitMs > 0) {
    const deadline = Date.now() + settings.titleWaitMs;
    while (!titleMatches(state.title, settings.title, settings.titleMatch) && Date.now() < deadline) {
      await sleep(100);
      const next = await onPage('page', pageLoadTimeoutMs, () => readPageState(session));
      if ('loadError' in next) return failedLoad(next.loadError);
      state = next.value;
    }
  }

  let status = settings.statusSource === 'browser' ? state.status : null;
  let statusSource: StatusSource | null = status === null ? null : 'browser';
  if (status === null) {
    status = await statusOverHttp(state.href, settings.pageLoadTimeoutMs, logger);
    statusSource = status === null ? null : 'http';
  }

  const checks: BrowserCheckItem[] = [{ name: 'load', expected: 'the page loads', actual: 'loaded', passed: true }];
  if (settings.title !== undefined) {
    checks.push({
      name: 'title',
      expected: `${settings.titleMatch === 'equals' ? 'equals' : 'contains'} ${JSON.stringify(settings.title)}`,
      actual: JSON.stringify(state.title),
      passed: titleMatches(state.title, settings.title, settings.titleMatch),
    });
  }
  checks.push({ name: 'status', expected: expectedStatus, actual: status === null ? null : String(status), passed: statusMatches(status, settings.status) });
  const passed = checks.every((check) => check.passed);
  return {
    ...base,
    finalUrl: redactUrl(state.href),
    title: state.title,
    status,
    statusSource,
    loadError: null,
    passed,
    checks,
    reason: summarise(checks),
    durationMs: Date.now() - started,
  };
}
