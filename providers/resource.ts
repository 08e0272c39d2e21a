/**
 * The resource classes' side, in the program: what a class hands the engine with its serialized provider, and the
 * types a class's arguments and outputs follow from. One declaration of a resource's inputs (`Inputs`) and outputs
 * (`Outputs`) makes its `Args` (`ArgsOf`) and its typed output properties (`dynamicResource`); its shape lists the
 * keys at run time. Not serialized: nothing here is captured by a provider's methods.
 */
import * as pulumi from '@pulumi/pulumi';
import type { SerializedProvider } from './serialized.js';

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
  return Resource as unknown as new (name: string, args: Args, opts?: pulumi.CustomResourceOptions) => pulumi.dynamic.Resource & OutputsOf<Outputs>;
}
