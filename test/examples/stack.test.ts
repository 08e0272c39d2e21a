// examples/stack/index.ts — the program Pulumi.yaml runs and README presents — run as a user's program: in a consumer
// project with the packed gantry installed, through the real dynamic-provider plugin, against the embedded dev servers
// (registry, kv server, page-analysis API) and the demo site on 127.0.0.1, with the configuration the example reads.
// The harness loads JavaScript, so the test transpiles the example (types erased, nothing else changed) instead of
// keeping a second copy of it. And Pulumi.yaml's runtime settings load the TypeScript file itself in this ESM package
// root, as `pulumi up` would; and README shows an excerpt of it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { serveDemoSite, type DemoSite } from '../../lib/cli/commands/demo/site.js';
import { startDevPageanalysis, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { startExampleRegistry, type RegistryServer } from '../../devserver/registry/index.js';
import { startDevSecrets, type SecretsServer } from '../../devserver/secrets/index.js';
import { examplesDir } from '../../lib/paths.js';
import { SecretsClient } from '../../lib/secrets/index.js';
import { assertProviderHygiene, Harness, packOnce, type ConsumerKind, type Stack } from '../harness/index.js';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const exampleFile = path.join(repoRoot, 'examples', 'stack', 'index.ts');

/** The values of Pulumi.yaml this test relies on (flat `key: value` lines; a full YAML parser is not a dependency). */
async function pulumiYaml(): Promise<{ name: string; main: string; typescript: string; nodeargs: string }> {
  const text = await readFile(path.join(repoRoot, 'Pulumi.yaml'), 'utf8');
  const value = (key: string): string => {
    const match = new RegExp(`^\\s*${key}:\\s*(.*)$`, 'm').exec(text);
    assert.ok(match, `Pulumi.yaml sets ${key}`);
    return match[1]!.trim().replace(/^(["'])(.*)\1$/, '$2');
  };
  return { name: value('name'), main: value('main'), typescript: value('typescript'), nodeargs: value('nodeargs') };
}

/** The example as a CommonJS or ES-module file: TypeScript's own transpiler, types erased. */
async function transpiled(kind: ConsumerKind, dir: string): Promise<string> {
  const source = await readFile(exampleFile, 'utf8');
  const module = kind === 'esm' ? ts.ModuleKind.ESNext : ts.ModuleKind.CommonJS;
  const { outputText, diagnostics } = ts.transpileModule(source, {
    fileName: exampleFile,
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module, esModuleInterop: true },
  });
  assert.deepEqual(
    diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    [],
  );
  const file = path.join(dir, `stack.${kind === 'esm' ? 'mjs' : 'cjs'}`);
  await writeFile(file, outputText);
  return file;
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const RESOURCES = ['network', 'database', 'home', 'home-title'];
const EXPORTS = ['browser', 'modulePath', 'moduleVersion', 'network', 'scores', 'secretVersion'];

describe('examples/stack (the program Pulumi.yaml runs) in a consumer project against the embedded dev servers', function () {
  this.timeout(900_000);
  const canaryPassword = `canary-db-password-${Math.random().toString(36).slice(2)}`;
  let dir: string;
  let registry: RegistryServer;
  let secrets: SecretsServer & { env: Record<string, string> };
  let pageanalysis: PageanalysisServer;
  let site: DemoSite;
  let project: string;
  let stack: Stack | undefined;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gantry-example-stack-'));
    // Ephemeral ports: a `gantry dev` running on this machine keeps its well-known ones.
    const context = { host: '127.0.0.1', examplesDir: examplesDir(), stateDir: dir };
    registry = await startExampleRegistry(context, { GANTRY_DEV_REGISTRY_PORT: '0' });
    secrets = await startDevSecrets(context, { GANTRY_DEV_SECRETS_PORT: '0' });
    pageanalysis = await startDevPageanalysis(context, { GANTRY_DEV_PAGEANALYSIS_PORT: '0' });
    site = await serveDemoSite(examplesDir());
    project = (await pulumiYaml()).name;
  });
  after(async () => {
    await stack?.dispose();
    await Promise.allSettled([site?.stop(), pageanalysis?.stop(), secrets?.stop(), registry?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await stack?.dispose();
    stack = undefined;
  });

  /** What the example's header says to set: `gantry dev`'s credentials in the environment, the stack config. */
  function consumer(kind: ConsumerKind): Promise<Stack> {
    return Harness.consumer({
      kind,
      project,
      env: { ...secrets.env, ...pageanalysis.credentials },
      config: { registryHost: registry.host, siteUrl: site.url, dbPassword: { secret: canaryPassword }, release: 'r1' },
      // The gate's three Lighthouse runs and the browser check run while the program waits on them.
      programTimeoutMs: 600_000,
    });
  }

  it('esm: up creates every resource (module pinned from the registry, kv secret, page-analysis gate through the API, browser check) and exports what the example exports; the db password, kv token and API key leak nowhere; the next up changes nothing; destroy removes them', async () => {
    const s = (stack = await consumer('esm'));
    const up = await s.up(await transpiled('esm', dir));
    assert.deepEqual(up.plan, Object.fromEntries(RESOURCES.map((name) => [name, 'create'])));
    assert.deepEqual(Object.keys(up.resources).sort(), [...RESOURCES].sort());
    assert.deepEqual(Object.keys(up.outputs).sort(), EXPORTS);
    assert.deepEqual(up.secretOutputs, [], 'the secret password is not exported');

    // RegistryModule: ~> 1.0 over 1.0.0, 1.1.0 and 2.0.0-beta.1 pins 1.1.0, installed under the program's folder.
    const network = up.resources.network!;
    assert.equal(up.outputs.moduleVersion, '1.1.0');
    assert.equal(network.outputs.version, '1.1.0');
    assert.equal(up.outputs.modulePath, network.outputs.path);
    assert.equal(up.outputs.modulePath, path.join(s.dir, '.gantry', 'modules', 'gantry-network-aws'));
    assert.ok(existsSync(path.join(String(up.outputs.modulePath), 'main.tf')), 'the module is installed');
    const exportedNetwork = up.outputs.network as Record<string, unknown>;
    assert.equal(exportedNetwork.version, '1.1.0');
    assert.equal(exportedNetwork.address, network.outputs.address);
    assert.equal(exportedNetwork.hash, network.outputs.hash);

    // KvSecret: version 1 of secret/example/database holds exactly what the example declares.
    assert.equal(up.outputs.secretVersion, 1);
    assert.ok(up.resources.database!.secretOutputs.includes('data'), 'data is a secret output');
    const admin = new SecretsClient({ address: secrets.url, token: secrets.rootToken, sources: { env: {}, pulumi: undefined } });
    try {
      const live = await admin.kv('secret').read('example/database');
      assert.deepEqual(live.data, { username: 'app', password: canaryPassword });
      assert.deepEqual((await admin.kv('secret').readMetadata('example/database'))?.customMetadata, { owner: 'platform' });
    } finally {
      admin.close();
    }

    // PageAnalysisGate: 3 runs through the embedded API (its key from the environment), every category at 0.9 or more.
    const home = up.resources.home!;
    assert.equal(home.outputs.passed, true);
    assert.equal(home.outputs.engineUsed, 'api');
    assert.deepEqual(up.outputs.scores, home.outputs.scores);
    const scores = up.outputs.scores as Record<string, number>;
    for (const category of ['performance', 'accessibility', 'best-practices', 'seo']) {
      assert.ok(scores[category]! >= 0.9, `${category} ${scores[category]} >= 0.9`);
    }
    const analyses = pageanalysis.requests.filter((r) => r.status === 200);
    assert.equal(analyses.length, 3, 'three runs reached the API');
    assert.ok(analyses.every((r) => r.query.some(([key, value]) => key === 'url' && value === site.url)));

    // BrowserCheck: the demo site's title contains 'Gantry'; it ran after the gate (dependsOn).
    const browser = up.outputs.browser as Record<string, unknown>;
    assert.equal(browser.passed, true);
    assert.equal(browser.pageTitle, 'Gantry demo site');
    assert.equal(browser.url, site.url);
    assert.ok(Date.parse(String(browser.checkedAt)) >= Date.parse(String(home.outputs.analyzedAt)), 'the browser check ran after the gate');

    await assertProviderHygiene(s, up, [canaryPassword, secrets.rootToken, pageanalysis.credentials.PAGEANALYSIS_API_KEY!]);

    // Same program, same config: Check and Diff only — no new analysis, no kv write.
    const again = await s.up(await transpiled('esm', dir));
    assert.deepEqual(again.plan, Object.fromEntries(RESOURCES.map((name) => [name, 'same'])));
    assert.equal(pageanalysis.requests.filter((r) => r.status === 200).length, 3, 'the gate did not run again');
    await assertProviderHygiene(s, again, [canaryPassword, secrets.rootToken]);

    const destroyed = await s.destroy();
    assert.deepEqual(destroyed.plan, Object.fromEntries(RESOURCES.map((name) => [name, 'delete'])));
    assert.deepEqual(destroyed.resources, {});
    const check = new SecretsClient({ address: secrets.url, token: secrets.rootToken, sources: { env: {}, pulumi: undefined } });
    try {
      assert.notEqual((await check.kv('secret').read('example/database')).state, 'current', 'destroy deleted the secret');
    } finally {
      check.close();
    }
    const state = await readFile(s.statePath, 'utf8');
    assert.ok(!state.includes(canaryPassword) && !s.log.includes(canaryPassword));
  });

  it('cjs: as a CommonJS program (the default Pulumi TypeScript project) the example previews every resource as a create, its checks accepting the config', async () => {
    const s = (stack = await consumer('cjs'));
    const preview = await s.preview(await transpiled('cjs', dir));
    assert.deepEqual(preview.plan, Object.fromEntries(RESOURCES.map((name) => [name, 'create'])));
    assert.deepEqual(Object.keys(preview.outputs).sort(), EXPORTS);
    assert.equal(preview.steps.find((step) => step.name === 'network')?.inputs?.source, `${registry.host}/gantry/network/aws`);
    assert.deepEqual(preview.steps.find((step) => step.name === 'home')?.inputs?.triggers, { release: 'r1' });
    const state = await readFile(s.statePath, 'utf8');
    assert.ok(!state.includes(canaryPassword) && !s.log.includes(canaryPassword), 'the db password is in neither the state nor the log');
  });

  it("Pulumi.yaml: main is examples/stack/, whose index.ts node loads in this ESM package root with the runtime's nodeargs (tsx) and typescript off, 'gantry/providers' resolving to the build; the program registers every resource", async () => {
    await packOnce(); // builds dist/, which 'gantry/providers' points to
    const settings = await pulumiYaml();
    assert.equal(settings.main.replace(/\/$/, ''), 'examples/stack');
    assert.equal(settings.typescript, 'false', "Pulumi's own ts-node registration stays off: the loader in nodeargs compiles");
    assert.equal(JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')).type, 'module');
    // What Pulumi's nodejs runtime does with that project (@pulumi/pulumi cmd/run): node with the nodeargs, in the
    // project's folder; a "type": "module" package's main folder is loaded with import(), index.ts when there is no
    // index.js. Here under setMocks instead of an engine, printing what registers.
    assert.ok(!existsSync(path.join(repoRoot, settings.main, 'index.js')), 'no index.js would shadow index.ts');
    const host = `
      import * as pulumi from '@pulumi/pulumi';
      await pulumi.runtime.setMocks({
        newResource: (args) => { console.log('registered ' + args.name); return { id: args.name, state: args.inputs }; },
        call: () => ({}),
      }, ${JSON.stringify(settings.name)}, 'dev', true);
      const program = await import(${JSON.stringify(pathToFileURL(path.join(repoRoot, settings.main, 'index.ts')).href)});
      console.log('exports ' + Object.keys(program).sort().join(','));
      console.log('gantry/providers ' + import.meta.resolve('gantry/providers'));
    `;
    const config = { [`${settings.name}:siteUrl`]: 'http://127.0.0.1:9/', [`${settings.name}:dbPassword`]: canaryPassword };
    const { stdout } = await run(process.execPath, [...settings.nodeargs.split(/\s+/), '--input-type=module', '--eval', host], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PULUMI_CONFIG: JSON.stringify(config),
        PULUMI_CONFIG_SECRET_KEYS: JSON.stringify([`${settings.name}:dbPassword`]),
      },
    });
    for (const name of RESOURCES) assert.match(stdout, new RegExp(`^registered ${name}$`, 'm'));
    assert.match(stdout, new RegExp(`^exports ${EXPORTS.join(',')}$`, 'm'));
    assert.match(stdout, new RegExp(`^gantry/providers ${escape(pathToFileURL(path.join(repoRoot, 'dist', 'providers', 'index.js')).href)}$`, 'm'));
  });

  it("README's Pulumi snippet is an excerpt of the example: each of its lines is a line of examples/stack/index.ts, in the same order", async () => {
    const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Pulumi\n'), readme.indexOf('\n## ', readme.indexOf('\n## Pulumi\n') + 1));
    const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(snippet, "README's Pulumi section has a ts snippet");
    const example = (await readFile(exampleFile, 'utf8')).split('\n');
    let at = 0;
    for (const line of snippet.split('\n').filter((l) => l.trim() !== '')) {
      const found = example.indexOf(line, at);
      assert.ok(found >= 0, `README's line is not in the example (or out of order): ${line}`);
      at = found + 1;
    }
  });
});
