// The serialized provider methods — the functions Pulumi turns into each resource's `__provider` — come from one
// factory, providers/serialized.ts (the design card's "providers/" line), not a copy per resource:
//   - a scan of providers/*.ts fails when a provider writes its own methods again (an inline import(), an object
//     typed ResourceProvider, a super() given anything but a serializedProvider(...) made at module level);
//   - the factory itself, serialized by Pulumi's closure serializer, forwards each method to the named export of the
//     named module, with Configure's settings first where asked;
//   - every resource, previewed in CommonJS and ES-module consumers through the real dynamic-provider plugin
//     (Configure and Check run there), has a `__provider` that is small, holds no implementation code and no
//     credential, is the same text for two resources of one type, and forwards each method to its operation with
//     the arguments that operation takes.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as pulumi from '@pulumi/pulumi';
import * as providers from '../../providers/index.js';
import { serializedProvider, type EngineMethod } from '../../providers/serialized.js';
import { makeTempDir } from '../harness/consumer.js';
import { Harness, type ConsumerKind, type OperationResult } from '../harness/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const providersDir = path.resolve(here, '../../providers');
const programs = path.join(here, 'programs');
const program = { cjs: path.join(programs, 'every-resource.cjs'), esm: path.join(programs, 'every-resource.mjs') };

/** What the dynamic-provider plugin passes each method (cmd/dynamic-provider of @pulumi/pulumi). */
const engineArity: Record<EngineMethod, number> = { check: 2, diff: 3, create: 1, read: 2, update: 3, delete: 2 };
const engineMethods = Object.keys(engineArity) as EngineMethod[];

/** "Small": 2.6 to 3.5 KB each today (built, in a consumer); one operations object inlined by mistake is far more. */
const SMALL_BYTES = 6 * 1024;

type Operations = Record<string, (...args: unknown[]) => unknown>;
const operationsExports = Object.fromEntries(Object.entries(providers).filter(([name]) => name.endsWith('Operations'))) as Record<string, Operations>;

const calls = Symbol.for('gantry.test.serialized-factory.calls');
type Call = { exportName: string; method: string; args: unknown[] };
const recorded = (): Call[] => ((globalThis as Record<symbol, Call[]>)[calls] ??= []);

/** A module exporting `names`, each an object whose every method records its call and answers `{ from: method }`. */
async function recordingModule(names: string[]): Promise<string> {
  const dir = await makeTempDir('gantry-serialized-factory-');
  const file = path.join(dir, 'operations.mjs');
  const record = `(exportName) => new Proxy({}, { get: (_, method) => (...args) => {
    (globalThis[Symbol.for('gantry.test.serialized-factory.calls')] ??= []).push({ exportName, method, args });
    return { from: method };
  } })`;
  await writeFile(file, `const record = ${record};\n${names.map((name) => `export const ${name} = record(${JSON.stringify(name)});`).join('\n')}\n`);
  return pathToFileURL(file).href;
}

