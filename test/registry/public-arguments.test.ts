import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistryServer } from '../../devserver/registry/index.js';
import { GantryError } from '../../lib/errors.js';
import * as registry from '../../lib/registry/index.js';
import * as sources from '../../lib/sources/index.js';
import { fastRegistryPolicy, startRegistry, writeModules } from './fixtures.js';

/** Calls `call`, sync or async, and says what came of it: a value, a GantryError, or anything else (a bug). */
async function outcome(call: () => unknown): Promise<'ok' | 'gantry' | string> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    return error instanceof GantryError ? 'gantry' : `${(error as Error)?.name}: ${(error as Error)?.message}`;
  }
}

const bad: unknown[][] = [[], [undefined], [null], [42], [{}], ['x'], ['x', 42], [{}, {}], [42, 42, 42], [[], 'x', 42]];

describe('modules area: public functions take what the docs show, and bad arguments are typed errors (never a TypeError)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: RegistryServer;
  let cwd: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-args-'));
    await writeModules(join(dir, 'modules'), [{ namespace: 'acme', name: 'network', provider: 'aws', versions: ['1.0.0', '1.1.0'] }]);
    server = await startRegistry(join(dir, 'modules'));
    cwd = process.cwd();
    // Whatever a call with "x" writes lands here, never in the repository.
    process.chdir(await mkdtemp(join(dir, 'cwd-')));
  });
  after(async () => {
    process.chdir(cwd);
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('every exported function of lib/registry and lib/sources, with nothing, null, a number, {}, a string and mixes', async () => {
    const failures: string[] = [];
    const exported = { ...registry, ...sources } as Record<string, unknown>;
    for (const [name, value] of Object.entries(exported)) {
      if (typeof value !== 'function' || /^[A-Z]/.test(name)) continue; // classes are below
      for (const args of bad) {
        const result = await outcome(() => (value as (...a: unknown[]) => unknown)(...args));
        if (result !== 'ok' && result !== 'gantry') failures.push(`${name}(${args.map((a) => JSON.stringify(a)).join(', ')}) → ${result}`);
      }
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(await readdir(process.cwd()), [], 'no call with bad arguments wrote anything');
  });

  it('RegistryClient: the constructor and every method, with bad arguments', async () => {
    const failures: string[] = [];
    for (const args of bad) {
      const result = await outcome(() => new registry.RegistryClient(...(args as [])).close());
      if (result !== 'ok' && result !== 'gantry') failures.push(`new RegistryClient(${args.map((a) => JSON.stringify(a)).join(', ')}) → ${result}`);
    }
    const client = new registry.RegistryClient({ env: { GANTRY_REGISTRY_HOST: server.host }, retry: fastRegistryPolicy });
    try {
      const methods = [
        'services',
        'versions',
        'versionsResponse',
        'latest',
        'version',
        'download',
        'downloadLatest',
        'downloadsSummary',
        'latestForAllProviders',
        'headersFor',
      ] as const;
      for (const method of methods) {
        for (const args of bad) {
          const result = await outcome(() => (client[method] as (...a: unknown[]) => unknown).apply(client, args));
          if (result !== 'ok' && result !== 'gantry') failures.push(`client.${method}(${args.map((a) => JSON.stringify(a)).join(', ')}) → ${result}`);
        }
      }
      for (const method of ['listModules', 'search'] as const) {
        for (const args of bad) {
          const result = await outcome(async () => {
            for await (const item of (client[method] as (...a: unknown[]) => AsyncIterable<unknown>).apply(client, args)) void item;
          });
          if (result !== 'ok' && result !== 'gantry') failures.push(`client.${method}(${args.map((a) => JSON.stringify(a)).join(', ')}) → ${result}`);
        }
      }
    } finally {
      client.close();
    }
    assert.deepEqual(failures, []);
  });

  it('address strings work wherever the docs show them, as well as parsed addresses', async () => {
    const client = new registry.RegistryClient({ env: { GANTRY_REGISTRY_HOST: server.host }, retry: fastRegistryPolicy });
    try {
      const text = `${server.host}/acme/network/aws`;
      assert.deepEqual((await client.versions(text)).sort(), ['1.0.0', '1.1.0']);
      assert.deepEqual(await client.versions('acme/network/aws'), await client.versions(registry.parseModuleAddress(text)));
      assert.equal((await client.version(text, '1.0.0')).version, '1.0.0');
      assert.equal((await client.latest(text)).version, '1.1.0');
      assert.ok((await client.download(text, '1.0.0')).location);
      assert.equal(registry.formatModuleAddress(text), text);
      await assert.rejects(client.versions('acme/network'), (error: unknown) => error instanceof registry.AddressError && error.exitCode === 2);
      await assert.rejects(client.version(text, '' as string), (error: unknown) => error instanceof GantryError && error.exitCode === 2);
    } finally {
      client.close();
    }
  });
});
