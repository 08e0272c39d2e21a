// A stack in a consumer project, deployed the way the Pulumi engine deploys it: the program runs in
// the program host (program-host.mjs) and every resource it registers goes through the real
// dynamic-provider plugin — Check, then Create, or Diff and Update / replace / nothing — with the
// results kept in a state file shaped like the engine's checkpoint, secrets encrypted.
import { fork } from 'node:child_process';
import { copyFile, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createConsumer, removeTempDir, type ConsumerKind } from './consumer.js';
import { harnessNodeArgs } from './node-flags.js';
import { DynamicProviderPlugin } from './plugin.js';
import { makeSecret, markSecretOutputs, secretKeys, StateCipher, stripMap, stripSecrets, type PropertyMap } from './secrets.js';

const DEFAULT_PROGRAM_TIMEOUT_MS = 60_000;
const STACK_TYPE = 'pulumi:pulumi:Stack';

export type Op = 'create' | 'update' | 'replace' | 'delete' | 'same' | 'import';

export interface Step {
  op: Op;
  urn: string;
  type: string;
  name: string;
  /** The inputs Check returned, in plain text, for a step that ran Check (so a preview's can be inspected). */
  inputs?: PropertyMap;
}

export interface ResourceView {
  urn: string;
  type: string;
  name: string;
  id: string | undefined;
  /** Inputs and outputs with secrets in plain text (the state file has them encrypted). */
  inputs: PropertyMap;
  outputs: PropertyMap;
  /** Names of the outputs the state marks secret. */
  secretOutputs: string[];
  /** The serialized provider (`__provider`) the program produced for this resource. */
  provider: string | undefined;
}

export interface OperationResult {
  operation: 'preview' | 'up' | 'refresh' | 'destroy';
  /** What happened to each resource, by resource name (the root Stack resource is only in `steps`). */
  plan: Record<string, Op>;
  steps: Step[];
  /** The stack's resources after the operation, by name (the root Stack resource left out). */
  resources: Record<string, ResourceView>;
  /** Stack outputs in plain text, and which of them are secret. */
  outputs: PropertyMap;
  secretOutputs: string[];
  /** Check failures, provider exceptions and program errors, with their messages. */
  errors: string[];
  /** What the engine would print as warnings (a preview of an import whose inputs do not match). */
  warnings: string[];
  /** What the program and the provider printed during this operation. */
  log: string;
}

/** Thrown by up/refresh/destroy when a step or the program failed; `result` holds what did happen. */
export class DeploymentError extends Error {
  constructor(readonly result: OperationResult) {
    super(`${result.operation} failed:\n${result.errors.join('\n')}`);
    this.name = 'DeploymentError';
  }
}

/** Awaits an operation expected to fail and returns its DeploymentError; fails the test if it succeeds. */
export async function expectDeploymentFailure(operation: Promise<unknown>): Promise<DeploymentError> {
  try {
    await operation;
  } catch (error) {
    if (error instanceof DeploymentError) return error;
    throw error;
  }
  throw new Error('the operation was expected to fail, and succeeded');
}

/** A program for both kinds of consumer, or a single file for one. Its file is copied to the consumer's index.js. */
export type Program = string | { cjs: string; esm: string };

export interface StackOptions {
  kind?: ConsumerKind;
  /** Stack configuration: `key` (the project's namespace) or `namespace:key`; `{ secret }` for secret values. */
  config?: Record<string, string | { secret: string }>;
  /** Environment of the program and of the provider plugin (nothing else is inherited but PATH, HOME, TMPDIR and LANG). */
  env?: Record<string, string>;
  project?: string;
  stack?: string;
  /** How long one run of the program may take, its resources' provider steps included (default 60 s). */
  programTimeoutMs?: number;
}

interface StateResource {
  urn: string;
  type: string;
  custom: boolean;
  id?: string;
  inputs: PropertyMap;
  outputs: PropertyMap;
  parent?: string;
  dependencies: string[];
  additionalSecretOutputs: string[];
  /** The old half of a create-before-delete replacement, deleted at the end of the deployment. */
  delete?: boolean;
}

