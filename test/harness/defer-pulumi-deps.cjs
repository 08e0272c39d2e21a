'use strict';
// Loaded with `--require` into the two processes the harness starts per operation — the dynamic-provider plugin and
// the program host — and nowhere else (never into what users run). When @pulumi/pulumi loads, its runtime requires
// @npmcli/arborist (with pacote, sigstore and the npm registry client: for computeCodePaths, which packages function
// serialization's lambdas) and TypeScript (for parsing functions during closure serialization). The plugin uses
// neither, the program host only TypeScript, and together they are about 1 s of CPU per process on this machine
// (docs/testing.md, "Where a test's time goes"). Here those two requires, from those two files only, return
// stand-ins that load the real module the first time anything reads from them: a process that needs one still gets
// the very module, just later. A module that cannot be resolved is required as before, so @pulumi/pulumi's fallback
// to its vendored TypeScript still happens.
//
// On Node >= 22.1 it also turns on Node's own compile cache for these processes (what NODE_COMPILE_CACHE does, without
// passing the variable on to what they start): the program host's TypeScript then loads from cached code (0.3 s less
// each). Node 20 has none, and v8-compile-cache cannot stand in: it compiles all CommonJS itself, through vm.Script,
// which breaks require() of an ES module — what a CommonJS consumer does with gantry. So on Node 20 only TypeScript
// (9 MB of plain CommonJS that requires nothing but Node's own modules) is compiled here, with V8's code cache
// (`loadWithCodeCache`): ~0.15 s of CPU less per program host.
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const Module = require('node:module');
const os = require('node:os');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');

const cacheDir = path.join(os.tmpdir(), 'gantry-harness-compile-cache');
const nodeCompileCache = typeof Module.enableCompileCache === 'function';
if (nodeCompileCache) Module.enableCompileCache(cacheDir);

/**
 * Requires `request` as Node would, but compiles it with V8's code cache, kept beside Node's own compile cache. The
 * cache is written when the process exits, so it holds the functions the run compiled too; one V8 rejects (another
 * Node, other flags) is rewritten, to a temporary name and renamed (processes run side by side).
 */
function loadWithCodeCache(request, parent) {
  const filename = Module._resolveFilename(request, parent);
  if (Module._cache[filename]) return Module._cache[filename].exports;
  const source = fs.readFileSync(filename, 'utf8');
  // V8 checks a cache against the source's length only: the key names the file's version (size and time) too.
  const { size, mtimeMs } = fs.statSync(filename);
  const key = createHash('sha256').update(`${process.version} ${process.arch} ${filename} ${size} ${mtimeMs}`).digest('hex');
  const cacheFile = path.join(cacheDir, `${key.slice(0, 32)}.v8`);
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // none yet
  }
  // V8 rejects a cache made under other flags, and @pulumi/pulumi's closure serialization (the one user of TypeScript
  // here) sets this one when it first runs — before TypeScript loads or after: set now, it is the same at both ends.
  v8.setFlagsFromString('--allow-natives-syntax');
  const script = new vm.Script(Module.wrap(source), { filename, cachedData });
  const module = new Module(filename, parent);
  module.filename = filename;
  module.paths = Module._nodeModulePaths(path.dirname(filename));
  Module._cache[filename] = module;
  try {
    script.runInThisContext().call(module.exports, module.exports, Module.createRequire(filename), module, filename, path.dirname(filename));
  } catch (error) {
    delete Module._cache[filename];
    throw error;
  }
  module.loaded = true;
  if (cachedData === undefined || script.cachedDataRejected) {
    process.once('exit', () => {
      try {
        fs.mkdirSync(cacheDir, { recursive: true });
        const temporary = `${cacheFile}.${process.pid}.tmp`;
        fs.writeFileSync(temporary, script.createCachedData());
        fs.renameSync(temporary, cacheFile);
      } catch {
        // a cache not written is only a slower start next time
      }
    });
  }
  return module.exports;
}

const pulumiFile = (pattern) => new RegExp(`[\\\\/]@pulumi[\\\\/]pulumi[\\\\/]${pattern}\\.js$`);

/**
 * The eager requires deferred: the request, and the @pulumi/pulumi files it is deferred from. Besides arborist and
 * TypeScript (above), what a process of the harness loads for nothing or only late (~0.25 s of CPU each, measured on
 * Node 20): gRPC and its generated service clients (the program host's mock monitor speaks to no engine), OpenTelemetry
 * (no tracing here), the Automation API and the provider server (`pulumi.automation`, `pulumi.provider`: neither a
 * program nor the dynamic-provider plugin uses them), and with them js-yaml, execa and semver, and
 * normalize-package-data (code paths).
 */
const deferred = [
  ['@npmcli/arborist', pulumiFile('runtime[\\\\/]closure[\\\\/]codePaths')],
  ['typescript', pulumiFile('typescript-shim')],
  ['normalize-package-data', pulumiFile('runtime[\\\\/]closure[\\\\/]codePaths')],
  ['@grpc/grpc-js', pulumiFile('.*')],
  [/^(\.\.\/)+proto\/\w+_grpc_pb$/, pulumiFile('.*')],
  ['@opentelemetry/api', pulumiFile('runtime[\\\\/]settings')],
  ['js-yaml', pulumiFile('(runtime[\\\\/]manifest|automation[\\\\/]localWorkspace)')],
  ['execa', pulumiFile('automation[\\\\/]cmd')],
  ['semver', pulumiFile('runtime[\\\\/](rpc|closure[\\\\/]rewriteSuper)')],
  ['./automation', pulumiFile('index')],
  ['./provider', pulumiFile('index')],
];
const isDeferred = (request, parent) =>
  deferred.some(([what, from]) => (typeof what === 'string' ? what === request : what.test(request)) && from.test(parent?.filename ?? ''));

/** The deferred modules whose export is a function. */
const functionExports = new Set(['execa', 'normalize-package-data']);

const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (!isDeferred(request, parent)) return load.apply(this, arguments);
  try {
    Module._resolveFilename(request, parent, isMain);
  } catch {
    return load.apply(this, arguments);
  }
  let real;
  const module = () =>
    (real ??= request === 'typescript' && !nodeCompileCache ? loadWithCodeCache(request, parent) : load.call(Module, request, parent, isMain));
  // A module whose export is a function (execa) needs a stand-in that can be called.
  const target = functionExports.has(request) ? () => undefined : {};
  return new Proxy(target, {
    // @pulumi/pulumi reads these modules through TypeScript's `__importStar` / `__importDefault`, which would copy
    // every property (and so load the module) unless it says it is an ES module; `arborist.Arborist` then reads
    // through the stand-in, and `.default` is what the helper would have made of the real module.
    get: (_, key) => {
      if (key === '__esModule') return true;
      const exported = module();
      return key === 'default' && !exported?.__esModule ? exported : Reflect.get(exported, key);
    },
    set: (_, key, value) => Reflect.set(module(), key, value),
    has: (_, key) => key in module(),
    ownKeys: () => [...new Set([...Reflect.ownKeys(module()), ...Reflect.ownKeys(target)])],
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(module(), key) ?? Reflect.getOwnPropertyDescriptor(target, key);
      return descriptor && { ...descriptor, configurable: true };
    },
    apply: (_, self, args) => Reflect.apply(module(), self, args),
  });
};
