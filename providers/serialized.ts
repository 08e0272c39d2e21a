/**
 * The one factory of the provider objects Pulumi serializes into a dynamic resource's `__provider`.
 *
 * Pulumi's closure serializer turns the provider object into JavaScript text, kept in the state (in plain text) as
 * every resource's `__provider`, and the dynamic-provider plugin evaluates that text for each Check, Diff, Create,
 * Read, Update and Delete. What a method captures travels with it: an imported function, a module-level object or
 * a local module is copied by value with all it reaches in turn; only the exports of a module inside node_modules
 * become a `require`. So the methods made here capture nothing but strings — the implementation's module specifier
 * and export name, the method's name, the stack configuration keys — and load the implementation with `import()`
 * when the engine calls them. The plugin resolves that import from the user's project, a CommonJS
 * or an ES-module one alike, so nothing of lib/ is ever serialized and the text stays small.
 *
 * Credentials are never captured: Configure reads the stack configuration in the plugin and keeps what it read on
 * the deserialized object (`this.settings`; every method is serialized with its own copy of what it captures, so a
 * variable shared by the methods would not be shared), and the operations read the environment there too.
 *
 * Call it once per resource type, at module level: one object gives one `__provider` text for every resource of
 * the type, which Pulumi serializes once and the plugin deserializes and configures once. The operations' signatures
 * are a contract with every `__provider` already in a state: Read and Delete run the text stored when the resource
 * was last written against the installed implementation, so keep them as they are. The compiler holds them to
 * it: the provider's type remembers its spec, and `Operations<typeof provider, Inputs, Outputs>` — Pulumi's
 * `ResourceProvider<Inputs, Outputs>` with the settings first where the spec says — is the type each operations
 * object satisfies.
 */
import type * as pulumi from '@pulumi/pulumi';

/** The provider methods the engine calls with a resource's properties. */
export type EngineMethod = 'check' | 'diff' | 'create' | 'read' | 'update' | 'delete';

/** The stack configuration keys Configure reads (`SerializedProviderSpec.config`). */
export type ConfigSpec = Readonly<Record<string, string>> | readonly string[];

export interface SerializedProviderSpec<
  Config extends ConfigSpec = ConfigSpec,
  With extends EngineMethod = EngineMethod,
  Without extends EngineMethod = EngineMethod,
> {
  /**
   * What Configure keeps from the stack configuration, in `settings`: `{ name: 'gantry:key' }` keeps the key's value
   * under `name`; a list of keys keeps each under its own key.
   */
  config: Config;
  /** Methods whose operation takes Configure's settings first, then the engine's arguments. */
  withSettings: readonly With[];
  /** Methods whose operation takes the engine's arguments only. A method in neither list is absent. */
  withoutSettings: readonly Without[];
  /** The module exporting the operations, imported in the plugin (default `gantry/providers`). */
  module?: string;
}

/** What Configure kept, by name: a key not set in the stack configuration is undefined. */
export type SettingsOf<Config extends ConfigSpec> = {
  readonly [Name in Config extends readonly string[] ? Config[number] : keyof Config]?: string;
};

// Type-only: the spec a provider was made with, so that its operations' types follow from it (nothing at run time).
declare const madeWith: unique symbol;

/** A provider made by `serializedProvider`: what the engine gets, and (in its type only) the spec it was made with. */
export type SerializedProvider<
  Config extends ConfigSpec = ConfigSpec,
  With extends EngineMethod = EngineMethod,
  Without extends EngineMethod = EngineMethod,
> = pulumi.dynamic.ResourceProvider & { readonly [madeWith]?: SerializedProviderSpec<Config, With, Without> };

/** The engine's property bag as Check gets it: what the program gave, nothing checked yet. */
export type PropertyBag = Record<string, unknown>;

/** The CRUD methods of Pulumi's `ResourceProvider<Inputs, Outputs>`, each present. */
type TypedProvider<Inputs, Outputs> = Required<Omit<pulumi.dynamic.ResourceProvider<Inputs, Outputs>, 'configure'>>;

/**
 * The engine's arguments to a method, as `ResourceProvider<Inputs, Outputs>` declares them — but for Check's, which
 * are property bags: Check is what turns the program's values into `Inputs`.
 */
type EngineArgs<Inputs, Outputs, Method extends EngineMethod> = Method extends 'check'
  ? [olds: PropertyBag, news: PropertyBag]
  : Parameters<TypedProvider<Inputs, Outputs>[Method]>;

type EngineResult<Inputs, Outputs, Method extends EngineMethod> = ReturnType<TypedProvider<Inputs, Outputs>[Method]>;

/**
 * The operations behind a provider made by `serializedProvider`, typed from `ResourceProvider<Inputs, Outputs>` and
 * the provider's spec: one per listed method, Configure's settings first for the methods listed with settings. Write
 * an operations object `satisfies Operations<typeof provider, Inputs, Outputs>`: a method missing, extra, or taking
 * its arguments in another order than the serialized method passes them is a compile error.
 */