interface RegisterMessage {
  t: 'register';
  seq: number;
  urn: string;
  type: string;
  name: string;
  custom: boolean;
  inputs: PropertyMap;
  options: {
    parent?: string;
    dependencies: string[];
    additionalSecretOutputs: string[];
    deleteBeforeReplace: boolean;
    protect?: boolean;
    ignoreChanges: string[];
    replaceOnChanges: string[];
    retainOnDelete?: boolean;
    /** The `import` resource option: the id of an existing resource to adopt. */
    importId?: string;
  };
}

type HostMessage = RegisterMessage | { t: 'outputs'; urn: string; outputs: PropertyMap } | { t: 'done'; failures: string[] };

class Operation {
  readonly steps: Step[] = [];
  readonly errors: string[] = [];
  readonly warnings: string[] = [];
  readonly log: string[] = [];
  /** The stack outputs a preview computed; a preview does not store them. */
  previewOutputs: PropertyMap | undefined;
  constructor(readonly name: OperationResult['operation']) {}

  get preview(): boolean {
    return this.name === 'preview';
  }

  step(op: Op, resource: { urn: string; type: string }, inputs?: PropertyMap): void {
    this.steps.push({ op, urn: resource.urn, type: resource.type, name: nameOf(resource.urn), ...(inputs ? { inputs } : {}) });
  }
}

export class Stack {
  readonly statePath: string;
  readonly #resources: StateResource[] = [];
  readonly #cipher = new StateCipher();
  readonly #log: string[] = [];
  readonly #config: PropertyMap;
  readonly #env: Record<string, string>;
  readonly #programTimeoutMs: number;
  #busy = false;

