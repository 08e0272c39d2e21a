import { expectArray, expectFunction, expectObject, expectString } from '../arguments.js';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckFailedError, GantryError, UsageError } from '../errors.js';
import { getLogger, type Logger } from '../log.js';
import { fetchSource, type FetchProgress } from '../sources/fetch.js';
import { hashTree } from '../sources/hash.js';
import { sweepLeftovers } from '../sources/install.js';
import { ensureFolder } from '../local-paths.js';
import type { ExtractLimits } from '../sources/limits.js';
import type { SourceLocation } from '../sources/location.js';
import { modulePackage, parseModuleAddress, toModuleAddress, type ModuleAddress } from './address.js';
import type { RegistryClient } from './client.js';
import { allows, parseConstraints, parseVersion, selectVersion, type ConstraintSet } from './constraints.js';
import { installedFileName, readInstalled, writeInstalled, type InstalledRecord } from './installed.js';
import { formatLocation, joinSubdirs, parseLocation } from './location.js';
import { lockFileVersion, type LockEntry, type LockFile } from './lockfile.js';
import type { ManifestModule } from './manifest.js';
import type { RegistryErrorCode } from './errors.js';

export const defaultConcurrency = 16;

/** Runs `task` over `items` with at most `limit` at a time; results keep the input order; the first failure wins. */
export async function mapConcurrent<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  expectArray('mapConcurrent', 'items', items);
  if (typeof limit !== 'number' || !(limit >= 1)) expectObject('mapConcurrent', 'limit', null, 'a number of at least 1');
  expectFunction('mapConcurrent', 'task', task);
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next;
      next += 1;
      try {
        results[index] = await task(items[index] as T, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/**
 * Runs `task` over every item (at most `limit` at a time) and, unlike mapConcurrent, lets every item finish: one
 * failure is thrown as it is; several are one AggregateError whose message lists each (every line names its module),
 * so a run over many modules reports every failing one, and the CLI's exit code is the most serious of them.
 */
async function mapAll<T, R>(items: readonly T[], limit: number, verb: string, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const failures: unknown[] = [];
  const results = await mapConcurrent(items, limit, (item, index) =>
    task(item, index).catch((error: unknown) => {
      failures.push(error);
      return undefined as R;
    }),
  );
  failIfAny(failures, verb);
  return results;
}

function failIfAny(failures: unknown[], verb: string): void {
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) {
    const lines = failures.map((error) => `  ${error instanceof Error ? error.message : String(error)}`);
    throw new AggregateError(failures, `${failures.length} modules failed to ${verb}:\n${lines.join('\n')}`);
  }
}

function expectClient(where: string, client: unknown): asserts client is RegistryClient {
  expectObject(where, 'client', client, 'a RegistryClient');
  if (typeof (client as { versions?: unknown }).versions !== 'function') expectObject(where, 'client', null, 'a RegistryClient');
}

function expectManifest(where: string, manifest: unknown): asserts manifest is ManifestModule[] {
  expectArray(where, 'manifest', manifest, 'the modules of a manifest (readManifest or parseManifest)');
  for (const module of manifest) {
    if (
      typeof module !== 'object' ||
      module === null ||
      typeof (module as ManifestModule).key !== 'string' ||
      typeof (module as ManifestModule).name !== 'string'
    ) {
      expectArray(where, 'manifest', null, 'the modules of a manifest (readManifest or parseManifest)');
    }
  }
}

function expectLock(where: string, lock: unknown, name = 'lock'): asserts lock is LockFile {
  expectObject(where, name, lock, 'a lock file (readLockFile or parseLockFile)');
  expectObject(where, `${name}.modules`, (lock as { modules?: unknown }).modules, 'an object of lock entries');
}

function expectRunOptions(where: string, options: unknown): asserts options is RunOptions {
  expectObject(where, 'options', options, 'an object with a client');
  expectClient(where, (options as { client?: unknown }).client);
  const { concurrency } = options as { concurrency?: unknown };
  if (concurrency !== undefined && !(typeof concurrency === 'number' && Number.isInteger(concurrency) && concurrency >= 1)) {
    expectObject(where, 'options.concurrency', null, 'a whole number of at least 1 (or left out)');
  }
}

export interface Resolution {
  address: ModuleAddress;
  /** The version as the registry lists it. */
  version: string;
  /** The parsed location, its subdir joined with the address's. */
  location: SourceLocation;
  /** The location as text for the lock file and output (no credentials). */
  locationText: string;
  /** Listed versions skipped because they do not parse. */
  skipped: string[];
}

/** Picks the newest allowed version and asks where its source is (REG-PROTO-MINIMAL). */
export async function resolveModule(
  client: RegistryClient,
  address: ModuleAddress | string,
  constraint: ConstraintSet | string,
  logger: Logger = getLogger(),
): Promise<Resolution> {
  expectClient('resolveModule', client);
  address = toModuleAddress(address);
  if (typeof constraint === 'string' || constraint === undefined) constraint = parseConstraints(constraint);
  expectObject('resolveModule', 'constraint', constraint, 'a constraint string or a set from parseConstraints');
  const listed = await client.versions(address);
  const selection = selectVersion(listed, constraint, modulePackage(address));
  if (selection.skipped.length) logger.warn(`${modulePackage(address)}: skipped versions that are not semantic versions: ${selection.skipped.join(', ')}`);
  return locate(client, address, selection.version, selection.skipped);
}

/** The download location of one version, parsed and joined with the address's subdir. */
export async function locate(client: RegistryClient, address: ModuleAddress | string, version: string, skipped: string[] = []): Promise<Resolution> {
  expectClient('locate', client);
  address = toModuleAddress(address);
  expectString('locate', 'version', version, 'a version string as the registry lists it');
  if (!Array.isArray(skipped)) skipped = [];
  const { location: raw, downloadUrl } = await client.download(address, version);
  const parsed = parseLocation(raw, { base: downloadUrl });
  const location = { ...parsed, subdir: joinSubdirs(parsed.subdir, address.subdir) };
  return { address, version, location, locationText: formatLocation(location), skipped };
}

export interface ModuleEvent {
  name: string;
  phase: 'resolved' | 'download' | 'extract' | 'pinned' | 'installed' | 'skipped';
  version?: string;
  transferred?: number;
  total?: number;
}

export interface RunOptions {
  client: RegistryClient;
  concurrency?: number;
  limits?: Partial<ExtractLimits>;
  logger?: Logger;
  onEvent?: (event: ModuleEvent) => void;
  s3?: { checksumsWhenRequired?: boolean };
}

function fetchOptions(options: RunOptions, name: string, address: ModuleAddress) {
  return {
    http: options.client.http,
    headersFor: (url: URL) => options.client.headersFor(address.host, url),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.s3 ? { s3: options.s3 } : {}),
    onProgress: (p: FetchProgress) => options.onEvent?.({ name, phase: p.phase, transferred: p.transferred, total: p.total }),
  };
}

