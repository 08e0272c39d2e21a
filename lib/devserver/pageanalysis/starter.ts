// How `gantry dev` starts the page analysis API: Lighthouse behind it, a generated API key, a well-known port
// (GANTRY_DEV_PAGEANALYSIS_PORT overrides it; 0 picks any free port).
import { randomBytes } from 'node:crypto';
import { startPageanalysisServer, type PageanalysisServer } from './server.js';

export const DEV_PAGEANALYSIS_PORT = 5760;

export async function startDevPageanalysis(context: { host: string }, env: NodeJS.ProcessEnv = process.env): Promise<PageanalysisServer> {
  const raw = env.GANTRY_DEV_PAGEANALYSIS_PORT;
  if (raw !== undefined && raw !== '' && (!/^\d+$/.test(raw) || Number(raw) > 65535)) {
    throw new Error(`GANTRY_DEV_PAGEANALYSIS_PORT must be a port number (0-65535), got "${raw}"`);
  }
  const port = raw === undefined || raw === '' ? DEV_PAGEANALYSIS_PORT : Number(raw);
  const apiKey = `dev-${randomBytes(12).toString('hex')}`;
  try {
    const server = await startPageanalysisServer({ host: context.host, port, apiKeys: [apiKey] });
    return { ...server, credentials: { PAGEANALYSIS_BASE_URL: server.url, PAGEANALYSIS_API_KEY: apiKey } };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`port ${port} on ${context.host} is in use: stop what listens there or set GANTRY_DEV_PAGEANALYSIS_PORT (0 for any free port)`);
    }
    throw error;
  }
}
