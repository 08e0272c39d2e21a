// The implementation behind `registryModuleOperations` (./registry-module.ts), never serialized: the dynamic-provider plugin loads it
// through `gantry/providers` when the engine calls a method.
import type * as pulumi from '@pulumi/pulumi';
import { readdir, rm } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { CheckFailedError, GantryError, UsageError } from '../lib/errors.js';
import { formatModuleAddress, locate, parseConstraints, parseModuleAddress, RegistryClient, resolveModule, selectVersion } from '../lib/registry/index.js';
import { fetchSource, hashTree } from '../lib/sources/index.js';
import { changedInputs, containsUnknown, pickInputs, sameValue, triggersProblems } from './inputs.js';
import type { Operations } from './serialized.js';
import { registryModuleProvider, inputKeys, type RegistryModuleInputs, type RegistryModuleOutputs, type RegistryModuleSettings } from './registry-module.js';

function envFor(settings: RegistryModuleSettings | undefined): NodeJS.ProcessEnv {
  const host = settings?.['gantry:registryHost'];
  return host && !process.env.GANTRY_REGISTRY_HOST ? { ...process.env, GANTRY_REGISTRY_HOST: host } : process.env;
}

function installDirOf(inputs: RegistryModuleInputs, env: NodeJS.ProcessEnv): string {
  if (inputs.dir) return resolvePath(inputs.dir);
  const address = parseModuleAddress(inputs.source, env);
  return resolvePath('.gantry', 'modules', `${address.namespace}-${address.name}-${address.provider}`);
}

/** Whether the pin must be re-resolved: the constraint (the state's `constraint` is the input `version`), the source or the triggers changed. */
function needsResolve(olds: RegistryModuleOutputs, news: RegistryModuleInputs): boolean {
  return !sameValue(olds.constraint ?? '', news.version ?? '') || changedInputs(olds, news, ['source', 'triggers'], { triggers: {} }).length > 0;
}

/** What is in `folder`: nothing (absent or empty), exactly what this resource installed (`ownHash`), or something else. */
async function folderState(folder: string, ownHash: string | undefined): Promise<'empty' | 'ours' | 'other'> {
  const entries = await readdir(folder).catch(() => undefined);
  if (entries === undefined || entries.length === 0) return 'empty';
  if (ownHash !== undefined && (await hashTree(folder).catch(() => undefined)) === ownHash) return 'ours';
  return 'other';
}

/** Refuses to replace a folder holding anything but what this resource installed there (`ownHash`, if it did). */
async function refuseForeignFolder(folder: string, ownHash: string | undefined): Promise<void> {
  if ((await folderState(folder, ownHash)) !== 'other') return;
  throw ownHash === undefined
    ? new CheckFailedError(`${folder} exists and is not empty, and this resource did not install it; it was left as it is`, {
        code: 'NOT_INSTALLED_BY_GANTRY',
        hint: 'move the folder away, or give the resource another `dir`',
      })
    : new CheckFailedError(`${folder} has local changes: its content no longer hashes to what this resource installed (${ownHash}); nothing was replaced`, {
        code: 'LOCAL_CHANGES',
        hint: 'copy your changes elsewhere, then delete the folder: the next `pulumi up` installs the pinned content again',
      });
}

/** Removes `folder` only if it holds exactly what this resource installed; otherwise keeps it and says so. */
async function removeIfOurs(folder: string, ownHash: string): Promise<void> {
  const state = await folderState(folder, ownHash);
  if (state === 'ours') await rm(folder, { recursive: true, force: true });
  else if (state === 'other') console.warn(`gantry: kept ${folder}: its content changed since it was installed, so it is no longer only Gantry's to delete`);
}

async function install(
  settings: RegistryModuleSettings | undefined,
  inputs: RegistryModuleInputs,
  pinned?: { version: string; hash: string },
  installed?: { dir: string; hash: string },
): Promise<RegistryModuleOutputs> {
  const env = envFor(settings);
  const address = parseModuleAddress(inputs.source, env);
  const constraint = parseConstraints(inputs.version);
  const installDir = installDirOf(inputs, env);
  await refuseForeignFolder(installDir, installed?.dir === installDir ? installed.hash : undefined);
  const client = new RegistryClient({ env });
  try {
    const resolution = pinned ? await locate(client, address, pinned.version) : await resolveModule(client, address, constraint);
    const fetched = await fetchSource(resolution.location, {
      dest: installDir,
      http: client.http,
      headersFor: (url) => client.headersFor(address.host, url),
      ...(pinned ? { expectedHash: pinned.hash } : {}),
    });
    return {
      source: inputs.source,
      ...(inputs.dir !== undefined ? { dir: inputs.dir } : {}),
      ...(inputs.triggers !== undefined ? { triggers: inputs.triggers } : {}),
      address: formatModuleAddress(address),
      constraint: constraint.text,
      version: resolution.version,
      location: resolution.locationText,
      hash: fetched.hash,
      path: fetched.path,
      installDir,
      latestAllowed: resolution.version,
    };
  } finally {
    client.close();
  }
}

