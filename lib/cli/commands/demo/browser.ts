import type { DemoStep } from './step.js';
import { withDemoSite } from './site.js';

/**
 * Serve examples/site on 127.0.0.1 and check it in headless Chromium through chromedriver, as a deployment would:
 * the home page and the about page load with a 2xx, and their titles name the site.
 */
export const browserStep: DemoStep = {
  name: 'browser',
  description: 'open the demo site through ChromeDriver and check its pages, titles and HTTP status',
  async run({ out, examplesDir, json, browser }) {
    const automation = await import('../../../automation/index.js');
    return withDemoSite(examplesDir, async (site) => {
      const pages = [
        { url: site.url, title: 'Gantry demo site' },
        { url: new URL('about.html', site.url).toString(), title: 'About' },
      ];
      // Both pages in the demo's one browser: they share nothing, and a Chromium start is ~5 s of CPU. (The command
      // gives each URL a browser of its own: its URLs may be any sites.)
      const results = await browser.use(async (session, driver) => {
        if (!json) out.line(`  chromedriver at ${driver.url}, Chromium at ${driver.chromePath}`);
        const checked = [];
        for (const page of pages) checked.push(await automation.runBrowserCheck({ ...page, status: 200, session }));
        return checked;
      });
      if (!json) {
        for (const result of results) for (const line of automation.renderBrowserCheck(result).split('\n')) out.line(`  ${line}`);
        // The demo site stops with the demo: point the check at a page that stays up.
        out.line("  try: gantry browser check <your page's URL> --title '<text its title contains>' --status 200");
      }
      const failed = results.filter((result) => !result.passed);
      if (failed.length > 0) {
        const { CheckFailedError } = await import('../../../errors.js');
        throw new CheckFailedError(`the demo site failed its browser check: ${failed.map((r) => `${r.url} (${r.reason})`).join(', ')}`);
      }
      return { pages: results.map((r) => ({ url: r.url, title: r.title, status: r.status, passed: r.passed })) };
    });
  },
};
