// A webhook worker in a process of its own, as `gantry hooks worker` runs one: a RedisQueue whose jobs go to a
// WebhookReceiver's handlers (receiver.run). Its one handler ('*') writes what it does to a Redis list the test reads —
// "<worker> start <guid> <attempt> <ms>" when it begins and "<worker> end <guid> <attempt> <ms>" when it is done — and
// takes HANDLER_MS. Started by helpers/queue-processes.ts; prints "ready" once the queue answers; SIGTERM closes the
// queue (running jobs finish) and exits 0. SIGKILL is the test's way to make it die mid-job.
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { createClient } from 'redis';
import { createLogger } from '../../../lib/log.js';
import { RedisQueue, WebhookReceiver } from '../../../lib/webhooks/index.js';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`queue-worker: ${name} is not set`);
  return value;
};

const name = env('WORKER_NAME');
const logKey = env('LOG_KEY');
const handlerMs = Number(env('HANDLER_MS', '200'));
const logger = createLogger({ level: 'warn', write: (line) => process.stderr.write(`[${name}] ${line}\n`) });
const queue = new RedisQueue({
  url: env('QUEUE_URL'),
  prefix: env('QUEUE_PREFIX'),
  concurrency: Number(env('CONCURRENCY', '2')),
  leaseMs: Number(env('LEASE_MS', '1500')),
  retryDelayMs: Number(env('RETRY_MS', '200')),
  maxAttempts: Number(env('MAX_ATTEMPTS', '3')),
  pollMs: 200,
  logger,
});
const recorder = createClient({ url: env('QUEUE_URL') });
recorder.on('error', () => {});
await recorder.connect();

// The receiver only dispatches (run); it never reads a delivery, so its secret is one nobody knows.
const receiver = new WebhookReceiver({ secrets: [randomBytes(16).toString('hex')], queue, work: false, logger });
receiver.on('*', async ({ id, attempt, signal }) => {
  await recorder.rPush(logKey, `${name} start ${id} ${attempt} ${Date.now()}`);
  await delay(handlerMs, undefined, { signal });
  await recorder.rPush(logKey, `${name} end ${id} ${attempt} ${Date.now()}`);
});

await queue.ready();
queue.process((job, context) => receiver.run(job, context));
process.stdout.write('ready\n');

process.once('SIGTERM', () => {
  void queue.close(30_000).then(async () => {
    await recorder.close();
    process.exit(0);
  });
});
