// How `gantry dev` starts the page analysis API: Lighthouse behind it, a generated API key, a well-known port
// (GANTRY_DEV_PAGEANALYSIS_PORT overrides it; 0 picks any free port; a taken default port falls back to a free one).
import { randomBytes } from 'node:crypto';
import type { DevServerStarter } from '../dev-server.js';
import { claimDevPort } from '../port.js';
import type { PageanalysisServer } from './server.js';

export const DEV_PAGEANALYSIS_PORT = 5760;

export async function startDevPageanalysis(
  context: { host: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<PageanalysisServer & { env: Record<string, string> }> {
  const onPort = claimDevPort({ name: 'page analysis API', variable: 'GANTRY_DEV_PAGEANALYSIS_PORT', port: DEV_PAGEANALYSIS_PORT }, context.host, env);
  const apiKey = `dev-${randomBytes(12).toString('hex')}`;
  const { startPageanalysisServer } = await import('./server.js');
  const server = await onPort((p) => startPageanalysisServer({ host: context.host, port: p, apiKeys: [apiKey] }));
  const variables = { PAGEANALYSIS_BASE_URL: server.url, PAGEANALYSIS_API_KEY: apiKey };
  // `env`: the export line `gantry dev` prints, so that `gantry gate` and the gate tools reach this API as they are.
  return { ...server, credentials: variables, env: variables };
}

export const devServer: DevServerStarter = {
  name: 'pageanalysis',
  description: 'page analysis API v5 (runPageanalysis, Lighthouse in Chromium behind it) on 127.0.0.1:5760, random API key',
  start: (context) => startDevPageanalysis(context),
};
