// What a Pulumi program and the dynamic-provider plugin load of gantry: a program imports `gantry/providers` to declare
// resources and runs none of their operations, so it must load no area of lib/ (nor the HTTP core and got); the
// plugin loads a resource's implementation, and its area, when the engine first calls one of its methods. Checked on
// the built package, in a process of its own, through a module-load hook (helpers/loaded-modules.mjs).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loginConfigKeys } from '../../lib/auth/index.js';
import { storageConfig } from '../../providers/storage-config.js';

const run = promisify(execFile);
const helper = fileURLToPath(new URL('./helpers/loaded-modules.mjs', import.meta.url));

interface Step {
  step?: string;
  modules?: string[];
  call?: string;
  answer?: unknown;
  error?: string;
}

async function loadedBy(calls: unknown[][]): Promise<Step[]> {
  const { stdout } = await run(process.execPath, [helper, JSON.stringify(calls)], { env: { ...process.env, NODE_OPTIONS: '' } });
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Step);
}

const areas = (modules: string[]) => [...new Set(modules.filter((m) => m.startsWith('lib/')).map((m) => m.split('/').slice(0, 2).join('/')))].sort();

describe('LAYER-PROVIDERS: a program loads the resources, the plugin each implementation on its first call', function () {
  this.timeout(60_000);

  it('importing gantry/providers loads no area of lib/ and no implementation; a KvSecret Check loads the kv one and lib/secrets, not the others', async () => {
    const steps = await loadedBy([
      ['kvSecretOperations', 'check', {}, { mount: 'secret', path: 'app/db', data: { password: 'pw_7Gq2' } }],
      ['kvSecretOperations', 'check', {}, { mount: 'secret', path: '../escape', data: {} }],
    ]);
    const [imported, firstCall, first, secondCall, second] = steps;
    assert.equal(imported?.step, 'import');
    const atImport = imported!.modules!;
    assert.ok(atImport.includes('providers/kv-secret.js') && atImport.includes('providers/storage-file.js'), atImport.join(' '));
    assert.deepEqual(
      atImport.filter((m) => m.endsWith('-operations.js') || m === 'providers/storage-shared.js'),
      [],
      'no implementation at import',
    );
    assert.deepEqual(areas(atImport), [], `no area of lib/ at import: ${atImport.join(' ')}`);

    assert.equal(firstCall?.call, 'kvSecretOperations.check');
    assert.equal(firstCall?.error, undefined, firstCall?.error);
    assert.deepEqual((firstCall?.answer as { failures?: unknown[] }).failures ?? [], []);
    const afterCheck = first!.modules!;
    assert.ok(afterCheck.includes('providers/kv-secret-operations.js'), afterCheck.join(' '));
    assert.ok(areas(afterCheck).includes('lib/secrets'), areas(afterCheck).join(' '));
    for (const other of ['lib/storage', 'lib/registry', 'lib/analysis', 'lib/platform', 'lib/automation', 'lib/auth'])
      assert.ok(!areas(afterCheck).includes(other), `${other} loaded by a KvSecret Check: ${areas(afterCheck).join(' ')}`);
    assert.deepEqual(
      afterCheck.filter((m) => m.endsWith('-operations.js')),
      ['providers/kv-secret-operations.js'],
    );

    // The second call reaches the same implementation: its checks answer (a path that climbs is refused).
    assert.equal(secondCall?.error, undefined, secondCall?.error);
    const failures = (secondCall?.answer as { failures?: Array<{ property: string }> }).failures ?? [];
    assert.ok(
      failures.some((failure) => failure.property === 'path'),
      JSON.stringify(secondCall?.answer),
    );
    assert.deepEqual(second!.modules, afterCheck, 'nothing more loaded by a second call');
  });

  it('the storage resources read the login keys lib/auth reads (storage-config.ts writes them out)', () => {
    assert.deepEqual(
      [storageConfig.authUrl, storageConfig.oauthClientId, storageConfig.oauthClientSecret],
      [loginConfigKeys.authUrl, loginConfigKeys.clientId, loginConfigKeys.clientSecret],
    );
  });
});
