// One worker process of the shared-budget tests that finds its Redis the way a deployed worker does: from
// GANTRY_PLATFORM_LIMITS_URL in its environment (no store, no limitsUrl option). Once told to go (a line on stdin), its
// own PlatformClient sends `count` GETs of `path`, `parallel` at a time, printing one JSON line per answer ({ i, at,
// status, reset }, reset being the x-ratelimit-reset it carried) and a final { done } (or { error }).
// Run as: GANTRY_PLATFORM_LIMITS_URL=redis://… node --import tsx limits-url-worker.ts '<json options>'.
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { silentLogger } from '../../../lib/log.js';
import { budgetStoreFor, PlatformClient, type PlatformLimits } from '../../../lib/platform/index.js';

interface WorkerOptions {
  baseUrl: string;
  token: string;
  path: string;
  count: number;
  parallel: number;
  limits?: Partial<PlatformLimits>;
}

const options = JSON.parse(process.argv[2]!) as WorkerOptions;
const url = process.env.GANTRY_PLATFORM_LIMITS_URL;
const client = new PlatformClient({
  baseUrl: options.baseUrl,
  token: options.token,
  logger: silentLogger,
  proxy: {},
  // Every GET counted: the workers repeat one GET to spend a primary budget, which a 304 would not (etags.test.ts).
  cache: false,
  ...(options.limits ? { limits: options.limits } : {}),
});
const write = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
let next = 0;

async function worker(): Promise<void> {
  while (next < options.count) {
    const i = next;
    next += 1;
    const response = await client.request('GET', options.path);
    write({ i, at: Date.now(), status: response.status, reset: Number(response.headers['x-ratelimit-reset']) });
  }
}

try {
  // Connected before the start (budgets() reads the store), so that neither worker spends its first second loading
  // Redis; then { ready }, and the first line on stdin starts it — two workers told together send at once.
  await client.budgets();
  write({ ready: true });
  await once(createInterface({ input: process.stdin }), 'line');
  await Promise.all(Array.from({ length: options.parallel }, worker));
  write({ done: true });
} catch (error) {
  write({ error: (error as Error).message });
  process.exitCode = 1;
} finally {
  client.close();
  // The client took the store of this address (one per address in a process); close it so the process can end.
  if (url) await budgetStoreFor(url).close();
}
