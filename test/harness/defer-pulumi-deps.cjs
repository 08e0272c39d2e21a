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
// each). Node 20 has none, and v8-compile-cache cannot stand in: it compiles CommonJS itself, through vm.Script, which
// breaks require() of an ES module — what a CommonJS consumer does with gantry.
const Module = require('node:module');
const os = require('node:os');
const path = require('node:path');

if (typeof Module.enableCompileCache === 'function') {
  Module.enableCompileCache(path.join(os.tmpdir(), 'gantry-harness-compile-cache'));
}

/** The eager requires deferred: the request, and the @pulumi/pulumi file it is deferred from. */
const deferred = new Map([
  ['@npmcli/arborist', /[\\/]@pulumi[\\/]pulumi[\\/]runtime[\\/]closure[\\/]codePaths\.js$/],
  ['typescript', /[\\/]@pulumi[\\/]pulumi[\\/]typescript-shim\.js$/],
]);

const load = Module._load;
Module._load = function (request, parent, isMain) {
  const from = deferred.get(request);
  if (!from || !parent || !from.test(parent.filename ?? '')) return load.apply(this, arguments);
  try {
    Module._resolveFilename(request, parent, isMain);
  } catch {
    return load.apply(this, arguments);
  }
  let real;
  const module = () => (real ??= load.call(Module, request, parent, isMain));
  return new Proxy(
    {},
    {
      // codePaths.js passes arborist through TypeScript's `__importStar`, which would copy every property (and so
      // load it) unless the module says it is an ES module; `arborist.Arborist` then reads through the stand-in.
      get: (_, key) => (key === '__esModule' ? true : Reflect.get(module(), key)),
      set: (_, key, value) => Reflect.set(module(), key, value),
      has: (_, key) => key in module(),
      ownKeys: () => Reflect.ownKeys(module()),
      getOwnPropertyDescriptor: (_, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(module(), key);
        return descriptor && { ...descriptor, configurable: true };
      },
    },
  );
};
