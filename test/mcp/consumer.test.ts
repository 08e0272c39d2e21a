/**
 * docs/mcp.md's library example, run as a user's program would run it: in a consumer project with the packed gantry
 * installed, as an ES module (`import`) and as CommonJS (`require`), against a context server on loopback (without
 * authorization: signing in is tested beside it) whose tool reaches the embedded registry.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startRegistryServer, type RegistryServer } from '../../devserver/registry/index.js';
import { silentLogger } from '../../lib/log.js';
import { startContextServer, type ContextServer } from '../../lib/mcp/index.js';
import { createConsumer, removeTempDir, repoRoot } from '../harness/consumer.js';

const run = promisify(execFile);

async function libraryExample(): Promise<string> {
  const docs = await readFile(path.join(repoRoot, 'docs/mcp.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## The library'));
  const block = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'docs/mcp.md has a js example under "The library"');
  return block[1]!;
}

describe('mcp: the library example of docs/mcp.md in a consumer project (ESM and CommonJS)', function () {
  this.timeout(240_000);
  let registry: RegistryServer;
  let server: ContextServer;
  before(async () => {
    registry = await startRegistryServer({ dir: path.join(repoRoot, 'examples/modules') });
    server = await startContextServer({ auth: false, env: {}, logger: silentLogger });
  });
  after(async () => {
    await server?.stop();
    await registry?.stop();
  });

  for (const kind of ['esm', 'cjs'] as const) {
    it(`${kind}: connectContextServer lists the tools and calls one`, async () => {
      const example = (await libraryExample())
        .replace('https://mcp.example.com/mcp', server.url)
        .replace('hashicorp/consul/aws', `${new URL(registry.url).host}/gantry/network/aws`);
      const program =
        kind === 'esm'
          ? example
          : `${example.replace("import { connectContextServer } from 'gantry';", "const { connectContextServer } = require('gantry');").replace(/^(?!const \{ connectContextServer \})/m, '(async () => {\n')}\n})();\n`;
      const dir = await createConsumer(kind, `mcp-consumer-${kind}`);
      try {
        const file = path.join(dir, kind === 'esm' ? 'example.mjs' : 'example.cjs');
        await writeFile(file, program);
        const { stdout } = await run(process.execPath, [file], { cwd: dir, env: { PATH: process.env.PATH ?? '' } });
        const [count, ...rest] = stdout.trim().split(' ');
        assert.equal(count, '6', stdout);
        const structured = rest.join(' ');
        assert.match(structured, /versions/);
        assert.match(structured, /1\.1\.0/);
      } finally {
        await removeTempDir(dir);
      }
    });
  }
});
