/**
 * RegistryModule: a registry module resolved, fetched and installed with a pinned version and content hash, as a
 * Pulumi dynamic resource.
 *
 * The version chosen at create sticks: later updates re-install that version (checking its hash) until `source`,
 * `version` or `triggers` change — no silent upgrades. `pulumi refresh` reports the newest allowed version in
 * `latestAllowed` without changing the pin. A fetched tree whose hash differs from the pinned one fails the update.
 *
 * It never deletes what it did not write: create refuses a folder that exists and is not empty, update refuses one
 * whose content changed since it was installed (local edits), and delete leaves such a folder in place with a warning.
 *
 * The provider object, made by `resourceType` with `serializedProvider` (./serialized.ts), is serialized into
 * `__provider`: its methods capture nothing and load the implementation through `gantry/providers` at run time;
 * registry tokens are read from the environment (GANTRY_TOKEN_<host>, TF_TOKEN_<host>) by the plugin, never captured.
 * `gantry:registryHost` (stack config) sets the default registry host.
 */
import { resourceType, type ArgsOf } from './resource.js';
import { type ProviderSettings } from './serialized.js';

export interface RegistryModuleInputs {
  /** Module source address, `[<host>/]<namespace>/<name>/<provider>[//<subdir>]`. */
  source: string;
  /** Version constraint, e.g. `~> 1.2`; the newest release when absent. */
  version?: string;
  /** Install folder (default `.gantry/modules/<namespace>-<name>-<provider>` under the program's folder). */
  dir?: string;
  /** Any values; a change re-resolves the version within the constraint. */
  triggers?: Record<string, string>;
}

export type RegistryModuleArgs = ArgsOf<RegistryModuleInputs>;

export interface RegistryModuleOutputs extends Omit<RegistryModuleInputs, 'version'> {
  /** The normalised source address. */
  address: string;
  /** The constraint the version was chosen under (the `version` input). */
  constraint: string;
  /** The pinned version (the input `version` is the constraint; as an output it is what was chosen). */
  version: string;
  /** The normalised download location (no credentials). */
  location: string;
  /** `h1:` content hash of the installed package. */
  hash: string;
  /** Absolute path of the module folder (the package folder joined with the subdir). */
  path: string;
  /** Absolute path of the installed package folder. */
  installDir: string;
  /** Refreshed by `pulumi refresh`: the newest version the constraint allows now (may be newer than the pin). */
  latestAllowed: string;
}

export const registryModule = resourceType<RegistryModuleInputs, RegistryModuleOutputs>()({
  type: 'gantry:modules:RegistryModule',
  operations: 'registryModuleOperations',
  inputs: ['source', 'version', 'dir', 'triggers'],
  outputs: ['address', 'constraint', 'location', 'hash', 'path', 'installDir', 'latestAllowed'],
  config: ['gantry:registryHost'],
  withSettings: ['check', 'create', 'read', 'update'],
  withoutSettings: ['diff', 'delete'],
});

export class RegistryModule extends registryModule.Resource {}

export const { provider: registryModuleProvider, inputKeys, operations: registryModuleOperations } = registryModule;

export type RegistryModuleSettings = ProviderSettings<typeof registryModuleProvider>;
