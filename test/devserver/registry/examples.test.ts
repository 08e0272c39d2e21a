// The example modules, the example manifest, the `gantry dev` starter and `gantry dev registry` (own process).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import semver from 'semver';
import { devServers } from '../../../devserver/index.js';
import { examplesDir } from '../../../lib/paths.js';
import { DEV_REGISTRY_PORT, devRegistryPort, startExampleRegistry } from '../../../devserver/registry/index.js';
import { exited, spawnGantry, startGantry } from '../../cli/gantry-process.js';
import { get, tempDir, writeVersion } from './helpers.js';

/** Runs `gantry dev registry ...` until it prints its address; returns the address and the child. */
async function startCli(args: string[]): Promise<{ child: ChildProcess; url: string; stdout: () => string }> {
  const { child, value, stdout } = await startGantry(['dev', 'registry', ...args], (text) => {
    const match = /module registry on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
    return match && text.includes('Press Ctrl-C') ? match[1]! : undefined;
  });
  return { child, url: value, stdout };
}

describe('devserver/registry: examples and the command', function () {
  this.timeout(60000);

  it('gantry dev lists the registry; it serves examples/modules and every example manifest entry has a matching version', async () => {
    const starter = devServers.find((s) => s.name === 'registry');
    assert.ok(starter, 'registry is in devserver/index.ts');
    const saved = process.env.GANTRY_DEV_REGISTRY_PORT;
    process.env.GANTRY_DEV_REGISTRY_PORT = '0';
    const state = await tempDir('dev');
    const server = await starter.start({ host: '127.0.0.1', examplesDir: examplesDir(), stateDir: state.dir });
    try {
      if (saved === undefined) delete process.env.GANTRY_DEV_REGISTRY_PORT;
      else process.env.GANTRY_DEV_REGISTRY_PORT = saved;
      const manifest = JSON.parse(await readFile(path.join(examplesDir(), 'gantry.modules.json'), 'utf8')) as Record<
        string,
        { source: string; version: string }
      >;
      assert.ok(Object.keys(manifest).length >= 2);
      for (const [name, entry] of Object.entries(manifest)) {
        const [host, ...tail] = entry.source.split('/');
        assert.equal(host, `127.0.0.1:${DEV_REGISTRY_PORT}`, `${name} names the dev registry's host`);
        const versions = await get(`${server.url}/v1/modules/${tail.join('/')}/versions`);
        assert.equal(versions.status, 200, entry.source);
        const available = versions.body.modules[0].versions.map((v: { version: string }) => v.version);
        // Terraform's "~> 1.0" is semver's "^1.0" for a two-part version; comma means "and".
        const range = entry.version.replace(/~>\s*(\d+)\.(\d+)$/, '^$1.$2.0').replace(/,/g, ' ');
        assert.ok(semver.maxSatisfying(available, range), `${name}: ${entry.version} matches one of ${available.join(', ')}`);
      }
      const detail = await get(`${server.url}/v1/modules/gantry/network/aws`);
      assert.equal(detail.body.version, '1.1.0', 'the pre-release 2.0.0-beta.1 is not latest');
      assert.equal(detail.body.verified, true);
      assert.ok(detail.body.root.resources.length >= 3);
    } finally {
      await server.stop();
      await state.remove();
    }
  });

  it('GANTRY_DEV_REGISTRY_PORT: default 5758, 0 for any port, anything else is refused', () => {
    assert.equal(devRegistryPort({}), 5758);
    assert.equal(devRegistryPort({ GANTRY_DEV_REGISTRY_PORT: '0' }), 0);
    assert.equal(devRegistryPort({ GANTRY_DEV_REGISTRY_PORT: '6000' }), 6000);
    for (const bad of ['-1', '65536', 'http', '1e3']) assert.throws(() => devRegistryPort({ GANTRY_DEV_REGISTRY_PORT: bad }), /GANTRY_DEV_REGISTRY_PORT/);
  });

  it('the example registry falls back to a free port when 5758 is taken, unless the port was asked for', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve, reject) => blocker.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
    const taken = String((blocker.address() as net.AddressInfo).port);
    const context = { host: '127.0.0.1', examplesDir: examplesDir() };
    try {
      await assert.rejects(startExampleRegistry(context, { GANTRY_DEV_REGISTRY_PORT: taken }), /port \d+ on 127\.0\.0\.1 is in use/);
      // The default port is only known to be busy if something holds it; hold it ourselves when it is free.
      const holder = net.createServer();
      const held = await new Promise<boolean>((resolve) =>
        holder.once('error', () => resolve(false)).listen(DEV_REGISTRY_PORT, '127.0.0.1', () => resolve(true)),
      );
      try {
        const server = await startExampleRegistry(context, {});
        try {
          assert.notEqual(new URL(server.url).port, String(DEV_REGISTRY_PORT));
          assert.equal((await get(`${server.url}/v1/modules/gantry/bucket/aws/versions`)).status, 200);
        } finally {
          await server.stop();
        }
      } finally {
        if (held) await new Promise((resolve) => holder.close(resolve));
      }
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('GANTRY_DEV_REGISTRY_TOKEN makes the example registry require the token and report it as its credentials', async () => {
    const server = await startExampleRegistry(
      { host: '127.0.0.1', examplesDir: examplesDir() },
      { GANTRY_DEV_REGISTRY_PORT: '0', GANTRY_DEV_REGISTRY_TOKEN: 'dev-tok' },
    );
    try {
      assert.deepEqual(server.credentials, { token: 'dev-tok' });
      assert.equal((await get(`${server.url}/v1/modules/gantry/bucket/aws/versions`)).status, 401);
      assert.equal((await get(`${server.url}/v1/modules/gantry/bucket/aws/versions`, { headers: { authorization: 'Bearer dev-tok' } })).status, 200);
    } finally {
      await server.stop();
    }
  });

  it('gantry dev registry --dir <folder> --port 0 --fault <json> serves that folder, faults armed, until SIGTERM', async () => {
    const temp = await tempDir('cli');
    try {
      await writeVersion(temp.dir, 'team/app/aws', '0.3.0', { 'main.tf': 'output "x" { value = 1 }\n' });
      const fault = JSON.stringify({ path: '/v1/modules/*/*/*/versions', kind: 'status', status: 503, times: 1 });
      const { child, url, stdout } = await startCli(['--dir', temp.dir, '--port', '0', '--latency', '5', '--fault', fault]);
      try {
        assert.match(stdout(), /address modules as 127\.0\.0\.1:\d+\/<namespace>\/<name>\/<provider>/);
        assert.equal((await get(`${url}/v1/modules/team/app/aws/versions`)).status, 503, 'the --fault fires once');
        const versions = await get(`${url}/v1/modules/team/app/aws/versions`);
        assert.deepEqual(
          versions.body.modules[0].versions.map((v: { version: string }) => v.version),
          ['0.3.0'],
        );
      } finally {
        child.kill('SIGTERM');
        assert.equal(await exited(child), 0);
      }
    } finally {
      await temp.remove();
    }
  });

  it('gantry dev registry refuses bad input with exit code 2 and the reason', async () => {
    for (const [args, message] of [
      [['--dir', '/nonexistent/modules', '--port', '0'], /module folder \/nonexistent\/modules does not exist/],
      [['--s3', 's3://Not_A_Bucket', '--port', '0'], /not an S3 location/],
      [['--dir', '.', '--s3', 's3://bucket'], /choose --dir or --s3/],
      [['--port', 'eighty'], /--port must be a whole number/],
      [['--port', '0', '--fault', '{"kind":"explode"}'], /--fault .*fault kind must be one of/],
    ] as const) {
      const child = spawnGantry(['dev', 'registry', ...args]);
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      assert.equal(await exited(child), 2, args.join(' '));
      assert.match(stderr, message);
    }
  });
});
