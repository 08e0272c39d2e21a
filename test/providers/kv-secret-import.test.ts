// KvSecret adopted with the `import` resource option, through the engine harness in consumer projects against
// the embedded kv server. The harness runs the engine's ImportStep: Read with the import id and nothing else.
// Pulumi's dynamic-provider plugin finds its provider in `__provider` of the properties or inputs of that Read,
// and the engine sends neither on an import, so the plugin fails before any provider code runs — under
// `pulumi up` as here (pulumi/pulumi#3550, #16175). These tests pin that down: the import fails with that
// reason in preview and up, the existing secret is left exactly as it was, nothing is adopted into state, and
// neither the secret value nor the token leaks. KvSecret's read by id is tested in-process in kvSecret.test.ts.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { SecretsClient } from '../../lib/secrets/index.js';
import { assertProviderHygiene, expectDeploymentFailure, Harness, type ConsumerKind, type OperationResult, type Stack } from '../harness/index.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'kv-secret-import.cjs'), esm: path.join(programs, 'kv-secret-import.mjs') };
const PLUGIN_CANNOT_READ =
  /pulumi-nodejs:dynamic\/gantry:secrets:KvSecret:Resource resource 'adopted': reading 'secret\/team\/imported' to import it failed: code must be a string, not undefined/;

describe('KvSecret import by <mount>/<path> through the engine harness (consumer mode) against the embedded kv server', function () {
  this.timeout(300_000);
  const canaryToken = `canary-token-${Math.random().toString(36).slice(2)}`;
  const canarySecret = `canary-secret-${Math.random().toString(36).slice(2)}`;
  let server: SecretsServer;
  let admin: SecretsClient;
  let stack: Stack | undefined;

  beforeEach(async () => {
    server = await startSecretsServer({ rootToken: canaryToken, namespaces: ['team'] });
    admin = new SecretsClient({ address: server.url, token: canaryToken, sources: { env: {}, pulumi: undefined } });
    await admin.kv('secret').write('team/imported', { password: canarySecret });
    await admin.kv('secret').writeMetadata('team/imported', { customMetadata: { owner: 'ops' } });
  });
  afterEach(async () => {
    admin.close();
    await stack?.dispose();
    stack = undefined;
    await server.stop();
  });

  const managed = { name: 'managed', mount: 'secret', path: 'app/managed', data: { key: canarySecret } };
  const adopted = {
    name: 'adopted',
    importId: 'secret/team/imported',
    mount: 'secret',
    path: 'team/imported',
    data: { password: canarySecret },
    customMetadata: { owner: 'ops' },
  };

  async function assertUntouched(): Promise<void> {
    const kv = admin.kv('secret');
    assert.deepEqual((await kv.read('team/imported')).data, { password: canarySecret });
    const metadata = await kv.readMetadata('team/imported');
    assert.equal(metadata?.currentVersion, 1, 'no write to the secret being imported');
    assert.deepEqual(metadata?.customMetadata, { owner: 'ops' });
  }

  async function assertNoLeak(s: Stack, result: OperationResult): Promise<void> {
    // __provider size and the token and secret value in neither __provider, the state file, the logs nor an error.
    await assertProviderHygiene(s, result, [canaryToken, canarySecret]);
    assert.ok(!(await readFile(s.statePath, 'utf8')).includes('team/imported'), 'nothing adopted into state');
  }

  const cases: Array<{ kind: ConsumerKind; via: string; options: () => Parameters<typeof Harness.consumer>[0] }> = [
    { kind: 'cjs', via: 'the environment', options: () => ({ kind: 'cjs', env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: canaryToken } }) },
    {
      kind: 'esm',
      via: 'secret stack config',
      options: () => ({ kind: 'esm', config: { 'gantry:secretsAddr': server.url, 'gantry:secretsToken': { secret: canaryToken } } }),
    },
  ];
  for (const { kind, via, options } of cases) {
    it(`${kind}, token from ${via}: import by <mount>/<path> fails in preview and up as under Pulumi (the plugin's Read gets no __provider), the secret is untouched and nothing leaks; the id already in state is not imported again`, async () => {
      const s = (stack = await Harness.consumer(options()));
      const first = await s.up(program, { secrets: [managed] });
      assert.deepEqual(first.plan, { managed: 'create' });
      const sameId = await s.up(program, { secrets: [{ ...managed, importId: 'secret/app/managed' }] });
      assert.deepEqual(sameId.plan, { managed: 'same' }, 'an import id equal to the id in state is ignored, as by the engine');

      const preview = await expectDeploymentFailure(s.preview(program, { secrets: [managed, adopted] }));
      assert.match(preview.message, PLUGIN_CANNOT_READ);
      assert.equal(preview.result.plan.adopted, undefined, 'no import step is reported');
      assert.equal(preview.result.plan.managed, 'same');
      await assertNoLeak(s, preview.result);

      const up = await expectDeploymentFailure(s.up(program, { secrets: [managed, adopted] }));
      assert.match(up.message, PLUGIN_CANNOT_READ);
      assert.equal(up.result.errors.length, 1, `one error, got ${up.result.errors.join(' | ')}`);
      assert.deepEqual(Object.keys(up.result.resources), ['managed'], 'the failed import adopts nothing and deletes nothing');
      await assertNoLeak(s, up.result);
      await assertUntouched();

      await s.destroy();
      assert.equal((await admin.kv('secret').read('app/managed')).state, 'deleted', 'destroy deletes the managed secret');
      await assertUntouched();
    });
  }
});
