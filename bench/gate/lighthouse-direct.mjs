// The baseline of bench/gate: Lighthouse called directly, the way its documentation shows (chrome-launcher starts
// Chromium, lighthouse() runs, the browser is killed), N runs in one process, same flags, preset and categories as
// `gantry gate --strategy desktop --min performance=0.9`. Prints the scores as JSON.
//   node bench/gate/lighthouse-direct.mjs <url> <runs>
import * as chromeLauncher from 'chrome-launcher';
import lighthouse, { desktopConfig } from 'lighthouse';
import { offlineChromeFlags } from '../../dist/lib/browser/locate.js';

const [url, runsText = '3'] = process.argv.slice(2);
// The same offline flags as Gantry's own Chromium (dist/lib/browser: `npm run bench` builds first).
const flags = [...offlineChromeFlags];
const scores = [];
for (let run = 0; run < Number(runsText); run += 1) {
  const chrome = await chromeLauncher.launch({ chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium', chromeFlags: flags });
  try {
    const result = await lighthouse(url, { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: ['performance'] }, desktopConfig);
    scores.push(result.lhr.categories.performance.score);
  } finally {
    await chrome.kill();
  }
}
console.log(JSON.stringify({ scores }));
