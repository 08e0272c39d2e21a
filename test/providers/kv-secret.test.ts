// KvSecret through the engine harness (consumer mode, the real dynamic-provider plugin) against the embedded kv
// server on 127.0.0.1. A canary secret and a canary token are searched for in the state file, in `__provider`
// and in everything the program and the provider printed.
import assert from 'node:assert/strict';
import { restoreProcessEnv } from '../process-env.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { SecretsClient } from '../../lib/secrets/index.js';
import { kvSecretOperations } from '../../providers/kv-secret.js';
import { expectDeploymentFailure, Harness, type ConsumerKind, type OperationResult, type Stack } from '../harness/index.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'kv-secrets.cjs'), esm: path.join(programs, 'kv-secrets.mjs') };
const PROVIDER_LIMIT_BYTES = 16 * 1024;

interface SecretArgs {
  name: string;
  mount: string;
  path: string;
  data: Record<string, unknown>;
  kvVersion?: 1 | 2;
  cas?: boolean;
  customMetadata?: Record<string, string>;
  deleteAllVersions?: boolean;
  namespace?: string;
}
const secrets = (...list: SecretArgs[]) => ({ secrets: list });

describe('KvSecret through the engine harness (consumer mode) against the embedded kv server', function () {
  this.timeout(300_000);
  const canaryToken = `canary-token-${Math.random().toString(36).slice(2)}`;
  const canarySecret = `canary-secret-${Math.random().toString(36).slice(2)}`;
  const outOfBand = `oob-value-${Math.random().toString(36).slice(2)}`;
  let server: SecretsServer;
  let stack: Stack | undefined;
  let admin: SecretsClient;

  beforeEach(async () => {
    server = await startSecretsServer({ rootToken: canaryToken, namespaces: ['team'] });
    admin = new SecretsClient({ address: server.url, token: canaryToken, sources: { env: {}, pulumi: undefined } });
  });
  afterEach(async () => {
    admin.close();
    await stack?.dispose();
    stack = undefined;
    await server.stop();
  });

  async function assertNoLeak(s: Stack, result: OperationResult, names: string[], extra: string[] = []): Promise<void> {
    const state = await readFile(s.statePath, 'utf8');
    for (const canary of [canaryToken, canarySecret, ...extra]) {
      assert.ok(!state.includes(canary), 'not in the state file');
      assert.ok(!s.log.includes(canary), 'not in anything the program or provider printed');
      for (const name of names) {
        const provider = result.resources[name]?.provider ?? '';
        assert.ok(!provider.includes(canary), `not in the __provider of ${name}`);
      }
    }
    for (const name of names) {
      const bytes = Buffer.byteLength(result.resources[name]?.provider ?? '');
      assert.ok(bytes > 0 && bytes <= PROVIDER_LIMIT_BYTES, `__provider of ${name} is ${bytes} bytes`);
    }
  }

  for (const kind of ['cjs', 'esm'] as ConsumerKind[]) {
    it(`${kind}: SEC-KV2-DATA-PATH, SEC-AUTH-TOKEN-HEADER: create stores data as a secret, outputs version, createdTime and metadata; the token (from the environment) leaks nowhere`, async () => {
      const s = (stack = await Harness.consumer({ kind, env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: canaryToken } }));
      const created = await s.up(
        program,
        secrets({ name: 'db', mount: 'secret', path: 'app/db', data: { password: canarySecret, user: 'app' }, customMetadata: { owner: 'team-a' } }),
      );
      assert.deepEqual(created.plan, { db: 'create' });
      const db = created.resources.db!;
      assert.equal(db.id, 'secret/app/db');
      assert.equal(db.outputs.version, 1);
      assert.equal(db.outputs.kvVersion, 2);
      assert.ok(typeof db.outputs.createdTime === 'string' && Date.parse(db.outputs.createdTime as string) > 0);
      assert.deepEqual((db.outputs.metadata as { customMetadata: unknown }).customMetadata, { owner: 'team-a' });
      assert.ok(db.secretOutputs.includes('data'), 'data is a secret output');
      assert.ok(created.secretOutputs.includes('dbData'));
      const live = await admin.kv('secret').read('app/db');
      assert.deepEqual(live.data, { password: canarySecret, user: 'app' });
      await assertNoLeak(s, created, ['db']);

      const again = await s.up(
        program,
        secrets({ name: 'db', mount: 'secret', path: 'app/db', data: { password: canarySecret, user: 'app' }, customMetadata: { owner: 'team-a' } }),
      );
      assert.deepEqual(again.plan, { db: 'same' });
      assert.equal((await admin.kv('secret').readMetadata('app/db'))?.currentVersion, 1, 'no write for an unchanged secret');
    });
  }

  it('SEC-KV1-PATH: credentials from Configure (secret stack config gantry:secretsToken, no login) leak nowhere either; a kv v1 secret is written at <mount>/<name> and destroyed', async () => {
    const s = (stack = await Harness.consumer({ config: { 'gantry:secretsAddr': server.url, 'gantry:secretsToken': { secret: canaryToken } } }));
    const created = await s.up(program, secrets({ name: 'v1', mount: 'kv', path: 'legacy/token', data: { token: canarySecret } }));
    assert.deepEqual(created.plan, { v1: 'create' });
    assert.equal(created.resources.v1!.outputs.kvVersion, 1);
    assert.equal(created.resources.v1!.outputs.version, undefined);
    assert.deepEqual((await admin.kv('kv').read('legacy/token')).data, { token: canarySecret });
    await assertNoLeak(s, created, ['v1']);
    await s.destroy();
    assert.equal((await admin.kv('kv').read('legacy/token')).state, 'missing', 'destroy deletes a kv v1 secret');
  });

  it('refresh detects an out-of-band change as a diff that does not reveal the value; the next up puts the declared value back', async () => {
    const s = (stack = await Harness.consumer({ env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: canaryToken } }));
    const declared = secrets({ name: 'api', mount: 'secret', path: 'app/api', data: { key: canarySecret } });
    await s.up(program, declared);
    await admin.kv('secret').write('app/api', { key: outOfBand });
    const refreshed = await s.refresh();
    assert.deepEqual(refreshed.plan, { api: 'update' }, 'the change is seen');
    assert.ok(refreshed.resources.api!.secretOutputs.includes('data'));
    assert.equal(refreshed.resources.api!.outputs.version, 2);
    await assertNoLeak(s, refreshed, ['api'], [outOfBand]);
    const restored = await s.up(program, declared);
    assert.deepEqual(restored.plan, { api: 'update' });
    assert.deepEqual((await admin.kv('secret').read('app/api')).data, { key: canarySecret });
    assert.equal(restored.resources.api!.outputs.version, 3);
    await assertNoLeak(s, restored, ['api'], [outOfBand]);

    // Without a refresh, the next up still sees the live value (the state is stale) and puts the declared one back.
    await admin.kv('secret').write('app/api', { key: outOfBand });
    const noRefresh = await s.up(program, declared);
    assert.deepEqual(noRefresh.plan, { api: 'update' });
    assert.deepEqual((await admin.kv('secret').read('app/api')).data, { key: canarySecret });
    await assertNoLeak(s, noRefresh, ['api'], [outOfBand]);
  });

  it('SEC-KV2-PATH-DELETE: a secret deleted out of band is recreated on the next update (with or without refresh)', async () => {
    const s = (stack = await Harness.consumer({ env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: canaryToken } }));
    const declared = secrets({ name: 'tok', mount: 'secret', path: 'app/tok', data: { value: canarySecret } });
    await s.up(program, declared);
    await admin.kv('secret').delete('app/tok');
    const recreated = await s.up(program, declared);
    assert.deepEqual(recreated.plan, { tok: 'update' });
    assert.deepEqual((await admin.kv('secret').read('app/tok')).data, { value: canarySecret });

    await admin.kv('secret').deleteMetadata('app/tok');
    const refreshed = await s.refresh();
    assert.deepEqual(refreshed.plan, { tok: 'delete' }, 'refresh sees it gone');
    const again = await s.up(program, declared);
    assert.deepEqual(again.plan, { tok: 'create' });
    assert.equal((await admin.kv('secret').read('app/tok')).state, 'current');
  });

  it('changing data updates (a new version); changing the path or namespace replaces; deleteAllVersions removes every version', async () => {
    const s = (stack = await Harness.consumer({ env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: canaryToken } }));
    await s.up(program, secrets({ name: 's', mount: 'secret', path: 'one', data: { v: '1' } }));
    const updated = await s.up(program, secrets({ name: 's', mount: 'secret', path: 'one', data: { v: '2' } }));
    assert.deepEqual(updated.plan, { s: 'update' });
    assert.equal(updated.resources.s!.outputs.version, 2);

    const moved = await s.up(program, secrets({ name: 's', mount: 'secret', path: 'two', data: { v: '2' }, deleteAllVersions: true }));
    assert.deepEqual(moved.plan, { s: 'replace' });
    assert.equal(moved.resources.s!.id, 'secret/two');
    assert.equal((await admin.kv('secret').read('one')).state, 'deleted', 'the old path was soft-deleted (deleteAllVersions was not set on it)');
    assert.deepEqual((await admin.kv('secret').read('two')).data, { v: '2' });

    const namespaced = await s.up(program, secrets({ name: 's', mount: 'secret', path: 'two', data: { v: '2' }, namespace: 'team', deleteAllVersions: true }));
    assert.deepEqual(namespaced.plan, { s: 'replace' });
    assert.equal(await admin.kv('secret').readMetadata('two'), undefined, 'deleteAllVersions removed every version and the metadata');
    assert.deepEqual((await admin.kv('secret', { namespace: 'team' }).read('two')).data, { v: '2' });

    await s.destroy();
    assert.equal(await admin.kv('secret', { namespace: 'team' }).readMetadata('two'), undefined);
  });

  it('SEC-KV2-DATA-PATH: changing the mount (between two kv v2 mounts) replaces: the secret is created in the new mount and the old one is gone', async () => {
    // The embedded server with a second kv v2 mount (`other/`) besides the default ones.
    admin.close();
    await server.stop();
    server = await startSecretsServer({
      rootToken: canaryToken,
      mounts: [
        { path: 'secret/', version: 2 },
        { path: 'other/', version: 2 },
        { path: 'kv/', version: 1 },
      ],
    });
    admin = new SecretsClient({ address: server.url, token: canaryToken, sources: { env: {}, pulumi: undefined } });
    assert.deepEqual(
      server
        .mounts()
        .filter((m) => m.version === 2)
        .map((m) => m.path),
      ['other/', 'secret/'],
    );

    const s = (stack = await Harness.consumer({ env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: canaryToken } }));
    const created = await s.up(program, secrets({ name: 'm', mount: 'secret', path: 'app/moving', data: { v: canarySecret }, deleteAllVersions: true }));
    assert.deepEqual(created.plan, { m: 'create' });
    assert.equal(created.resources.m!.id, 'secret/app/moving');
    assert.deepEqual((await admin.kv('secret').read('app/moving')).data, { v: canarySecret });

    const moved = await s.up(program, secrets({ name: 'm', mount: 'other', path: 'app/moving', data: { v: canarySecret }, deleteAllVersions: true }));
    assert.deepEqual(moved.plan, { m: 'replace' });
    const m = moved.resources.m!;
    assert.equal(m.id, 'other/app/moving');
    assert.equal(m.outputs.version, 1, 'a new secret in the new mount, not a new version of the old one');
    assert.equal(m.outputs.kvVersion, 2);
    const live = await admin.kv('other').read('app/moving');
    assert.equal(live.state, 'current');
    assert.deepEqual(live.data, { v: canarySecret });
    assert.equal(live.metadata?.version, 1);
    assert.equal((await admin.kv('secret').read('app/moving')).state, 'missing', 'the old secret is gone from the old mount');
    assert.equal(await admin.kv('secret').readMetadata('app/moving'), undefined, 'with every version and its metadata (deleteAllVersions)');
    await assertNoLeak(s, moved, ['m']);

    const again = await s.up(program, secrets({ name: 'm', mount: 'other', path: 'app/moving', data: { v: canarySecret }, deleteAllVersions: true }));
    assert.deepEqual(again.plan, { m: 'same' }, 'settled in the new mount');
    await s.destroy();
    assert.equal(await admin.kv('other').readMetadata('app/moving'), undefined);
  });

  it('cas: create refuses to clobber an existing secret; an update after an out-of-band write fails with a refresh hint', async () => {
    const s = (stack = await Harness.consumer({ env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: canaryToken } }));
    await admin.kv('secret').write('taken', { v: 'theirs' });
    const clobber = await expectDeploymentFailure(s.up(program, secrets({ name: 'c', mount: 'secret', path: 'taken', data: { v: canarySecret }, cas: true })));
    assert.match(clobber.message, /check-and-set/);
    assert.deepEqual((await admin.kv('secret').read('taken')).data, { v: 'theirs' });

    await s.up(program, secrets({ name: 'c', mount: 'secret', path: 'mine', data: { v: '1' }, cas: true }));
    await admin.kv('secret').write('mine', { v: outOfBand });
    const conflict = await expectDeploymentFailure(s.up(program, secrets({ name: 'c', mount: 'secret', path: 'mine', data: { v: '2' }, cas: true })));
    assert.match(conflict.message, /check-and-set/);
    assert.ok(!conflict.message.includes(outOfBand) && !conflict.message.includes(canaryToken));
    assert.deepEqual((await admin.kv('secret').read('mine')).data, { v: outOfBand }, 'the out-of-band value was not overwritten');
    await s.refresh();
    const after = await s.up(program, secrets({ name: 'c', mount: 'secret', path: 'mine', data: { v: '2' }, cas: true }));
    assert.deepEqual(after.plan, { c: 'update' });
    assert.deepEqual((await admin.kv('secret').read('mine')).data, { v: '2' });
  });

  it('SEC-PATH-TRAILING-PERIOD: Check refuses a bad path or bad inputs by property, without echoing the data; nothing is written', async () => {
    const s = (stack = await Harness.consumer({ env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: canaryToken } }));
    const failure = await expectDeploymentFailure(s.up(program, secrets({ name: 'bad', mount: 'secret', path: 'app/db.', data: { password: canarySecret } })));
    assert.match(failure.message, /path/);
    assert.match(failure.message, /period/);
    assert.ok(!failure.message.includes(canarySecret) && !s.log.includes(canarySecret));
    const types = await expectDeploymentFailure(s.up(program, secrets({ name: 'bad', mount: 'secret', path: 'x', data: { a: 1 }, kvVersion: 3 as 2 })));
    assert.match(types.message, /kvVersion/);
    assert.deepEqual(await admin.kv('secret').list(), []);
  });

  it('import by <mount>/<path>: read with only the id finds the mount and the data (provider read, in-process, against the server)', async () => {
    await admin.kv('secret').write('team/imported', { k: 'v' });
    await admin.kv('secret').writeMetadata('team/imported', { customMetadata: { owner: 'ops' } });
    const settings = { 'gantry:secretsAddr': server.url, 'gantry:secretsToken': canaryToken };
    const saved = { ...process.env };
    delete process.env.SECRETS_ADDR;
    delete process.env.SECRETS_TOKEN;
    try {
      const imported = await kvSecretOperations.read(settings, 'secret/team/imported');
      assert.equal(imported.id, 'secret/team/imported');
      assert.equal(imported.props?.mount, 'secret/');
      assert.equal(imported.props?.path, 'team/imported');
      assert.deepEqual(imported.props?.data, { k: 'v' });
      assert.equal(imported.props?.version, 1);
      assert.deepEqual(imported.props?.customMetadata, { owner: 'ops' });
      // The engine may pass an empty property bag on import.
      const fromEmptyBag = await kvSecretOperations.read(settings, 'secret/team/imported', {} as never);
      assert.deepEqual(fromEmptyBag.props?.data, { k: 'v' });
      const missing = await kvSecretOperations.read(settings, 'secret/team/nothing');
      assert.equal(missing.id, '');
    } finally {
      restoreProcessEnv(saved);
    }
  });
});