export interface PinOptions extends RunOptions {
  /** Re-resolve every module (true) or these local names, even when the constraint did not change. */
  upgrade?: boolean | string[];
  /**
   * The install folder whose record (`.gantry-installed.json`) vouches for the pins kept: a kept pin the record does
   * not confirm (same source, version and hash) is checked against the registry's archive of its version instead.
   */
  dir?: string;
}

export interface PinResult {
  lock: LockFile;
  modules: Array<{ name: string; source: string; constraint: string; version: string; previous: string | undefined; changed: boolean; hash: string }>;
}

/**
 * Resolves the manifest into a lock: a module whose constraint is unchanged keeps its pin; a new or changed one — or
 * one named by `upgrade` — is resolved, fetched and hashed without writing it anywhere. A kept pin must be true: its
 * version one its constraint allows, and its hash the content of that version — confirmed by the install record of
 * `options.dir` (no network) or else by fetching and hashing the registry's archive of that version. A lie is exit 1.
 * Every module is tried; all failures are reported (several: an AggregateError). Nothing is written here; the caller
 * writes the lock once everything succeeded.
 */
export async function pin(manifest: ManifestModule[], previous: LockFile, options: PinOptions): Promise<PinResult> {
  expectManifest('pin', manifest);
  expectLock('pin', previous, 'previous');
  expectRunOptions('pin', options);
  const upgrade = options.upgrade ?? false;
  if (Array.isArray(upgrade)) {
    const unknown = upgrade.filter((name) => !manifest.some((m) => m.name === name));
    if (unknown.length) throw new UsageError(`--upgrade names modules that are not in the manifest: ${unknown.join(', ')}`);
  }
  const wanted = (m: ManifestModule) => upgrade === true || (Array.isArray(upgrade) && upgrade.includes(m.name));
  if (options.dir !== undefined) expectString('pin', 'options.dir', options.dir, 'the path of the install folder');
  const record: InstalledRecord = options.dir === undefined ? {} : await readInstalled(options.dir).catch(() => ({}) as InstalledRecord);
  const byKey = new Map<string, Promise<LockEntry>>();
  const results = await mapAll(manifest, options.concurrency ?? defaultConcurrency, 'pin', async (module) => {
    const old = previous.modules[module.key];
    let entryPromise = byKey.get(module.key);
    if (!entryPromise) {
      if (old && old.constraint === module.constraint.text && !wanted(module)) {
        entryPromise = (async () => {
          checkLockedVersion(module, old);
          await checkKeptPin(module, old, record[module.name], options);
          return old;
        })();
      } else {
        entryPromise = (async () => {
          const resolution = await resolveModule(options.client, module.address, module.constraint, options.logger);
          options.onEvent?.({ name: module.name, phase: 'resolved', version: resolution.version });
          const fetched = await fetchSource(resolution.location, { dest: module.name, hashOnly: true, ...fetchOptions(options, module.name, module.address) });
          options.onEvent?.({ name: module.name, phase: 'pinned', version: resolution.version });
          return { constraint: module.constraint.text, version: resolution.version, location: resolution.locationText, hash: fetched.hash };
        })();
      }
      byKey.set(module.key, entryPromise);
    }
    const entry = await entryPromise.catch((error: unknown) => {
      throw aboutModule(error, module, old?.version);
    });
    return { module, entry, old };
  });
  const lock: LockFile = { version: lockFileVersion, modules: {} };
  for (const { module, entry } of results) lock.modules[module.key] = entry;
  return {
    lock,
    modules: results.map(({ module, entry, old }) => ({
      name: module.name,
      source: module.key,
      constraint: entry.constraint,
      version: entry.version,
      previous: old?.version,
      changed: !old || old.version !== entry.version || old.hash !== entry.hash,
      hash: entry.hash,
    })),
  };
}

