import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckFailedError, UsageError } from '../errors.js';
import { getLogger, type Logger } from '../log.js';
import { fetchSource, type FetchProgress } from '../sources/fetch.js';
import { hashTree } from '../sources/hash.js';
import { sweepLeftovers } from '../sources/install.js';
import type { ExtractLimits } from '../sources/limits.js';
import type { SourceLocation } from '../sources/location.js';
import { modulePackage, parseModuleAddress, type ModuleAddress } from './address.js';
import type { RegistryClient } from './client.js';
import { parseConstraints, selectVersion, type ConstraintSet } from './constraints.js';
import { formatLocation, joinSubdirs, parseLocation } from './location.js';
import { lockFileVersion, type LockEntry, type LockFile } from './lockfile.js';
import type { ManifestModule } from './manifest.js';

export const defaultConcurrency = 16;

/** Runs `task` over `items` with at most `limit` at a time; results keep the input order; the first failure wins. */
export async function mapConcurrent<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
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
export async function resolveModule(client: RegistryClient, address: ModuleAddress, constraint: ConstraintSet, logger: Logger = getLogger()): Promise<Resolution> {
  const listed = await client.versions(address);
  const selection = selectVersion(listed, constraint, modulePackage(address));
  if (selection.skipped.length) logger.warn(`${modulePackage(address)}: skipped versions that are not semantic versions: ${selection.skipped.join(', ')}`);
  return locate(client, address, selection.version, selection.skipped);
}

/** The download location of one version, parsed and joined with the address's subdir. */
export async function locate(client: RegistryClient, address: ModuleAddress, version: string, skipped: string[] = []): Promise<Resolution> {
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
}

export interface PinResult {
  lock: LockFile;
  modules: Array<{ name: string; source: string; constraint: string; version: string; previous: string | undefined; changed: boolean; hash: string }>;
}

/**
 * Resolves the manifest into a lock: a module whose constraint is unchanged keeps its pin (no network); a new or
 * changed one — or one named by `upgrade` — is resolved, fetched and hashed without writing it anywhere. Nothing is written
 * here; the caller writes the lock once everything succeeded.
 */
export async function pin(manifest: ManifestModule[], previous: LockFile, options: PinOptions): Promise<PinResult> {
  const upgrade = options.upgrade ?? false;
  if (Array.isArray(upgrade)) {
    const unknown = upgrade.filter((name) => !manifest.some((m) => m.name === name));
    if (unknown.length) throw new UsageError(`--upgrade names modules that are not in the manifest: ${unknown.join(', ')}`);
  }
  const wanted = (m: ManifestModule) => upgrade === true || (Array.isArray(upgrade) && upgrade.includes(m.name));
  const byKey = new Map<string, Promise<LockEntry>>();
  const results = await mapConcurrent(manifest, options.concurrency ?? defaultConcurrency, async (module) => {
    const old = previous.modules[module.key];
    let entryPromise = byKey.get(module.key);
    if (!entryPromise) {
      if (old && old.constraint === module.constraint.text && !wanted(module)) {
        entryPromise = Promise.resolve(old);
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
    const entry = await entryPromise;
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

function lockEntryFor(module: ManifestModule, lock: LockFile): LockEntry {
  const entry = lock.modules[module.key];
  if (!entry) throw new UsageError(`"${module.name}" (${module.key}) is not in the lock file`, { code: 'NOT_PINNED', hint: 'run `gantry modules pin` first' });
  if (entry.constraint !== module.constraint.text) {
    throw new UsageError(`the constraint of "${module.name}" changed from "${entry.constraint}" to "${module.constraint.text}" since it was pinned`, { code: 'NOT_PINNED', hint: 'run `gantry modules pin` to re-resolve it' });
  }
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

/**
 * Installs every pinned module into `<dir>/<name>`. A module already installed with the pinned hash is left alone
 * without asking the registry anything (installs work offline once done). Otherwise the registry is asked for the
 * pinned version's current location (presigned URLs expire), the source is fetched, and a tree whose hash differs
 * from the lock is refused (exit 1, nothing replaced).
 */
export async function install(manifest: ManifestModule[], lock: LockFile, dir: string, options: RunOptions): Promise<InstallResult[]> {
  const entries = manifest.map((module) => ({ module, entry: lockEntryFor(module, lock) }));
  await sweepLeftovers(dir);
  return mapConcurrent(entries, options.concurrency ?? defaultConcurrency, async ({ module, entry }) => {
    const dest = join(dir, module.name);
    const current = await hashTree(dest).catch(() => undefined);
    const existingPath = current === entry.hash ? await installedModulePath(dest, entry.location) : undefined;
    if (existingPath !== undefined) {
      options.onEvent?.({ name: module.name, phase: 'skipped', version: entry.version });
      return { name: module.name, source: module.key, version: entry.version, path: existingPath, hash: entry.hash, status: 'unchanged' as const };
    }
    const resolution = await locate(options.client, module.address, entry.version);
    const fetched = await fetchSource(resolution.location, { dest, expectedHash: entry.hash, ...fetchOptions(options, module.name, module.address) }).catch((error: unknown) => {
      if (error instanceof CheckFailedError) throw new CheckFailedError(`${module.name} (${module.key} ${entry.version}): ${error.message}`, { code: error.code, hint: error.hint });
      throw error;
    });
    options.onEvent?.({ name: module.name, phase: 'installed', version: entry.version });
    return { name: module.name, source: module.key, version: entry.version, path: fetched.path, hash: fetched.hash, status: 'installed' as const };
  });
}

export interface VerifyResult {
  name: string;
  source: string;
  expected: string | undefined;
  actual: string | undefined;
  ok: boolean;
  problem?: string;
}

/** Re-hashes installed modules against the lock; the caller turns any `ok: false` into exit 1. */
export async function verify(manifest: ManifestModule[], lock: LockFile, dir: string): Promise<VerifyResult[]> {
  return mapConcurrent(manifest, defaultConcurrency, async (module) => {
    const expected = lock.modules[module.key]?.hash;
    const actual = await hashTree(join(dir, module.name)).catch(() => undefined);
    const problem = expected === undefined ? 'not pinned' : actual === undefined ? 'not installed' : actual !== expected ? 'content differs from the lock' : undefined;
    return { name: module.name, source: module.key, expected, actual, ok: problem === undefined, ...(problem ? { problem } : {}) };
  });
}

/** Resolves one address and constraint without installing (the `resolve` command and the Pulumi resource). */
export async function resolveAddress(client: RegistryClient, source: string, constraint: string | undefined, env?: NodeJS.ProcessEnv): Promise<Resolution> {
  const address = parseModuleAddress(source, env);
  return resolveModule(client, address, parseConstraints(constraint));
}

