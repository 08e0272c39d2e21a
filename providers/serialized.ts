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
 * was last written against the installed implementation, so keep them as they are.
 */
import type * as pulumi from '@pulumi/pulumi';

/** The provider methods the engine calls with a resource's properties. */
export type EngineMethod = 'check' | 'diff' | 'create' | 'read' | 'update' | 'delete';

export interface SerializedProviderSpec {
  /**
   * What Configure keeps from the stack configuration, in `settings`: `{ name: 'gantry:key' }` keeps the key's value
   * under `name`; a list of keys keeps each under its own key.
   */
  config: Readonly<Record<string, string>> | readonly string[];
  /** Methods whose operation takes Configure's settings first, then the engine's arguments. */
  withSettings: readonly EngineMethod[];
  /** Methods whose operation takes the engine's arguments only. A method in neither list is absent. */
  withoutSettings: readonly EngineMethod[];
  /** The module exporting the operations, imported in the plugin (default `gantry/providers`). */
  module?: string;
}

const engineMethods: readonly EngineMethod[] = ['check', 'diff', 'create', 'read', 'update', 'delete'];

type Configured = { settings?: Record<string, string | undefined> };

/**
 * The serialized provider whose methods call `(await import(spec.module))[exportName][method]` — with
 * `this.settings` first for the methods in `withSettings` — and whose Configure keeps the keys of `spec.config`.
 */
export function serializedProvider(exportName: string, spec: SerializedProviderSpec): pulumi.dynamic.ResourceProvider {
  const specifier = spec.module ?? 'gantry/providers';
  const twice = spec.withSettings.filter((method) => spec.withoutSettings.includes(method));
  if (twice.length > 0) throw new Error(`serializedProvider(${exportName}): ${twice.join(', ')} listed both with and without settings`);
  if (![...spec.withSettings, ...spec.withoutSettings].includes('create')) throw new Error(`serializedProvider(${exportName}): a provider needs create`);
  const provider: Record<string, unknown> = { configure: configureFrom(spec.config) };
  for (const method of engineMethods) {
    if (spec.withSettings.includes(method)) provider[method] = loadingWithSettings(specifier, exportName, method);
    else if (spec.withoutSettings.includes(method)) provider[method] = loading(specifier, exportName, method);
  }
  return provider as unknown as pulumi.dynamic.ResourceProvider;
}

// The functions below return the serialized methods: their parameters are all that the methods capture.

function configureFrom(config: SerializedProviderSpec['config']) {
  return async function (this: Configured, req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    const keys = Array.isArray(config) ? config.map((key: string) => [key, key]) : Object.entries(config);
    this.settings = Object.fromEntries(keys.map(([name, key]) => [name, req.config.get(key)]));
  };
}

function loadingWithSettings(specifier: string, exportName: string, method: EngineMethod) {
  return async function (this: Configured, ...args: unknown[]): Promise<unknown> {
    return (await import(specifier))[exportName][method](this.settings, ...args);
  };
}

function loading(specifier: string, exportName: string, method: EngineMethod) {
  return async function (...args: unknown[]): Promise<unknown> {
    return (await import(specifier))[exportName][method](...args);
  };
}
