/**
 * `gantry browser check <url>…`: open each page in headless Chromium through WebDriver and check that it loads,
 * its title, and its HTTP status. Exit 0 when every check passes, 1 when one fails, 3 when the driver or browser failed.
 */
import type { Command } from 'commander';
import { CheckFailedError } from '../../../errors.js';
import type { BrowserCheckItem, BrowserCheckResult, ExpectedStatus, StatusSource, TitleMatch } from '../../../automation/index.js';
import { usage, type CliContext } from '../../context.js';

interface CheckFlags {
  title?: string;
  titleMatch: string;
  status?: string;
  statusSource: string;
  timeout: string;
  titleWait: string;
  chromePath?: string;
  chromedriverPath?: string;
}

function parseStatus(value: string | undefined): ExpectedStatus {
  if (value === undefined) return '2xx';
  const text = value.trim().toLowerCase();
  if (text === '2xx' || text === 'any') return text;
  if (!/^\d{3}$/.test(text) || Number(text) < 100 || Number(text) > 599) {
    throw usage(`--status: "${value}" is not an HTTP status code`, 'give a code such as 200 or 404, or 2xx (the default), or any');
  }
  return Number(text);
}

/**
 * A whole number of milliseconds from `min` to the library's maximum, checked before the driver starts; the hint
 * shows the flag's real default.
 */
function parseMilliseconds(value: string, flag: string, min: number, fallback: number, max: number): number {
  const hint = `write it as ${flag} ${fallback} (the default): whole milliseconds from ${min} to ${max}`;
  if (!/^\d+$/.test(value.trim())) throw usage(`${flag}: "${value}" is not a whole number of milliseconds`, hint);
  const ms = Number(value);
  if (ms < min || ms > max) throw usage(`${flag}: ${value} ms is ${ms < min ? `below ${min}` : `more than ${max} (an hour)`}`, hint);
  return ms;
}

interface Row {
  url: string;
  check: BrowserCheckItem;
}

export function register(program: Command, context: CliContext): void {
  const browser = program.command('browser').description('check pages in headless Chromium through WebDriver (chromedriver)');
  browser
    .command('check')
    .description('open pages and check that they load, their title and their HTTP status')
    .argument('<url...>', 'absolute http(s) addresses of the pages')
    .option('--title <text>', 'text the page title must contain (see --title-match)')
    .option('--title-match <mode>', 'contains or equals', 'contains')
    .option('--status <code>', 'expected HTTP status of the page: a code such as 200 or 404, 2xx, or any (only reported)', '2xx')
    .option('--status-source <source>', "browser (the navigation's own status) or http (a separate GET)", 'browser')
    .option('--timeout <ms>', 'page-load timeout', '30000')
    .option('--title-wait <ms>', 'how long to wait for a title set by script after the load', '2000')
    .option('--chrome-path <path>', 'the Chromium or Chrome binary (default CHROME_PATH, then /usr/bin/chromium)')
    .option('--chromedriver-path <path>', 'the chromedriver binary (default CHROMEDRIVER_PATH, then /usr/bin/chromedriver)')
    .addHelpText(
      'after',
      `
Exit codes: 0 every check passed, 1 a check failed (page did not load, wrong title or status), 2 usage error,
3 the driver or browser failed. A page that does not load (refused, DNS error, timeout) fails its check.
Environment: CHROME_PATH (default /usr/bin/chromium), CHROMEDRIVER_PATH (default /usr/bin/chromedriver).`,
    )
    .action(async (urls: string[], flags: CheckFlags, command: Command) => {
      const { json } = context.globals(command);
      const { out } = context;
      const titleMatch = flags.titleMatch as TitleMatch;
      if (titleMatch !== 'contains' && titleMatch !== 'equals')
        throw usage(`--title-match: "${flags.titleMatch}" is neither contains nor equals`, 'use --title-match contains (the default) or --title-match equals');
      const statusSource = flags.statusSource as StatusSource;
      if (statusSource !== 'browser' && statusSource !== 'http')
        throw usage(`--status-source: "${flags.statusSource}" is neither browser nor http`, 'use --status-source browser or --status-source http');
      const automation = await import('../../../automation/index.js');
      const common = {
        ...(flags.title !== undefined ? { title: flags.title } : {}),
        titleMatch,
        status: parseStatus(flags.status),
        statusSource,
        pageLoadTimeoutMs: parseMilliseconds(flags.timeout, '--timeout', 1, automation.defaultPageLoadTimeoutMs, automation.maxBrowserWaitMs),
        titleWaitMs: parseMilliseconds(flags.titleWait, '--title-wait', 0, automation.defaultTitleWaitMs, automation.maxBrowserWaitMs),
        logger: context.logger,
      };

      // Every URL is validated before a browser starts.
      for (const url of urls) automation.validateBrowserCheckOptions({ url, ...common });

      const progress = out.progress('browser check', urls.length);
      const results: BrowserCheckResult[] = [];
      try {
        const driverOptions = {
          logger: context.logger,
          commandTimeoutMs: common.pageLoadTimeoutMs + 30_000,
          ...(flags.chromePath ? { chromePath: flags.chromePath } : {}),
          ...(flags.chromedriverPath ? { driverPath: flags.chromedriverPath } : {}),
        };
        await automation.withChromeDriver(driverOptions, async (driver) => {
          for (const [index, url] of urls.entries()) {
            progress.update(index, urls.length, url);
            results.push(await automation.runBrowserCheck({ url, ...common, driver }));
          }
        });
      } finally {
        progress.done();
      }

      const passed = results.every((result) => result.passed);
      if (json) out.json({ passed, results });
      else {
        const rows: Row[] = results.flatMap((result) => result.checks.map((check) => ({ url: result.url, check })));
        out.table(rows, [
          { header: 'url', value: (row) => row.url },
          { header: 'check', value: (row) => row.check.name },
          { header: 'expected', value: (row) => row.check.expected },
          { header: 'actual', value: (row) => row.check.actual },
          { header: 'result', value: (row) => (row.check.passed ? 'pass' : 'FAIL') },
        ]);
      }
      if (!passed) {
        const failed = results.filter((result) => !result.passed);
        throw new CheckFailedError(`the browser check failed for ${failed.map((result) => `${result.url} (${result.reason})`).join(', ')}`);
      }
    });
}
