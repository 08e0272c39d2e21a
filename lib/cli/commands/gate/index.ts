/**
 * `gantry gate <url>…`: page analysis as a deployment gate. Exit 0 when every check passes, 1 when a check fails,
 * 3 when the engine could not produce a trustworthy result (unreachable page, API failure).
 */
import { terminalText } from '../../../terminal-text.js';
import type { Command } from 'commander';
import { ExitCode, GantryError, CheckFailedError } from '../../../errors.js';
import { redact, redactUrl } from '../../../redact.js';
import { usage, type CliContext } from '../../context.js';
import { gateStatusReporter, type GateStatusFlags } from './status.js';
import type { CliErrorCode } from '../../error-codes.js';

interface GateFlags extends GateStatusFlags {
  config?: string;
  listAudits?: boolean;
  min?: string[];
  audit?: string[];
  runs: string;
  aggregate: string;
  strategy: string;
  engine?: string;
  locale?: string;
  chromePath?: string;
  report?: string;
  reportS3?: string;
  reportStorage?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command, context: CliContext): void {
  program
    .command('gate')
    .description('analyse pages (Lighthouse here, or the page analysis API) and fail below the thresholds')
    .argument('[url...]', 'pages to analyse (default: ci.collect.url of the Lighthouse CI configuration)')
    .option(
      '--config <file>',
      'read URLs, runs, form factor and assertions from a Lighthouse CI configuration (lighthouserc.json, .lighthouserc.js …); without URLs, one in the current folder is used',
    )
    .option('--list-audits', 'print every audit id a threshold can name, with its category and unit, and exit')
    .option('--min <thresholds>', 'minimum category scores, e.g. performance=0.9,accessibility=95 (repeatable; default performance=0.9)', collect)
    .option('--audit <threshold>', 'a limit on an audit value, e.g. largest-contentful-paint<=2500 (repeatable)', collect)
    .option('--runs <n>', 'runs per URL, aggregated', '3')
    .option('--aggregate <method>', 'median-run, median, optimistic or pessimistic', 'median-run')
    .option('--strategy <strategy>', 'mobile or desktop', 'desktop')
    .option('--engine <engine>', 'local (Lighthouse in Chromium) or api (PAGEANALYSIS_BASE_URL); default api when PAGEANALYSIS_BASE_URL is set')
    .option('--locale <locale>', 'locale for formatted results')
    .option('--chrome-path <path>', 'the Chromium or Chrome binary for the local engine (over CHROME_PATH)')
    .option('--report <dir>', 'write gate.json, each run as JSON and (local engine) Lighthouse HTML reports into this folder')
    .option('--report-s3 <s3-url>', 'archive the reports to s3://bucket/prefix; the result carries the object URL')
    .option(
      '--report-storage <folderId>',
      'publish the reports into this folder of the storage API (STORAGE_BASE_URL; STORAGE_TOKEN, else the gantry auth login); the result carries their links',
    )
    .option(
      '--commit-status <repo@sha>',
      'post the verdict as a commit status on <owner/repo>@<sha>: pending while the gate runs, then success, failure or error (PLATFORM_API_URL, token from GANTRY_PLATFORM_TOKEN or PLATFORM_TOKEN)',
    )
    .option('--status-context <context>', "the commit status's context (default gantry/gate)")
    .option('--status-target-url <url>', "the commit status's link to the details, e.g. the CI run")
    .addHelpText(
      'after',
      `
Output: a table of checks on stdout; --json prints the summary (scores, every check, report locations) instead.
Lighthouse CI: --config lighthouserc.json reads ci.collect and ci.assert; flags given here override the file. A warn-level
assertion that fails is shown and does not fail the gate.
Exit codes: 0 every check passed; 1 a check failed, or the API answered 4xx (a bad API key: 400); 2 usage error, found
before anything runs; 3 the engine failed after retries (page unreachable, Chromium, API 5xx/429 or no answer).
Environment: PAGEANALYSIS_BASE_URL, PAGEANALYSIS_API_KEY or PAGEANALYSIS_TOKEN (api engine); CHROME_PATH (local engine);
AWS_REGION, AWS_ENDPOINT_URL_S3 and the usual AWS credentials (--report-s3); STORAGE_BASE_URL and STORAGE_TOKEN, else the
\`gantry auth login\` of GANTRY_AUTH_PROFILE with scope storage.file (--report-storage); PLATFORM_API_URL and
GANTRY_PLATFORM_TOKEN or PLATFORM_TOKEN (--commit-status; tokens are never flags). --commit-status and --report-storage
are checked before the gate runs: a bad setting is exit 2, a report folder that does not exist exit 1.`,
    )
    .action(
      endsOnlyByItself(async (givenUrls: string[], flags: GateFlags, command: Command) => {
        const { json } = context.globals(command);
        const { out } = context;
        const analysis = await import('../../../analysis/index.js');
        if (flags.listAudits) {
          const rows = analysis.AUDIT_IDS.map((id) => ({ id, categories: analysis.auditCategories(id).join(', '), unit: analysis.auditUnit(id) ?? '' }));
          if (json) out.json(rows);
          else
            out.table(rows, [
              { header: 'audit', value: (row) => row.id },
              { header: 'category', value: (row) => row.categories },
              { header: 'unit', value: (row) => row.unit },
            ]);
          return;
        }
        const fromCommandLine = (option: string) => command.getOptionValueSource(option) === 'cli';

        // A Lighthouse CI configuration: the one named, or, when no URL is given, one in the current folder.
        const configFile = flags.config ?? (givenUrls.length === 0 ? analysis.findLhciConfig() : undefined);
        const config =
          configFile !== undefined ? analysis.loadLhciConfig(configFile, flags.config !== undefined ? '--config' : 'found in the current folder') : undefined;
        // The report folder is checked (and made) before the analysis runs: a path that cannot take it (/proc/nope,
        // /dev/full, a read-only folder) is exit 2 at once, not after minutes of Lighthouse.
        if (flags.report !== undefined) {
          const { ensureFolder } = await import('../../../local-paths.js');
          await ensureFolder(flags.report, 'the report folder (--report)');
        }
        for (const warning of config?.warnings ?? []) out.note(`warning: ${warning}`);
        const urls = givenUrls.length > 0 ? givenUrls : (config?.urls ?? []);
        if (urls.length === 0) {
          throw usage(
            config ? `${config.file} names no URL (ci.collect.url), and none was given` : 'a gate needs at least one URL',
            'give the pages to analyse, e.g. gantry gate https://example.com/, or ci.collect.url in lighthouserc.json',
          );
        }

        const runsText = fromCommandLine('runs') || config?.runs === undefined ? flags.runs : String(config.runs);
        const runs = Number(runsText);
        if (!/^\d+$/.test(runsText.trim()))
          throw usage(`--runs: "${runsText}" is not a whole number`, `give a number of runs from 1 to ${analysis.MAX_RUNS}, e.g. --runs 3`);
        const chosenAggregation = analysis.parseAggregationMethod(flags.aggregate);
        if (!chosenAggregation) throw usage(`--aggregate: unknown method "${flags.aggregate}"`, `use one of ${analysis.AGGREGATION_METHODS.join(', ')}`);
        const strategy = fromCommandLine('strategy') || !config ? analysis.parseStrategy(flags.strategy) : config.strategy;
        if (!strategy)
          throw usage(`--strategy: "${flags.strategy}" is neither mobile nor desktop`, 'use --strategy desktop (the default) or --strategy mobile');
        const given = [
          ...(flags.min ?? []).flatMap((text) => analysis.parseCategoryThresholds(text)),
          ...(flags.audit ?? []).map((text) => analysis.parseAuditThreshold(text)),
        ];
        // Flags override the file: a threshold given here replaces the file's on the same category or audit value.
        const key = (t: import('../../../analysis/index.js').Threshold) =>
          t.kind === 'category' ? `c:${t.category}` : `a:${t.audit}.${t.property ?? 'numericValue'}`;
        const overridden = new Set(given.map(key));
        let thresholds = [...(config?.thresholds ?? []).filter((t) => !overridden.has(key(t))), ...given];
        // --aggregate on the command line wins over every assertion's aggregationMethod.
        const aggregation =
          fromCommandLine('aggregate') || !config
            ? chosenAggregation
            : (mostCommon(thresholds.map((t) => t.aggregation ?? chosenAggregation)) ?? chosenAggregation);
        if (fromCommandLine('aggregate')) thresholds = thresholds.map(({ aggregation: _own, ...rest }) => rest as typeof rest & { aggregation?: undefined });
        if (flags.reportS3) analysis.parseS3Url(flags.reportS3);
        analysis.checkGateOptions({ urls, runs, ...(flags.locale !== undefined ? { locale: flags.locale } : {}) });
        analysis.checkThresholdIds(thresholds);
        // The storage folder is settled before the analysis: its settings (exit 2), the login, the folder itself (exit 1).
        if (flags.reportStorage !== undefined)
          await withReportStorage(flags.reportStorage, context, (client, folderId) => analysis.checkReportFolder(client, folderId));
        const commitStatus = await gateStatusReporter(flags, context);
        const engine = analysis.createEngine({
          ...(flags.engine ? { engine: analysis.parseEngineName(flags.engine) } : {}),
          ...(flags.chromePath ? { chromePath: flags.chromePath } : {}),
          logger: context.logger,
        });

        await commitStatus?.pending();
        const total = urls.length * runs;
        const progress = out.progress('gate', total);
        let done = 0;
        let result;
        try {
          result = await analysis.runGate({
            urls,
            thresholds,
            runs,
            aggregation,
            strategy,
            engine,
            ...(flags.locale ? { locale: flags.locale } : {}),
            onProgress: ({ url, run, runs: of }) => {
              progress.update(done, total, `run ${run} of ${of} ${redactUrl(url)}`);
              done += 1;
            },
          });
          progress.update(total, total, 'done');
        } catch (error) {
          await commitStatus?.failed(error);
          throw error;
        } finally {
          progress.done();
        }
        if (commitStatus) {
          const posted = await commitStatus.verdict(result);
          out.note(`commit status ${posted.state} set on ${flags.commitStatus}: ${terminalText(posted.description)}`);
        }

        // Local reports first: an S3 failure then still leaves them on disk.
        const written = flags.report ? await analysis.writeLocalReports(result, flags.report) : undefined;
        if (written) out.note(`reports written to ${flags.report}`);
        const archived = flags.reportS3 ? await analysis.archiveReportsToS3(result, flags.reportS3) : undefined;
        if (archived) out.note(`reports archived: ${result.reportUrl}`);
        const folderId = flags.reportStorage;
        const published =
          folderId !== undefined
            ? await withReportStorage(folderId, context, (client) => analysis.publishReportsToStorage(result, folderId, { client }))
            : undefined;
        if (published) out.note(`reports published: ${published.storage.reportUrl ?? `folder ${published.storage.folderId}`}`);
        // Together, each URL carries its local files, its S3 object URL and its storage files; reportUrl is S3's first.
        const summary = combineSummaries(analysis.summarize(result), written, archived, published);

        if (json) out.json(summary);
        else {
          out.line(analysis.renderGateTable(result));
          if (result.reportUrl) out.line(`Report: ${result.reportUrl}`);
        }

        const warned = analysis.describeFailures(result.checks, 'warn');
        if (warned) out.note(`warning: below a warn-level threshold (the gate does not fail on these): ${warned}`);
        if (result.status === 'fail') {
          throw new CheckFailedError(`the gate failed: ${analysis.describeFailures(result.checks)}`);
        }
        if (result.status === 'error') {
          const reason = result.checks.find((c) => c.verdict === 'error')?.reason ?? 'the engine could not analyse the page';
          throw new GantryError(redact(`the page could not be analysed: ${reason}`), {
            exitCode: ExitCode.remote,
            code: 'GATE_ENGINE_ERROR' satisfies CliErrorCode,
            hint: 'check that the URL is reachable from here and answers 200',
          });
        }
      }),
    );
}

