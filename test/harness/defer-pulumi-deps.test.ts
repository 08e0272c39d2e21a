// The preload of the plugin and the program host (defer-pulumi-deps.cjs): @pulumi/pulumi loads without what they do
// not use, the first read through a stand-in gets the real module, and TypeScript compiles from a code cache.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './consumer.js';
import { harnessNodeArgs } from './node-flags.js';

const run = promisify(execFile);

const deferred = [
  '@npmcli/arborist',
  'typescript',
  '@grpc/grpc-js',
  '@opentelemetry/api',
  '@pulumi/pulumi/automation',
  '@pulumi/pulumi/provider',
  'js-yaml',
  'execa',
  'semver',
  'normalize-package-data',
];

const probe = `
const loaded = (name) => Object.keys(require.cache).some((file) => file.includes('/node_modules/' + name + '/'));
const pulumi = require('@pulumi/pulumi');
const before = Object.fromEntries(${JSON.stringify(deferred)}.map((name) => [name, loaded(name)]));
const shim = require('@pulumi/pulumi/typescript-shim');
const kind = shim.SyntaxKind.ArrowFunction;
const real = require('typescript');
const same = kind === real.SyntaxKind.ArrowFunction && shim.createSourceFile === real.createSourceFile;
// Reads through the stand-ins reach the real modules: a gRPC status (errors.js), a run of pulumi's own
// automation command (execa's function), a package.json normalized (normalize-package-data's function).
const grpc = require('@grpc/grpc-js');
const execa = require('execa');
const normalize = require('normalize-package-data');
const pkg = { name: 'x', version: '1.0.0' };
normalize(pkg);
pulumi.runtime.serializeFunction(() => kind).then(async (serialized) => {
  const { stdout } = await execa(process.execPath, ['-e', 'process.stdout.write("ran")']);
  console.log(JSON.stringify({ before, after: loaded('typescript'), same, grpc: grpc.status.NOT_FOUND, ran: stdout, normalized: pkg._id, serialized: serialized.text.includes('kind'), automation: typeof pulumi.automation.LocalWorkspace.create }));
});
`;

describe('engine harness: the plugin and the program host defer what @pulumi/pulumi loads and they do not use', function () {
  this.timeout(60_000);

  it('@pulumi/pulumi loads without arborist, TypeScript, gRPC, OpenTelemetry, the Automation API, the provider server, js-yaml, execa, semver and normalize-package-data; reads through the stand-ins get the real modules', async () => {
    const { stdout } = await run(process.execPath, [...harnessNodeArgs, '-e', probe], { cwd: repoRoot });
    assert.deepEqual(JSON.parse(stdout), {
      before: Object.fromEntries(deferred.map((name) => [name, false])),
      after: true,
      same: true,
      grpc: 5,
      ran: 'ran',
      normalized: 'x@1.0.0',
      serialized: true,
      automation: 'function',
    });
  });

  it('without the preload they all load with @pulumi/pulumi (what the preload saves)', async () => {
    const { stdout } = await run(process.execPath, ['-e', probe], { cwd: repoRoot });
    assert.deepEqual(JSON.parse(stdout).before, Object.fromEntries(deferred.map((name) => [name, true])));
  });

  it('TypeScript compiles from a code cache the first process writes and the next reuses; a cache V8 rejects is rewritten', async () => {
    const temp = await mkdtemp(path.join(tmpdir(), 'gantry-compile-cache-'));
    try {
      const env = { ...process.env, TMPDIR: temp };
      const serialize = () => run(process.execPath, [...harnessNodeArgs, '-e', probe], { cwd: repoRoot, env });
      const cacheDir = path.join(temp, 'gantry-harness-compile-cache');
      assert.equal(JSON.parse((await serialize()).stdout).serialized, true);
      if (typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function') {
        // Node >= 22.1: Node's own compile cache, in the same folder.
        assert.ok((await readdir(cacheDir, { recursive: true })).length > 0, 'Node wrote no compile cache');
        return;
      }
      const files = (await readdir(cacheDir)).filter((name) => name.endsWith('.v8'));
      assert.equal(files.length, 1, `one code cache for TypeScript: ${files.join(', ')}`);
      const file = path.join(cacheDir, files[0]!);
      const written = await stat(file);
      assert.ok(written.size > 100_000, `a code cache of ${written.size} bytes`);
      assert.equal(JSON.parse((await serialize()).stdout).same, true);
      assert.equal((await stat(file)).mtimeMs, written.mtimeMs, 'an accepted cache is not written again');
      await writeFile(file, Buffer.alloc(written.size, 7));
      assert.equal(JSON.parse((await serialize()).stdout).same, true);
      assert.ok((await stat(file)).mtimeMs > written.mtimeMs && (await stat(file)).size !== 0, 'a rejected cache is rewritten');
      assert.notDeepEqual((await readFile(file)).subarray(0, 64), Buffer.alloc(64, 7));
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  });
});
