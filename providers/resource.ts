/**
 * The resource classes' side, in the program: what a class hands the engine with its serialized provider, and the
 * types a class's arguments and outputs follow from. One declaration of a resource's inputs (`Inputs`) and outputs
 * (`Outputs`) makes its `Args` (`ArgsOf`) and its typed output properties (`dynamicResource`); its shape lists the
 * keys at run time. Not serialized: nothing here is captured by a provider's methods.
 */
import * as pulumi from '@pulumi/pulumi';
import {
  lazyOperations,
  serializedProvider,
  type ConfigSpec,
  type EngineMethod,
  type Operations,
  type SerializedProvider,
  type SerializedProviderSpec,
} from './serialized.js';

/** A value the program may give as an Input, itself or any entry of an object or list in it. */
export type DeepInput<T> = pulumi.Input<[NonNullable<T>] extends [object] ? DeepEntries<NonNullable<T>> | Extract<T, null | undefined> : T>;

// A mapped type over a type parameter: a union (a record or a list) is mapped member by member, a list stays a list.
type DeepEntries<T> = { [Key in keyof T]: DeepInput<T[Key]> };

/** The program's arguments of a resource whose checked inputs are `Inputs`. */
export type ArgsOf<Inputs> = { [Key in keyof Inputs]: DeepInput<Inputs[Key]> };

/** A resource's output properties, as the engine fills them once the resource exists. */
export type OutputsOf<Outputs> = { readonly [Key in keyof Outputs]-?: pulumi.Output<Outputs[Key]> };

/** What a resource class hands the engine besides its provider: one list of each kind of key, and its type. */
export interface ResourceShape<Args, Outputs> {
  /** The type token the resource is registered under (its URNs name it: never change it). */
  type: string;
  /** The program's arguments, every one: Check picks these keys. */
  inputs: readonly (keyof Args & string)[];
  /** What only the provider sets: registered without a value, so the class has a property for each. */
  outputs: readonly (Exclude<keyof Outputs, keyof Args> & string)[];
  /** Sensitive inputs: made secret as given, and kept secret as outputs (`additionalSecretOutputs`). */
  secrets?: readonly (keyof Args & string)[];
}

/**
 * The base of a resource class, made once at module level: `class X extends dynamicResource<XArgs, XOutputs>(xProvider,
 * xShape) {}`, with the provider `serializedProvider` made. Its constructor `(name, args, opts)` registers the shape's
 * inputs as given (the secret ones made secret) and its outputs without a value; the class has each output, typed.
 */
export function dynamicResource<Args, Outputs>(provider: SerializedProvider, shape: ResourceShape<Args, Outputs>) {
  const secrets: readonly string[] = shape.secrets ?? [];
  class Resource extends pulumi.dynamic.Resource {
    constructor(name: string, args: Args, opts?: pulumi.CustomResourceOptions) {
      const given = args as Record<string, unknown>;
      const props: pulumi.Inputs = {};
      for (const key of shape.inputs) props[key] = secrets.includes(key) ? pulumi.secret(given[key]) : given[key];
      for (const key of shape.outputs) props[key] = undefined;
      const options = secrets.length > 0 ? { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...secrets] } : opts;
      super(provider, name, props, options, shape.type);
    }
  }
  return Resource as unknown as ResourceClass<Args, Outputs>;
}

/** A resource class's base: constructed `(name, args, opts)`, its instances have every output, typed. */
export type ResourceClass<Args, Outputs> = new (name: string, args: Args, opts?: pulumi.CustomResourceOptions) => pulumi.dynamic.Resource & OutputsOf<Outputs>;

/** One resource type, declared once (`resourceType`): its provider's spec, its class's shape, its operations' name. */
export interface ResourceTypeSpec<Args, Outputs, Config extends ConfigSpec, With extends EngineMethod, Without extends EngineMethod>
  extends ResourceShape<Args, Outputs>, Omit<SerializedProviderSpec<Config, With, Without>, 'module'> {
  /**
   * The operations' export name in `gantry/providers`, kept in every `__provider` (never change it): the
   * implementation is the same export of the sibling module named after it, `browserCheckOperations` in
   * `./browser-check-operations.js`.
   */
  operations: `${string}Operations`;
}

/** What `resourceType` makes of a declaration. */
export interface ResourceType<Inputs, Outputs, Args, Config extends ConfigSpec, With extends EngineMethod, Without extends EngineMethod> {
  /** The object the engine serializes into each resource's `__provider`. */
  provider: SerializedProvider<Config, With, Without>;
  /** The program's arguments, every one (Check picks these keys). */
  inputKeys: readonly (keyof Args & string)[];
  /** The base of the resource's class: `class X extends x.Resource {}`. */
  Resource: ResourceClass<Args, Outputs>;
  /** The implementation's methods, each loading it on the engine's first call (exported by `gantry/providers`). */
  operations: Operations<SerializedProvider<Config, With, Without>, Inputs, Outputs>;
}

/**
 * A resource type from one declaration: its serialized provider (`serializedProvider`), the base of its class
 * (`dynamicResource`) and its operations, loaded on the engine's first call (`lazyOperations`):
 *
 *     export const browserCheck = resourceType<BrowserCheckInputs, BrowserCheckOutputs>()({ type, operations, config, …methods, inputs, outputs });
 *     export class BrowserCheck extends browserCheck.Resource {}
 *
 * Called twice because TypeScript infers the spec's literal method lists and configuration keys (which type the
 * operations) only in a call given no type argument. `Args` is the program's arguments, `ArgsOf<Inputs>` unless
 * Check adds inputs of its own. Call it once per type, at module level (see `dynamicResource`).
 */
export function resourceType<Inputs, Outputs, Args = ArgsOf<Inputs>>() {
  return <const Config extends ConfigSpec, const With extends EngineMethod, const Without extends EngineMethod>(
    spec: ResourceTypeSpec<Args, Outputs, Config, With, Without>,
  ): ResourceType<Inputs, Outputs, Args, Config, With, Without> => {
    const { operations, config, withSettings, withoutSettings } = spec;
    const provider = serializedProvider(operations, { config, withSettings, withoutSettings });
    const module = `./${operations.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}.js` as `./${string}-operations.js`;
    return {
      provider,
      inputKeys: spec.inputs,
      Resource: dynamicResource<Args, Outputs>(provider, spec),
      operations: lazyOperations<Operations<typeof provider, Inputs, Outputs>>(provider, module, operations),
    };
  };
}