  private constructor(
    readonly kind: ConsumerKind,
    /** The consumer project: package.json, Pulumi.yaml, node_modules/gantry, index.js (the program). */
    readonly dir: string,
    readonly project: string,
    readonly name: string,
    options: StackOptions,
  ) {
    this.statePath = path.join(dir, '.pulumi', 'stacks', `${name}.json`);
    this.#config = Object.fromEntries(
      Object.entries(options.config ?? {}).map(([key, value]) => [
        key.includes(':') ? key : `${project}:${key}`,
        typeof value === 'string' ? value : makeSecret(value.secret),
      ]),
    );
    this.#env = { ...baseEnvironment(), ...options.env };
    this.#programTimeoutMs = options.programTimeoutMs ?? DEFAULT_PROGRAM_TIMEOUT_MS;
  }

  static async create(options: StackOptions = {}): Promise<Stack> {
    const kind = options.kind ?? 'cjs';
    const project = options.project ?? 'harness';
    const dir = await createConsumer(kind, project);
    const stack = new Stack(kind, dir, project, options.stack ?? 'test', options);
    await stack.#writeState();
    return stack;
  }

  /** Everything the programs and providers of this stack printed so far. */
  get log(): string {
    return this.#log.join('');
  }

  /** Runs the program and converges the stack on it (`pulumi up`). `args` go to a program that exports a function. */
  up(program: Program, args?: unknown): Promise<OperationResult> {
    return this.#deploy(new Operation('up'), program, args);
  }

  /**
   * What `up` would do, without doing it (`pulumi preview`): the program runs in preview mode and each resource gets
   * Check and Diff only; the state and the remote side are left as they are. New resources' outputs are unknown.
   */
  preview(program: Program, args?: unknown): Promise<OperationResult> {
    return this.#deploy(new Operation('preview'), program, args);
  }

  #deploy(operation: Operation, program: Program, args: unknown): Promise<OperationResult> {
    const file = typeof program === 'string' ? program : program[this.kind];
    return this.#run(operation, async (plugin) => {
      await copyFile(file, path.join(this.dir, 'index.js'));
      const seen = new Set<string>();
      let stackOutputs: PropertyMap = {};
      const failures = await this.#runProgram(operation, args, {
        register: (message) => {
          seen.add(message.urn);
          return plugin().then((started) => this.#register(operation, started, message));
        },
        outputs: (urn, outputs) => {
          if (urn.split('::')[2] === STACK_TYPE) stackOutputs = outputs;
        },
      });
      operation.errors.push(...failures.filter((failure) => !operation.errors.some((error) => failure.includes(error))));
      if (operation.preview) {
        operation.previewOutputs = stackOutputs;
        for (const r of [...this.#resources].reverse()) if (!r.delete && !seen.has(r.urn)) operation.step('delete', r);
        return;
      }
      const root = this.#resources.find((r) => r.type === STACK_TYPE);
      if (root) root.outputs = stackOutputs;
      // As the engine: resources the program no longer declares are deleted only after a program that succeeded.
      if (operation.errors.length === 0) {
        const doomed = this.#resources.filter((r) => r.delete || !seen.has(r.urn));
        if (doomed.length > 0) await this.#deleteAll(operation, await plugin(), doomed);
      }
    });
  }

  /** Reads every resource back from its provider and records drift (`pulumi refresh`). */
  async refresh(): Promise<OperationResult> {
    return this.#run(new Operation('refresh'), async (started, operation) => {
      const plugin = await started();
      for (const resource of [...this.#resources]) {
        if (!resource.custom || resource.id === undefined) continue;
        try {
          const read = await plugin.read(resource.urn, resource.id, stripMap(resource.outputs), stripMap(resource.inputs));
          if (!read.id) {
            this.#resources.splice(this.#resources.indexOf(resource), 1);
            operation.step('delete', resource);
            continue;
          }
          const secretNames = new Set([...secretKeys(resource.outputs), ...secretKeys(resource.inputs), ...resource.additionalSecretOutputs]);
          const changed = !isDeepStrictEqual(stripMap(resource.outputs), read.outputs);
          resource.id = read.id;
          resource.outputs = markSecretOutputs(read.outputs, secretNames);
          if (read.inputs) resource.inputs = markSecretOutputs(read.inputs, secretKeys(resource.inputs));
          operation.step(changed ? 'update' : 'same', resource);
        } catch (error) {
          operation.errors.push(describe(resource, 'read', error));
        }
      }
    });
  }

  /** Deletes every resource, dependents first (`pulumi destroy`). */
  async destroy(): Promise<OperationResult> {
    return this.#run(new Operation('destroy'), async (plugin, operation) => this.#deleteAll(operation, await plugin(), [...this.#resources]));
  }

  /** Removes the consumer project. The stack's resources are left as they are: destroy first. */
  async dispose(): Promise<void> {
    await removeTempDir(this.dir);
  }

  async #run(operation: Operation, body: (plugin: () => Promise<DynamicProviderPlugin>, operation: Operation) => Promise<void>): Promise<OperationResult> {
    if (this.#busy) throw new Error('a stack runs one operation at a time: await the previous one');
    this.#busy = true;
    const onOutput = (text: string): void => {
      operation.log.push(text);
      this.#log.push(text);
    };
    // Started now, awaited when first needed: the program host loads in parallel.
    const starting = DynamicProviderPlugin.start({
      consumerDir: this.dir,
      project: this.project,
      stack: this.name,
      config: this.#config,
      plainConfig: stripMap(this.#config) as Record<string, string>,
      secretConfigKeys: secretKeys(this.#config),
      env: this.#env,
      onOutput,
    });
    starting.catch(() => undefined);
    try {
      await body(() => starting, operation);
    } finally {
      await starting.then(
        (plugin) => plugin.stop(),
        (error: Error) => void operation.errors.push(`the dynamic-provider plugin did not start: ${error.message}`),
      );
      await this.#writeState();
      this.#busy = false;
    }
    const result = this.#result(operation);
    if (result.errors.length > 0) throw new DeploymentError(result);
    return result;
  }

  #runProgram(
    operation: Operation,
    args: unknown,
    handlers: { register: (message: RegisterMessage) => Promise<{ id?: string; outputs: PropertyMap }>; outputs: (urn: string, outputs: PropertyMap) => void },
  ): Promise<string[]> {
    const plain = stripMap(this.#config) as Record<string, string>;
    const host = fork(path.join(this.dir, '.harness', 'program-host.mjs'), [], {
      cwd: this.dir,
      execArgv: harnessNodeArgs,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        ...this.#env,
        PULUMI_PROJECT: this.project,
        PULUMI_STACK: this.name,
        PULUMI_CONFIG: JSON.stringify(plain),
        PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(secretKeys(this.#config)),
        GANTRY_HARNESS_KIND: this.kind,
        GANTRY_HARNESS_PROGRAM: path.join(this.dir, 'index.js'),
        GANTRY_HARNESS_ARGS: JSON.stringify(args ?? null),
        GANTRY_HARNESS_PREVIEW: operation.preview ? '1' : '',
      },
    });
    let stderr = '';
    for (const stream of [host.stdout!, host.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        operation.log.push(text);
        this.#log.push(text);
        if (stream === host.stderr) stderr = (stderr + text).slice(-2000);
      });
    }
    return new Promise((resolve) => {
      let failures: string[] | undefined;
      const timer = setTimeout(() => {
        failures = [`the program did not finish within ${this.#programTimeoutMs} ms`];
        host.kill('SIGKILL');
      }, this.#programTimeoutMs);
      // Steps already under way finish even if the program ends first, as in the engine; their outcome is in state.
      const inFlight = new Set<Promise<unknown>>();
      host.on('message', (message: HostMessage) => {
        if (message.t === 'register') {
          const step = handlers.register(message).then(
            (answer) => host.connected && host.send({ seq: message.seq, ...answer }),
            (error: unknown) => host.connected && host.send({ seq: message.seq, error: (error as Error).message }),
          );
          inFlight.add(step);
          void step.finally(() => inFlight.delete(step));
        } else if (message.t === 'outputs') {
          handlers.outputs(message.urn, message.outputs);
        } else if (message.t === 'done') {
          failures = message.failures;
        }
      });
      host.once('close', (code, signal) => {
        clearTimeout(timer);
        const outcome = failures ?? [`the program exited (${signal ?? code}) before finishing${stderr ? `; it printed:\n${stderr}` : ''}`];
        void Promise.allSettled([...inFlight]).then(() => resolve(outcome));
      });
    });
  }

  /** One registration, as the engine's step generator handles it. */
  async #register(operation: Operation, plugin: DynamicProviderPlugin, message: RegisterMessage): Promise<{ id?: string; outputs: PropertyMap }> {
    const { urn, type, options } = message;
    const old = this.#resources.find((r) => r.urn === urn && !r.delete);
    const unsupported = [
      options.protect && 'protect',
      options.retainOnDelete && 'retainOnDelete',
      options.ignoreChanges.length > 0 && 'ignoreChanges',
      options.replaceOnChanges.length > 0 && 'replaceOnChanges',
    ].filter(Boolean);
    if (unsupported.length > 0) {
      return this.#fail(operation, { urn, type }, new Error(`the harness does not implement the resource options ${unsupported.join(', ')}`));
    }
    const base = {
      urn,
      type,
      custom: message.custom,
      parent: options.parent,
      dependencies: options.dependencies,
      additionalSecretOutputs: options.additionalSecretOutputs,
    };

    // As the step generator: an import id equal to the id already in state is ignored (the resource is managed).
    if (message.custom && options.importId !== undefined && old?.id !== options.importId) {
      if (old)
        return this.#fail(
          operation,
          { urn, type },
          new Error('the harness does not implement import-replacement (an import id over a resource already in state with another id)'),
        );
      return this.#import(operation, plugin, message, base);
    }

    if (!message.custom) {
      if (!operation.preview) this.#put({ ...base, inputs: message.inputs, outputs: old?.outputs ?? {} }, old);
      operation.step(old ? 'same' : 'create', base);
      return { outputs: {} };
    }

    try {
      const check = await plugin.check(urn, old ? stripMap(old.inputs) : {}, stripMap(message.inputs));
      if (check.failures.length > 0) {
        const reasons = check.failures.map((f) => `property ${f.property}: ${f.reason}`).join('; ');
        throw new Error(`check failed: ${reasons}`);
      }
      const inputSecrets = secretKeys(message.inputs);
      const inputs = markSecretOutputs(check.inputs, inputSecrets);
      const secretNames = [...inputSecrets, ...options.additionalSecretOutputs];

      if (!old) {
        if (operation.preview) {
          operation.step('create', base, check.inputs);
          return { outputs: inputs };
        }
        const created = await plugin.create(urn, check.inputs);
        const entry = this.#put({ ...base, id: created.id, inputs, outputs: markSecretOutputs(created.outputs, secretNames) }, undefined);
        operation.step('create', base, check.inputs);
        return { id: entry.id, outputs: entry.outputs };
      }

      const diff = await plugin.diff(urn, old.id!, stripMap(old.outputs), check.inputs, stripMap(old.inputs));
      // A provider without diff answers "unknown": the engine then compares old and new inputs itself.
      const changed = diff.changes === 'unknown' ? !isDeepStrictEqual(stripMap(old.inputs), check.inputs) : diff.changes === 'some';
      if (!changed) {
        operation.step('same', base, check.inputs);
        if (operation.preview) return { id: old.id, outputs: old.outputs };
        const entry = this.#put({ ...base, id: old.id, inputs, outputs: old.outputs }, old);
        return { id: entry.id, outputs: entry.outputs };
      }
      if (operation.preview) {
        // The plugin does not support preview, so the engine does not call Update/Create: outputs it cannot know are unknown.
        const replace = diff.replaces.length > 0;
        operation.step(replace ? 'replace' : 'update', base, check.inputs);
        return replace ? { outputs: inputs } : { id: old.id, outputs: inputs };
      }
      if (diff.replaces.length > 0) {
        if (diff.deleteBeforeReplace || options.deleteBeforeReplace) {
          await plugin.delete(urn, old.id!, stripMap(old.outputs), stripMap(old.inputs));
          this.#resources.splice(this.#resources.indexOf(old), 1);
        } else {
          old.delete = true;
        }
        const created = await plugin.create(urn, check.inputs);
        const entry = this.#put({ ...base, id: created.id, inputs, outputs: markSecretOutputs(created.outputs, secretNames) }, undefined);
        operation.step('replace', base, check.inputs);
        return { id: entry.id, outputs: entry.outputs };
      }
      const updated = await plugin.update(urn, old.id!, stripMap(old.outputs), check.inputs, stripMap(old.inputs));
      const entry = this.#put({ ...base, id: old.id, inputs, outputs: markSecretOutputs(updated, secretNames) }, old);
      operation.step('update', base, check.inputs);
      return { id: entry.id, outputs: entry.outputs };
    } catch (error) {
      return this.#fail(operation, { urn, type }, error);
    }
  }

  /**
   * The engine's ImportStep (pkg/resource/deploy/step.go) for the `import` option, in preview and up alike: Read
   * with the import id and nothing else — no properties, no inputs — then Check and Diff of the program's inputs
   * against what was read. A difference fails the import (a preview only warns); nothing is created or updated.
   */
  async #import(
    operation: Operation,
    plugin: DynamicProviderPlugin,
    message: RegisterMessage,
    base: Omit<StateResource, 'id' | 'inputs' | 'outputs'>,
  ): Promise<{ id?: string; outputs: PropertyMap }> {
    const { urn, type, options } = message;
    const importId = options.importId!;
    try {
      const read = await plugin.read(urn, importId, {}, {}).catch((error: Error) => {
        throw new Error(`reading '${importId}' to import it failed: ${error.message}`);
      });
      if (!read.id) throw new Error(`resource '${importId}' does not exist`);
      if (!read.inputs) throw new Error(`provider does not support importing resources; please try updating the '${type.split(':')[0]}' plugin`);
      const check = await plugin.check(urn, read.inputs, stripMap(message.inputs));
      if (check.failures.length > 0) {
        throw new Error(`check failed: ${check.failures.map((f) => `property ${f.property}: ${f.reason}`).join('; ')}`);
      }
      const diff = await plugin.diff(urn, read.id, read.outputs, check.inputs, read.inputs);
      const changed = diff.changes === 'unknown' ? !isDeepStrictEqual(read.inputs, check.inputs) : diff.changes === 'some';
      if (changed) {
        const keys = [...new Set([...Object.keys(read.inputs), ...Object.keys(check.inputs)])].filter(
          (key) => !isDeepStrictEqual(read.inputs![key], check.inputs[key]),
        );
        const mismatch = `inputs to import do not match the existing resource: [${keys.join(' ')}]`;
        if (!operation.preview) throw new Error(mismatch);
        operation.warnings.push(`${describe({ urn, type }, undefined, mismatch)}; importing this resource will fail`);
      }
      const inputSecrets = secretKeys(message.inputs);
      const outputs = markSecretOutputs(read.outputs, [...inputSecrets, ...options.additionalSecretOutputs]);
      operation.step('import', base, check.inputs);
      if (operation.preview) return { id: read.id, outputs };
      const entry = this.#put({ ...base, id: read.id, inputs: markSecretOutputs(check.inputs, inputSecrets), outputs }, undefined);
      return { id: entry.id, outputs: entry.outputs };
    } catch (error) {
      return this.#fail(operation, { urn, type }, error);
    }
  }

  #fail(operation: Operation, resource: { urn: string; type: string }, error: unknown): never {
    const message = describe(resource, undefined, error);
    operation.errors.push(message);
    throw new Error(message);
  }

  async #deleteAll(operation: Operation, plugin: DynamicProviderPlugin, doomed: StateResource[]): Promise<void> {
    // State lists a resource after the resources it depends on, so reverse order deletes dependents first.
    for (const resource of [...doomed].reverse()) {
      try {
        if (resource.custom && resource.id !== undefined) {
          await plugin.delete(resource.urn, resource.id, stripMap(resource.outputs), stripMap(resource.inputs));
        }
        this.#resources.splice(this.#resources.indexOf(resource), 1);
        if (!resource.delete) operation.step('delete', resource);
      } catch (error) {
        operation.errors.push(describe(resource, 'delete', error));
      }
    }
  }

  /** Appends in the order steps complete: a resource registers only once the outputs it depends on are known,
   *  so the state lists it after its dependencies (as the engine's does). */
  #put(entry: StateResource, replacing: StateResource | undefined): StateResource {
    if (replacing) this.#resources.splice(this.#resources.indexOf(replacing), 1);
    this.#resources.push(entry);
    return entry;
  }

  #result(operation: Operation): OperationResult {
    const root = this.#resources.find((r) => r.type === STACK_TYPE);
    const resources: Record<string, ResourceView> = {};
    for (const r of this.#resources) {
      if (r.type === STACK_TYPE || r.delete) continue;
      const inputs = stripMap(r.inputs);
      resources[nameOf(r.urn)] = {
        urn: r.urn,
        type: r.type,
        name: nameOf(r.urn),
        id: r.id,
        inputs,
        outputs: stripMap(r.outputs),
        secretOutputs: secretKeys(r.outputs),
        provider: typeof inputs.__provider === 'string' ? inputs.__provider : undefined,
      };
    }
    const stackOutputs = operation.previewOutputs ?? root?.outputs ?? {};
    return {
      operation: operation.name,
      plan: Object.fromEntries(operation.steps.filter((s) => s.type !== STACK_TYPE).map((s) => [s.name, s.op])),
      steps: operation.steps,
      resources,
      outputs: stripSecrets(stackOutputs) as PropertyMap,
      secretOutputs: secretKeys(stackOutputs),
      errors: operation.errors,
      warnings: operation.warnings,
      log: operation.log.join(''),
    };
  }

  /** The engine's checkpoint shape; secret values are ciphertext. Written to a temporary name, then renamed. */
  async #writeState(): Promise<void> {
    const checkpoint = {
      version: 3,
      checkpoint: {
        stack: `organization/${this.project}/${this.name}`,
        latest: {
          manifest: { time: new Date().toISOString(), magic: 'gantry-test-harness', version: 'harness' },
          secrets_providers: { type: 'gantry-harness', state: { cipher: 'aes-256-gcm', key: 'held in memory by the harness' } },
          resources: this.#resources.map((r) => this.#cipher.seal(r)),
        },
      },
    };
    await mkdir(path.dirname(this.statePath), { recursive: true });
    const temporary = `${this.statePath}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(checkpoint, null, 2)}\n`);
    await rename(temporary, this.statePath);
  }
}

function nameOf(urn: string): string {
  return urn.split('::').slice(3).join('::');
}

function describe(resource: { urn: string; type: string }, step: string | undefined, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return `${resource.type} resource '${nameOf(resource.urn)}': ${step ? `${step} failed: ` : ''}${reason}`;
}

function baseEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}
