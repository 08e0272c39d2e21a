// KvSecret's Configure reads every `gantry:secrets*` key the secrets client knows, and the keys reach the client in
// the real dynamic-provider plugin (harness, consumer mode) against the embedded kv server.
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { settings } from '../../lib/secrets/config.js';
import { SecretsClient } from '../../lib/secrets/index.js';
import { kvSecretConfigKeys } from '../../providers/kv-secret.js';
import { expectDeploymentFailure, Harness, type Stack } from '../harness/index.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'kv-secrets.cjs'), esm: path.join(programs, 'kv-secrets.mjs') };

describe('KvSecret: the stack configuration it reads in Configure', function () {
  this.timeout(300_000);
  let server: SecretsServer;
  let stack: Stack | undefined;

  before(async () => {
    server = await startSecretsServer({});
  });
  afterEach(async () => {
    await stack?.dispose();
    stack = undefined;
  });
  after(async () => {
    await server.stop();
  });

  it('reads exactly the Pulumi keys the secrets client resolves (lib/secrets/config settings)', () => {
    const clientKeys = Object.values(settings)
      .map((setting) => setting.pulumi)
      .sort();
    assert.deepEqual([...kvSecretConfigKeys].sort(), clientKeys);
  });

  it('SEC-LIMIT-JSON-DEPTH: a limit from stack configuration (gantry:secretsMaxJsonDepth) is applied by the provider before sending', async () => {
    const s = (stack = await Harness.consumer({
      config: { 'gantry:secretsAddr': server.url, 'gantry:secretsToken': { secret: server.rootToken }, 'gantry:secretsMaxJsonDepth': '2' },
    }));
    const deep = { name: 'deep', mount: 'secret', path: 'app/deep', data: { a: { b: { c: 'too deep for 2' } } } };
    const failure = await expectDeploymentFailure(s.up(program, { secrets: [deep] }));
    assert.match(failure.message, /depth/i);
    const admin = new SecretsClient({ address: server.url, token: server.rootToken, sources: { env: {}, pulumi: undefined } });
    try {
      assert.equal((await admin.kv('secret').read('app/deep')).state, 'missing', 'nothing was written');
    } finally {
      admin.close();
    }
    const shallow = { ...deep, data: { a: 'fits' } };
    const created = await s.up(program, { secrets: [shallow] });
    assert.deepEqual(created.plan, { deep: 'create' });
  });
});
