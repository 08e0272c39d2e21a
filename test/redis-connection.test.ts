import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { ExitCode } from '../lib/errors.js';
import { PlatformLimitsStoreError } from '../lib/platform/redis-store.js';
import { openRedis, RedisStoreError } from '../lib/redis-connection.js';
import { WebhookQueueError } from '../lib/webhooks/redis-queue.js';

describe('one Redis connector (lib/redis-connection.ts)', () => {
  it('LAYER-REDIS: the limits store and the webhook queue errors share one base, keeping their names, codes and hints', () => {
    const store = new PlatformLimitsStoreError('the limits store redis://127.0.0.1:1 is unavailable', new Error('ECONNREFUSED'));
    const queue = new WebhookQueueError('the webhook queue redis://127.0.0.1:1/0 is unavailable');
    for (const [error, name, code, hint] of [
      [store, 'PlatformLimitsStoreError', 'PLATFORM_LIMITS_STORE', /GANTRY_PLATFORM_LIMITS_URL/],
      [queue, 'WebhookQueueError', 'WEBHOOK_QUEUE', /GANTRY_HOOKS_QUEUE_URL/],
    ] as const) {
      assert.ok(error instanceof RedisStoreError);
      assert.equal(error.name, name);
      assert.equal(error.code, code);
      assert.equal(error.exitCode, ExitCode.remote);
      assert.match(error.hint ?? '', hint);
    }
    assert.equal((store.cause as Error).message, 'ECONNREFUSED');
    assert.equal(queue.cause, undefined);
  });

  it('LAYER-REDIS: a first connection refused fails at once, reported to onError, and is not retried in the background', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await import('redis'); // loaded once, before the clock starts
    const errors: string[] = [];
    const started = Date.now();
    await assert.rejects(
      openRedis({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 2_000, onError: (error) => errors.push(error.message) }),
      /ECONNREFUSED/,
    );
    assert.ok(Date.now() - started < 1_500, 'no wait for the timeout');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(errors.length <= 1, `reconnected in the background: ${errors.join(', ')}`);
  });
});