export interface InstallResult {
  name: string;
  source: string;
  version: string;
  path: string;
  hash: string;
  status: 'installed' | 'unchanged';
}

const failedModules = new WeakMap<object, string>();

/** The local name of the module a failure of pin or install is about, if it is about one (for hints naming it). */
export function moduleOfError(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? failedModules.get(error) : undefined;
}

/** Prefixes a failure with the module it concerns, keeping its class, code and exit code. */
function aboutModule(error: unknown, module: ManifestModule, version?: string): unknown {
  if (error instanceof GantryError && !failedModules.has(error)) {
    if (!error.message.includes(`"${module.name}" (${module.key}`))
      error.message = `${module.name} (${module.key}${version ? ` ${version}` : ''}): ${error.message}`;
    failedModules.set(error, module.name);
  }
  return error;
}

/**
 * A lock entry must be something `pin` could have written: its version one its constraint allows. Anything else is a
 * lie in the lock (a hand edit): exit 1.
 */
function checkLockedVersion(module: ManifestModule, entry: LockEntry): void {
  const parsed = parseVersion(entry.version);
  if (parsed && allows(module.constraint, parsed)) return;
  throw new CheckFailedError(
    `the lock pins ${entry.version} for "${module.name}" (${module.key}), which its constraint ${module.constraint.text ? `"${module.constraint.text}"` : '(none: the newest release)'} does not allow; the lock file was edited by hand or is damaged`,
    {
      code: 'LOCK_MISMATCH' satisfies RegistryErrorCode,
      hint: `restore the lock file from version control, or re-resolve the module: pin with upgrade: ['${module.name}']`,
    },
  );
}