export type Operations<Provider, Inputs, Outputs> =
  Provider extends SerializedProvider<infer Config, infer With, infer Without>
    ? {
        [Method in With]: (settings: SettingsOf<Config> | undefined, ...args: EngineArgs<Inputs, Outputs, Method>) => EngineResult<Inputs, Outputs, Method>;
      } & { [Method in Without]: (...args: EngineArgs<Inputs, Outputs, Method>) => EngineResult<Inputs, Outputs, Method> }
    : never;

/** The settings the operations of a provider made by `serializedProvider` take first. */
export type ProviderSettings<Provider> = Provider extends SerializedProvider<infer Config> ? SettingsOf<Config> : never;

/**
 * The method lists of most resources, for a spec's `...`: a resource kept in a service checks its inputs offline
 * (Check runs in previews, before Configure's settings may be known) and does the rest with the settings.
 */
export const serviceMethods = { withSettings: ['diff', 'create', 'read', 'update', 'delete'], withoutSettings: ['check'] } as const;

/** A resource that runs something at create and on every change of its inputs, and has nothing to delete. */
export const runOnChangeMethods = { withSettings: ['create', 'update'], withoutSettings: ['check', 'diff', 'read'] } as const;

const engineMethods: readonly EngineMethod[] = ['check', 'diff', 'create', 'read', 'update', 'delete'];

type Configured = { settings?: Record<string, string | undefined> };

/**
 * The serialized provider whose methods call `(await import(spec.module))[exportName][method]` — with
 * `this.settings` first for the methods in `withSettings` — and whose Configure keeps the keys of `spec.config`.
 */
export function serializedProvider<const Config extends ConfigSpec, const With extends EngineMethod, const Without extends EngineMethod>(
  exportName: string,
  spec: SerializedProviderSpec<Config, With, Without>,
): SerializedProvider<Config, With, Without> {
  const specifier = spec.module ?? 'gantry/providers';
  const withSettings: readonly EngineMethod[] = spec.withSettings;
  const withoutSettings: readonly EngineMethod[] = spec.withoutSettings;
  const twice = withSettings.filter((method) => withoutSettings.includes(method));
  if (twice.length > 0) throw new Error(`serializedProvider(${exportName}): ${twice.join(', ')} listed both with and without settings`);
  const forward = (method: EngineMethod) => {
    if (withSettings.includes(method)) return loadingWithSettings(specifier, exportName, method);
    if (withoutSettings.includes(method)) return loading(specifier, exportName, method);
    return undefined;
  };
  const create = forward('create');
  if (!create) throw new Error(`serializedProvider(${exportName}): a provider needs create`);
  const provider: pulumi.dynamic.ResourceProvider = { configure: configureFrom(spec.config), create };
  for (const method of engineMethods) {
    const forwarding = forward(method);
    if (method !== 'create' && forwarding) provider[method] = forwarding;
  }
  return provider;
}

/**
 * The operations a resource module exports (and `gantry/providers` with it): one method per method of `provider`,
 * each importing `exportName` of `module` — the resource's implementation, its area of lib/, the HTTP core and their
 * dependencies — on the first call, in the plugin. A program that declares resources imports the resource modules only,
 * so it never loads what it does not run (docs/performance.md, "Providers"), and a preview, which calls Check and
 * Diff, loads no more than they use. `module` is a sibling of this file (`./<resource>-operations.js`); the result has
 * the operations' type, `Operations<typeof provider, Inputs, Outputs>`, given as `Lazy`.
 */
export function lazyOperations<Lazy extends object>(provider: SerializedProvider, module: `./${string}-operations.js`, exportName: string): Lazy {
  let loading: Promise<Record<EngineMethod, (...args: unknown[]) => unknown>> | undefined;
  const loaded = () =>
    (loading ??= import(module).then(
      (loadedModule: Record<string, Record<EngineMethod, (...args: unknown[]) => unknown>>) => {
        const implementation = loadedModule[exportName];
        if (!implementation) throw new Error(`${module} exports no ${exportName}`);
        return implementation;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  const methods = engineMethods.filter((method) => typeof provider[method] === 'function');
  return Object.fromEntries(methods.map((method) => [method, async (...args: unknown[]) => (await loaded())[method](...args)])) as Lazy;
}

// The functions below return the serialized methods: their parameters are all that the methods capture. What a
// method answers is the operation's answer: the import is untyped, so the operations' types are checked where
// they are written (`Operations`), not here.

function configureFrom(config: ConfigSpec) {
  return async function (this: Configured, req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    const keys = Array.isArray(config) ? config.map((key: string) => [key, key]) : Object.entries(config);
    this.settings = Object.fromEntries(keys.map(([name, key]) => [name, req.config.get(key)]));
  };
}

function loadingWithSettings(specifier: string, exportName: string, method: EngineMethod) {
  return async function (this: Configured, ...args: unknown[]) {
    return (await import(specifier))[exportName][method](this.settings, ...args);
  };
}

function loading(specifier: string, exportName: string, method: EngineMethod) {
  return async function (...args: unknown[]) {
    return (await import(specifier))[exportName][method](...args);
  };
}
