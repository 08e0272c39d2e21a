import { join } from 'node:path';
import type { DemoStep } from './step.js';
import { withDemoSite } from './site.js';

/**
 * Where the gate step's result keeps the whole GateResult (its reports, Lighthouse's HTML included) for the steps after
 * it (publish): a symbol, so the demo's --json output, which prints what each step returned, leaves it out.
 */
export const gateResultKey = Symbol('gantry.demo.gateResult');

/**
 * Serve examples/site on 127.0.0.1 and gate it with Lighthouse in Chromium (the local engine), as a deployment
 * would: every category above 0.9 and LCP under 2.5 s. One run keeps the demo quick; gates default to three.
 */
export const gateStep: DemoStep = {
  name: 'gate',
  description: 'serve the demo site locally, gate it with Lighthouse in Chromium and show the table of checks',
  async run({ out, examplesDir, workDir, json }) {
    const analysis = await import('../../../analysis/index.js');
    return withDemoSite(examplesDir, async (site) => {
      const thresholds = [
        ...analysis.parseCategoryThresholds('performance=0.9,accessibility=0.9,best-practices=0.9,seo=0.9'),
        analysis.parseAuditThreshold('largest-contentful-paint<=2500'),
      ];
      if (!json) out.line(`  analysing ${site.url} (1 run, desktop, Lighthouse in ${analysis.resolveChromePath()})`);
      const result = await analysis.runGate({ urls: [site.url], thresholds, runs: 1, strategy: 'DESKTOP', engine: analysis.createLocalEngine() });
      const reportDir = join(workDir, 'gate-report');
      const summary = await analysis.writeLocalReports(result, reportDir);
      if (!json) {
        for (const line of analysis.renderGateTable(result).split('\n')) out.line(`  ${line}`);
        out.line(`  reports (JSON and Lighthouse HTML) in ${reportDir} (kept with --keep)`);
        out.line("  try: gantry gate <your page's URL> --min performance=0.9,accessibility=0.9 --audit 'largest-contentful-paint<=2500'");
        out.line('       (Lighthouse here; or gantry dev, and --engine api with the PAGEANALYSIS_* values it prints)');
      }
      if (result.status !== 'pass') {
        const { CheckFailedError } = await import('../../../errors.js');
        throw new CheckFailedError(
          `the demo site did not pass its gate: ${result.checks
            .filter((c) => c.verdict !== 'pass')
            .map((c) => c.reason)
            .join('; ')}`,
        );
      }
      return { status: summary.status, scores: summary.urls[0].scores, checks: summary.checks, [gateResultKey]: result };
    });
  },
};
