// One worker process of the shared-budget tests: its own PlatformClient whose budgets live in Redis, sending
// `count` requests `parallel` at a time, printing one JSON line per answer ({ i, at, status }) and a final { done }.
// Run as: node --import tsx redis-worker.ts '<json options>'.
import { silentLogger } from '../../../lib/log.js';
import { PlatformClient, RedisBudgetStore } from '../../../lib/platform/index.js';

interface WorkerOptions {
  baseUrl: string;
  token: string;
  redisUrl: string;
  windowScale: number;
  leaseMs: number;
  kind: 'create' | 'get' | 'ratelimit';
  count: number;
  parallel: number;
  concurrency: number;
  name: string;
}

const options = JSON.parse(process.argv[2]!) as WorkerOptions;
const store = new RedisBudgetStore({ url: options.redisUrl, windowScale: options.windowScale, leaseMs: options.leaseMs, logger: silentLogger });
const client = new PlatformClient({
  baseUrl: options.baseUrl,
  token: options.token,
  env: {},
  store,
  logger: silentLogger,
  proxy: {},
  limits: { concurrency: options.concurrency },
});
const sha = 'b'.repeat(40);
let next = 0;
const write = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function worker(): Promise<void> {
  while (next < options.count) {
    const i = next;
    next += 1;
    const response =
      options.kind === 'create'
        ? await client.request('POST', `/repos/gantry/demo/statuses/${sha}`, { body: { state: 'success', context: `${options.name}-${i}` } })
        : await client.request('GET', options.kind === 'ratelimit' ? '/rate_limit' : '/repos/gantry/demo');
    write({ i, at: Date.now(), status: response.status });
  }
}

try {
  await Promise.all(Array.from({ length: options.parallel }, worker));
  write({ done: true });
} catch (error) {
  write({ error: (error as Error).message });
  process.exitCode = 1;
} finally {
  client.close();
  await store.close();
}
