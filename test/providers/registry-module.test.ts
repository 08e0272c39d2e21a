// RegistryModule through the engine harness (consumer mode, the real dynamic-provider plugin) against the embedded
// registry on 127.0.0.1.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RegistryServer } from '../../devserver/registry/index.js';
import { DeploymentError, Harness, type ConsumerKind, type Stack } from '../harness/index.js';
import { startRegistry, writeModules } from '../registry/fixtures.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'registry-module.cjs'), esm: path.join(programs, 'registry-module.mjs') };
const PROVIDER_LIMIT_BYTES = 16 * 1024;

for (const kind of ['cjs', 'esm'] as ConsumerKind[]) {
  describe(`RegistryModule, ${kind} consumer, through the engine harness`, function () {
    this.timeout(240_000);
    let dir: string;
    let server: RegistryServer;
    let stack: Stack | undefined;
    const canary = `canary-token-${kind}-${Date.now()}`;

    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), `gantry-regmod-${kind}-`));
      await writeModules(path.join(dir, 'registry'), [
        { namespace: 'acme', name: 'network', provider: 'aws', versions: ['1.0.0', '1.1.0', '2.0.0'], files: { 'modules/vpc/main.tf': 'vpc\n' } },
      ]);
      server = await startRegistry(path.join(dir, 'registry'), { token: canary });
    });
    after(async () => {
      await stack?.dispose();
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('pins on create, sticks across updates, refresh reports a newer allowed version, triggers re-resolve, a hash mismatch fails, destroy removes it', async () => {
      const host = server.host.replace(/:\d+$/, '').replace(/\./g, '_');
      const s = (stack = await Harness.consumer({ kind, env: { [`GANTRY_TOKEN_${host}`]: canary } }));
      const installDir = path.join(dir, `installed-${kind}`);
      const args = { source: `${server.host}/acme/network/aws//modules/vpc`, version: '~> 1.0', dir: installDir };

      const created = await s.up(program, args);
      assert.deepEqual(created.plan, { mod: 'create' });
      assert.equal(created.outputs.version, '1.1.0');
      assert.equal(created.outputs.constraint, '~> 1.0');
      assert.match(String(created.outputs.hash), /^h1:/);
      assert.equal(created.outputs.path, path.join(installDir, 'modules', 'vpc'));
      assert.equal(await readFile(path.join(installDir, 'modules', 'vpc', 'main.tf'), 'utf8'), 'vpc\n');
      const provider = created.resources.mod!.provider ?? '';
      assert.ok(Buffer.byteLength(provider) <= PROVIDER_LIMIT_BYTES, `__provider is ${Buffer.byteLength(provider)} bytes`);
      assert.ok(
        server.requests().some((r) => r.authorization === 'valid'),
        'the token from the environment reached the registry',
      );

      // A newer allowed version appears: no silent upgrade.
      await mkdir(path.join(dir, 'registry', 'acme', 'network', 'aws', '1.2.0', 'modules', 'vpc'), { recursive: true });
      await writeFile(path.join(dir, 'registry', 'acme', 'network', 'aws', '1.2.0', 'main.tf'), 'v1.2.0\n');
      await writeFile(path.join(dir, 'registry', 'acme', 'network', 'aws', '1.2.0', 'modules', 'vpc', 'main.tf'), 'vpc 1.2.0\n');
      await server.refresh();
      const same = await s.up(program, args);
      assert.deepEqual(same.plan, { mod: 'same' });
      assert.equal(same.outputs.version, '1.1.0');

      const refreshed = await s.refresh();
      assert.equal(refreshed.resources.mod?.outputs.latestAllowed, '1.2.0');
      assert.equal(refreshed.resources.mod?.outputs.version, '1.1.0');

      // The install folder vanished (a fresh CI runner): the pinned version comes back, checked against its hash.
      await rm(installDir, { recursive: true, force: true });
      const restored = await s.up(program, args);
      assert.deepEqual(restored.plan, { mod: 'update' });
      assert.equal(restored.outputs.version, '1.1.0');
      assert.equal(restored.outputs.hash, created.outputs.hash);

      // The registry's content of the pinned version changes under the same version number: the update fails.
      await writeFile(path.join(dir, 'registry', 'acme', 'network', 'aws', '1.1.0', 'main.tf'), 'tampered\n');
      await server.refresh();
      await rm(installDir, { recursive: true, force: true });
      await assert.rejects(s.up(program, args), (error: unknown) => error instanceof DeploymentError && /lock file pins|hashes to/.test(error.message));

      // Triggers re-resolve within the constraint.
      const upgraded = await s.up(program, { ...args, triggers: { week: '47' } });
      assert.deepEqual(upgraded.plan, { mod: 'update' });
      assert.equal(upgraded.outputs.version, '1.2.0');
      assert.equal(await readFile(path.join(installDir, 'modules', 'vpc', 'main.tf'), 'utf8'), 'vpc 1.2.0\n');

      const state = await readFile(s.statePath, 'utf8');
      for (const [where, text] of [
        ['__provider', upgraded.resources.mod!.provider ?? ''],
        ['state', state],
        ['log', s.log],
      ] as const) {
        assert.ok(!text.includes(canary), `the registry token leaked into the ${where}`);
      }

      await s.destroy();
      await assert.rejects(readFile(path.join(installDir, 'main.tf')));
    });

    it('never deletes what it did not write: a foreign folder is refused at create, local edits at update, and destroy keeps an edited folder', async () => {
      const host = server.host.replace(/:\d+$/, '').replace(/\./g, '_');
      const withToken = await Harness.consumer({ kind, env: { [`GANTRY_TOKEN_${host}`]: canary } });
      try {
        const foreign = path.join(dir, `foreign-${kind}`);
        await mkdir(foreign, { recursive: true });
        await writeFile(path.join(foreign, 'notes.txt'), 'mine\n');
        const args = { source: `${server.host}/acme/network/aws`, version: '~> 1.0', dir: foreign };
        await assert.rejects(
          withToken.up(program, args),
          (error: unknown) => error instanceof DeploymentError && /exists and is not empty, and this resource did not install it/.test(error.message),
        );
        assert.equal(await readFile(path.join(foreign, 'notes.txt'), 'utf8'), 'mine\n', 'the foreign folder is untouched');

        const ours = path.join(dir, `ours-${kind}`);
        const created = await withToken.up(program, { ...args, dir: ours });
        assert.equal(created.outputs.version, '1.2.0');
        await writeFile(path.join(ours, 'main.tf'), 'edited by hand\n');
        await assert.rejects(
          withToken.up(program, { ...args, dir: ours, triggers: { t: '1' } }),
          (error: unknown) => error instanceof DeploymentError && /has local changes/.test(error.message),
        );
        assert.equal(await readFile(path.join(ours, 'main.tf'), 'utf8'), 'edited by hand\n', 'the local edit survives the refused update');
        await withToken.destroy();
        assert.equal(await readFile(path.join(ours, 'main.tf'), 'utf8'), 'edited by hand\n', 'destroy keeps a folder whose content changed');
      } finally {
        await withToken.dispose();
      }
    });

    it('Check refuses a malformed address or constraint, naming the property', async () => {
      const s = (stack ??= await Harness.consumer({ kind, env: {} }));
      await assert.rejects(
        s.up(program, { source: 'acme/network/AWS', version: '~> 1.0', dir: path.join(dir, 'x') }),
        (error: unknown) => error instanceof DeploymentError && /provider "AWS"/.test(error.message),
      );
      await assert.rejects(
        s.up(program, { source: `${server.host}/acme/network/aws`, version: '=> 1', dir: path.join(dir, 'x') }),
        (error: unknown) => error instanceof DeploymentError && /version constraint/.test(error.message),
      );
    });

    it("Check reads a hostless address with the stack's gantry:registryHost, as the deployment will", async () => {
      const configured = await Harness.consumer({ kind, env: {}, config: { 'gantry:registryHost': 'nodot' } });
      try {
        // A preview runs Check and nothing else: the address must already be refused there, before any step.
        await assert.rejects(
          configured.preview(program, { source: 'acme/network/aws', version: '~> 1.0', dir: path.join(dir, 'y') }),
          (error: unknown) => error instanceof DeploymentError && /source/.test(error.message) && /registry host "nodot" has no dot/.test(error.message),
        );
      } finally {
        await configured.dispose();
      }
    });
  });
}
