// The packed gantry as a Pulumi program loads it: `require` from a default (CommonJS) Pulumi
// TypeScript project, `import` from an ES-module one.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Harness, type ConsumerKind } from './index.js';
import { repoRoot } from './consumer.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const loadGantry = { cjs: path.join(programs, 'load-gantry.cjs'), esm: path.join(programs, 'load-gantry.mjs') };

describe('engine harness: a consumer project loads the packed gantry', function () {
  this.timeout(120_000);
  for (const kind of ['cjs', 'esm'] as ConsumerKind[]) {
    it(`${kind === 'cjs' ? "a CommonJS program require()s 'gantry' and 'gantry/providers' (Node >= 20.19 require(esm))" : "an ES-module program imports 'gantry' and 'gantry/providers'"}`, async () => {
      const { version } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
      const stack = await Harness.consumer({ kind });
      try {
        const installed = await readFile(path.join(stack.dir, 'node_modules/gantry/package.json'), 'utf8');
        assert.equal((JSON.parse(installed) as { version: string }).version, version, 'the tarball is installed as node_modules/gantry');
        const result = await stack.up(loadGantry);
        assert.equal(result.outputs.version, version);
        const libraryExports = result.outputs.libraryExports as string[];
        for (const name of ['version', 'createHttpClient', 'HttpError', 'GantryError']) {
          assert.ok(libraryExports.includes(name), `gantry exports ${name}: ${libraryExports.join(', ')}`);
        }
        assert.ok(Array.isArray(result.outputs.providerExports), 'gantry/providers loads');
      } finally {
        await stack.dispose();
      }
    });
  }
});