/**
 * A pin kept as it is must still be true (a hand edit of its version or hash stays inside the constraint). The install
 * record vouches for it when it holds the same source, version and hash; the same content recorded under another
 * version is a lie; otherwise the registry's archive of the pinned version is fetched and hashed (nothing written).
 */
async function checkKeptPin(module: ManifestModule, entry: LockEntry, installed: InstalledRecord[string] | undefined, options: PinOptions): Promise<void> {
  if (installed && installed.source === module.key && installed.hash === entry.hash) {
    if (installed.version === entry.version) return;
    throw new CheckFailedError(
      `the lock pins ${entry.version} for "${module.name}" (${module.key}), but this very content (${entry.hash}) was installed as ${installed.version}; the lock's version was edited by hand`,
      {
        code: 'LOCK_MISMATCH' satisfies RegistryErrorCode,
        hint: `restore the lock file from version control, or re-resolve the module: pin with upgrade: ['${module.name}']`,
      },
    );
  }
  const resolution = await locate(options.client, module.address, entry.version);
  const fetched = await fetchSource(resolution.location, { dest: module.name, hashOnly: true, ...fetchOptions(options, module.name, module.address) });
  if (fetched.hash === entry.hash) return;
  throw new CheckFailedError(
    `the lock pins ${entry.version} for "${module.name}" (${module.key}) with the hash ${entry.hash}, but the registry's archive of ${entry.version} hashes to ${fetched.hash}; the lock was edited by hand, or the registry changed that version's content`,
    {
      code: 'LOCK_MISMATCH' satisfies RegistryErrorCode,
      hint: `restore the lock file from version control, or re-resolve the module: pin with upgrade: ['${module.name}'] (review the new content first)`,
    },
  );
}

function lockEntryFor(module: ManifestModule, lock: LockFile): LockEntry {
  const entry = lock.modules[module.key];
  if (!entry)
    throw new UsageError(`"${module.name}" (${module.key}) is not in the lock file`, {
      code: 'NOT_PINNED' satisfies RegistryErrorCode,
      hint: 'pin the manifest first (pin(), then writeLockFile())',
    });
  if (entry.constraint !== module.constraint.text) {
    throw new UsageError(`the constraint of "${module.name}" changed from "${entry.constraint}" to "${module.constraint.text}" since it was pinned`, {
      code: 'CONSTRAINT_CHANGED' satisfies RegistryErrorCode,
      hint: 'pin the manifest again to re-resolve it',
    });
  }
  checkLockedVersion(module, entry);
  return entry;
}

/** The module folder inside an installed package, from the lock's location (its subdir; `*` is the single top folder). */
async function installedModulePath(dest: string, lockedLocation: string): Promise<string | undefined> {
  let subdir: string;
  try {
    subdir = parseLocation(lockedLocation, { trusted: true }).subdir;
  } catch {
    return undefined;
  }
  if (subdir === '*' || subdir.startsWith('*/')) {
    const top = await readdir(dest, { withFileTypes: true }).catch(() => []);
    if (top.length !== 1 || !top[0]?.isDirectory()) return undefined;
    subdir = [top[0].name, subdir.slice(2)].filter(Boolean).join('/');
  }
  return subdir ? join(dest, ...subdir.split('/')) : dest;
}

