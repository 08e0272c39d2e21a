// The harness's stand-in for Pulumi's Node.js language host. Copied into a consumer project and
// run there by plain node (no tsx, no loaders), it loads the consumer's program the way the
// language host does (`require` for CommonJS, `import` for ES modules) inside the root Stack
// resource, with the engine's resource monitor replaced by `pulumi.runtime.setMocks`. Every
// registration, with its real inputs (including the serialized `__provider`) and the options the
// engine honours, goes to the harness over the IPC channel; the harness runs the provider steps
// through the real dynamic-provider plugin and answers with the real id and outputs.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const consumer = process.cwd();
const requireFromConsumer = createRequire(path.join(consumer, 'package.json'));
const pulumi = requireFromConsumer('@pulumi/pulumi');
const settings = requireFromConsumer('@pulumi/pulumi/runtime/settings.js');
const { runInPulumiStack } = requireFromConsumer('@pulumi/pulumi/runtime/stack.js');
const { isUnknown } = requireFromConsumer('@pulumi/pulumi/output.js');
const { unknownValue } = requireFromConsumer('@pulumi/pulumi/runtime/rpc.js');

const { GANTRY_HARNESS_KIND: kind, GANTRY_HARNESS_PROGRAM: program, PULUMI_PROJECT: project, PULUMI_STACK: stack } = process.env;

const waiting = new Map();
let nextSeq = 0;
function ask(message) {
  return new Promise((resolve, reject) => {
    const seq = ++nextSeq;
    waiting.set(seq, { resolve, reject });
    process.send({ ...message, seq });
  });
}
process.on('message', (message) => {
  const waiter = waiting.get(message.seq);
  if (!waiter) return;
  waiting.delete(message.seq);
  if (message.error) waiter.reject(new Error(message.error));
  else waiter.resolve(message);
});

const failures = [];
function fail(error) {
  failures.push(error instanceof Error ? error.stack || error.message : String(error));
}
process.on('unhandledRejection', fail);
process.on('uncaughtException', fail);

// In a preview the mock monitor turns the wire's unknown placeholder into the SDK's Unknown object, which
// would not survive the IPC channel (it becomes `{}`); the engine hands providers the placeholder string.
function withUnknownsSpelled(value) {
  if (isUnknown(value)) return unknownValue;
  if (Array.isArray(value)) return value.map(withUnknownsSpelled);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withUnknownsSpelled(item)]));
  }
  return value;
}

// Options the engine applies come with the RegisterResource request, which the mock's newResource
// does not see. The mock monitor calls newResource synchronously from registerResource (before its
// first await), so the request being registered is handed over through `registering`.
let registering;

await pulumi.runtime.setMocks(
  {
    async newResource(args) {
      const { urn, options } = registering;
      const inputs = withUnknownsSpelled(args.inputs);
      const answer = await ask({ t: 'register', urn, type: args.type, name: args.name, custom: args.custom, inputs, options });
      return { id: answer.id, state: answer.outputs };
    },
    call(args) {
      throw new Error(`the harness does not serve invokes (${args.token})`);
    },
  },
  project,
  stack,
  process.env.GANTRY_HARNESS_PREVIEW === '1',
);

const monitor = settings.getMonitor();
// URNs as the engine makes them (the mock monitor's differ): the parent's whole type chain prefixes a
// child's type, except the root Stack's.
monitor.newUrn = (parent, type, name) => {
  const parentType = parent ? parent.split('::')[2] : undefined;
  const qualified = parentType && parentType !== 'pulumi:pulumi:Stack' ? `${parentType}$${type}` : type;
  return `urn:pulumi:${stack}::${project}::${qualified}::${name}`;
};
const registerResource = monitor.registerResource.bind(monitor);
monitor.registerResource = (req, callback) => {
  registering = {
    urn: monitor.newUrn(req.getParent(), req.getType(), req.getName()),
    options: {
      parent: req.getParent() || undefined,
      dependencies: req.getDependenciesList(),
      additionalSecretOutputs: req.getAdditionalsecretoutputsList(),
      deleteBeforeReplace: req.getDeletebeforereplace(),
      protect: req.getProtect(),
      ignoreChanges: req.getIgnorechangesList(),
      replaceOnChanges: req.getReplaceonchangesList(),
      retainOnDelete: req.getRetainondelete(),
      importId: req.getImportid() || undefined,
    },
  };
  try {
    return registerResource(req, callback);
  } finally {
    registering = undefined;
  }
};
const registerResourceOutputs = monitor.registerResourceOutputs.bind(monitor);
monitor.registerResourceOutputs = (req, callback) => {
  process.send({ t: 'outputs', urn: req.getUrn(), outputs: req.getOutputs()?.toJavaScript() ?? {} });
  return registerResourceOutputs(req, callback);
};

const args = JSON.parse(process.env.GANTRY_HARNESS_ARGS || 'null');
try {
  await runInPulumiStack(async () => {
    const loaded = kind === 'cjs' ? requireFromConsumer(program) : await import(pathToFileURL(program).href);
    // A program is either a module whose top-level code declares resources and whose exports are the
    // stack outputs (a classic Pulumi program), or a module whose default export is a function of the
    // test's arguments returning the outputs (an Automation API inline program).
    const main = typeof loaded === 'function' ? loaded : typeof loaded?.default === 'function' ? loaded.default : undefined;
    if (main) return await main(args);
    const outputs = { ...loaded };
    delete outputs.default;
    delete outputs.__esModule;
    return outputs;
  });
  await settings.waitForRPCs();
} catch (error) {
  fail(error);
}
process.send({ t: 'done', failures }, () => process.exit(0));