type Summary = import('../../../analysis/index.js').GateSummary;

/** One summary of every place the reports went: per URL its local files, its S3 object URL and its storage files. */
function combineSummaries(plain: Summary, written?: Summary, archived?: Summary, published?: import('../../../analysis/index.js').StorageGateSummary): Summary {
  const base = published ?? archived ?? written ?? plain;
  return {
    ...base,
    reportUrl: plain.reportUrl,
    urls: base.urls.map((url, index) => ({
      ...url,
      ...(written?.urls[index]?.reportFiles ? { reportFiles: written.urls[index].reportFiles } : {}),
      ...(archived?.urls[index]?.reportUrl ? { reportUrl: archived.urls[index].reportUrl } : {}),
    })),
  };
}

/**
 * Runs `use` with a storage client for --report-storage: the folder id and STORAGE_BASE_URL checked first (exit 2,
 * nothing sent), the token from STORAGE_TOKEN, else the `gantry auth` login of GANTRY_AUTH_PROFILE. Called before the
 * gate runs to ask for the folder (missing, not a folder or trashed: exit 1), so a bad setting costs no analysis,
 * and again to publish.
 */
async function withReportStorage<T>(
  folderId: string,
  context: CliContext,
  use: (client: import('../../../storage/index.js').StorageClient, folderId: string) => Promise<T>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<T> {
  const { checkStorageFolderId } = await import('../../../analysis/index.js');
  checkStorageFolderId(folderId, '--report-storage');
  if (!env.STORAGE_BASE_URL) {
    throw usage(
      '--report-storage needs the storage service: STORAGE_BASE_URL is not set',
      'export STORAGE_BASE_URL=https://storage.example.com (`gantry dev` serves one locally and prints it)',
    );
  }
  const { openStorage } = await import('../storage/client.js');
  const opened = await openStorage({}, context.logger, env);
  try {
    return await use(opened.client, folderId);
  } finally {
    opened.close();
  }
}

/**
 * The gate's action, guarded against being ended from inside with success: a JavaScript configuration (or anything
 * it loads) that calls process.exit(0) later — from a timer, say — would end `gantry gate` with exit 0 and nothing
 * analysed, a silent pass. Until the action has finished, such an exit is turned into exit 2 with an error line.
 */
function endsOnlyByItself<A extends unknown[]>(action: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args) => {
    const early = (code: number) => {
      if (code !== 0) return;
      process.stderr.write(
        'error: the gate was ended (process.exit) before it had finished: nothing was judged\nhint: a JavaScript configuration must only export its settings; remove any process.exit from it\n',
      );
      process.exitCode = 2;
    };
    process.on('exit', early);
    try {
      await action(...args);
    } finally {
      process.off('exit', early);
    }
  };
}

/** The aggregation most checks use, for the heading of the table (each check's reason names its own). */
function mostCommon<T>(values: readonly T[]): T | undefined {
  const counts = new Map<T, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}