export interface InstallOptions extends RunOptions {
  /**
   * Replace module folders Gantry did not install, or whose content was changed since (local edits are lost). Without
   * it such a folder is left as it is and the install fails (exit 1).
   */
  force?: boolean;
}

/**
 * Installs every pinned module into `<dir>/<name>`. A module already installed with the pinned hash is left alone
 * without asking the registry anything (installs work offline once done). Otherwise the registry is asked for the
 * pinned version's current location (presigned URLs expire), the source is fetched, and a tree whose hash differs
 * from the lock is refused (exit 1, nothing replaced).
 *
 * `<dir>/.gantry-installed.json` records what Gantry wrote. A folder it did not write, or one changed since, is never
 * replaced without `force`; a lock whose version differs from the one installed with the same content is a lie (exit 1).
 * Gantry's own working folders left by an interrupted run are removed first.
 */
export async function install(manifest: ManifestModule[], lock: LockFile, dir: string, options: InstallOptions): Promise<InstallResult[]> {
  expectManifest('install', manifest);
  expectLock('install', lock);
  expectString('install', 'dir', dir, 'the path of the install folder');
  expectRunOptions('install', options);
  const logger = options.logger ?? getLogger();
  const refused: unknown[] = [];
  const entries = manifest.flatMap((module) => {
    try {
      return [{ module, entry: lockEntryFor(module, lock) }];
    } catch (error) {
      refused.push(aboutModule(error, module));
      return [];
    }
  });
  failIfAny(refused, 'install');
  const root = await ensureFolder(dir, 'the install folder');
  const swept = await sweepLeftovers(root, 15 * 60_000);
  if (swept.length) logger.info(`removed ${swept.length} working folder${swept.length === 1 ? '' : 's'} left by an interrupted install: ${swept.join(', ')}`);
  const record: InstalledRecord = await readInstalled(root);
  let saving: Promise<void> = Promise.resolve();
  const remember = (name: string, source: string, version: string, hash: string) => {
    record[name] = { source, version, hash };
    saving = saving.then(() => writeInstalled(root, record));
    return saving;
  };
  const results = await mapAll(entries, options.concurrency ?? defaultConcurrency, 'install', ({ module, entry }) =>
    installOne(module, entry).catch((error: unknown) => {
      throw aboutModule(error, module, entry.version);
    }),
  ).finally(() => saving.catch(() => undefined));
  await saving;
  return results;

  async function installOne(module: ManifestModule, entry: LockEntry): Promise<InstallResult> {
    const dest = join(root, module.name);
    const present = await lstat(dest).catch(() => undefined);
    const current = present?.isDirectory() ? await hashTree(dest).catch(() => undefined) : undefined;
    const mine = record[module.name];
    if (current === entry.hash) {
      if (mine && mine.hash === entry.hash && mine.version !== entry.version) {
        throw new CheckFailedError(
          `the lock pins ${entry.version} for "${module.name}" (${module.key}), but this very content (${entry.hash}) was installed as ${mine.version}; the lock's version was edited by hand`,
          {
            code: 'LOCK_MISMATCH' satisfies RegistryErrorCode,
            hint: `restore the lock file from version control, or re-resolve the module: pin with upgrade: ['${module.name}']`,
          },
        );
      }
      const existingPath = await installedModulePath(dest, entry.location);
      if (existingPath !== undefined) {
        if (!mine || mine.version !== entry.version || mine.source !== module.key) await remember(module.name, module.key, entry.version, entry.hash);
        options.onEvent?.({ name: module.name, phase: 'skipped', version: entry.version });
        return { name: module.name, source: module.key, version: entry.version, path: existingPath, hash: entry.hash, status: 'unchanged' as const };
      }
    }
    if (present && !options.force) {
      if (!mine) {
        throw new CheckFailedError(
          `${dest} exists and was not installed by Gantry (it is not in ${installedFileName}); it was left as it is and "${module.name}" was not installed`,
          {
            code: 'NOT_INSTALLED_BY_GANTRY' satisfies RegistryErrorCode,
            hint: 'move the folder away or install into another folder; force: true replaces it, deleting its content',
          },
        );
      }
      if (current !== mine.hash) {
        throw new CheckFailedError(
          `"${module.name}" has local changes in ${dest}: its content no longer hashes to what Gantry installed (${mine.version}); nothing was replaced`,
          {
            code: 'LOCAL_CHANGES' satisfies RegistryErrorCode,
            hint: 'copy your changes elsewhere first if you want them; force: true replaces the folder with the pinned content',
          },
        );
      }
    }
    const resolution = await locate(options.client, module.address, entry.version);
    const fetched = await fetchSource(resolution.location, { dest, expectedHash: entry.hash, ...fetchOptions(options, module.name, module.address) });
    await remember(module.name, module.key, entry.version, fetched.hash);
    options.onEvent?.({ name: module.name, phase: 'installed', version: entry.version });
    return { name: module.name, source: module.key, version: entry.version, path: fetched.path, hash: fetched.hash, status: 'installed' as const };
  }
}

