// The preload of the plugin and the program host (defer-pulumi-deps.cjs): @pulumi/pulumi loads without
// @npmcli/arborist and TypeScript, and the first read through its TypeScript shim gets the real module.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { repoRoot } from './consumer.js';
import { harnessNodeArgs } from './node-flags.js';

const run = promisify(execFile);

const probe = `
const loaded = (name) => Object.keys(require.cache).some((file) => file.includes('/node_modules/' + name + '/'));
require('@pulumi/pulumi');
const before = { arborist: loaded('@npmcli/arborist'), typescript: loaded('typescript') };
const shim = require('@pulumi/pulumi/typescript-shim');
const kind = shim.SyntaxKind.ArrowFunction;
const real = require('typescript');
console.log(JSON.stringify({ before, after: loaded('typescript'), same: kind === real.SyntaxKind.ArrowFunction && shim.createSourceFile === real.createSourceFile }));
`;

describe('engine harness: the plugin and the program host defer what @pulumi/pulumi loads and they do not use', function () {
  this.timeout(60_000);

  it('@pulumi/pulumi loads without arborist and TypeScript, and a read through its TypeScript shim gets the real module', async () => {
    const { stdout } = await run(process.execPath, [...harnessNodeArgs, '-e', probe], { cwd: repoRoot });
    assert.deepEqual(JSON.parse(stdout), { before: { arborist: false, typescript: false }, after: true, same: true });
  });

  it('without the preload both load with @pulumi/pulumi (what the preload saves)', async () => {
    const { stdout } = await run(process.execPath, ['-e', probe], { cwd: repoRoot });
    assert.deepEqual(JSON.parse(stdout).before, { arborist: true, typescript: true });
  });
});
