// The embedded kv server's configured mounts: what mounts() reports, and the mount sets it refuses.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startSecretsServer } from '../../../devserver/secrets/index.js';
import { client, ROOT, withServer } from './helpers.js';

describe('devserver/secrets: configured mounts', () => {
  it('SEC-MOUNT-DEFAULT-SECRET: mounts() reports secret/ (kv v2) and kv/ (kv v1) by default, and mounts added through sys/mounts', async () => {
    const { server, call } = await withServer();
    try {
      assert.deepEqual(server.mounts(), [
        { path: 'kv/', version: 1 },
        { path: 'secret/', version: 2 },
      ]);
      assert.equal((await call('POST', 'sys/mounts/extra', { body: { type: 'kv', options: { version: '2' } } })).status, 204);
      assert.deepEqual(server.mounts(), [
        { path: 'extra/', version: 2 },
        { path: 'kv/', version: 1 },
        { path: 'secret/', version: 2 },
      ]);
    } finally {
      await server.stop();
    }
  });

  it('SEC-KV1-PATH, SEC-KV2-DATA-PATH: configured mounts replace the defaults; a data file keeps the mounts of an earlier run', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gantry-mounts-'));
    const dataFile = path.join(dir, 'data.json');
    try {
      const first = await startSecretsServer({ rootToken: ROOT, dataFile, mounts: [{ path: '/apps', version: 2 }] });
      assert.deepEqual(first.mounts(), [{ path: 'apps/', version: 2 }]);
      await first.stop();
      const second = await startSecretsServer({ rootToken: ROOT, dataFile, mounts: [{ path: 'legacy/', version: 1 }] });
      try {
        assert.deepEqual(second.mounts(), [
          { path: 'apps/', version: 2 },
          { path: 'legacy/', version: 1 },
        ]);
        const call = client(second);
        assert.equal((await call('POST', 'apps/data/k', { body: { data: { v: 2 } } })).status, 200);
        assert.deepEqual((await call('GET', 'apps/data/k')).body.data.data, { v: 2 });
        assert.equal((await call('POST', 'legacy/k', { body: { v: 1 } })).status, 204);
        assert.deepEqual((await call('GET', 'legacy/k')).body.data, { v: 1 });
        assert.equal((await call('GET', 'secret/data/k')).status, 404);
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a mount given twice, one inside another, or under sys/ or auth/ is refused at start', async () => {
    await assert.rejects(
      startSecretsServer({
        mounts: [
          { path: 'a/', version: 2 },
          { path: '/a', version: 1 },
        ],
      }),
      /mounts: a\/ is given twice/,
    );
    await assert.rejects(
      startSecretsServer({
        mounts: [
          { path: 'a/b', version: 2 },
          { path: 'a', version: 1 },
        ],
      }),
      /mounts: a\/b\/ is inside a\/; mounts cannot be nested/,
    );
    await assert.rejects(startSecretsServer({ mounts: [{ path: 'sys/x', version: 2 }] }), /outside sys\/ and auth\//);
  });
});
