// bench/browser-check: the same browser check of the demo page (new session, navigate, title, delete), N times,
// through gantry's `runBrowserCheck` and through bare WebDriver HTTP calls (`fetch`, no validation, no status, no
// page-state script) against the same chromedriver, in one process. Rounds alternate ABBA so drift on a shared machine
// falls on both sides. Measures what the client adds on top of the browser's own work. Prints ONE JSON object.
//
//   npm run bench -- browser-check          (or: node --import tsx bench/browser-check/index.ts [checks] [rounds])
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromeCapabilities, runBrowserCheck, startChromeDriver, type ChromeDriver } from '../../lib/automation/index.js';
import { serveDemoSite } from '../../lib/cli/commands/demo/site.js';
import { examplesDir } from '../../lib/paths.js';

const checks = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 2);

async function gantrySide(driver: ChromeDriver, url: string): Promise<void> {
  const result = await runBrowserCheck({ url, title: 'Gantry demo site', driver });
  if (!result.passed) throw new Error(`gantry check failed: ${result.reason}`);
}

/** The baseline: the four W3C calls a minimal script would make, with the same capabilities and a fresh profile. */
async function bareSide(driver: ChromeDriver, url: string): Promise<void> {
  const profile = mkdtempSync(join(tmpdir(), 'gantry-bench-profile-'));
  try {
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${driver.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await response.json()) as { value: Record<string, unknown> & { sessionId?: string } };
    };
    const created = await call('POST', '/session', { capabilities: chromeCapabilities({ binary: driver.chromePath, userDataDir: profile }) });
    const id = created.value.sessionId as string;
    await call('POST', `/session/${id}/url`, { url });
    const title = (await call('GET', `/session/${id}/title`)).value as unknown as string;
    await call('DELETE', `/session/${id}`);
    if (!title.includes('Gantry demo site')) throw new Error(`bare check saw title ${title}`);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

const site = await serveDemoSite(examplesDir());
const driver = await startChromeDriver();
try {
  const seconds = { gantry: 0, bare: 0 };
  const perRound = { gantry: [] as number[], bare: [] as number[] };
  await bareSide(driver, site.url); // warm-up: the first browser start pays for disk caches
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? (['bare', 'gantry'] as const) : (['gantry', 'bare'] as const);
    for (const side of order) {
      const started = performance.now();
      for (let i = 0; i < checks; i += 1) await (side === 'gantry' ? gantrySide : bareSide)(driver, site.url);
      const elapsed = (performance.now() - started) / 1000;
      seconds[side] += elapsed;
      perRound[side].push(Number(elapsed.toFixed(2)));
    }
  }
  console.log(
    JSON.stringify({
      bench: 'browser-check',
      page: 'examples/site on 127.0.0.1, headless Chromium through Debian chromedriver, fresh session per check',
      checksPerRound: checks,
      rounds,
      gantrySeconds: Number(seconds.gantry.toFixed(2)),
      baselineSeconds: Number(seconds.bare.toFixed(2)),
      ratio: Number((seconds.gantry / seconds.bare).toFixed(3)),
      gantrySecondsPerCheck: Number((seconds.gantry / (checks * rounds)).toFixed(3)),
      baselineSecondsPerCheck: Number((seconds.bare / (checks * rounds)).toFixed(3)),
      gantrySecondsPerRound: perRound.gantry,
      baselineSecondsPerRound: perRound.bare,
      baseline: 'bare fetch: POST /session, POST url, GET title, DELETE session',
      node: process.version,
    }),
  );
} finally {
  await driver.stop();
  await site.stop();
}
