/**
 * `gantry gate <url>…`: page analysis as a deployment gate. Exit 0 when every check passes, 1 when a check fails,
 * 3 when the engine could not produce a trustworthy result (unreachable page, API failure).
 */
import type { Command } from 'commander';
import { ExitCode, GantryError, CheckFailedError } from '../errors.js';
import { redact, redactUrl } from '../redact.js';
import { usage, type CliContext } from './context.js';

interface GateFlags {
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
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command, context: CliContext): void {
  program
    .command('gate')
    .description('analyse pages (Lighthouse here, or the page analysis API) and fail below the thresholds')
    .argument('<url...>', 'pages to analyse')
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
    .addHelpText('after', `
Output: a table of checks on stdout; --json prints the summary (scores, every check, report locations) instead.
Exit codes: 0 every check passed, 1 a check failed, 2 usage error, 3 the engine failed (page unreachable, API error).
Environment: PAGEANALYSIS_BASE_URL, PAGEANALYSIS_API_KEY or PAGEANALYSIS_TOKEN (api engine); CHROME_PATH (local engine);
AWS_REGION, AWS_ENDPOINT_URL_S3 and the usual AWS credentials (--report-s3).`)
    .action(async (urls: string[], flags: GateFlags, command: Command) => {
      const { json } = context.globals(command);
      const { out } = context;
      const analysis = await import('../analysis/index.js');

      const runs = Number(flags.runs);
      if (!/^\d+$/.test(flags.runs.trim())) throw usage(`--runs: "${flags.runs}" is not a whole number`, `give a number of runs from 1 to ${analysis.MAX_RUNS}, e.g. --runs 3`);
      const aggregation = analysis.parseAggregationMethod(flags.aggregate);
      if (!aggregation) throw usage(`--aggregate: unknown method "${flags.aggregate}"`, `use one of ${analysis.AGGREGATION_METHODS.join(', ')}`);
      const strategy = analysis.parseStrategy(flags.strategy);
      if (!strategy) throw usage(`--strategy: "${flags.strategy}" is neither mobile nor desktop`, 'use --strategy desktop (the default) or --strategy mobile');
      const thresholds = [
        ...(flags.min ?? []).flatMap((text) => analysis.parseCategoryThresholds(text)),
        ...(flags.audit ?? []).map((text) => analysis.parseAuditThreshold(text)),
      ];
      if (flags.reportS3) analysis.parseS3Url(flags.reportS3);
      analysis.checkGateOptions({ urls, runs });
      const engine = analysis.createEngine({
        ...(flags.engine ? { engine: analysis.parseEngineName(flags.engine) } : {}),
        ...(flags.chromePath ? { chromePath: flags.chromePath } : {}),
        logger: context.logger,
      });

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
      } finally {
        progress.done();
      }

      // Local reports first: an S3 failure then still leaves them on disk.
      const written = flags.report ? await analysis.writeLocalReports(result, flags.report) : undefined;
      if (written) out.note(`reports written to ${flags.report}`);
      const archived = flags.reportS3 ? await analysis.archiveReportsToS3(result, flags.reportS3) : undefined;
      if (archived) out.note(`reports archived: ${result.reportUrl}`);
      // With both, each URL carries its local files and its object URL.
      const summary = archived && written
        ? { ...archived, urls: archived.urls.map((url, index) => ({ ...url, reportFiles: written.urls[index]?.reportFiles })) }
        : archived ?? written ?? analysis.summarize(result);

      if (json) out.json(summary);
      else {
        out.line(analysis.renderGateTable(result));
        if (result.reportUrl) out.line(`Report: ${result.reportUrl}`);
      }

      const failing = result.checks.filter((c) => c.verdict !== 'pass').map((c) => c.name);
      if (result.status === 'fail') {
        throw new CheckFailedError(`the gate failed: ${[...new Set(failing)].join(', ')} below threshold`);
      }
      if (result.status === 'error') {
        const reason = result.checks.find((c) => c.verdict === 'error')?.reason ?? 'the engine could not analyse the page';
        throw new GantryError(redact(`the page could not be analysed: ${reason}`), {
          exitCode: ExitCode.remote,
          code: 'GATE_ENGINE_ERROR',
          hint: 'check that the URL is reachable from here and answers 200',
        });
      }
    });
}