interface Deserialized {
  settings?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The provider object a `__provider` text gives, deserialized as the plugin does (`require-from-string`, then handler()). */
function deserialize(text: string): Deserialized {
  const exports: { handler?: () => Deserialized } = {};
  new Function('exports', 'require', 'module', text)(exports, undefined, undefined);
  return exports.handler!();
}

/** Calls a method of the deserialized provider as the plugin does: `provider.method(...args)`. */
function call(provider: Deserialized, method: string, ...args: unknown[]): Promise<unknown> {
  return (provider[method] as (...a: unknown[]) => Promise<unknown>).apply(provider, args);
}

const config = { get: (key: string) => `config:${key}` };

/** One of each resource (two KvSecrets), with inputs their Check accepts; the secret's data holds the canary. */
const everyResource = (canary: string) => [
  { resource: 'KvSecret', name: 'kv-a', args: { mount: 'secret', path: 'app/a', data: { password: canary } } },
  { resource: 'KvSecret', name: 'kv-b', args: { mount: 'secret', path: 'app/b', data: { password: canary } } },
  { resource: 'RegistryModule', name: 'module', args: { source: 'registry.example.test/acme/network/aws', version: '~> 1.0' } },
  { resource: 'PageAnalysisGate', name: 'gate', args: { url: 'https://site.example.test/', thresholds: { performance: 0.9 } } },
  { resource: 'BrowserCheck', name: 'browser', args: { url: 'https://site.example.test/', title: 'Home' } },
  { resource: 'CommitStatus', name: 'status', args: { repository: 'acme/site', sha: 'a'.repeat(40), context: 'gantry/gate', state: 'success' } },
  { resource: 'StorageFolder', name: 'folder', args: { name: 'reports' } },
  { resource: 'StorageFile', name: 'file', args: { parent: 'root', name: 'a.txt', content: canary } },
  { resource: 'StoragePermission', name: 'permission', args: { fileId: 'abc123', role: 'reader', type: 'anyone' } },
];

describe('serialized provider methods come from one factory (providers/serialized.ts)', function () {
  describe('architecture: no provider keeps its own copy', () => {
    const files = readdirSync(providersDir).filter((file) => file.endsWith('.ts') && file !== 'serialized.ts');
    const sources = files.map((file) => ({ file, source: readFileSync(path.join(providersDir, file), 'utf8') }));
    const withoutComments = (source: string) => source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    const resources = sources.filter(({ source }) => /\bextends\s+\w+\.Resource\b/.test(withoutComments(source)));

    it('LAYER-PROVIDERS: only resource.ts extends pulumi.dynamic.Resource; every resource class extends the Resource of a resourceType(…)', () => {
      const direct = sources.filter(({ source }) => /extends\s+pulumi\.dynamic\.Resource\b/.test(source)).map(({ file }) => file);
      assert.deepEqual(direct, ['resource.ts']);
    });

    it('finds the eight dynamic resources of providers/', () => {
      assert.deepEqual(resources.map(({ file }) => file).sort(), [
        'browser-check.ts',
        'commit-status.ts',
        'kv-secret.ts',
        'page-analysis-gate.ts',
        'registry-module.ts',
        'storage-file.ts',
        'storage-folder.ts',
        'storage-permission.ts',
      ]);
    });

    it('only serialized.ts loads code at run time or writes a ResourceProvider: no import(), no configure method, no provider object literal elsewhere', () => {
      for (const { file, source } of sources) {
        const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
        assert.doesNotMatch(code, /\bimport\s*\(/, `${file}: a dynamic import() — serialized methods belong in providers/serialized.ts`);
        assert.doesNotMatch(code, /\bResourceProvider\b/, `${file}: a ResourceProvider of its own — use serializedProvider()`);
        assert.doesNotMatch(code, /\bconfigure\s*\(/, `${file}: a configure method of its own — use serializedProvider()`);
      }
    });

    it('every resource class extends the Resource of one resourceType(…) declaration at module level, whose operations gantry/providers exports', () => {
      for (const { file, source } of resources) {
        const supers = [...withoutComments(source).matchAll(/\bclass\s+\w+\s+extends\s+(\w+)\.Resource\b/g)].map((match) => match[1]!);
        assert.equal(supers.length, 1, `${file}: one resource class`);
        const declared = new RegExp(`^export const ${supers[0]} = resourceType<[^>]*>\\(\\)\\(\\{\\n(?:  .*\\n)*?  operations: '(\\w+)',`, 'm').exec(source);
        assert.ok(
          declared,
          `${file}: the class extends ${supers[0]}.Resource, which must be \`export const ${supers[0]} = resourceType<…>()({ …, operations: '…' })\` at module level`,
        );
        assert.ok(operationsExports[declared[1]!], `${file}: ${declared[1]} is not exported by providers/index.ts, so the plugin could not load it`);
        // resourceType loads the operations from the sibling module named after them: kvSecretOperations, ./kv-secret-operations.js.
        const module = `${declared[1]!.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}.ts`;
        assert.equal(module, file.replace(/\.ts$/, '-operations.ts'), `${file}: its operations are named after another module`);
        assert.ok(existsSync(path.join(providersDir, module)), `${file}: ${module} is missing`);
      }
    });
  });

  describe('the factory, through Pulumi’s closure serializer', () => {
    it('forwards each method to the named export, settings first where asked; Configure keeps the configured keys; absent methods stay absent', async () => {
      const module = await recordingModule(['fakeOperations']);
      const made = serializedProvider('fakeOperations', {
        config: { address: 'gantry:fakeAddr', token: 'gantry:fakeToken' },
        withSettings: ['create', 'update'],
        withoutSettings: ['check', 'read'],
        module,
      });
      const { text } = await pulumi.runtime.serializeFunction(() => made);
      const provider = deserialize(text);
      assert.deepEqual(Object.keys(provider).sort(), ['check', 'configure', 'create', 'read', 'update']);
      await call(provider, 'configure', { config });
      assert.deepEqual(provider.settings, { address: 'config:gantry:fakeAddr', token: 'config:gantry:fakeToken' });
      recorded().length = 0;
      assert.deepEqual(await call(provider, 'create', { a: 1 }), { from: 'create' });
      assert.deepEqual(await call(provider, 'check', { o: 1 }, { n: 1 }), { from: 'check' });
      assert.deepEqual(recorded(), [
        { exportName: 'fakeOperations', method: 'create', args: [provider.settings, { a: 1 }] },
        { exportName: 'fakeOperations', method: 'check', args: [{ o: 1 }, { n: 1 }] },
      ]);
    });

    it('a list of keys keeps each under its own key', async () => {
      const made = serializedProvider('fakeOperations', { config: ['gantry:a', 'gantry:b'], withSettings: [], withoutSettings: ['create'] });
      const provider = deserialize((await pulumi.runtime.serializeFunction(() => made)).text);
      await call(provider, 'configure', { config });
      assert.deepEqual(provider.settings, { 'gantry:a': 'config:gantry:a', 'gantry:b': 'config:gantry:b' });
    });

    it('refuses a method listed both with and without settings, and a provider without create', () => {
      assert.throws(() => serializedProvider('x', { config: [], withSettings: ['create', 'read'], withoutSettings: ['read'] }), /read listed both/);
      assert.throws(() => serializedProvider('x', { config: [], withSettings: ['update'], withoutSettings: ['check'] }), /needs create/);
    });
  });

  describe('each resource’s __provider, previewed in consumer projects through the real plugin', function () {
    this.timeout(300_000);
    const canaries = {
      secret: `canary-secret-${Math.random().toString(36).slice(2)}`,
      envToken: `canary-env-${Math.random().toString(36).slice(2)}`,
      configToken: `canary-config-${Math.random().toString(36).slice(2)}`,
    };
    const previews = new Map<ConsumerKind, OperationResult>();
    let recordingUrl: string;

    before(async () => {
      recordingUrl = await recordingModule(Object.keys(operationsExports));
      for (const kind of ['cjs', 'esm'] as ConsumerKind[]) {
        const stack = await Harness.consumer({
          kind,
          env: {
            SECRETS_TOKEN: canaries.envToken,
            GANTRY_PLATFORM_TOKEN: canaries.envToken,
            PAGEANALYSIS_API_KEY: canaries.envToken,
            GANTRY_TOKEN_registry_example_test: canaries.envToken,
            STORAGE_TOKEN: canaries.envToken,
          },
          config: { 'gantry:secretsToken': { secret: canaries.configToken }, 'gantry:pageanalysisApiKey': { secret: canaries.configToken } },
        });
        try {
          previews.set(kind, await stack.preview(program, { resources: everyResource(canaries.secret) }));
          assert.ok(
            !stack.log.includes(canaries.secret) && !stack.log.includes(canaries.envToken) && !stack.log.includes(canaries.configToken),
            'nothing printed a canary',
          );
        } finally {
          await stack.dispose();
        }
      }
    });

    const texts = (kind: ConsumerKind) => {
      const preview = previews.get(kind)!;
      return preview.steps
        .filter((step) => step.type.startsWith('pulumi-nodejs:dynamic/'))
        .map((step) => ({ name: step.name, type: step.type, text: step.inputs?.__provider as string }));
    };

    for (const kind of ['cjs', 'esm'] as ConsumerKind[]) {
      it(`${kind}: Configure and Check of every resource run through the factory’s methods; two resources of one type share one text`, () => {
        const preview = previews.get(kind)!;
        assert.deepEqual(preview.errors, []);
        assert.deepEqual(preview.plan, {
          'kv-a': 'create',
          'kv-b': 'create',
          module: 'create',
          gate: 'create',
          browser: 'create',
          status: 'create',
          folder: 'create',
          file: 'create',
          permission: 'create',
        });
        const all = texts(kind);
        assert.equal(all.length, 9);
        for (const { name, text } of all) assert.equal(typeof text, 'string', `${name}: Check's inputs carry __provider`);
        assert.equal(all.find((t) => t.name === 'kv-a')!.text, all.find((t) => t.name === 'kv-b')!.text, 'one __provider text per resource type');
      });

      it(`${kind}: each __provider is small, has no code but the factory's methods, no require() and no credential`, () => {
        for (const { name, type, text } of texts(kind)) {
          const bytes = Buffer.byteLength(text);
          assert.ok(bytes <= SMALL_BYTES, `${name}: __provider is ${bytes} bytes, over ${SMALL_BYTES}`);
          assert.doesNotMatch(text, /\brequire\(/, `${name}: __provider loads a module when deserialized (a captured module's exports)`);
          const provider = deserialize(text);
          const methods = Object.keys(provider);
          // The handler, Configure, and one function per engine method: nothing else was captured.
          assert.equal(text.match(/^function __/gm)?.length, 1 + methods.length, `${name}: __provider holds functions besides its methods`);
          // The resource's two modules: the class and its provider, and the implementation (<resource>-operations.ts).
          const resourceFile = kebab(type.split(':').at(-2)!);
          const file = [`${resourceFile}.ts`, `${resourceFile}-operations.ts`].map((name) => readFileSync(path.join(providersDir, name), 'utf8')).join('\n');
          for (const identifier of implementationNames(file)) {
            assert.doesNotMatch(text, new RegExp(`\\b${identifier}\\b`), `${name}: __provider mentions ${identifier}, implementation code`);
          }
          for (const canary of Object.values(canaries)) assert.ok(!text.includes(canary), `${name}: a canary is in __provider`);
        }
      });

      it(`${kind}: each method forwards to the operation of its name, with Configure's settings exactly when the operation takes them`, async () => {
        const seen = new Set<string>();
        for (const { name, type, text } of texts(kind)) {
          const exportName = `${lowerFirst(type.split(':').at(-2)!)}Operations`;
          const operations = operationsExports[exportName]!;
          assert.ok(operations, `${name}: ${exportName} is exported by gantry/providers`);
          // gantry/providers hands out lazyOperations' forwarders (rest parameters): the arguments each operation takes
          // are read from the implementation they load.
          const implementation = ((await import(`../../providers/${kebab(type.split(':').at(-2)!)}-operations.js`)) as Record<string, Operations>)[exportName]!;
          assert.ok(implementation, `${name}: ${exportName} is the implementation's export too`);
          const specifiers = text.split('"gantry/providers"').length - 1;
          const provider = deserialize(text.replaceAll('"gantry/providers"', JSON.stringify(recordingUrl)));
          const methods = Object.keys(provider).filter((key) => key !== 'configure');
          assert.equal(specifiers, methods.length, `${name}: each method captures the module's name`);
          assert.deepEqual(
            methods.sort(),
            engineMethods.filter((method) => typeof implementation[method] === 'function').sort(),
            `${name}: a method for each operation the engine calls`,
          );
          await call(provider, 'configure', { config });
          assert.ok(
            Object.values(provider.settings ?? {}).every((value) => typeof value === 'string' && value.startsWith('config:gantry:')),
            `${name}: Configure reads gantry:* keys`,
          );
          for (const method of methods as EngineMethod[]) {
            const engineArgs = Array.from({ length: engineArity[method] }, (_, i) => ({ [`${method}Arg`]: i }));
            recorded().length = 0;
            assert.deepEqual(await call(provider, method, ...engineArgs), { from: method });
            const [forwarded] = recorded();
            assert.equal(forwarded?.exportName, exportName);
            assert.equal(forwarded.method, method);
            const withSettings = forwarded.args.length === engineArgs.length + 1;
            assert.deepEqual(forwarded.args, withSettings ? [provider.settings, ...engineArgs] : engineArgs);
            if (withSettings) assert.equal(forwarded.args[0], provider.settings, `${name}.${method}: the settings Configure kept`);
            assert.equal(
              implementation[method]!.length,
              forwarded.args.length,
              `${name}.${method}: ${exportName}.${method} takes ${implementation[method]!.length} arguments, the serialized method passes ${forwarded.args.length}`,
            );
          }
          seen.add(exportName);
        }
        assert.deepEqual([...seen].sort(), Object.keys(operationsExports).sort(), 'every operations export of gantry/providers has a resource previewed here');
      });
    }
  });
});

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** Names the implementation half of a provider file uses: what it imports from lib/ and the functions it declares. */
function implementationNames(source: string): string[] {
  const names = new Set<string>();
  for (const [, list] of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'\.\.\/lib\/[^']+'/g)) {
    for (const item of list!.split(',')) {
      const name = item.trim();
      if (name && !name.startsWith('type ')) names.add(name.split(/\s+as\s+/).at(-1)!);
    }
  }
  for (const [, name] of source.matchAll(/^(?:async\s+)?function\s+(\w+)/gm)) names.add(name!);
  return [...names];
}

/** `StorageFolder` → `storage-folder`: a resource type's file name. */
function kebab(text: string): string {
  return text.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}
