/**
 * The operations of a resource that runs something at create and on every change of its inputs — a check, a gate,
 * a posted status — and keeps the last passing result (`runOnChangeMethods` in ./serialized.ts): Check picks the
 * inputs and reports their problems, Diff answers "changed" when any input changed (put the deployed version in
 * `triggers` to run on every release), Create and Update run it, Read keeps the recorded result (a refresh does not
 * run it again). A failing run throws: the operation fails, the deployment stops, the state keeps what passed.
 * Not serialized: loaded in the plugin through `gantry/providers`.
 */
import type * as pulumi from '@pulumi/pulumi';
import { changedInputs, knownFailures, pickInputs } from './inputs.js';
import type { PropertyBag } from './serialized.js';

export interface RunOnChange<Settings, Inputs extends object, Outputs extends Inputs> {
  /** The input keys: Check takes them from the program's values; a change of any runs again. */
  keys: readonly (keyof Inputs & string)[];
  /** What is wrong with the picked inputs (a value not known yet is checked on the run that knows it). */
  problems(inputs: Inputs): pulumi.dynamic.CheckFailure[];
  run(settings: Settings | undefined, inputs: Inputs): Promise<Outputs>;
  /** The resource's id, from the outputs of its first run. */
  idOf(outs: Outputs): string;
}

export function runOnChangeOperations<Settings, Inputs extends object, Outputs extends Inputs>(spec: RunOnChange<Settings, Inputs, Outputs>) {
  const { keys, problems, run, idOf } = spec;
  return {
    async check(_olds: PropertyBag, news: PropertyBag) {
      const inputs = pickInputs<Inputs>(news, keys);
      return { inputs, failures: knownFailures(inputs, problems(inputs)) };
    },

    async diff(_id: string, olds: Outputs, news: Inputs) {
      return { changes: changedInputs(olds, news, keys).length > 0, replaces: [], deleteBeforeReplace: false };
    },

    // The engine's inputs carry `__provider` too: only the input keys are run with.
    async create(settings: Settings | undefined, inputs: Inputs) {
      const outs = await run(settings, pickInputs<Inputs>(inputs, keys));
      return { id: idOf(outs), outs };
    },

    async read(id: string, props?: Outputs) {
      return { id, props };
    },

    async update(settings: Settings | undefined, _id: string, _olds: Outputs, news: Inputs) {
      return { outs: await run(settings, pickInputs<Inputs>(news, keys)) };
    },
  };
}