function failureOf(error: unknown): string {
  return error instanceof GantryError ? `${error.message}${error.hint ? ` (${error.hint})` : ''}` : String(error);
}

export const registryModuleOperations = {
  async check(settings, _olds, news) {
    // No version, dir or triggers (undefined or null) is the default; the source is required.
    const given = pickInputs<RegistryModuleInputs>(news, inputKeys);
    const failures: pulumi.dynamic.CheckFailure[] = [];
    const { source, version, dir, triggers } = given;
    if (typeof source !== 'string') failures.push({ property: 'source', reason: 'source must be a module address string' });
    // A value not known yet (in a preview, before the resource it comes from exists) is checked once known.
    else if (!containsUnknown(source)) {
      try {
        // The default host as the deployment will use it: the environment, else the stack's gantry:registryHost.
        parseModuleAddress(source, envFor(settings));
      } catch (error) {
        failures.push({ property: 'source', reason: failureOf(error) });
      }
    }
    if (version !== undefined && version !== null) {
      if (typeof version !== 'string') failures.push({ property: 'version', reason: 'version must be a constraint string such as "~> 1.2"' });
      else if (!containsUnknown(version)) {
        try {
          parseConstraints(version);
        } catch (error) {
          failures.push({ property: 'version', reason: failureOf(error) });
        }
      }
    }
    if (dir !== undefined && dir !== null && (typeof dir !== 'string' || dir.trim() === ''))
      failures.push({ property: 'dir', reason: 'dir must be a non-empty path' });
    if (triggers !== null) failures.push(...triggersProblems(triggers));
    if (failures.length > 0) return { failures };
    return {
      inputs: {
        source,
        ...(version !== null && version !== undefined ? { version } : {}),
        ...(dir !== null && dir !== undefined ? { dir } : {}),
        ...(triggers !== null && triggers !== undefined ? { triggers } : {}),
      },
    };
  },

  async diff(_id, olds, news) {
    const changed = needsResolve(olds, news) || changedInputs(olds, news, ['dir'], { dir: '' }).length > 0;
    // The pinned tree must be on this machine as pinned (a fresh CI runner, a deleted folder): reinstall it if not.
    const present = olds.installDir ? await hashTree(olds.installDir).catch(() => undefined) : undefined;
    const missing = present !== olds.hash;
    return { changes: changed || missing, replaces: [], deleteBeforeReplace: false };
  },

  async create(settings, inputs) {
    const outs = await install(settings, inputs);
    return { id: outs.address, outs };
  },

  async update(settings, _id, olds, news) {
    const keepPin = !needsResolve(olds, news);
    const installed = olds.installDir ? { dir: olds.installDir, hash: olds.hash } : undefined;
    const outs = await install(settings, news, keepPin ? { version: olds.version, hash: olds.hash } : undefined, installed);
    if (keepPin) outs.latestAllowed = olds.latestAllowed ?? olds.version;
    if (olds.installDir && olds.installDir !== outs.installDir) await removeIfOurs(olds.installDir, olds.hash);
    return { outs };
  },

  /** Refresh: the pin stays; `latestAllowed` shows whether a newer version is allowed now. */
  async read(settings, id, props?) {
    // The plugin always hands the state's outputs; only an import would not, and Pulumi cannot import a dynamic
    // resource (pulumi/pulumi#3550).
    if (!props) throw new UsageError(`RegistryModule ${id}: nothing to refresh without the resource's state`);
    const env = envFor(settings);
    const address = parseModuleAddress(props.source, env);
    const client = new RegistryClient({ env });
    try {
      const listed = await client.versions(address);
      const latestAllowed = selectVersion(listed, parseConstraints(props.constraint), `${address.namespace}/${address.name}/${address.provider}`).version;
      return { id, props: { ...props, latestAllowed } };
    } finally {
      client.close();
    }
  },

  async delete(_id, props) {
    if (props.installDir) await removeIfOurs(props.installDir, props.hash);
  },
} satisfies Operations<typeof registryModuleProvider, RegistryModuleInputs, RegistryModuleOutputs>;
