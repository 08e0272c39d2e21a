import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckFailedError } from '../../../errors.js';
import { runningServer, type DemoStep } from './step.js';

/**
 * Pin the example manifest's modules from the embedded registry into gantry.lock.json, install them, and verify the
 * installed trees against the lock — what a pipeline's `gantry modules pin && gantry modules install` does.
 */
export const modulesStep: DemoStep = {
  name: 'modules',
  description: 'pin the example modules from the embedded registry into gantry.lock.json and install them, verified by content hash',
  async run({ servers, out, workDir, examplesDir, json }) {
    const server = runningServer(servers, 'registry', 'the embedded module registry');
    const registry = await import('../../../registry/index.js');
    const host = new URL(server.url).host;

    // The example manifest names the registry's well-known port; follow the server if it runs elsewhere.
    const manifestText = (await readFile(join(examplesDir, 'gantry.modules.json'), 'utf8')).replaceAll('127.0.0.1:5758/', `${host}/`);
    const manifestFile = join(workDir, registry.manifestFileName);
    await writeFile(manifestFile, manifestText);
    const manifest = registry.parseManifest(manifestText, manifestFile);
    const lockFile = join(workDir, registry.lockFileName);
    const modulesDir = join(workDir, '.gantry', 'modules');

    const client = new registry.RegistryClient();
    try {
      const pinned = await registry.pin(manifest, await registry.readLockFile(lockFile), { client });
      await registry.writeLockFile(lockFile, pinned.lock);
      const installed = await registry.install(manifest, await registry.readLockFile(lockFile), modulesDir, { client });
      const verified = await registry.verify(manifest, pinned.lock, modulesDir);
      const failed = verified.filter((v) => !v.ok);
      if (failed.length) throw new CheckFailedError(`installed modules differ from the lock: ${failed.map((f) => f.name).join(', ')}`);
      if (!json) {
        for (const module of pinned.modules)
          out.line(`  pinned ${module.name.padEnd(8)} ${module.source} ${module.constraint.padEnd(18)} -> ${module.version}  ${module.hash}`);
        for (const module of installed) out.line(`  installed ${module.name} at ${module.path}`);
        out.line(`  verified ${verified.length} modules against ${lockFile}`);
        // The demo's folder and registry are gone when it ends; `gantry dev` brings the registry back on the port the
        // example manifest names.
        out.line(
          `  try: gantry dev, then in another terminal, in a folder of your own: cp ${join(examplesDir, 'gantry.modules.json')} . && gantry modules pin && gantry modules install`,
        );
      }
      return {
        lockFile,
        modules: pinned.modules.map((m) => ({ name: m.name, source: m.source, constraint: m.constraint, version: m.version, hash: m.hash })),
        installed: installed.map((m) => ({ name: m.name, path: m.path, status: m.status })),
        verified: verified.every((v) => v.ok),
      };
    } finally {
      client.close();
    }
  },
};