export interface VerifyResult {
  name: string;
  source: string;
  expected: string | undefined;
  actual: string | undefined;
  ok: boolean;
  problem?: string;
}

/**
 * Re-hashes installed modules against the lock, and checks the lock itself: a version its constraint does not allow,
 * or one other than the version Gantry installed with the same content, is a problem too. The caller turns any
 * `ok: false` into exit 1.
 */
export async function verify(manifest: ManifestModule[], lock: LockFile, dir: string): Promise<VerifyResult[]> {
  expectManifest('verify', manifest);
  expectLock('verify', lock);
  expectString('verify', 'dir', dir, 'the path of the install folder');
  const record = await readInstalled(dir).catch(() => ({}) as InstalledRecord);
  return mapConcurrent(manifest, defaultConcurrency, async (module) => {
    const entry = lock.modules[module.key];
    const expected = entry?.hash;
    const actual = await hashTree(join(dir, module.name)).catch(() => undefined);
    const mine = record[module.name];
    const parsed = entry ? parseVersion(entry.version) : undefined;
    let problem: string | undefined;
    if (entry === undefined) problem = 'not pinned';
    else if (entry.constraint !== module.constraint.text) problem = 'constraint changed since pinned';
    else if (!parsed || !allows(module.constraint, parsed)) problem = `lock version ${entry.version} not allowed by its constraint`;
    else if (actual === undefined) problem = 'not installed';
    else if (actual !== expected && mine && mine.source === module.key && mine.hash === actual) {
      // The tree is as Gantry installed it: the lock changed since, not the folder.
      problem =
        mine.version === entry.version
          ? `lock hash for ${entry.version} is not the one installed (the folder is unchanged): the lock was edited`
          : `pinned ${entry.version}, installed ${mine.version}: not installed yet`;
    } else if (actual !== expected) problem = 'content differs from the lock';
    else if (mine && mine.hash === actual && mine.version !== entry.version) problem = `lock says ${entry.version}, installed as ${mine.version}`;
    return { name: module.name, source: module.key, expected, actual, ok: problem === undefined, ...(problem ? { problem } : {}) };
  });
}

/** Resolves one address and constraint without installing (the `resolve` command and the Pulumi resource). */
export async function resolveAddress(client: RegistryClient, source: string, constraint: string | undefined, env?: NodeJS.ProcessEnv): Promise<Resolution> {
  expectClient('resolveAddress', client);
  expectString('resolveAddress', 'source', source, 'a module address such as "hashicorp/consul/aws"');
  const address = parseModuleAddress(source, env);
  return resolveModule(client, address, parseConstraints(constraint));
}
